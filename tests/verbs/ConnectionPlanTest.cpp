// The planner decides which QPs exist on every rank of a job; both ends of each connection
// compute it independently, so any asymmetry would leave a QP without a peer. These tests walk
// every pair of ranks for many job shapes and layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ConnectionPlan.hpp"

namespace {

using xmsg::verbs::ConnectionPlan;
using xmsg::verbs::PlanMode;
using xmsg::verbs::PlannedQp;
using xmsg::verbs::QpKind;

template <typename F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no std::invalid_argument thrown>";
}

// Every invariant the transport relies on, checked by enumeration.
void check_plan(const ConnectionPlan& plan) {
  const int ranks = plan.num_ranks();
  std::vector<std::vector<PlannedQp>> lists(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    lists[static_cast<std::size_t>(r)] = plan.qps_of(r);
    const auto& qps = lists[static_cast<std::size_t>(r)];
    ASSERT_EQ(static_cast<int>(qps.size()), plan.qp_count(r)) << "rank " << r;
    const int my_node = plan.node_of(r);
    for (std::size_t i = 0; i < qps.size(); ++i) {
      const auto& qp = qps[i];
      switch (qp.kind) {
        case QpKind::xrc_ini:
          ASSERT_EQ(plan.mode(), PlanMode::xrc);
          ASSERT_NE(qp.peer, my_node) << "rank " << r << " has an INI QP to its own node";
          ASSERT_EQ(plan.ini_index(r, qp.peer), static_cast<int>(i));
          break;
        case QpKind::xrc_tgt:
          ASSERT_EQ(plan.mode(), PlanMode::xrc);
          ASSERT_NE(plan.node_of(qp.peer), my_node) << "rank " << r << " has a TGT QP for a local sender";
          ASSERT_EQ(plan.tgt_owner(qp.peer, my_node), r);
          ASSERT_EQ(plan.tgt_index(qp.peer, my_node), static_cast<int>(i));
          break;
        case QpKind::rc:
          ASSERT_EQ(plan.mode(), PlanMode::rc);
          ASSERT_NE(qp.peer, r) << "rank " << r << " has an RC QP to itself";
          ASSERT_NE(plan.node_of(qp.peer), my_node) << "rank " << r << " has an intra-node RC QP";
          ASSERT_EQ(plan.rc_index(r, qp.peer), static_cast<int>(i));
          break;
      }
    }
    // Canonical order is strictly ascending per kind, so no duplicates.
    for (std::size_t i = 1; i < qps.size(); ++i) {
      if (qps[i].kind == qps[i - 1].kind) {
        ASSERT_LT(qps[i - 1].peer, qps[i].peer) << "rank " << r;
      }
    }
  }

  // Every ordered pair of ranks on different nodes has exactly one path, and both of its ends
  // exist; pairs on one node have none.
  for (int from = 0; from < ranks; ++from) {
    for (int to = 0; to < ranks; ++to) {
      const auto path = plan.path(from, to);
      if (plan.node_of(from) == plan.node_of(to)) {
        ASSERT_FALSE(path.has_value()) << from << "->" << to;
        continue;
      }
      ASSERT_TRUE(path.has_value()) << from << "->" << to;
      ASSERT_EQ(path->via_node, plan.node_of(to));
      const auto& mine = lists[static_cast<std::size_t>(from)];
      if (plan.mode() == PlanMode::xrc) {
        const auto inis = std::count(mine.begin(), mine.end(), PlannedQp{QpKind::xrc_ini, path->via_node});
        ASSERT_EQ(inis, 1) << from << "->" << to;
        ASSERT_EQ(plan.node_of(path->tgt_owner), path->via_node);
        const auto& owner = lists[static_cast<std::size_t>(path->tgt_owner)];
        ASSERT_EQ(std::count(owner.begin(), owner.end(), PlannedQp{QpKind::xrc_tgt, from}), 1);
        ASSERT_EQ(owner[static_cast<std::size_t>(plan.tgt_index(from, path->via_node))],
                  (PlannedQp{QpKind::xrc_tgt, from}));
        ASSERT_EQ(mine[static_cast<std::size_t>(plan.ini_index(from, path->via_node))],
                  (PlannedQp{QpKind::xrc_ini, path->via_node}));
      } else {
        ASSERT_EQ(path->tgt_owner, -1);
        ASSERT_EQ(std::count(mine.begin(), mine.end(), PlannedQp{QpKind::rc, to}), 1) << from << "->" << to;
        const auto& theirs = lists[static_cast<std::size_t>(to)];
        ASSERT_EQ(std::count(theirs.begin(), theirs.end(), PlannedQp{QpKind::rc, from}), 1) << to << "->" << from;
      }
    }
  }

  // Every TGT (one per (remote sender, node)) exists exactly once in the whole job, on that node.
  if (plan.mode() == PlanMode::xrc) {
    std::map<std::pair<int, int>, int> tgt_holders;  // (sender, node) -> holder count
    for (int r = 0; r < ranks; ++r) {
      for (const auto& qp : lists[static_cast<std::size_t>(r)]) {
        if (qp.kind == QpKind::xrc_tgt) ++tgt_holders[{qp.peer, plan.node_of(r)}];
      }
    }
    for (int s = 0; s < ranks; ++s) {
      for (int n = 0; n < plan.num_nodes(); ++n) {
        const int expected = plan.node_of(s) == n ? 0 : 1;
        const auto it = tgt_holders.find({s, n});
        ASSERT_EQ(it == tgt_holders.end() ? 0 : it->second, expected) << "TGT for sender " << s << " on node " << n;
      }
    }
    // Each INI has its TGT and vice versa: INIs and TGTs are equal in number.
    std::int64_t inis = 0, tgts = 0;
    for (int r = 0; r < ranks; ++r) {
      inis += plan.ini_count(r);
      tgts += plan.tgt_count(r);
    }
    ASSERT_EQ(inis, tgts);
  }

  std::int64_t per_node_sum = 0;
  for (int n = 0; n < plan.num_nodes(); ++n) per_node_sum += plan.qps_on_node(n);
  ASSERT_EQ(per_node_sum, plan.total_qps());
}

class UniformPlan : public ::testing::TestWithParam<std::tuple<int, int, PlanMode>> {};

TEST_P(UniformPlan, EveryInvariantHolds) {
  const auto [nodes, ppn, mode] = GetParam();
  const auto plan = ConnectionPlan::uniform(nodes, ppn, mode);
  ASSERT_EQ(plan.num_ranks(), nodes * ppn);
  ASSERT_EQ(plan.num_nodes(), nodes);
  check_plan(plan);
  for (int r = 0; r < plan.num_ranks(); ++r) {
    if (mode == PlanMode::rc) {
      EXPECT_EQ(plan.qp_count(r), (nodes - 1) * ppn) << "rank " << r;
    } else {
      // Uniform layout: round-robin ownership gives every rank exactly N-1 TGTs.
      EXPECT_EQ(plan.ini_count(r), nodes - 1) << "rank " << r;
      EXPECT_EQ(plan.tgt_count(r), nodes - 1) << "rank " << r;
    }
  }
  if (mode == PlanMode::xrc) {
    EXPECT_DOUBLE_EQ(plan.mean_qps_per_rank(), 2.0 * (nodes - 1));
    EXPECT_DOUBLE_EQ(plan.mean_qps_per_node(), 2.0 * (nodes - 1) * ppn);
  } else {
    EXPECT_DOUBLE_EQ(plan.mean_qps_per_rank(), static_cast<double>((nodes - 1) * ppn));
  }
}

std::vector<std::tuple<int, int, PlanMode>> uniform_shapes() {
  std::vector<std::tuple<int, int, PlanMode>> shapes;
  for (PlanMode mode : {PlanMode::xrc, PlanMode::rc}) {
    for (int nodes = 1; nodes <= 7; ++nodes) {
      for (int ppn = 1; ppn <= 6; ++ppn) shapes.emplace_back(nodes, ppn, mode);
    }
    shapes.emplace_back(16, 4, mode);
    shapes.emplace_back(3, 17, mode);
  }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Shapes, UniformPlan, ::testing::ValuesIn(uniform_shapes()),
                         [](const auto& info) {
                           return std::string(xmsg::verbs::to_string(std::get<2>(info.param))) + "_N" +
                                  std::to_string(std::get<0>(info.param)) + "_P" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Launchers may place ranks round-robin or unevenly; the plan must hold for any layout.
TEST(ConnectionPlan, IrregularLayoutsKeepEveryInvariant) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 60; ++trial) {
    const int nodes = 1 + static_cast<int>(rng() % 6);
    const int ranks = nodes + static_cast<int>(rng() % 14);
    std::vector<int> node_of(static_cast<std::size_t>(ranks));
    for (int n = 0; n < nodes; ++n) node_of[static_cast<std::size_t>(n)] = n;  // every node non-empty
    for (int r = nodes; r < ranks; ++r) node_of[static_cast<std::size_t>(r)] = static_cast<int>(rng() % nodes);
    std::shuffle(node_of.begin(), node_of.end(), rng);
    for (PlanMode mode : {PlanMode::xrc, PlanMode::rc}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " mode " + std::string(xmsg::verbs::to_string(mode)));
      const ConnectionPlan plan(node_of, mode);
      check_plan(plan);
      for (int r = 0; r < ranks; ++r) {
        const int local = static_cast<int>(plan.ranks_on(plan.node_of(r)).size());
        if (mode == PlanMode::rc) {
          EXPECT_EQ(plan.rc_count(r), ranks - local);
        } else {
          EXPECT_EQ(plan.ini_count(r), nodes - 1);
        }
      }
    }
  }
}

TEST(ConnectionPlan, RoundRobinPlacementBalancesTgtOwnership) {
  // rank r on node r % N: the layout `xmsgrun --map-by node` produces.
  const int nodes = 4, ppn = 5;
  std::vector<int> node_of(nodes * ppn);
  for (int r = 0; r < nodes * ppn; ++r) node_of[static_cast<std::size_t>(r)] = r % nodes;
  const ConnectionPlan plan(node_of, PlanMode::xrc);
  check_plan(plan);
  for (int n = 0; n < nodes; ++n) {
    int lo = 1 << 30, hi = 0;
    for (int r : plan.ranks_on(n)) {
      lo = std::min(lo, plan.tgt_count(r));
      hi = std::max(hi, plan.tgt_count(r));
    }
    EXPECT_LE(hi - lo, 2) << "node " << n;
  }
}

TEST(ConnectionPlan, ScalesToAThousandNodesWithoutEnumerating) {
  const auto xrc = ConnectionPlan::uniform(1000, 64, PlanMode::xrc);
  const auto rc = ConnectionPlan::uniform(1000, 64, PlanMode::rc);
  EXPECT_DOUBLE_EQ(xrc.mean_qps_per_rank(), 2.0 * 999);
  EXPECT_DOUBLE_EQ(rc.mean_qps_per_rank(), 999.0 * 64);
  EXPECT_EQ(rc.total_qps(), 64000LL * 63936);
  for (int r : {0, 63, 64, 31999, 63999}) {
    const auto qps = xrc.qps_of(r);
    EXPECT_EQ(static_cast<int>(qps.size()), 1998) << "rank " << r;
    EXPECT_EQ(xrc.tgt_index(qps.back().peer, xrc.node_of(r)), 1997);
  }
  EXPECT_EQ(rc.rc_index(63999, 63935), 63935);
  EXPECT_EQ(rc.rc_index(0, 64), 0);
}

TEST(ConnectionPlan, SingleNodeHasNoQps) {
  for (PlanMode mode : {PlanMode::xrc, PlanMode::rc}) {
    const auto plan = ConnectionPlan::uniform(1, 8, mode);
    EXPECT_EQ(plan.total_qps(), 0);
    EXPECT_FALSE(plan.path(0, 7).has_value());
  }
}

TEST(ConnectionPlan, RejectsBadShapesNamingTheArgument) {
  EXPECT_NE(invalid_argument_message([] { ConnectionPlan::uniform(0, 4, PlanMode::xrc); }).find("nodes"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { ConnectionPlan::uniform(-3, 4, PlanMode::xrc); }).find("nodes"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { ConnectionPlan::uniform(4, 0, PlanMode::rc); }).find("ppn"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { ConnectionPlan::uniform(1 << 20, 1 << 10, PlanMode::rc); }).find("limit"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { ConnectionPlan({}, PlanMode::rc); }).find("node_of_rank"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { ConnectionPlan({0, -1}, PlanMode::rc); }).find("node_of_rank"),
            std::string::npos);
  const auto gap = invalid_argument_message([] { ConnectionPlan({0, 2, 2}, PlanMode::xrc); });
  EXPECT_NE(gap.find("node_of_rank"), std::string::npos) << gap;
  EXPECT_NE(gap.find("node 1"), std::string::npos) << gap;
  EXPECT_NE(invalid_argument_message([] { xmsg::verbs::parse_plan_mode("ud", "XMSG_VERBS_MODE"); })
                .find("XMSG_VERBS_MODE"),
            std::string::npos);
}

TEST(ConnectionPlan, RejectsBadQueriesNamingTheArgument) {
  const auto xrc = ConnectionPlan::uniform(3, 2, PlanMode::xrc);
  const auto rc = ConnectionPlan::uniform(3, 2, PlanMode::rc);
  EXPECT_NE(invalid_argument_message([&] { xrc.qps_of(6); }).find("rank"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { xrc.path(-1, 0); }).find("from"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { xrc.path(0, 99); }).find("to"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { xrc.tgt_owner(1, 0); }).find("sender"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { xrc.tgt_owner(0, 3); }).find("node"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { xrc.ini_index(0, 0); }).find("node"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { xrc.rc_index(0, 2); }).find("mode"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { rc.ini_index(0, 1); }).find("mode"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { rc.rc_index(0, 1); }).find("peer"), std::string::npos);
}

}  // namespace
