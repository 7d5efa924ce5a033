// Dissemination barrier: ceil(log2 n) rounds; in round k every rank signals rank + 2^k and
// waits for rank - 2^k, so after the last round each rank has heard, transitively, from all.
// Works for every n, unlike pairwise-exchange barriers that need a power of two.
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

}  // namespace xmsg::coll
