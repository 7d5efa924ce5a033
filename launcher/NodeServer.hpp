// One virtual node: a process forked by the coordinator that runs a PMIx server, forks and
// reaps this node's ranks, and relays what crosses nodes (fences, direct modex) to the
// coordinator over a Channel. It dies with the coordinator (parent-death signal) and cleans up
// its files on every ending.
#pragma once

#include "Channel.hpp"
#include "JobPlan.hpp"

#include <vector>

namespace xmsg::launcher {

struct RankPipes {  // write ends handed to the rank as stdout/stderr
  int out = -1;
  int err = -1;
};

// Runs node `node` of `plan` in the current (freshly forked) process; never returns.
[[noreturn]] void run_node_server(const JobPlan& plan, int node, int channel_fd,
                                  const std::vector<RankPipes>& pipes);

}  // namespace xmsg::launcher
