// A communicator: a group of world ranks and a context id agreed by its members. Traffic of
// the user travels on context 2*cid, collective traffic on 2*cid+1, so they never match.
#pragma once

#include <cstdint>
#include <vector>

namespace xmsg::rt {

struct Comm {
  uint32_t cid = 0;
  int rank = 0;
  int size = 0;
  std::vector<int> world_of;  // comm rank -> world rank
  std::vector<int> comm_of;   // world rank -> comm rank, -1 when not a member
  bool valid = true;
  // Comm rank i is world rank i for every i (WORLD, and any split or dup that keeps its order):
  // a send then skips the world_of lookup, two dependent loads on its latency path.
  bool world_order = false;

  uint32_t user_context() const { return cid * 2; }
  int world_rank(int r) const { return world_order ? r : world_of[static_cast<unsigned>(r)]; }
  void note_order() {
    world_order = true;
    for (int i = 0; i < size; ++i) world_order = world_order && world_of[static_cast<unsigned>(i)] == i;
  }
  uint32_t coll_context() const { return cid * 2 + 1; }
  bool contains_world(int w) const { return w >= 0 && w < static_cast<int>(comm_of.size()) && comm_of[w] >= 0; }
};

}  // namespace xmsg::rt
