// The cost model of node_profile.hpp. The measurement runs where the region is set up
// (shm_collectives.cpp: local_copy_costs, share_profile).
#include "node_profile.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace xmsg::coll {
namespace {

// One process_vm_readv call's fixed cost (entering the kernel, looking up the peer's mm) when
// the profile has none (NodeProfile::cma_call_ns).
constexpr double kSyscallNs = 1000;

double cma_call_ns(const NodeProfile& p) { return p.cma_call_ns > 0 ? p.cma_call_ns : kSyscallNs; }

// What a writer waiting for a reader queued behind other ranks on its core loses per rank
// ahead of that reader: a context switch and that rank's pass over its own polls and copies.
// Not measured (the set-up round trip times the scheduler at random: 0.2-10 us between jobs at
// 16 ranks on 2 cores); an estimate from alltoall with forced paths on this project's VM
// (docs/results/2026-12-07-trace-counts): 16 ranks on 2 cores (8 a core), 128 KiB-1 MiB
// blocks, the pipelines took 1.1-1.6x single copy's time near and 2.6-3x far; at 8 ranks (4 a
// core) 0.6-1.0 of it up to 1 MiB near. At 1 us a rank the model keeps the pipelines at
// 8 ranks and gives single copy to 16 ranks from 128-256 KiB (as the profile reads); at
// 1.5-2 us it also gave 8 ranks' 512 KiB-1 MiB to single copy, about 10% slower there.
constexpr double kQueuedRankNs = 1000;


double chunks(int64_t bytes, int64_t chunk) {
  return std::ceil(static_cast<double>(bytes) / static_cast<double>(std::max<int64_t>(chunk, 1)));
}

// Linear in log2(bytes) between the figure at kProfileSmallBytes and the one at
// kProfileLargeBytes; `large` 0 (not measured): the small one at every size.
double at_size(double small, double large, int64_t bytes) {
  if (large <= 0 || bytes <= kProfileSmallBytes) return small;
  if (bytes >= kProfileLargeBytes) return large;
  const double t = std::log2(static_cast<double>(bytes) / kProfileSmallBytes) /
                   std::log2(static_cast<double>(kProfileLargeBytes) / kProfileSmallBytes);
  return small + t * (large - small);
}

}  // namespace

double NodeProfile::copy_at(int64_t bytes) const { return at_size(copy_ns_per_byte, copy_large_ns_per_byte, bytes); }
double NodeProfile::cma_at(int64_t bytes) const { return at_size(cma_ns_per_byte, cma_large_ns_per_byte, bytes); }

double NodeProfile::ring_wait_ns() const {
  return shares_cores && ranks_per_core > 1 ? (ranks_per_core - 1) * kQueuedRankNs : 0;
}

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
  // A ring copy runs at the slower of its two ends: the ring's lines (handed) and the program's
  // buffer, which past the caches costs what a plain copy of that size costs.
  const int64_t touched = kind == LargeCollective::kAlltoall || kind == LargeCollective::kAllgather ? n * bytes : bytes;
  // Writing over ring lines a reader took, at the figure over the whole ring at every size
  // (2 ranks pinned, near hand-offs: alltoall 128/256 KiB through the pipelines in
  // 11.1/22.4-23.7 us, this model 11.2/22.3; 20-26/32-37 us before the rings turned, when every
  // call rewrote the lines its reader had just taken).
  const double handed_write = p.handed_write_over_ring();
  const double handed_out = p.handed_copy();
  const double in = std::max(handed_write, p.copy_at(touched));
  const double out = std::max(handed_out, p.copy_at(touched));
  switch (kind) {
    case LargeCollective::kAlltoall: {
      const double past_ring = p.ring_chunks > 0 ? std::max(0.0, (n - 1) * chunks(bytes, chunk) - p.ring_chunks) : 0;
      return b * p.copy_at(touched) + (n - 1) * b * (in + out) + chunks(bytes, chunk) * p.handoff_cost_ns() +
             past_ring * p.ring_wait_ns();
    }
    case LargeCollective::kBcast:
      // A reader's copy out overlaps the root's copy in but for the first chunk, which nothing
      // overlaps and which the root writes over lines its reader may still hold (a short
      // stream comes back to its slots after the reader took less than a ring): that chunk at
      // the handed write's small figure. 2 ranks, near hand-offs, through the pipelines:
      // 64 KiB 6.1-6.7 us (this 9.4, with the over-ring figure 3.3), 1 MiB 35-38 (this 37);
      // single copy 4.0 and 40 (docs/results/2026-12-07-pair-bcast).
      return std::max(b * in, b * out) + static_cast<double>(std::min(bytes, chunk)) * p.handed_write() +
             chunks(bytes, chunk) * p.handoff_cost_ns();
    case LargeCollective::kAllreduce:
    case LargeCollective::kReduceScatter:
      return b * in + (n - 1.0) / n * b * out + 2 * chunks(bytes / n + 1, chunk) * p.handoff_cost_ns();
    case LargeCollective::kAllgather:
      return b * p.copy_at(touched) + b * in + (n - 1) * b * out + chunks(bytes, chunk) * p.handoff_cost_ns();
  }
  return 0;
}

double single_copy_ns(const NodeProfile& p, LargeCollective kind, int n, int64_t bytes) {
  const double b = static_cast<double>(bytes);
  const double peers = n - 1;
  switch (kind) {
    case LargeCollective::kAlltoall:
    case LargeCollective::kAllgather:
      return peers * (b * p.cma_at(n * bytes) + cma_call_ns(p)) + b * p.copy_at(n * bytes) + 2 * p.single_copy_wait_ns();
    case LargeCollective::kBcast:
      // Two ranks: the reader reads half while the root writes the other half into its buffer
      // (shm_bcast_cma), after one more hand-off (the root waits for the reader's post).
      if (n == 2) return b / 2 * p.cma_at(bytes) + cma_call_ns(p) + 3 * p.single_copy_wait_ns();
      return b * p.cma_at(bytes) + cma_call_ns(p) + 2 * p.single_copy_wait_ns();
    case LargeCollective::kAllreduce:
    case LargeCollective::kReduceScatter:
      return 2 * peers / n * b * p.cma_at(bytes) + 2 * peers * cma_call_ns(p) + 4 * p.single_copy_wait_ns();
  }
  return 0;
}

SingleCopySizes single_copy_sizes(const NodeProfile& p, LargeCollective kind, int n, int64_t chunk) {
  SingleCopySizes sizes;
  if (!p.measured() || p.cma_ns_per_byte <= 0 || n < 2) return sizes;
  // A single-copy bcast's readers all pin the root's same pages at once, so every page's
  // reference count moves between their cores: 4 ranks on this VM's 2 cores took 15.7 us at
  // 128 KiB and 35-39 us at 256 KiB against the pipelines' 14-19, where one reader (2 ranks)
  // took 10 against 17. The profile's one-reader CMA figure cannot see that; with more than
  // one reader bcast keeps the pipelines. So does allgather, whose n - 1 readers all read each
  // rank's one block (4 ranks, 64 KiB: 28.9 us against the pipelines' 23.8).
  // So does allreduce, whose second phase has n - 1 readers of each finished segment: forced
  // either way at 4, 8 and 16 ranks on 2 cores, 128 KiB-4 MiB, near and far hand-offs, the
  // pipelines took 0.22-0.94 of single copy's time, where the model gave 16 ranks single copy
  // from 128-512 KiB with far hand-offs (docs/results/2026-12-07-allreduce-readers). A
  // reduce_scatter is the first phase alone (each rank reads its own segment of every peer):
  // at 4 ranks, far, single copy took 0.55-0.8 of the pipelines' time, so it keeps the model.
  if ((kind == LargeCollective::kBcast || kind == LargeCollective::kAllgather ||
       kind == LargeCollective::kAllreduce) &&
      n > 2)
    return sizes;
  // Past kProfileLargeBytes both costs are linear in the size, so the verdict at the top of
  // the scan holds for every larger size.
  for (int64_t bytes = 4096; bytes < kNeverBytes; bytes <<= 1) {
    const bool wins = single_copy_ns(p, kind, n, bytes) < kSingleCopyMargin * pipeline_ns(p, kind, n, bytes, chunk);
    if (wins && sizes.from == kNeverBytes) sizes.from = bytes;
    if (!wins && sizes.from != kNeverBytes) {
      sizes.below = bytes;
      break;
    }
  }
  return sizes;
}

}  // namespace xmsg::coll
