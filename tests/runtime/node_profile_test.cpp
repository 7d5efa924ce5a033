// The large one-node collective choice (runtime/collectives/node_profile.hpp) on machines unlike
// this one: profiles as the set-up measurement would report them there.
#include "node_profile.hpp"

#include <gtest/gtest.h>

#include <initializer_list>

using xmsg::coll::kNeverBytes;
using xmsg::coll::kSingleCopyMargin;
using xmsg::coll::large_path_from;
using xmsg::coll::LargeCollective;
using xmsg::coll::NodeProfile;
using xmsg::coll::pipeline_ns;
using xmsg::coll::single_copy_ns;

namespace {

constexpr int64_t kChunk = 64 << 10;
constexpr auto kAll = {LargeCollective::kBcast, LargeCollective::kAllreduce, LargeCollective::kAlltoall};

NodeProfile profile(double sync_ns, double copy_gbps, double cma_gbps) {
  NodeProfile p;
  p.sync_ns = sync_ns;
  p.copy_ns_per_byte = 1 / copy_gbps;
  p.cma_ns_per_byte = cma_gbps > 0 ? 1 / cma_gbps : 0;
  return p;
}

// From the size returned on, single copy is predicted faster by the margin at every size;
// just below it (when it is not the smallest size scanned) it is not.
void expect_crossover_consistent(const NodeProfile& p, LargeCollective kind, int n) {
  const int64_t from = large_path_from(p, kind, n, kChunk);
  if (from >= kNeverBytes) return;
  for (int64_t bytes = from; bytes < kNeverBytes; bytes <<= 1)
    EXPECT_LT(single_copy_ns(p, kind, n, bytes), kSingleCopyMargin * pipeline_ns(p, kind, n, bytes, kChunk)) << bytes;
  if (from > 4096) {
    EXPECT_GE(single_copy_ns(p, kind, n, from / 2), kSingleCopyMargin * pipeline_ns(p, kind, n, from / 2, kChunk));
  }
}

}  // namespace

// This project's VM: process_vm_readv pins every 4 KiB page (6-14 GB/s) while memcpy moves
// 40-100 GB/s, so two copies through the rings beat one CMA read at every size.
TEST(NodeProfile, SlowPagePinningKeepsThePipelines) {
  for (const NodeProfile& p : {profile(155, 40.8, 6.3), profile(60, 100, 14)})
    for (auto kind : kAll)
      for (int n : {2, 4, 8, 16}) EXPECT_EQ(large_path_from(p, kind, n, kChunk), kNeverBytes);
}

// A machine where a CMA read costs what a copy costs (huge pages, pinning in large folios):
// where one read replaces clearly more copies (alltoall: (n-1) reads against 2n-2 copies in
// and out; allreduce at 2 ranks: V reads against 1.5 V copies) single copy takes the large
// sizes once the system call is paid for. A bcast reader copies once either way, and allreduce
// at 4-8 ranks saves less than the margin: the pipelines stay.
TEST(NodeProfile, CheapPagePinningTakesSingleCopyForLargeSizes) {
  const NodeProfile p = profile(100, 20, 20);
  for (int n : {2, 4, 8}) {
    const int64_t from = large_path_from(p, LargeCollective::kAlltoall, n, kChunk);
    EXPECT_LE(from, int64_t{4} << 20) << " n=" << n;
    EXPECT_GE(from, 4096);
    EXPECT_EQ(large_path_from(p, LargeCollective::kBcast, n, kChunk), kNeverBytes) << " n=" << n;
    for (auto kind : kAll) expect_crossover_consistent(p, kind, n);
  }
  EXPECT_LE(large_path_from(p, LargeCollective::kAllreduce, 2, kChunk), int64_t{4} << 20);
  EXPECT_EQ(large_path_from(p, LargeCollective::kAllreduce, 4, kChunk), kNeverBytes);
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
    EXPECT_LT(large_path_from(slow, LargeCollective::kAlltoall, n, kChunk), kNeverBytes) << n;
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
    for (int n : {4, 8, 16}) EXPECT_EQ(large_path_from(p, kind, n, kChunk), kNeverBytes);
}

TEST(NodeProfile, NoSingleCopyWithoutCmaOrMeasurement) {
  for (auto kind : kAll) {
    EXPECT_EQ(large_path_from(profile(100, 20, 0), kind, 4, kChunk), kNeverBytes);  // CMA refused
    EXPECT_EQ(large_path_from(NodeProfile{}, kind, 4, kChunk), kNeverBytes);        // rank 0 measured nothing
    EXPECT_EQ(large_path_from(profile(100, 20, 20), kind, 1, kChunk), kNeverBytes);
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
  EXPECT_LE(large_path_from(today, LargeCollective::kAlltoall, 2, kChunk), int64_t{1} << 20);
  expect_crossover_consistent(today, LargeCollective::kAlltoall, 2);
  NodeProfile before = profile(155, 41, 6.3);
  before.handed_copy_ns_per_byte = 1 / 40.0;
  for (auto kind : kAll)
    for (int n : {2, 4, 8}) EXPECT_EQ(large_path_from(before, kind, n, kChunk), kNeverBytes);
  // Unmeasured, the plain copy stands for the handed one (the model of before).
  NodeProfile unmeasured = profile(220, 30, 15);
  EXPECT_DOUBLE_EQ(pipeline_ns(unmeasured, LargeCollective::kAlltoall, 4, 1 << 20, kChunk),
                   7.0 * (1 << 20) / 30 + 16 * 220);
}
