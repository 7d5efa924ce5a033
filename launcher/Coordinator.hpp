// The xmsgrun process itself: forks one node server per virtual node, forwards every rank's
// output line by line, joins fences across node servers, routes direct-modex requests to the
// node that owns the rank, and decides when and how the job ends (exit status, messages,
// forwarded signals, timeout, cleanup).
#pragma once

#include "JobPlan.hpp"

namespace xmsg::launcher {

// Runs the job described by `plan`; returns xmsgrun's exit status.
int run_job(JobPlan plan);

}  // namespace xmsg::launcher
