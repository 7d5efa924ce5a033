// The algorithm table. Every algorithm here is correct for every communicator size; the
// thresholds only trade latency against bandwidth. "oversubscribed" = more ranks on this node
// than CPUs: then every round of an algorithm costs a pass of the scheduler over all ranks, so
// flat one- or two-round algorithms win (measured with 4-16 ranks on 2 cores, see
// docs/collectives.md).
//
//   collective  condition                                      algorithm
//   barrier, bcast, reduce, allreduce, alltoall: when every rank of the communicator is on
//               this node and the data fits a slot (SHM_SLOT bytes; n * block for alltoall;
//               bcast also <= SHM_BCAST_MAX):                  shared memory, one phase
//   bcast, allreduce, alltoall, allgather, reduce_scatter: one-node communicators whose members
//               may read each other's memory, from CMA_*_MIN bytes (block for alltoall and
//               allgather) and where the measured profile (or PIPE_*_MAX) does not keep the
//               pipelines: single-copy (CMA) reads
//   barrier     n <= BARRIER_LINEAR_MAX or oversubscribed      linear (to rank 0 and back)
//               otherwise                                      dissemination
//   bcast       oversubscribed and bytes <= BCAST_FLAT_MAX     linear
//               bytes < BCAST_LARGE or n <= 2                  binomial tree
//               otherwise                                      scatter + ring allgather
//   reduce      oversubscribed and bytes <= REDUCE_FLAT_MAX    linear (root folds in rank order)
//               otherwise                                      binomial tree (rank order kept
//                                                              for non-commutative ops)
//   allreduce   oversubscribed and bytes <= ALLREDUCE_FLAT_MAX linear (reduce at 0, send back)
//               bytes < ALLREDUCE_LARGE or count < p2          recursive doubling (+ fold)
//               otherwise                                      Rabenseifner (+ fold)
//   gather      block * n <= GATHER_SMALL                      binomial tree
//   scatter     otherwise                                      linear
//   allgather   block < ALLGATHER_LARGE                        Bruck
//               otherwise                                      ring
//   alltoall    block <= ALLTOALL_SMALL, n >= ALLTOALL_BRUCK_RANKS, not oversubscribed: Bruck
//               block < ALLTOALL_LARGE, or oversubscribed
//                 and block <= ALLTOALL_FLAT_MAX               linear (all posted at once)
//               otherwise                                      pairwise exchange
//   alltoallv   one-node communicator with CMA: each writer chooses for its own data, per call:
//               its slot when all of it fits, single copy (CMA) from its sendbuf for blocks
//               >= CMA_ALLTOALL_MIN, else point-to-point messages; otherwise each rank by its
//               own largest block, sent or received, as alltoall: linear or pairwise (the two
//               forms match each other, so ranks need not agree).
//   gatherv, scatterv: linear; allgatherv: ring.
#include "algorithm_selection.hpp"

#include <xmsg/bootstrap/parameters.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace xmsg::coll {
namespace {

// Ranges and defaults are the table's (bootstrap/src/parameter_table.cpp).
int64_t setting(const char* name) { return params::integer(name); }

bool tracing() {
  static const bool on = params::flag("XMSG_COLL_TRACE");
  return on;
}

bool counting() {
  static const bool on = params::flag("XMSG_COLL_TRACE_COUNTS");
  return on;
}

// XMSG_COLL_TRACE_COUNTS=1: rank 0 of each communicator counts its calls by collective, size
// and algorithm, and prints the counts when the process exits. A timed benchmark run can say
// which algorithm its own calls took (the profile, and so the choice, differs from one job to
// the next) at the cost of a comparison per call, where a line per call would be a system call.
class CallCounts {
 public:
  static CallCounts& instance() {
    static CallCounts* counts = [] {
      auto* made = new CallCounts;  // never destroyed: printed from an exit handler
      std::atexit([] { instance().print(); });
      return made;
    }();
    return *counts;
  }
  void count(const Comm& c, const char* collective, const char* algorithm, int64_t bytes) {
    std::lock_guard lock(lock_);  // MPI_THREAD_MULTIPLE: collectives of several communicators
    // A benchmark repeats one call: the row counted last is nearly always the one.
    if (last_ < rows_.size() && rows_[last_].same(c, collective, algorithm, bytes)) {
      ++rows_[last_].calls;
      return;
    }
    for (last_ = 0; last_ < rows_.size(); ++last_)
      if (rows_[last_].same(c, collective, algorithm, bytes)) {
        ++rows_[last_].calls;
        return;
      }
    rows_.push_back(Row{c.handle, c.size, collective, algorithm, bytes, 1});
  }

 private:
  struct Row {
    int handle, size;
    const char* collective;  // string literals of the selection table
    const char* algorithm;
    int64_t bytes;
    uint64_t calls;
    bool same(const Comm& c, const char* coll, const char* alg, int64_t b) const {
      return bytes == b && collective == coll && algorithm == alg && handle == c.handle && size == c.size;
    }
  };
  void print() {
    std::lock_guard lock(lock_);
    for (const Row& r : rows_)
      std::fprintf(stderr, "xmsg coll calls: comm %d rank 0/%d %s %lld B: %s: %llu calls\n", r.handle, r.size,
                   r.collective, static_cast<long long>(r.bytes), r.algorithm, static_cast<unsigned long long>(r.calls));
  }
  std::mutex lock_;
  std::vector<Row> rows_;
  size_t last_ = 0;
};

// XMSG_COLL_TRACE=1: one line per collective call saying which algorithm ran.
int traced(const Comm& c, const char* collective, const char* algorithm, int64_t bytes) {
  if (tracing())
    std::fprintf(stderr, "xmsg coll: comm %d rank %d/%d %s %lld B: %s\n", c.handle, c.rank, c.size, collective,
                 static_cast<long long>(bytes), algorithm);
  if (counting() && c.rank == 0) [[unlikely]] CallCounts::instance().count(c, collective, algorithm, bytes);
  return 0;
}

Thresholds load() {
  Thresholds t;
  t.node_aware = params::flag("XMSG_COLL_NODE_AWARE");
  t.shm = params::flag("XMSG_COLL_SHM");
  t.shm_slot = setting("XMSG_COLL_SHM_SLOT");
  t.shm_bcast_max = setting("XMSG_COLL_SHM_BCAST_MAX");
  const std::string barrier = params::choice("XMSG_COLL_SHM_BARRIER");
  t.shm_barrier = barrier == "all" ? ShmBarrier::kAll : barrier == "rooted" ? ShmBarrier::kRooted : ShmBarrier::kAuto;
  t.pipe_allgather_min = setting("XMSG_COLL_PIPE_ALLGATHER_MIN");
  t.pipe_reduce_scatter_min = setting("XMSG_COLL_PIPE_REDUCE_SCATTER_MIN");
  t.pipe_chunk = setting("XMSG_COLL_PIPE_CHUNK");
  t.pipe_chunks = setting("XMSG_COLL_PIPE_CHUNKS");
  t.pipe_bcast_max = params::integer_if_set("XMSG_COLL_PIPE_BCAST_MAX");
  t.pipe_allreduce_max = params::integer_if_set("XMSG_COLL_PIPE_ALLREDUCE_MAX");
  t.pipe_alltoall_max = params::integer_if_set("XMSG_COLL_PIPE_ALLTOALL_MAX");
  t.pipe_allgather_max = params::integer_if_set("XMSG_COLL_PIPE_ALLGATHER_MAX");
  t.pipe_reduce_scatter_max = params::integer_if_set("XMSG_COLL_PIPE_REDUCE_SCATTER_MAX");
  t.cma_bcast_min = setting("XMSG_COLL_CMA_BCAST_MIN");
  t.cma_allreduce_min = setting("XMSG_COLL_CMA_ALLREDUCE_MIN");
  t.cma_alltoall_min = setting("XMSG_COLL_CMA_ALLTOALL_MIN");
  t.cma_allgather_min = setting("XMSG_COLL_CMA_ALLGATHER_MIN");
  t.cma_reduce_scatter_min = setting("XMSG_COLL_CMA_REDUCE_SCATTER_MIN");
  t.barrier_linear_max = setting("XMSG_COLL_BARRIER_LINEAR_MAX");
  t.bcast_flat_max = setting("XMSG_COLL_BCAST_FLAT_MAX");
  t.reduce_flat_max = setting("XMSG_COLL_REDUCE_FLAT_MAX");
  t.allreduce_flat_max = setting("XMSG_COLL_ALLREDUCE_FLAT_MAX");
  t.alltoall_bruck_ranks = setting("XMSG_COLL_ALLTOALL_BRUCK_RANKS");
  t.bcast_large = setting("XMSG_COLL_BCAST_LARGE");
  t.allreduce_large = setting("XMSG_COLL_ALLREDUCE_LARGE");
  t.allgather_large = setting("XMSG_COLL_ALLGATHER_LARGE");
  t.alltoall_small = setting("XMSG_COLL_ALLTOALL_SMALL");
  t.alltoall_large = setting("XMSG_COLL_ALLTOALL_LARGE");
  t.alltoall_flat_max = setting("XMSG_COLL_ALLTOALL_FLAT_MAX");
  t.gather_small = setting("XMSG_COLL_GATHER_SMALL");
  return t;
}

std::string size_text(int64_t bytes) {
  if (bytes >= kNeverBytes) return "never";
  char text[32];
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
    std::snprintf(text, sizeof text, "%lld MiB", static_cast<long long>(bytes >> 20));
  else
    std::snprintf(text, sizeof text, "%lld KiB", static_cast<long long>(bytes >> 10));
  return text;
}

}  // namespace

void trace_profile(const Comm& c, const NodeProfile& p, const SingleCopySizes sizes[kLargeCollectives]) {
  if ((!tracing() && !counting()) || c.rank != 0) return;
  const auto gbps = [](double ns_per_byte) { return ns_per_byte > 0 ? 1 / ns_per_byte : 0.0; };
  char single_copy[48] = "n/a";
  if (p.cma_ns_per_byte > 0)
    std::snprintf(single_copy, sizeof single_copy, "%.1f/%.1f GB/s, %.0f ns a call", gbps(p.cma_ns_per_byte),
                  gbps(p.cma_at(kProfileLargeBytes)), p.cma_call_ns);
  const auto range = [](const SingleCopySizes& r) {
    if (r.from >= kNeverBytes) return std::string("never");
    if (r.below >= kNeverBytes) return "from " + size_text(r.from);
    return size_text(r.from) + " to " + size_text(r.below / 2);
  };
  std::fprintf(stderr,
               "xmsg coll: comm %d rank 0/%d profile: hand-off %.0f ns with rank %d (%d NUMA node%s)%s, copy "
               "%.1f/%.1f GB/s (%s/%s), handed copy %.1f GB/s out/%.1f/%.1f in (%s/%s), single copy %s; single copy: bcast %s, "
               "allreduce %s, alltoall %s, allgather %s, reduce_scatter %s\n",
               c.handle, c.size, p.sync_ns, p.partner, p.numa_nodes, p.numa_nodes == 1 ? "" : "s",
               p.shares_cores ? " (cores shared: not counted)" : "", gbps(p.copy_ns_per_byte),
               gbps(p.copy_at(kProfileLargeBytes)), size_text(kProfileSmallBytes).c_str(),
               size_text(kProfileLargeBytes).c_str(), gbps(p.handed_copy()), gbps(p.handed_write()),
               gbps(p.handed_write_over_ring()), size_text(kProfileSmallBytes).c_str(),
               size_text(p.handed_write_large_bytes > 0 ? p.handed_write_large_bytes : kProfileSmallBytes).c_str(), single_copy,
               range(sizes[0]).c_str(),
               range(sizes[1]).c_str(), range(sizes[2]).c_str(), range(sizes[3]).c_str(), range(sizes[4]).c_str());
}

const Thresholds& thresholds() {
  static const Thresholds t = load();
  return t;
}

bool oversubscribed() {
  static const bool answer = [] {
    if (auto forced = params::flag_if_set("XMSG_COLL_OVERSUBSCRIBED")) return *forced;
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && most_world_ranks_on_one_node() > cpus;
  }();
  return answer;
}

int ranks_per_core() {
  static const int answer = [] {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const long ranks = most_world_ranks_on_one_node();
    return cpus > 0 && ranks > cpus ? static_cast<int>((ranks + cpus - 1) / cpus) : 1;
  }();
  return answer;
}

// The communicator's shared-memory region when it can carry `bytes` (nullptr otherwise).
// Everything it looks at is the same on every rank, so all ranks choose alike.
static NodeShm* shm_for(const Comm& c, int64_t bytes) {
  if (bytes > thresholds().shm_slot) return nullptr;
  return node_shm(c);
}

// The communicator's shared-memory region when its members may read each other's buffers
// (CMA) and `bytes` >= `min` (nullptr otherwise); same answer on every rank.
static NodeShm* cma_for(const Comm& c, int64_t bytes, int64_t min) {
  if (bytes < min) return nullptr;
  NodeShm* shm = node_shm(c);
  return shm && node_shm_cma(*shm) ? shm : nullptr;
}

// The communicator's shared-memory region when `bytes` (> a slot) may stream through its
// pipelines: `wanted`, and a rank's stream in one collective (at most about 2 * n * bytes) has
// few enough chunks for a stamp (2^24).
static NodeShm* pipe_for(const Comm& c, int64_t bytes, bool wanted) {
  if (!wanted || 2 * c.size * (bytes / thresholds().pipe_chunk + 1) >= (int64_t{1} << 24)) return nullptr;
  return node_shm(c);
}

// The user's XMSG_COLL_PIPE_*_MAX (with XMSG_COLL_CMA_*_MIN) when set, else the measured
// profile's single-copy sizes (every rank got the same profile from rank 0, so all agree).
// Communicators without a region: no pipelines.
static LargeLimits large_limits(const Comm& c, LargeCollective kind, const std::optional<int64_t>& pipe_max,
                                int64_t cma_min) {
  if (pipe_max) return {*pipe_max, cma_min};
  NodeShm* shm = node_shm(c);
  if (!shm) return {0, cma_min};
  const SingleCopySizes sizes = node_shm_single_copy(*shm, kind);
  return {sizes.from - 1, std::min(cma_min, sizes.from), sizes.below};
}

int run_barrier(const Comm& c) {
  if (NodeShm* shm = shm_for(c, 0)) return traced(c, "barrier", "shared memory", 0) + shm_barrier(*shm, c);
  if (node_aware_possible(c)) {
    bool done = false;
    int e = node_aware_barrier(c, &done);
    if (done) return traced(c, "barrier", "node-aware", 0) + e;
  }
  if (c.size <= thresholds().barrier_linear_max || oversubscribed()) return traced(c, "barrier", "linear", 0) + barrier_linear(c);
  return traced(c, "barrier", "dissemination", 0) + barrier_dissemination(c);
}

int run_bcast(const Comm& c, Dst buf, int64_t bytes, int root) {
  // Measured with 2 ranks pinned: from 16 KiB on, the point-to-point bcast beat the slot.
  if (NodeShm* shm = bytes <= thresholds().shm_bcast_max ? shm_for(c, bytes) : nullptr)
    return traced(c, "bcast", "shared memory", bytes) + shm_bcast(*shm, c, buf, bytes, root);
  const LargeLimits large =
      large_limits(c, LargeCollective::kBcast, thresholds().pipe_bcast_max, thresholds().cma_bcast_min);
  if (NodeShm* shm = pipe_for(c, bytes, large.pipelines(bytes)))
    return traced(c, "bcast", "pipelined shared memory", bytes) + shm_bcast_pipe(*shm, c, buf, bytes, root);
  if (NodeShm* shm = cma_for(c, bytes, large.cma_min))
    return traced(c, "bcast", "single-copy (CMA)", bytes) + shm_bcast_cma(*shm, c, buf, bytes, root);
  // Point-to-point from here on; a one-node communicator still numbers it and posts its size in
  // its region, where a rank whose other count chose a shared-memory algorithm looks.
  PostedSize posted(node_shm(c), c, bytes, "xmsg_bcast");
  if (node_aware_possible(c)) {
    bool done = false;
    int e = node_aware_bcast(c, buf, bytes, root, &done);
    if (done) return traced(c, "bcast", "node-aware", bytes) + e;
  }
  if (oversubscribed() && bytes <= thresholds().bcast_flat_max)
    return traced(c, "bcast", "linear", bytes) + bcast_linear(c, buf, bytes, root);
  if (c.size <= 2 || bytes < thresholds().bcast_large)
    return traced(c, "bcast", "binomial", bytes) + bcast_binomial(c, buf, bytes, root);
  return traced(c, "bcast", "scatter+allgather", bytes) + bcast_scatter_allgather(c, buf, bytes, root);
}

int run_reduce(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op, int root) {
  if (NodeShm* shm = shm_for(c, count * static_cast<int64_t>(op.elem_size)))
    return traced(c, "reduce", "shared memory", count * static_cast<int64_t>(op.elem_size)) +
           shm_reduce(*shm, c, sendbuf, recvbuf, count, op, root, false);
  PostedSize posted(node_shm(c), c, count * static_cast<int64_t>(op.elem_size), "xmsg_reduce");  // as in run_bcast
  if (oversubscribed() && count * static_cast<int64_t>(op.elem_size) <= thresholds().reduce_flat_max)
    return traced(c, "reduce", "linear", count * static_cast<int64_t>(op.elem_size)) +
           reduce_linear(c, sendbuf, recvbuf, count, op, root);
  traced(c, "reduce", op.commutative ? "binomial" : "binomial in rank order", count * static_cast<int64_t>(op.elem_size));
  return reduce_binomial(c, sendbuf, recvbuf, count, op, root);
}

int run_allreduce(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op) {
  int p2 = 1;
  while (p2 * 2 <= c.size) p2 *= 2;
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  if (NodeShm* shm = shm_for(c, bytes))
    return traced(c, "allreduce", "shared memory", bytes) + shm_reduce(*shm, c, sendbuf, recvbuf, count, op, 0, true);
  const LargeLimits large =
      large_limits(c, LargeCollective::kAllreduce, thresholds().pipe_allreduce_max, thresholds().cma_allreduce_min);
  if (NodeShm* shm = op.commutative ? pipe_for(c, bytes, large.pipelines(bytes)) : nullptr)
    return traced(c, "allreduce", "pipelined shared memory", bytes) + shm_allreduce_pipe(*shm, c, sendbuf, recvbuf, count, op);
  if (NodeShm* shm = cma_for(c, bytes, large.cma_min))
    return traced(c, "allreduce", "single-copy (CMA)", bytes) + shm_allreduce_cma(*shm, c, sendbuf, recvbuf, count, op);
  PostedSize posted(node_shm(c), c, bytes, "xmsg_allreduce");  // as in run_bcast
  if (node_aware_possible(c)) {
    bool done = false;
    int e = node_aware_allreduce(c, sendbuf, recvbuf, count, op, &done);
    if (done) return traced(c, "allreduce", "node-aware", bytes) + e;
  }
  if (oversubscribed() && bytes <= thresholds().allreduce_flat_max)
    return traced(c, "allreduce", "linear", bytes) + allreduce_linear(c, sendbuf, recvbuf, count, op);
  if (bytes < thresholds().allreduce_large || count < p2)
    return traced(c, "allreduce", "recursive doubling", bytes) + allreduce_recursive_doubling(c, sendbuf, recvbuf, count, op);
  return traced(c, "allreduce", "rabenseifner", bytes) + allreduce_rabenseifner(c, sendbuf, recvbuf, count, op);
}

int run_gather(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root) {
  if (block * c.size <= thresholds().gather_small)
    return traced(c, "gather", "binomial", block) + gather_binomial(c, sendbuf, recvbuf, block, root);
  traced(c, "gather", "linear", block);
  if (c.rank != root) return gatherv_linear(c, sendbuf, block, nullptr, nullptr, nullptr, root);
  Scratch layout_store(2 * c.size * static_cast<int64_t>(sizeof(int64_t)));
  auto* counts = reinterpret_cast<int64_t*>(layout_store.get());
  int64_t* displs = counts + c.size;
  for (int i = 0; i < c.size; ++i) {
    counts[i] = block;
    displs[i] = i * block;
  }
  return gatherv_linear(c, sendbuf, block, recvbuf, counts, displs, root);
}

int run_scatter(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root) {
  if (block * c.size <= thresholds().gather_small)
    return traced(c, "scatter", "binomial", block) + scatter_binomial(c, sendbuf, recvbuf, block, root);
  traced(c, "scatter", "linear", block);
  if (c.rank != root) return scatterv_linear(c, nullptr, nullptr, nullptr, recvbuf, block, root);
  Scratch layout_store(2 * c.size * static_cast<int64_t>(sizeof(int64_t)));
  auto* counts = reinterpret_cast<int64_t*>(layout_store.get());
  int64_t* displs = counts + c.size;
  for (int i = 0; i < c.size; ++i) {
    counts[i] = block;
    displs[i] = i * block;
  }
  return scatterv_linear(c, sendbuf, counts, displs, recvbuf, block, root);
}

int run_allgather(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  if (block >= thresholds().pipe_allgather_min) {
    const LargeLimits large = large_limits(c, LargeCollective::kAllgather, thresholds().pipe_allgather_max,
                                           thresholds().cma_allgather_min);
    if (NodeShm* shm = pipe_for(c, block, large.pipelines(block)))
      return traced(c, "allgather", "pipelined shared memory", block) +
             shm_allgather_pipe(*shm, c, sendbuf, recvbuf, block);
    if (NodeShm* shm = cma_for(c, block, large.cma_min))
      return traced(c, "allgather", "single-copy (CMA)", block) + shm_allgather_cma(*shm, c, sendbuf, recvbuf, block);
  }
  if (NodeShm* shm = shm_for(c, block))
    return traced(c, "allgather", "shared memory", block) + shm_allgather(*shm, c, sendbuf, recvbuf, block);
  if (sendbuf) copy_bytes(at(recvbuf, c.rank * block), sendbuf, block);
  PostedSize posted(node_shm(c), c, block, "xmsg_allgather");  // as in run_bcast
  if (block < thresholds().allgather_large) return traced(c, "allgather", "bruck", block) + allgather_bruck(c, recvbuf, block);
  traced(c, "allgather", "ring", block);
  Scratch layout_store(2 * c.size * static_cast<int64_t>(sizeof(int64_t)));
  auto* counts = reinterpret_cast<int64_t*>(layout_store.get());
  int64_t* displs = counts + c.size;
  for (int i = 0; i < c.size; ++i) {
    counts[i] = block;
    displs[i] = i * block;
  }
  return allgatherv_ring(c, recvbuf, counts, displs);
}

int run_reduce_scatter(const Comm& c, const void* sendbuf, void* recvbuf, const int64_t* counts, const ReduceOp& op) {
  int64_t total = 0;
  for (int j = 0; j < c.size; ++j) total += counts[j];
  const int64_t es = static_cast<int64_t>(op.elem_size), bytes = total * es;
  // Allreduce's costs (LargeCollective::kReduceScatter): a reduce_scatter is its first phase,
  // and the model's term for that phase alone (pipelines (n-1)/n V in and out, single copy
  // (n-1)/n V read) chose single copy from 32 KiB with near hand-offs, where the pipelines
  // measured 1.07-1.67x faster at 2 ranks and up to 2.7x at 4 (single copy's fold is a pass of
  // its own; the pipelines fold from the chunk). Allreduce's keeps the pipelines there but at
  // 128-512 KiB with 2 ranks, and takes single copy with far hand-offs, where it measured
  // 2.5-4.8x faster than the pipelines. Unlike allreduce it keeps single copy past 2 ranks: it
  // has no phase whose readers share pages (node_profile.cpp).
  const LargeLimits large = large_limits(c, LargeCollective::kReduceScatter, thresholds().pipe_reduce_scatter_max,
                                         thresholds().cma_reduce_scatter_min);
  if (NodeShm* shm = op.commutative && bytes >= thresholds().pipe_reduce_scatter_min
                         ? pipe_for(c, bytes, large.pipelines(bytes))
                         : nullptr)
    return traced(c, "reduce_scatter", "pipelined shared memory", bytes) +
           shm_reduce_scatter_pipe(*shm, c, sendbuf, recvbuf, counts, op);
  // The caller copied an in-place vector aside (xmsg_reduce_scatter), so peers never read
  // what this rank is writing.
  if (NodeShm* shm = cma_for(c, bytes, large.cma_min))
    return traced(c, "reduce_scatter", "single-copy (CMA)", bytes) +
           shm_reduce_scatter_cma(*shm, c, sendbuf, recvbuf, counts, op);
  // Otherwise the whole vector is reduced everywhere (the allreduce table picks how) and each
  // rank keeps its segment: at most twice the data of a dedicated reduce-scatter, with every
  // allreduce algorithm behind it.
  traced(c, "reduce_scatter", "allreduce, own segment kept", bytes);
  Scratch whole(bytes);
  if (int e = run_allreduce(c, sendbuf, whole.get(), total, op)) return e;
  int64_t before = 0;
  for (int j = 0; j < c.rank; ++j) before += counts[j];
  copy_bytes(recvbuf, at(whole.get(), before * es), counts[c.rank] * es);
  return XMSG_SUCCESS;
}

// The table's rule for the point-to-point forms of alltoall and alltoallv: linear (every send
// and receive posted at once) below ALLTOALL_LARGE, or oversubscribed up to ALLTOALL_FLAT_MAX.
static bool alltoall_linear_for(int64_t block) {
  return block < thresholds().alltoall_large || (oversubscribed() && block <= thresholds().alltoall_flat_max);
}

int run_alltoallv(const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls, Dst recvbuf,
                  const int64_t* rcounts, const int64_t* rdispls) {
  // Traced with the largest block received, what the OSU-style tables call the size (found only
  // when tracing or counting). One-node communicators whose members may read each other's
  // memory: each writer chooses per call how its own data travels (shm_alltoallv), so no
  // agreement on the counts is needed and every rank takes this branch alike (it depends on the
  // communicator only); the trace, written after the call, says how this rank's blocks went.
  const int64_t largest = tracing() || counting() ? *std::max_element(rcounts, rcounts + c.size) : 0;
  if (NodeShm* shm = cma_for(c, 0, 0); shm && shm_alltoallv_table_bytes(c.size) <= thresholds().shm_slot) {
    const LargeLimits large =
        large_limits(c, LargeCollective::kAlltoall, thresholds().pipe_alltoall_max, thresholds().cma_alltoall_min);
    const char* how = "shared memory, per writer";
    const int e = shm_alltoallv(*shm, c, sendbuf, scounts, sdispls, recvbuf, rcounts, rdispls, large, &how);
    return traced(c, "alltoallv", how, largest) + e;
  }
  // Off the one-node path the form is this rank's own choice (alltoall.cpp: both forms match
  // each other), by the alltoall table's rule applied to its largest block either way.
  const int64_t own_largest = std::max(*std::max_element(scounts, scounts + c.size),
                                       *std::max_element(rcounts, rcounts + c.size));
  if (alltoall_linear_for(own_largest))
    return traced(c, "alltoallv", "linear", largest) +
           alltoallv_linear(c, sendbuf, scounts, sdispls, recvbuf, rcounts, rdispls);
  return traced(c, "alltoallv", "pairwise", largest) +
         alltoallv_pairwise(c, sendbuf, scounts, sdispls, recvbuf, rcounts, rdispls);
}

int run_alltoall(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  if (NodeShm* shm = shm_for(c, block * c.size))
    return traced(c, "alltoall", "shared memory", block) + shm_alltoall(*shm, c, sendbuf, recvbuf, block);
  const LargeLimits large =
      large_limits(c, LargeCollective::kAlltoall, thresholds().pipe_alltoall_max, thresholds().cma_alltoall_min);
  if (NodeShm* shm = pipe_for(c, block, large.pipelines(block)))
    return traced(c, "alltoall", "pipelined shared memory", block) + shm_alltoall_pipe(*shm, c, sendbuf, recvbuf, block);
  if (NodeShm* shm = cma_for(c, block, large.cma_min))
    return traced(c, "alltoall", "single-copy (CMA)", block) + shm_alltoall_cma(*shm, c, sendbuf, recvbuf, block);
  PostedSize posted(node_shm(c), c, block, "xmsg_alltoall");  // as in run_bcast
  if (block <= thresholds().alltoall_small && c.size >= thresholds().alltoall_bruck_ranks && !oversubscribed())
    return traced(c, "alltoall", "bruck", block) + alltoall_bruck(c, sendbuf, recvbuf, block);
  if (alltoall_linear_for(block))
    return traced(c, "alltoall", "linear", block) + alltoall_linear(c, sendbuf, recvbuf, block);
  return traced(c, "alltoall", "pairwise", block) + alltoall_pairwise(c, sendbuf, recvbuf, block);
}

}  // namespace xmsg::coll
