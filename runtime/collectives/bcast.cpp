// Broadcast.
//   binomial:          log2 n rounds of the whole message; best while latency dominates.
//   scatter+allgather: the root's buffer is cut into n chunks, scattered down the binomial tree,
//                      then circulated around a ring (van de Geijn); every link carries about
//                      2x the message instead of log2 n times it.
//   linear:            the root posts one send per rank at once; a single round, which is
//                      what counts when ranks outnumber cores (each round costs a pass of the
//                      scheduler over every rank).
// Ranks are renumbered relative to the root (vr = 0 is the root).
#include <algorithm>

#include "coll.hpp"

namespace xmsg::coll {
namespace {

int real_rank(int vr, int root, int n) { return (vr + root) % n; }

}  // namespace

int bcast_binomial(const Comm& c, Dst buf, int64_t bytes, int root) {
  const int n = c.size, vr = (c.rank - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (vr & mask) {
      Step step(c);
      step.recv(buf, bytes, real_rank(vr - mask, root, n), kTagBcast);
      if (int e = step.wait()) return e;
      break;
    }
    mask <<= 1;
  }
  Step step(c);
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < n) step.send(buf, bytes, real_rank(vr + mask, root, n), kTagBcast);
  return step.wait();
}

int bcast_linear(const Comm& c, Dst buf, int64_t bytes, int root) {
  Step step(c);
  if (c.rank == root) {
    for (int r = 0; r < c.size; ++r)
      if (r != root) step.send(buf, bytes, r, kTagBcast + 2);
  } else {
    step.recv(buf, bytes, root, kTagBcast + 2);
  }
  return step.wait();
}

int bcast_scatter_allgather(const Comm& c, Dst buf, int64_t bytes, int root) {
  const int n = c.size, vr = (c.rank - root + n) % n;
  const int64_t chunk = (bytes + n - 1) / n;
  // Chunks [first, last) of the buffer as a byte range; trailing chunks may be short or empty.
  auto offset = [&](int index) { return std::min<int64_t>(static_cast<int64_t>(index) * chunk, bytes); };

  // Scatter: vr receives the chunks of its subtree [vr, vr + lowbit(vr)) from its parent.
  int mask = 1;
  while (mask < n) {
    if (vr & mask) {
      const int64_t lo = offset(vr), hi = offset(std::min(vr + mask, n));
      if (hi > lo) {
        Step step(c);
        step.recv(at(buf, lo), hi - lo, real_rank(vr - mask, root, n), kTagBcast);
        if (int e = step.wait()) return e;
      }
      break;
    }
    mask <<= 1;
  }
  {
    Step step(c);
    for (mask >>= 1; mask > 0; mask >>= 1) {
      const int child = vr + mask;
      if (child >= n) continue;
      const int64_t lo = offset(child), hi = offset(std::min(child + mask, n));
      if (hi > lo) step.send(at(buf, lo), hi - lo, real_rank(child, root, n), kTagBcast);
    }
    if (int e = step.wait()) return e;
  }

  // Ring allgather of the chunks: in step s pass chunk vr - s on to the right.
  const int right = real_rank((vr + 1) % n, root, n), left = real_rank((vr - 1 + n) % n, root, n);
  for (int s = 0; s < n - 1; ++s) {
    const int send_chunk = (vr - s + n) % n, recv_chunk = (vr - s - 1 + 2 * n) % n;
    const int64_t slo = offset(send_chunk), shi = offset(send_chunk + 1);
    const int64_t rlo = offset(recv_chunk), rhi = offset(recv_chunk + 1);
    Step step(c);
    if (rhi > rlo) step.recv(at(buf, rlo), rhi - rlo, left, kTagBcast + 1);
    if (shi > slo) step.send(at(buf, slo), shi - slo, right, kTagBcast + 1);
    if (int e = step.wait()) return e;
  }
  return XMSG_SUCCESS;
}

}  // namespace xmsg::coll
