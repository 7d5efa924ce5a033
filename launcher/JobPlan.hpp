// Everything the coordinator decides before forking the node servers: identity of the job,
// which rank lives on which virtual node, where files go, and each rank's CPU binding.
// Node servers are forked from the coordinator, so they simply inherit this object.
#pragma once

#include "Options.hpp"

#include <sched.h>

#include <string>
#include <vector>

namespace xmsg::launcher {

class NetnsTopology;
class Topology;

struct RankBinding {
  bool bound = false;
  cpu_set_t cpus{};
  std::string description;  // "core 1 (cpus 1)", "numa 0 (cpus 0-1)", "not bound"
};

struct JobPlan {
  Options options;
  std::string nspace;     // PMIx namespace, file-name safe: xmsg.<pid>.<8 hex>
  std::string job_id;     // what Bootstrap::job_id() returns for this job
  std::string secret;     // 128-bit random, 32 hex chars: each node's secret_file()
  std::string base_dir;   // private 0700 directory holding every node's files
  std::vector<std::string> hostnames;  // per node
  std::vector<int> first_rank;         // per node, plus one past the end
  std::vector<RankBinding> bindings;   // per rank (empty descriptions when not bound)
  const Topology* topology = nullptr;  // shared with the node servers' PMIx libraries
  const NetnsTopology* netns = nullptr;  // with --netns: set by the coordinator before forking

  int nranks() const { return options.nranks; }
  int nnodes() const { return options.nnodes; }
  int node_of(int rank) const;
  std::string node_dir(int node) const { return base_dir + "/n" + std::to_string(node); }
  std::string job_tmpdir(int node) const { return node_dir(node) + "/job"; }
  std::string pmix_tmpdir(int node) const { return node_dir(node) + "/pmix"; }
  // The tcp job secret, 0600 in the node's private job directory (XMSG_JOB_SECRET_FILE).
  std::string secret_file(int node) const { return job_tmpdir(node) + "/secret"; }
};

// Builds the plan (random identity, block-wise rank split, hostnames). Bindings are filled
// separately by compute_bindings().
JobPlan make_plan(const Options& options);

// Replaces characters outside [A-Za-z0-9_.-] by '_', as the bootstrap does for job_id().
std::string file_name_safe(const std::string& s);

// Throws std::runtime_error naming `dir` unless it is a directory (not a symlink) owned by this
// user with no group or other permissions: what keeps the secret file below it private.
void check_private_dir(const std::string& dir);

// Writes plan.secret (32 hex chars, no newline) to plan.secret_file(node), created mode 0600
// (O_EXCL, not following symlinks) after checking that the job directory is private. Throws
// std::runtime_error naming the path.
void write_secret_file(const JobPlan& plan, int node);

}  // namespace xmsg::launcher
