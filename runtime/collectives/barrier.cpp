// Barriers.
//   dissemination: ceil(log2 n) rounds; in round k every rank signals rank + 2^k and waits for
//                  rank - 2^k, so after the last round each rank has heard, transitively, from
//                  all. Works for every n, unlike pairwise exchange that needs a power of two.
//   linear:        everyone signals rank 0, rank 0 releases everyone: two rounds whatever n.
//                  When ranks outnumber cores every round costs a pass of the scheduler over
//                  all ranks, so fewer rounds beat the log2 n rounds of dissemination.
#include "coll.hpp"

namespace xmsg::coll {

int barrier_dissemination(const Comm& c) {
  int round = 0;
  for (int distance = 1; distance < c.size; distance <<= 1, ++round) {
    Step step(c);
    step.recv(nullptr, 0, (c.rank - distance + c.size) % c.size, kTagBarrier + round);
    step.send(nullptr, 0, (c.rank + distance) % c.size, kTagBarrier + round);
    if (int e = step.wait()) return e;
  }
  return XMSG_SUCCESS;
}

int barrier_linear(const Comm& c) {
  Step arrive(c);
  if (c.rank == 0) {
    for (int r = 1; r < c.size; ++r) arrive.recv(nullptr, 0, r, kTagBarrier + 60);
  } else {
    arrive.send(nullptr, 0, 0, kTagBarrier + 60);
    arrive.recv(nullptr, 0, 0, kTagBarrier + 61);
  }
  if (int e = arrive.wait()) return e;
  if (c.rank != 0) return XMSG_SUCCESS;
  Step release(c);
  for (int r = 1; r < c.size; ++r) release.send(nullptr, 0, r, kTagBarrier + 61);
  return release.wait();
}

}  // namespace xmsg::coll
