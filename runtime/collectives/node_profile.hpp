// What the runtime measures of a one-node communicator when it sets up its shared-memory
// region, and the choice it makes from that between the two ways a large one-node
// collective can move data:
//   pipelines    each writer copies its data a chunk at a time into its ring in the region and
//                the readers copy it out: two plain copies of every byte, cheap per byte, and
//                one cache-line hand-off per chunk to say it is there;
//   single copy  readers read the writer's own buffer with process_vm_readv (CMA): one copy,
//                but the kernel pins every page it reads, which costs far more per byte on some
//                machines (this project's VM: ~14 GB/s against ~50 GB/s for memcpy) than on
//                others (huge pages, kernels that pin in large folios).
// Which is faster follows from three numbers the runtime can measure on any machine — what a
// copy costs per byte, what a CMA read costs per byte, what a hand-off between two ranks
// costs — so the table compares predicted costs (large_path_from) instead of fixed sizes
// tuned to one machine. Rank 0 of the communicator measures and sends its numbers to the
// others with the set-up verdict, so every rank computes the same choice from the same
// inputs: different choices on different ranks are impossible by construction.
// XMSG_COLL_PIPE_*_MAX set by the user replaces the choice (docs/collectives.md).
#pragma once

#include <cstdint>

namespace xmsg::coll {

struct NodeProfile {
  // Half the median round trip of a 1-byte message between rank 0 and `partner` (the cost of
  // telling a peer that data is there, transport included); 0 when not measured.
  double sync_ns = 0;
  // The rank rank 0 timed the round trips with: the first rank on another NUMA node than rank
  // 0's when the communicator spans several (a pipeline waits for its slowest hand-off, and
  // one across NUMA nodes or sockets costs more than one inside), else rank 1.
  int partner = 1;
  // NUMA nodes the communicator's ranks run on (each rank's at set-up, getcpu(2)); 1 when
  // unknown.
  int numa_nodes = 1;
  // Plain memcpy between two kProfileSmallBytes buffers of one process, ns per byte (the
  // fastest of a few).
  double copy_ns_per_byte = 0;
  // Copying out data another rank (`partner`) has just written, as a pipeline's reader does:
  // every line comes from the writer's cache. ns per byte; 0 when not measured (the plain
  // copy then stands for it).
  double handed_copy_ns_per_byte = 0;
  double handed_copy() const { return handed_copy_ns_per_byte > 0 ? handed_copy_ns_per_byte : copy_ns_per_byte; }
  // Writing lines another rank (`partner`) has just read, as a pipeline's writer does when its
  // ring comes round: each line must be taken back from the reader's cache. ns per byte; 0
  // when not measured (the plain copy then stands for it). This VM: 20-35 GB/s where a local
  // copy of the same 16-64 KiB runs at 57-190; counted as a plain copy the model put 2-rank
  // alltoall's pipelines at half their measured time (16-64 KiB).
  double handed_write_ns_per_byte = 0;
  double handed_write() const { return handed_write_ns_per_byte > 0 ? handed_write_ns_per_byte : copy_ns_per_byte; }
  // The same write over a whole ring the reader read (handed_write_large_bytes, more than its
  // core's own cache holds); 0 when not measured (the small figure then holds at every size).
  // Where the two ranks share the last-level cache the reader has lost most lines to it and
  // the write costs about a plain copy (this VM, near hand-offs: 1 MiB blocks through a 2-rank
  // alltoall's pipelines in 76-84 us); where they do not, the lines sit in the reader's own
  // last-level cache and every one is still taken back (far hand-offs: 680-700 us, the handed
  // write's 2 GB/s).
  double handed_write_large_ns_per_byte = 0;
  int64_t handed_write_large_bytes = 0;
  // The handed write as a pipeline's writer meets it at any size: the rings turn between
  // collectives (ring_slot, shm_collectives.cpp), so a slot comes round only after its reader
  // took about a ring's worth of other chunks. The figure over the ring; the small one when
  // that was not timed.
  double handed_write_over_ring() const {
    return handed_write_large_ns_per_byte > 0 ? handed_write_large_ns_per_byte : handed_write();
  }
  // process_vm_readv of a kProfileSmallBytes buffer (the process reads itself: the same page
  // pinning as reading a peer), ns per byte; 0 when the communicator's ranks may not read each
  // other.
  double cma_ns_per_byte = 0;
  // The same two for kProfileLargeBytes buffers; 0 when not measured (the small figures then
  // stand for them). Past the caches both cost more per byte, and not alike: on this project's
  // VM memcpy went from 53 to 13 GB/s and CMA from 29 to 9, so a choice from one size held at
  // no other (docs/collectives.md, "pipelines or single copy").
  double copy_large_ns_per_byte = 0;
  double cma_large_ns_per_byte = 0;
  // One process_vm_readv of 4 KiB, ns (the call's fixed cost: entering the kernel, finding the
  // mm, pinning one page); 0 when not measured (1 us is assumed). This VM: 400-450 ns.
  double cma_call_ns = 0;
  // Per-byte costs for a call that touches `bytes` of each buffer: the small figure up to
  // kProfileSmallBytes, the large one from kProfileLargeBytes, linear in log2(bytes) between.
  double copy_at(int64_t bytes) const;
  double cma_at(int64_t bytes) const;
  // More ranks than CPUs (oversubscribed()): a waiting rank then yields to one with work, so
  // waits cost no time the collective needed, and the choice compares the copying alone (the
  // round trip above then measures the scheduler: 2-4 us at 4-8 ranks on 2 cores, while the
  // pipelines still beat single copy 1.6-6x there).
  bool shares_cores = false;
  // With cores shared: the most ranks of the job on one core (the fullest node's ranks over its
  // CPUs, rounded up), and the chunks of a writer's pipeline ring. A writer whose stream is
  // longer than its ring waits for its readers chunk by chunk from then on, and a reader
  // queued behind other ranks on its core runs only after them (ring_wait_ns).
  int ranks_per_core = 1;
  int ring_chunks = 0;  // 0: not known (no such wait counted)
  double ring_wait_ns() const;
  bool measured() const { return copy_ns_per_byte > 0; }
  double handoff_cost_ns() const { return shares_cores ? 0 : sync_ns; }
  // What single copy's two waits per call cost: a hand-off, and with cores shared a wake-up of
  // a rank that is not running (the round trip measures the scheduler then). Unlike a pipeline
  // writer, who leaves its data in the ring and goes on, a single-copy rank cannot leave before
  // every reader of its buffer has run: 4 ranks on 2 cores took 9-13 us at 8-16 KiB by single
  // copy against 6.4-11.5 through the pipelines.
  double single_copy_wait_ns() const { return sync_ns; }
};

// The two buffer sizes the copy costs are measured at (NodeProfile).
constexpr int64_t kProfileSmallBytes = int64_t{256} << 10;
constexpr int64_t kProfileLargeBytes = int64_t{2} << 20;

// Whom rank 0 times its round trips with (NodeProfile::partner), from every rank's NUMA node
// (numa_of_rank[r], -1 when unknown; at least 2 ranks): the first rank whose node differs
// from rank 0's, else rank 1. Every rank computes it from the same published nodes.
int profile_partner(const int* numa_of_rank, int ranks);
// Distinct known nodes among numa_of_rank (at least 1).
int numa_nodes_spanned(const int* numa_of_rank, int ranks);

// kReduceScatter: costed as allreduce (run_reduce_scatter says why), but not barred from single
// copy where allreduce is (single_copy_sizes).
enum class LargeCollective { kBcast, kAllreduce, kAlltoall, kAllgather, kReduceScatter };
constexpr int kLargeCollectives = 5;

// Bytes that never come (larger than any buffer).
constexpr int64_t kNeverBytes = int64_t{1} << 50;

// Predicted time (ns) of a one-node collective of `bytes` (the block, for alltoall) on `n`
// ranks through the pipelines (chunks of `chunk` bytes) or by single copy. Counted per rank
// on the critical path (docs/collectives.md, "pipelines or single copy"); copies into a ring
// and of a rank's own data are plain copies, copies out of a peer's ring handed copies (a
// ring is small and stays in cache: one figure for every size); plain copies and CMA reads
// cost what the profile says for the bytes the call touches in each buffer (n·B for alltoall,
// B for bcast, V for allreduce):
//   alltoall   pipelines: B copied (its own) + (n-1)·B handed in (written over lines a reader
//              took) + (n-1)·B handed out +
//              a hand-off per chunk of a block (the n-1 streams' hand-offs overlap) + with
//              cores shared, ring_wait_ns per chunk of its stream past its ring; single
//              copy: (n-1)·B CMA reads + its own block copied + one post and one done hand-off
//              + a system call per peer
//   bcast      pipelines: the larger of B handed in (the root) and B handed out (a reader),
//              + the first chunk, which nothing overlaps, written over lines just read (the
//              handed write's small figure), + a hand-off per chunk; single copy: B read + post and done (2 ranks: B/2, read by the reader
//              while the root writes the rest, + the reader's post)
//   allreduce  pipelines: V handed in + (n-1)/n·V handed out + a hand-off per chunk of a
//              segment in each phase; single copy: 2(n-1)/n·V read (segments to fold, finished
//              segments); the folds are the same in both and left out
//   reduce_scatter as allreduce
//   allgather  pipelines: B handed in (its block, once for all readers) + (n-1)·B handed out +
//              its own block copied + a hand-off per chunk; single copy: as alltoall's
double pipeline_ns(const NodeProfile& p, LargeCollective kind, int n, int64_t bytes, int64_t chunk);
double single_copy_ns(const NodeProfile& p, LargeCollective kind, int n, int64_t bytes);

// Single copy must be predicted to take at most this fraction of the pipelines' time before
// it is chosen: without a margin the few percent of noise in the set-up measurement decided the
// path where the two predictions are close, differently from one job to the next. 0.85: with
// the two-size costs this VM's alltoall at 4-8 ranks predicts 0.75-0.82 at 512 KiB-1 MiB, and
// single copy measured 0.80-0.93 of the pipelines there (same run); at 0.8 the choice flipped
// between jobs. Where the prediction sits near the margin both paths measure within ~5%.
constexpr double kSingleCopyMargin = 0.85;

// The sizes single copy takes: [from, below), powers of two; empty (from = kNeverBytes) when
// it never wins, below = kNeverBytes when it wins up to the largest sizes.
struct SingleCopySizes {
  int64_t from = kNeverBytes;
  int64_t below = kNeverBytes;
  bool contains(int64_t bytes) const { return bytes >= from && bytes < below; }
};

// The first run of power-of-two sizes (from 4 KiB up) at which single copy is predicted to take
// at most kSingleCopyMargin of the pipelines' time; a size between two powers of two goes with
// the power below it. Empty when CMA is not possible (cma_ns_per_byte 0) or nothing was measured.
SingleCopySizes single_copy_sizes(const NodeProfile& p, LargeCollective kind, int n, int64_t chunk);

}  // namespace xmsg::coll
