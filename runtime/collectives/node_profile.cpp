// The cost model of node_profile.hpp. The measurement runs where the region is set up
// (shm_collectives.cpp: local_copy_costs, share_profile).
#include "node_profile.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace xmsg::coll {
namespace {

// One process_vm_readv call's fixed cost (entering the kernel, looking up the peer's mm):
// about 1 us on the machines measured so far; it only matters for small blocks, where the
// slot or the pipelines win anyway.
constexpr double kSyscallNs = 1000;


double chunks(int64_t bytes, int64_t chunk) {
  return std::ceil(static_cast<double>(bytes) / static_cast<double>(std::max<int64_t>(chunk, 1)));
}

}  // namespace

int profile_partner(const int* numa_of_rank, int ranks) {
  for (int r = 1; r < ranks; ++r)
    if (numa_of_rank[0] >= 0 && numa_of_rank[r] >= 0 && numa_of_rank[r] != numa_of_rank[0]) return r;
  return 1;
}

int numa_nodes_spanned(const int* numa_of_rank, int ranks) {
  std::vector<int> seen;
  for (int r = 0; r < ranks; ++r)
    if (numa_of_rank[r] >= 0 && std::find(seen.begin(), seen.end(), numa_of_rank[r]) == seen.end())
      seen.push_back(numa_of_rank[r]);
  return std::max<int>(1, static_cast<int>(seen.size()));
}

double pipeline_ns(const NodeProfile& p, LargeCollective kind, int n, int64_t bytes, int64_t chunk) {
  // A reader takes chunks from whichever writer has one ready and writers run ahead of their
  // readers up to a ring, so the streams' hand-offs overlap: about one per chunk of a stream
  // lies on the critical path, not one per chunk and peer.
  const double b = static_cast<double>(bytes);
  switch (kind) {
    case LargeCollective::kAlltoall:
      return n * b * p.copy_ns_per_byte + (n - 1) * b * p.handed_copy() + chunks(bytes, chunk) * p.handoff_cost_ns();
    case LargeCollective::kBcast:
      return b * p.handed_copy() + static_cast<double>(std::min(bytes, chunk)) * p.copy_ns_per_byte +
             chunks(bytes, chunk) * p.handoff_cost_ns();
    case LargeCollective::kAllreduce:
      return b * p.copy_ns_per_byte + (n - 1.0) / n * b * p.handed_copy() +
             2 * chunks(bytes / n + 1, chunk) * p.handoff_cost_ns();
  }
  return 0;
}

double single_copy_ns(const NodeProfile& p, LargeCollective kind, int n, int64_t bytes) {
  const double b = static_cast<double>(bytes);
  const double peers = n - 1;
  switch (kind) {
    case LargeCollective::kAlltoall:
      return peers * (b * p.cma_ns_per_byte + kSyscallNs) + b * p.copy_ns_per_byte + 2 * p.handoff_cost_ns();
    case LargeCollective::kBcast:
      return b * p.cma_ns_per_byte + kSyscallNs + 2 * p.handoff_cost_ns();
    case LargeCollective::kAllreduce:
      return 2 * peers / n * b * p.cma_ns_per_byte + 2 * peers * kSyscallNs + 4 * p.handoff_cost_ns();
  }
  return 0;
}

int64_t large_path_from(const NodeProfile& p, LargeCollective kind, int n, int64_t chunk) {
  if (!p.measured() || p.cma_ns_per_byte <= 0 || n < 2) return kNeverBytes;
  // Both costs are nearly linear in the size, so "faster from here on" is decided by the
  // largest sizes; scanning down from the top finds where the single copy stops winning by
  // kSingleCopyMargin.
  int64_t from = kNeverBytes;
  for (int64_t bytes = kNeverBytes >> 1; bytes >= 4096; bytes >>= 1) {
    if (single_copy_ns(p, kind, n, bytes) >= kSingleCopyMargin * pipeline_ns(p, kind, n, bytes, chunk)) break;
    from = bytes;
  }
  return from;
}

}  // namespace xmsg::coll
