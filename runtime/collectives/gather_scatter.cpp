// Gather and scatter.
//   linear:   the root posts one receive (send) per rank at once; right for large blocks and
//             for the v-variants, whose block sizes only the root knows. Empty blocks travel
//             as empty messages, so a rank whose count disagrees with the root's finds out
//             (MPI_ERR_TRUNCATE) instead of one of them waiting forever.
//   binomial: blocks travel up (down) a binomial tree rooted at the root, so the root handles
//             log2 n messages instead of n - 1; right for small blocks. A subtree covers tree
//             ranks [vr, vr + span), kept contiguous in a scratch buffer in tree-rank order.
#include <algorithm>

#include "coll.hpp"

namespace xmsg::coll {
namespace {

int lowbit(int x) { return x & -x; }

// Number of tree ranks in the subtree of vr.
int subtree_span(int vr, int n) { return vr == 0 ? n : std::min(lowbit(vr), n - vr); }

}  // namespace

int gatherv_linear(const Comm& c, Src sendbuf, int64_t sendbytes, Dst recvbuf, const int64_t* counts,
                   const int64_t* displs, int root) {
  Step step(c);
  if (c.rank != root) {
    step.send(sendbuf, sendbytes, root, kTagGather);
    return step.wait();
  }
  for (int i = 0; i < c.size; ++i) {
    if (i == root) continue;
    step.recv(block_at(recvbuf, displs[i], counts[i]), counts[i], i, kTagGather);
  }
  if (sendbuf != XMSG_IN_PLACE) copy_bytes(at(recvbuf, displs[root]), sendbuf, counts[root]);
  return step.wait();
}

int gather_binomial(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root) {
  const int n = c.size, vr = (c.rank - root + n) % n, span = subtree_span(vr, n);
  Scratch scratch(span * block);
  std::byte* tree = scratch.get();
  const Src mine = sendbuf == XMSG_IN_PLACE ? Src(at(recvbuf, root * block)) : sendbuf;
  copy_bytes(tree, mine, block);
  {
    Step step(c);
    for (int mask = 1; mask < span; mask <<= 1) {
      const int child = vr + mask;
      step.recv(tree + mask * block, std::min(mask, n - child) * block, (child + root) % n, kTagGather);
    }
    if (int e = step.wait()) return e;
  }
  if (vr != 0) {
    Step step(c);
    step.send(tree, span * block, (vr - lowbit(vr) + root) % n, kTagGather);
    return step.wait();
  }
  // Tree rank i is real rank (i + root) % n: two contiguous pieces.
  copy_bytes(at(recvbuf, root * block), tree, (n - root) * block);
  copy_bytes(recvbuf, tree + (n - root) * block, root * block);
  return XMSG_SUCCESS;
}

int scatterv_linear(const Comm& c, Src sendbuf, const int64_t* counts, const int64_t* displs, Dst recvbuf,
                    int64_t recvbytes, int root) {
  Step step(c);
  if (c.rank != root) {
    step.recv(recvbuf, recvbytes, root, kTagScatter);
    return step.wait();
  }
  for (int i = 0; i < c.size; ++i) {
    if (i == root) continue;
    step.send(block_at(sendbuf, displs[i], counts[i]), counts[i], i, kTagScatter);
  }
  if (recvbuf != XMSG_IN_PLACE) copy_bytes(recvbuf, at(sendbuf, displs[root]), counts[root]);
  return step.wait();
}

int scatter_binomial(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root) {
  const int n = c.size, vr = (c.rank - root + n) % n, span = subtree_span(vr, n);
  Scratch scratch(span * block);
  std::byte* tree = scratch.get();
  if (vr == 0) {
    copy_bytes(tree, at(sendbuf, root * block), (n - root) * block);
    copy_bytes(tree + (n - root) * block, sendbuf, root * block);
  } else {
    Step step(c);
    step.recv(tree, span * block, (vr - lowbit(vr) + root) % n, kTagScatter);
    if (int e = step.wait()) return e;
  }
  Step step(c);
  for (int mask = 1; mask < span; mask <<= 1) {
    const int child = vr + mask;
    step.send(tree + mask * block, std::min(mask, n - child) * block, (child + root) % n, kTagScatter);
  }
  if (recvbuf != XMSG_IN_PLACE) copy_bytes(recvbuf, tree, block);
  return step.wait();
}

}  // namespace xmsg::coll
