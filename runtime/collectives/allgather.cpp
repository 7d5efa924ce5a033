// Allgather.
//   Bruck: ceil(log2 n) rounds for any n; in round k a rank passes the min(k, n - k) blocks it
//          holds (its own first, in rank order from itself) to rank - k and receives as many
//          from rank + k. A final rotation puts the blocks in rank order. Small blocks.
//   ring:  n - 1 steps, each passing one block to the right neighbour; every link busy and no
//          scratch copies. Large blocks and allgatherv (blocks of any size).
#include <algorithm>

#include "coll.hpp"

namespace xmsg::coll {

int allgather_bruck(const Comm& c, Dst recvbuf, int64_t block) {
  const int n = c.size, r = c.rank;
  Scratch scratch(n * block);
  std::byte* tmp = scratch.get();  // tmp block i = block of rank (r + i) % n
  copy_bytes(tmp, at(recvbuf, r * block), block);
  int round = 0;
  for (int k = 1; k < n; k <<= 1, ++round) {
    const int blocks = std::min(k, n - k);
    Step step(c);
    step.recv(tmp + k * block, blocks * block, (r + k) % n, kTagAllgather + round);
    step.send(tmp, blocks * block, (r - k + n) % n, kTagAllgather + round);
    if (int e = step.wait()) return e;
  }
  copy_bytes(at(recvbuf, r * block), tmp, (n - r) * block);
  copy_bytes(recvbuf, tmp + (n - r) * block, r * block);
  return XMSG_SUCCESS;
}

int allgatherv_ring(const Comm& c, Dst recvbuf, const int64_t* counts, const int64_t* displs) {
  const int n = c.size, r = c.rank;
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  for (int s = 0; s < n - 1; ++s) {
    const int send_block = (r - s + n) % n, recv_block = (r - s - 1 + 2 * n) % n;
    Step step(c);
    // Empty blocks too: a neighbour whose counts disagree (one side 0) must meet, not wait forever.
    step.recv(block_at(recvbuf, displs[recv_block], counts[recv_block]), counts[recv_block], left, kTagAllgather + 64);
    step.send(block_at(recvbuf, displs[send_block], counts[send_block]), counts[send_block], right, kTagAllgather + 64);
    if (int e = step.wait()) return e;
  }
  return XMSG_SUCCESS;
}

}  // namespace xmsg::coll
