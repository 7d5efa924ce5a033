// All-to-all.
//   Bruck:    ceil(log2 n) rounds for any n, each moving about n/2 blocks packed into one
//             message; fewest messages, so best for small blocks.
//   linear:   every send and receive posted at once; lets the transport overlap everything,
//             good for medium blocks.
//   pairwise: n - 1 steps, in step s send to rank + s and receive from rank - s; one
//             exchange in flight per rank, best for large blocks (no receive-queue pressure).
// alltoallv's linear and pairwise forms share one tag and send exactly one message (empty ones
// too) to every peer, so each rank may pick its form from its own counts: a pair matches
// whatever order either side posts in.
#include <algorithm>

#include "coll.hpp"

namespace xmsg::coll {

int alltoall_bruck(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const int n = c.size, r = c.rank;
  Scratch rotated_store(n * block), out_store(((n + 1) / 2) * block), in_store(((n + 1) / 2) * block);
  std::byte* rotated = rotated_store.get();  // block i is destined to rank (r + i) % n
  copy_bytes(rotated, at(sendbuf, r * block), (n - r) * block);
  copy_bytes(rotated + (n - r) * block, sendbuf, r * block);
  std::byte* out = out_store.get();
  std::byte* in = in_store.get();

  int round = 0;
  for (int k = 1; k < n; k <<= 1, ++round) {
    // Blocks whose index has bit k travel k ranks further this round.
    int64_t packed = 0;
    for (int i = k; i < n; ++i)
      if (i & k) copy_bytes(out + (packed++) * block, rotated + i * block, block);
    Step step(c);
    step.recv(in, packed * block, (r - k + n) % n, kTagAlltoall + round);
    step.send(out, packed * block, (r + k) % n, kTagAlltoall + round);
    if (int e = step.wait()) return e;
    packed = 0;
    for (int i = k; i < n; ++i)
      if (i & k) copy_bytes(rotated + i * block, in + (packed++) * block, block);
  }
  // Block i now comes from rank (r - i) % n.
  for (int i = 0; i < n; ++i) copy_bytes(at(recvbuf, ((r - i + n) % n) * block), rotated + i * block, block);
  return XMSG_SUCCESS;
}

int alltoall_linear(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const int n = c.size, r = c.rank;
  Step step(c);
  // Post in pairwise order so that, in an oversubscribed job, the peer scheduled next finds
  // its message already queued.
  for (int s = 1; s < n; ++s) step.recv(at(recvbuf, ((r - s + n) % n) * block), block, (r - s + n) % n, kTagAlltoall + 64);
  for (int s = 1; s < n; ++s) step.send(at(sendbuf, ((r + s) % n) * block), block, (r + s) % n, kTagAlltoall + 64);
  copy_bytes(at(recvbuf, r * block), at(sendbuf, r * block), block);
  return step.wait();
}

int alltoall_pairwise(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const int n = c.size, r = c.rank;
  for (int s = 1; s < n; ++s) {
    const int dest = (r + s) % n, source = (r - s + n) % n;
    Step step(c);
    step.recv(at(recvbuf, source * block), block, source, kTagAlltoall + 65);
    step.send(at(sendbuf, dest * block), block, dest, kTagAlltoall + 65);
    // Our own block is copied while the first exchange is in flight (large blocks go by
    // rendezvous, so the peer is reading our buffer meanwhile): at 2 ranks that hides a copy.
    if (s == 1) copy_bytes(at(recvbuf, r * block), at(sendbuf, r * block), block);
    if (int e = step.wait()) return e;
  }
  return XMSG_SUCCESS;
}

int alltoallv_linear(const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls,
                     Dst recvbuf, const int64_t* rcounts, const int64_t* rdispls) {
  const int n = c.size, r = c.rank;
  Step step(c);
  for (int s = 1; s < n; ++s) {
    const int source = (r - s + n) % n;
    step.recv(block_at(recvbuf, rdispls[source], rcounts[source]), rcounts[source], source, kTagAlltoall + 66);
  }
  for (int s = 1; s < n; ++s) {
    const int dest = (r + s) % n;
    step.send(block_at(sendbuf, sdispls[dest], scounts[dest]), scounts[dest], dest, kTagAlltoall + 66);
  }
  copy_bytes(at(recvbuf, rdispls[r]), at(sendbuf, sdispls[r]), std::min(scounts[r], rcounts[r]));
  return step.wait();
}

int alltoallv_pairwise(const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls,
                       Dst recvbuf, const int64_t* rcounts, const int64_t* rdispls) {
  const int n = c.size, r = c.rank;
  copy_bytes(at(recvbuf, rdispls[r]), at(sendbuf, sdispls[r]), std::min(scounts[r], rcounts[r]));
  for (int s = 1; s < n; ++s) {
    const int dest = (r + s) % n, source = (r - s + n) % n;
    Step step(c);
    // Empty blocks too: a pair whose counts disagree (one side 0) must meet, not wait forever.
    step.recv(block_at(recvbuf, rdispls[source], rcounts[source]), rcounts[source], source, kTagAlltoall + 66);
    step.send(block_at(sendbuf, sdispls[dest], scounts[dest]), scounts[dest], dest, kTagAlltoall + 66);
    if (int e = step.wait()) return e;
  }
  return XMSG_SUCCESS;
}

}  // namespace xmsg::coll
