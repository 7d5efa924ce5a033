// The large one-node collective choice (runtime/collectives/node_profile.hpp) on machines unlike
// this one: profiles as the set-up measurement would report them there.
#include "node_profile.hpp"

#include <gtest/gtest.h>

#include <initializer_list>

using xmsg::coll::kNeverBytes;
using xmsg::coll::kSingleCopyMargin;
using xmsg::coll::single_copy_sizes;
using xmsg::coll::SingleCopySizes;
using xmsg::coll::LargeCollective;
using xmsg::coll::NodeProfile;
using xmsg::coll::pipeline_ns;
using xmsg::coll::single_copy_ns;

namespace {

constexpr int64_t kChunk = 64 << 10;
constexpr auto kAll = {LargeCollective::kBcast, LargeCollective::kAllreduce, LargeCollective::kAlltoall,
                       LargeCollective::kAllgather, LargeCollective::kReduceScatter};

NodeProfile profile(double sync_ns, double copy_gbps, double cma_gbps) {
  NodeProfile p;
  p.sync_ns = sync_ns;
  p.copy_ns_per_byte = 1 / copy_gbps;
  p.cma_ns_per_byte = cma_gbps > 0 ? 1 / cma_gbps : 0;
  return p;
}

// A profile measured at both sizes (GB/s; the second figure of each pair past the caches).
NodeProfile two_size_profile(double sync_ns, double copy_gbps, double copy_large_gbps, double cma_gbps,
                             double cma_large_gbps, double handed_out_gbps, double handed_in_gbps, double call_ns) {
  NodeProfile p = profile(sync_ns, copy_gbps, cma_gbps);
  p.copy_large_ns_per_byte = 1 / copy_large_gbps;
  p.cma_large_ns_per_byte = 1 / cma_large_gbps;
  p.handed_copy_ns_per_byte = 1 / handed_out_gbps;
  p.handed_write_ns_per_byte = 1 / handed_in_gbps;
  p.cma_call_ns = call_ns;
  return p;
}

// `p` with its handed write also timed over a 1 MiB ring (GB/s), and cores shared or not.
NodeProfile with_ring_write(NodeProfile p, double ring_gbps, bool shares_cores = false) {
  p.handed_write_large_ns_per_byte = 1 / ring_gbps;
  p.handed_write_large_bytes = int64_t{1} << 20;
  p.shares_cores = shares_cores;
  return p;
}

int64_t single_copy_from(const NodeProfile& p, LargeCollective kind, int n, int64_t chunk) {
  return single_copy_sizes(p, kind, n, chunk).from;
}

bool single_copy_wins(const NodeProfile& p, LargeCollective kind, int n, int64_t bytes) {
  return single_copy_ns(p, kind, n, bytes) < kSingleCopyMargin * pipeline_ns(p, kind, n, bytes, kChunk);
}

// Inside the sizes returned single copy is predicted faster by the margin; just below them
// (when that is a size scanned) and at their end it is not.
void expect_crossover_consistent(const NodeProfile& p, LargeCollective kind, int n) {
  const SingleCopySizes sizes = single_copy_sizes(p, kind, n, kChunk);
  if (sizes.from >= kNeverBytes) return;
  for (int64_t bytes = sizes.from; bytes < sizes.below; bytes <<= 1) EXPECT_TRUE(single_copy_wins(p, kind, n, bytes)) << bytes;
  if (sizes.from > 4096) {
    EXPECT_FALSE(single_copy_wins(p, kind, n, sizes.from / 2));
  }
  if (sizes.below < kNeverBytes) {
    EXPECT_FALSE(single_copy_wins(p, kind, n, sizes.below));
  }
}

}  // namespace

// This project's VM: process_vm_readv pins every 4 KiB page (6-14 GB/s) while memcpy moves
// 40-100 GB/s, so two copies through the rings beat one CMA read at every size.
TEST(NodeProfile, SlowPagePinningKeepsThePipelines) {
  for (const NodeProfile& p : {profile(155, 40.8, 6.3), profile(60, 100, 14)})
    for (auto kind : kAll)
      for (int n : {2, 4, 8, 16}) EXPECT_EQ(single_copy_from(p, kind, n, kChunk), kNeverBytes);
}

// A machine where a CMA read costs what a copy costs (huge pages, pinning in large folios):
// where one read replaces clearly more copies (alltoall: (n-1) reads against 2n-2 copies in
// and out; allreduce at 2 ranks: V reads against 1.5 V copies) single copy takes the large
// sizes once the system call is paid for. At 2 ranks a single-copy bcast splits the copy
// between the reader and the root (each moves half), so it takes every size from a few chunks
// on; with more readers of one buffer it is never taken, nor is allreduce's past 2 ranks (its
// second phase has n - 1 readers of each segment). A reduce_scatter, costed as allreduce but
// without that phase, saves less than the margin at 4-8 ranks until the pipelines' hand-offs
// add up (hundreds of MiB).
TEST(NodeProfile, CheapPagePinningTakesSingleCopyForLargeSizes) {
  const NodeProfile p = profile(100, 20, 20);
  for (int n : {2, 4, 8}) {
    const int64_t from = single_copy_from(p, LargeCollective::kAlltoall, n, kChunk);
    EXPECT_LE(from, int64_t{4} << 20) << " n=" << n;
    EXPECT_GE(from, 4096);
    const SingleCopySizes bcast = single_copy_sizes(p, LargeCollective::kBcast, n, kChunk);
    if (n == 2) {
      EXPECT_LE(bcast.from, 4 * kChunk);
      EXPECT_EQ(bcast.below, kNeverBytes);
    } else {  // readers of one buffer contend on its pages: never predicted, never taken
      EXPECT_EQ(bcast.from, kNeverBytes) << " n=" << n;
    }
    for (auto kind : kAll) expect_crossover_consistent(p, kind, n);
  }
  EXPECT_LE(single_copy_from(p, LargeCollective::kAllreduce, 2, kChunk), int64_t{4} << 20);
  EXPECT_EQ(single_copy_from(p, LargeCollective::kReduceScatter, 2, kChunk),
            single_copy_from(p, LargeCollective::kAllreduce, 2, kChunk));
  EXPECT_GE(single_copy_from(p, LargeCollective::kReduceScatter, 4, kChunk), int64_t{64} << 20);
}

// Slow hand-offs make single copy the allreduce model's choice at 4 ranks; allreduce still
// keeps the pipelines there and above (n - 1 readers of each finished segment), reduce_scatter
// follows the model.
TEST(NodeProfile, AllreducePastTwoRanksKeepsThePipelines) {
  const NodeProfile p = profile(5000, 20, 15);
  EXPECT_LT(single_copy_from(p, LargeCollective::kReduceScatter, 4, kChunk), kNeverBytes);
  expect_crossover_consistent(p, LargeCollective::kReduceScatter, 4);
  for (int n : {4, 8, 16}) EXPECT_EQ(single_copy_from(p, LargeCollective::kAllreduce, n, kChunk), kNeverBytes) << " n=" << n;
  EXPECT_LT(single_copy_from(p, LargeCollective::kAllreduce, 2, kChunk), kNeverBytes);
}

// Slow hand-offs (ranks on two sockets, or waiting for a peer that shares the core: a few
// microseconds to tell a peer a chunk is there) cost the pipelines one per chunk and single copy
// two per call: for large data single copy gains from them, for small data it loses.
TEST(NodeProfile, SlowHandOffsFavourSingleCopyForLargeData) {
  const NodeProfile fast = profile(100, 20, 15);
  const NodeProfile slow = profile(5000, 20, 15);
  for (int n : {2, 4, 8}) {
    const int64_t big = int64_t{4} << 20, small = 4096;
    const auto advantage = [&](const NodeProfile& p, int64_t bytes) {
      return pipeline_ns(p, LargeCollective::kAlltoall, n, bytes, kChunk) -
             single_copy_ns(p, LargeCollective::kAlltoall, n, bytes);
    };
    EXPECT_GT(advantage(slow, big), advantage(fast, big)) << n;
    EXPECT_LT(advantage(slow, small), advantage(fast, small)) << n;
    EXPECT_LT(single_copy_from(slow, LargeCollective::kAlltoall, n, kChunk), kNeverBytes) << n;
    expect_crossover_consistent(slow, LargeCollective::kAlltoall, n);
  }
}

// What set-up measured here with 8 ranks on the 2 cores (the round trip waits for a peer to be
// scheduled): the pipelines still win at every size, as measured (docs/collectives.md).
// Counted as hand-offs they would send bcast to single copy from 4 MiB and alltoall from
// 4 KiB (the model before waits on a shared core were left out), where the pipelines measured
// 2.3-6x (bcast 256 KiB-4 MiB) and 1.6-2x (alltoall) faster.
TEST(NodeProfile, OversubscribedHandOffsKeepThePipelinesHere) {
  NodeProfile p = profile(4326, 47.1, 11.8);
  p.shares_cores = true;
  for (auto kind : kAll)
    for (int n : {4, 8, 16}) EXPECT_EQ(single_copy_from(p, kind, n, kChunk), kNeverBytes);
}

TEST(NodeProfile, NoSingleCopyWithoutCmaOrMeasurement) {
  for (auto kind : kAll) {
    EXPECT_EQ(single_copy_from(profile(100, 20, 0), kind, 4, kChunk), kNeverBytes);  // CMA refused
    EXPECT_EQ(single_copy_from(NodeProfile{}, kind, 4, kChunk), kNeverBytes);        // rank 0 measured nothing
    EXPECT_EQ(single_copy_from(profile(100, 20, 20), kind, 1, kChunk), kNeverBytes);
  }
}

// Rank 0 times its hand-offs with a rank on another NUMA node when there is one: the pipelines
// wait for their slowest hand-off. Every rank derives the same partner from the published nodes.
TEST(NodeProfile, PartnerIsOnAnotherNumaNodeWhenThereIsOne) {
  const int one_node[] = {0, 0, 0, 0};
  EXPECT_EQ(xmsg::coll::profile_partner(one_node, 4), 1);
  EXPECT_EQ(xmsg::coll::numa_nodes_spanned(one_node, 4), 1);
  const int two_sockets[] = {0, 0, 0, 1, 1, 1};  // ranks filled socket by socket
  EXPECT_EQ(xmsg::coll::profile_partner(two_sockets, 6), 3);
  EXPECT_EQ(xmsg::coll::numa_nodes_spanned(two_sockets, 6), 2);
  const int round_robin[] = {1, 0, 1, 2};
  EXPECT_EQ(xmsg::coll::profile_partner(round_robin, 4), 1);
  EXPECT_EQ(xmsg::coll::numa_nodes_spanned(round_robin, 4), 3);
  // Unknown nodes (getcpu failed) are never taken for a difference.
  const int unknown[] = {-1, 0, 1};
  EXPECT_EQ(xmsg::coll::profile_partner(unknown, 3), 1);
  EXPECT_EQ(xmsg::coll::numa_nodes_spanned(unknown, 3), 2);
  const int rank0_known[] = {0, -1, 1};
  EXPECT_EQ(xmsg::coll::profile_partner(rank0_known, 3), 2);
}

// A pipeline's reader copies lines the writer's core just wrote. Where that costs twice a local
// copy (this VM on 2026-12-06: memcpy 30 GB/s, handed copy 15.5, CMA 15) a 2-rank alltoall's
// single CMA read beats the two copies through a ring for large blocks, as measured (OSU 7.4
// style, 64-256 KiB: single copy 5.7-21 us, pipelines 13.8-42); on the VM of earlier days
// (memcpy 41, handed 40, CMA 6.3) the pipelines keep every size.
TEST(NodeProfile, HandedCopiesCountForTheReadersSide) {
  NodeProfile today = profile(220, 30, 15);
  today.handed_copy_ns_per_byte = 1 / 15.5;
  EXPECT_LE(single_copy_from(today, LargeCollective::kAlltoall, 2, kChunk), int64_t{1} << 20);
  expect_crossover_consistent(today, LargeCollective::kAlltoall, 2);
  NodeProfile before = profile(155, 41, 6.3);
  before.handed_copy_ns_per_byte = 1 / 40.0;
  for (auto kind : kAll)
    for (int n : {2, 4, 8}) EXPECT_EQ(single_copy_from(before, kind, n, kChunk), kNeverBytes);
  // Unmeasured, the plain copy stands for the handed one (the model of before).
  NodeProfile unmeasured = profile(220, 30, 15);
  EXPECT_DOUBLE_EQ(pipeline_ns(unmeasured, LargeCollective::kAlltoall, 4, 1 << 20, kChunk),
                   7.0 * (1 << 20) / 30 + 16 * 220);
}

// Measured at two sizes (this VM on 2026-12-06, 2 ranks bound: memcpy 53 GB/s at 256 KiB and
// 13 at 2 MiB, CMA 29 and 9, 400 ns a CMA call, handed copy 17 out and 23 in, hand-off 225 ns). Single copy then takes the
// middle sizes, where it measured 2.5x faster for alltoall (64 KiB: 4.4-4.8 us against
// 12.2-13.3) and 3x for bcast (64 KiB: 2.9-3.1 against 9.0-9.4). Past the caches a bcast whose
// reader read it all went back to the pipelines (1-4 MiB: 63-358 us pipelined against 84-449);
// split between reader and root it keeps single copy there (1-4 MiB: 40-68 / 164-209 us
// against the pipelines' 80-85 / 225-275, docs/results/2026-12-07-pair-bcast).
TEST(NodeProfile, CostsMeasuredAtTwoSizes) {
  const NodeProfile p = two_size_profile(225, 53, 13, 29, 9, 17, 23, 400);
  const SingleCopySizes bcast = single_copy_sizes(p, LargeCollective::kBcast, 2, kChunk);
  EXPECT_LE(bcast.from, int64_t{64} << 10);
  EXPECT_EQ(bcast.below, kNeverBytes);
  const SingleCopySizes alltoall = single_copy_sizes(p, LargeCollective::kAlltoall, 2, kChunk);
  EXPECT_LE(alltoall.from, int64_t{64} << 10);
  EXPECT_GT(alltoall.below, int64_t{256} << 10);
  for (auto kind : kAll)
    for (int n : {2, 4, 8}) expect_crossover_consistent(p, kind, n);
  // The per-byte costs follow the size between the two measurements.
  EXPECT_DOUBLE_EQ(p.copy_at(4096), 1 / 53.0);
  EXPECT_DOUBLE_EQ(p.copy_at(int64_t{8} << 20), 1 / 13.0);
  EXPECT_GT(p.cma_at(int64_t{1} << 20), 1 / 29.0);
  EXPECT_LT(p.cma_at(int64_t{1} << 20), 1 / 9.0);
  // Not measured at the large size: the small figure holds at every size, as before.
  const NodeProfile one_size = profile(225, 53, 29);
  EXPECT_DOUBLE_EQ(one_size.cma_at(int64_t{8} << 20), 1 / 29.0);
}

// Today's VM (2026-12-06): a 2-rank allgather reads its one peer's block where the pipelines
// copy it twice, so single copy takes it from the small sizes on (measured 0.36-0.65 of the
// pipelines' time at 16-256 KiB). With more readers every rank's one block is read by n - 1 of
// them at once, bcast's page contention: the pipelines stay (4 ranks, 64 KiB: 28.9 against
// 23.8 us).
TEST(NodeProfile, AllgatherTakesSingleCopyWithOneReaderOnly) {
  const NodeProfile p = two_size_profile(218, 56, 14.5, 31.5, 10.9, 17.8, 21.2, 404);
  EXPECT_LE(single_copy_from(p, LargeCollective::kAllgather, 2, kChunk), int64_t{64} << 10);
  expect_crossover_consistent(p, LargeCollective::kAllgather, 2);
  for (int n : {4, 8}) EXPECT_EQ(single_copy_from(p, LargeCollective::kAllgather, n, kChunk), kNeverBytes) << n;
}

// This VM on 2026-12-06 (evening) and 2026-12-07, 2 ranks pinned. A writer's ring lines cost
// the handed write while the reader holds them. The rings turn by a few slots a collective, so
// a slot is written again only after its reader took about a ring's worth of other chunks: the
// write set-up times over the whole ring (after the reader moved as much again of its own)
// holds at every size, and what it costs depends on whether the writer shares the reader's
// last-level cache.
//   near hand-offs (floor 0.045 us): memcpy 50/40 GB/s, handed 37 out, 9 in at 256 KiB and 45
//     over the 1 MiB ring, CMA 14/13, 1.3 us a call: alltoall's pipelines took 42/76-90 us at
//     512 KiB/1 MiB against single copy's 61/125, and with the turning ring 8.9/12.1/22.9 us
//     at 64/128/256 KiB against single copy's 8.4-11.5/15-22/28-41;
//   far hand-offs (floor 0.154-0.165 us): handed 8.4 out, 1.8 in and 1.9 over the ring, CMA
//     11.7/11, 1.8 us a call: the pipelines took 680-700 us at 1 MiB, single copy 119.
TEST(NodeProfile, TheRingWriteDecidesLargeCalls) {
  const NodeProfile near = with_ring_write(two_size_profile(150, 50, 40, 14, 13, 37, 9, 1330), 45);
  const SingleCopySizes alltoall = single_copy_sizes(near, LargeCollective::kAlltoall, 2, kChunk);
  EXPECT_EQ(alltoall.from, kNeverBytes);
  for (auto kind : kAll) expect_crossover_consistent(near, kind, 2);
  const NodeProfile far = with_ring_write(two_size_profile(376, 50, 39, 11.7, 11, 8.4, 1.8, 1800), 1.9);
  const SingleCopySizes far_alltoall = single_copy_sizes(far, LargeCollective::kAlltoall, 2, kChunk);
  EXPECT_LE(far_alltoall.from, int64_t{64} << 10);
  EXPECT_EQ(far_alltoall.below, kNeverBytes);
  for (auto kind : kAll) expect_crossover_consistent(far, kind, 2);
  // The pipelines' write is the one timed over the ring; unmeasured over the ring, the 256 KiB
  // figure stands in.
  EXPECT_DOUBLE_EQ(near.handed_write(), 1 / 9.0);
  EXPECT_DOUBLE_EQ(near.handed_write_over_ring(), 1 / 45.0);
  NodeProfile small_only = near;
  small_only.handed_write_large_ns_per_byte = 0;
  EXPECT_DOUBLE_EQ(small_only.handed_write_over_ring(), 1 / 9.0);
}

// With cores shared (4 and 8 ranks on this VM's 2 cores) the timed hand-overs are what 2 ranks
// measure in the same state, and they decide as there:
//   near hand-offs: handed 25 out, 7-10 in and 18-34 over the ring; the pipelines measured
//     0.3-0.6 of single copy's time at 4 ranks from 128 KiB and at 8 ranks from 64 KiB;
//   far hand-offs: handed 8.1 out, 1.8 in; at 8 ranks the pipelines took 1.5-2.4x Open MPI
//     from 32 KiB, single copy 0.9-1.1.
TEST(NodeProfile, SharedCoresFollowTheTimedHandOvers) {
  const NodeProfile near = with_ring_write(two_size_profile(2100, 25, 30, 12.2, 10, 25, 8, 1500), 26, true);
  for (int64_t bytes : {int64_t{128} << 10, int64_t{1} << 20})
    EXPECT_FALSE(single_copy_wins(near, LargeCollective::kAlltoall, 4, bytes)) << bytes;
  for (int64_t bytes : {int64_t{64} << 10, int64_t{1} << 20})
    EXPECT_FALSE(single_copy_wins(near, LargeCollective::kAlltoall, 8, bytes)) << bytes;
  const NodeProfile far = with_ring_write(two_size_profile(2400, 45, 33, 12.3, 7.7, 8.1, 1.8, 1542), 1.9, true);
  for (int64_t bytes : {int64_t{32} << 10, int64_t{1} << 20})
    EXPECT_TRUE(single_copy_wins(far, LargeCollective::kAlltoall, 8, bytes)) << bytes;
  for (int n : {4, 8}) {
    expect_crossover_consistent(near, LargeCollective::kAlltoall, n);
    expect_crossover_consistent(far, LargeCollective::kAlltoall, n);
  }
}

// With cores shared, a stream longer than its writer's ring waits for readers queued behind
// other ranks on their core (NodeProfile::ring_wait_ns). This VM, 2 cores, near hand-offs:
//   16 ranks (8 a core): single copy 2.7-3.0/5.5-6.8/11.4-11.8/23.6-25.2 ms at 128 KiB-1 MiB,
//     the pipelines 3.3/8.4/20.4/37.3 (1 MiB blocks: 15 MiB a stream, 15 times the ring);
//     up to 64 KiB (a stream within the ring) the pipelines 0.25-0.55 of single copy;
//   8 ranks (4 a core): the pipelines 0.6-1.0 of single copy up to 1 MiB.
TEST(NodeProfile, SharedCoresCountTheWaitsPastTheRing) {
  NodeProfile sixteen = with_ring_write(two_size_profile(240, 38.6, 39.8, 9.3, 8.1, 19.9, 7.5, 1823), 24.1, true);
  sixteen.ranks_per_core = 8;
  sixteen.ring_chunks = 16;
  EXPECT_FALSE(single_copy_wins(sixteen, LargeCollective::kAlltoall, 16, int64_t{64} << 10));
  for (int64_t bytes : {int64_t{256} << 10, int64_t{1} << 20})
    EXPECT_TRUE(single_copy_wins(sixteen, LargeCollective::kAlltoall, 16, bytes)) << bytes;
  expect_crossover_consistent(sixteen, LargeCollective::kAlltoall, 16);
  // Without the ring's size (or with a core each) no such wait is counted.
  NodeProfile unknown_ring = sixteen;
  unknown_ring.ring_chunks = 0;
  EXPECT_FALSE(single_copy_wins(unknown_ring, LargeCollective::kAlltoall, 16, int64_t{1} << 20));
  NodeProfile own_cores = sixteen;
  own_cores.shares_cores = false;
  own_cores.ranks_per_core = 1;
  EXPECT_DOUBLE_EQ(own_cores.ring_wait_ns(), 0);
  NodeProfile eight = with_ring_write(two_size_profile(4462, 49.5, 40.9, 11.0, 11.1, 24.1, 8.5, 1763), 42.3, true);
  eight.ranks_per_core = 4;
  eight.ring_chunks = 16;
  for (int64_t bytes = int64_t{16} << 10; bytes <= int64_t{1} << 20; bytes <<= 1)
    EXPECT_FALSE(single_copy_wins(eight, LargeCollective::kAlltoall, 8, bytes)) << bytes;
  // The wait grows with the ranks queued ahead of a reader and with the chunks past the ring.
  EXPECT_GT(pipeline_ns(sixteen, LargeCollective::kAlltoall, 16, int64_t{1} << 20, kChunk),
            pipeline_ns(unknown_ring, LargeCollective::kAlltoall, 16, int64_t{1} << 20, kChunk));
  EXPECT_DOUBLE_EQ(pipeline_ns(sixteen, LargeCollective::kAlltoall, 16, int64_t{64} << 10, kChunk),
                   pipeline_ns(unknown_ring, LargeCollective::kAlltoall, 16, int64_t{64} << 10, kChunk));
}
