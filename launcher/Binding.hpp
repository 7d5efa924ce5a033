// CPU binding of ranks, decided once with hwloc in the coordinator and applied by each rank's
// child process with sched_setaffinity before exec (hwloc is not async-signal-safe after fork).
#pragma once

#include "JobPlan.hpp"

#include <string>

namespace xmsg::launcher {

class Topology;

// Fills plan.bindings. --bind-to auto means core: rank r on core r mod cores (all virtual nodes
// share this machine, so the count is over the whole job), also when ranks outnumber cores.
// Throws std::runtime_error when hwloc fails.
void compute_bindings(JobPlan& plan, const Topology& topology);

}  // namespace xmsg::launcher
