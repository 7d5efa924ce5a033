// xmsg_plan: what the verbs transport would create for a job of N nodes x P ranks per node.
// Same planner, same wire-up record and same receive sizes as the transport, so its numbers
// are what a real job allocates and publishes.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

#include "human_bytes.hpp"
#include "ConnectionPlan.hpp"
#include "VerbsLimits.hpp"
#include "WireUpRecord.hpp"

namespace {

using xmsg::verbs::ConnectionPlan;
using xmsg::verbs::PlanMode;

constexpr int kUsageError = 2;

// JSON numbers: integral means print as integers, others keep two decimals of precision.
nlohmann::json number(double value) {
  if (std::floor(value) == value && std::fabs(value) < 9.0e15) return static_cast<std::int64_t>(value);
  return std::round(value * 100.0) / 100.0;
}

std::string human_bytes(double bytes) { return xmsg::tools::human_bytes(bytes, 2); }

struct Summary {
  double qps_per_rank = 0;
  double qps_per_node = 0;
  std::int64_t min_qps = 0;
  std::int64_t max_qps = 0;
  std::int64_t total_qps = 0;
  double ini_per_rank = 0;
  double tgt_per_rank = 0;
  double pmix_bytes_per_rank = 0;
  std::uint64_t recv_memory_per_rank = 0;
  // The wire-up as VerbsTransport::connect does it today ("eager"): every rank publishes its
  // whole record (+ node key), the fence collects them all to every node, each rank reads every
  // rank's node key (true_layout) and decodes the record of every remote peer (routes), and
  // creates every planned QP before any traffic.
  double pmix_bytes_per_node = 0;         // received by each node at start-up
  double wireup_memory_per_rank = 0;      // decoded records of remote peers + the node map
  double gets_per_rank = 0;               // bootstrap gets during connect()
  double qps_at_start_per_rank = 0;       // QPs created before the first send
};

Summary summarise(const ConnectionPlan& plan, const xmsg::verbs::VerbsLimits& limits) {
  Summary s;
  s.min_qps = std::numeric_limits<std::int64_t>::max();
  std::int64_t ini = 0;
  std::int64_t tgt = 0;
  double pmix = 0;
  for (int r = 0; r < plan.num_ranks(); ++r) {
    const std::int64_t q = plan.qp_count(r);
    s.total_qps += q;
    s.min_qps = std::min(s.min_qps, q);
    s.max_qps = std::max(s.max_qps, q);
    ini += plan.ini_count(r);
    tgt += plan.tgt_count(r);
    pmix += static_cast<double>(xmsg::verbs::WireUpRecord::published_bytes(static_cast<std::size_t>(q)));
  }
  s.qps_per_rank = static_cast<double>(s.total_qps) / plan.num_ranks();
  s.qps_per_node = static_cast<double>(s.total_qps) / plan.num_nodes();
  s.ini_per_rank = static_cast<double>(ini) / plan.num_ranks();
  s.tgt_per_rank = static_cast<double>(tgt) / plan.num_ranks();
  s.pmix_bytes_per_rank = pmix / plan.num_ranks();
  s.recv_memory_per_rank = limits.recv_memory_bytes();

  s.pmix_bytes_per_node = pmix;
  double remote_memory = 0, remote_peers = 0;
  for (int r = 0; r < plan.num_ranks(); ++r) {
    // Records a rank decodes: those of the ranks on other nodes (sum over ranks of
    // sum over remote ranks), averaged below.
    const double record = static_cast<double>(xmsg::verbs::WireUpRecord::published_bytes(
                              static_cast<std::size_t>(plan.qp_count(r)))) -
                          static_cast<double>(xmsg::verbs::kNodeKeyBytes);
    const double readers = plan.num_ranks() - plan.ranks_on_node(plan.node_of(r));
    remote_memory += record * readers;
    remote_peers += readers;
  }
  s.wireup_memory_per_rank = remote_memory / plan.num_ranks() +
                             static_cast<double>(sizeof(std::uint32_t)) * plan.num_ranks();
  s.gets_per_rank = plan.num_ranks() + remote_peers / plan.num_ranks();
  s.qps_at_start_per_rank = s.qps_per_rank;
  return s;
}

void print_rank(const ConnectionPlan& plan, int rank) {
  fmt::print("rank {} (node {}, local index {}) creates {} QPs:\n", rank, plan.node_of(rank), plan.local_index(rank),
             plan.qp_count(rank));
  for (const auto& qp : plan.qps_of(rank)) {
    switch (qp.kind) {
      case xmsg::verbs::QpKind::xrc_ini:
        fmt::print("  xrc-ini -> node {}\n", qp.peer);
        break;
      case xmsg::verbs::QpKind::xrc_tgt:
        fmt::print("  xrc-tgt <- rank {} (node {})\n", qp.peer, plan.node_of(qp.peer));
        break;
      case xmsg::verbs::QpKind::rc:
        fmt::print("  rc      <-> rank {} (node {})\n", qp.peer, plan.node_of(qp.peer));
        break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xmsg_plan: QPs, receive memory and PMIx bytes of the verbs transport for N nodes x P ranks"};
  int nodes = 0;
  int ppn = 0;
  std::string mode_text = "xrc";
  bool json = false;
  int show_rank = -1;
  xmsg::verbs::VerbsLimits limits;
  app.add_option("--nodes", nodes, "number of nodes (>= 1)")->required();
  app.add_option("--ppn", ppn, "ranks per node (>= 1)")->required();
  app.add_option("--mode", mode_text, "xrc or rc (default xrc)");
  app.add_flag("--json", json, "print one JSON object");
  app.add_option("--srq-depth", limits.srq_depth, "receive buffers posted per rank (XMSG_VERBS_SRQ_DEPTH)");
  app.add_option("--eager-buffer", limits.eager_buffer_bytes, "bytes per receive buffer (XMSG_VERBS_EAGER_BUFFER)");
  app.add_option("--rank", show_rank, "also list the QPs of this rank");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "xmsg_plan: %s\n", e.what());
    return kUsageError;
  }

  try {
    const PlanMode mode = xmsg::verbs::parse_plan_mode(mode_text, "--mode");
    if (nodes < 1) throw std::invalid_argument(fmt::format("--nodes: must be >= 1, got {}", nodes));
    if (ppn < 1) throw std::invalid_argument(fmt::format("--ppn: must be >= 1, got {}", ppn));
    try {
      limits.validate();
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      throw std::invalid_argument(what.rfind("srq_depth", 0) == 0       ? "--srq-depth" + what.substr(9)
                                  : what.rfind("eager_buffer_bytes", 0) == 0 ? "--eager-buffer" + what.substr(18)
                                                                           : what);
    }
    ConnectionPlan plan = [&] {
      try {
        return ConnectionPlan::uniform(nodes, ppn, mode);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--") + e.what());
      }
    }();
    if (show_rank != -1 && (show_rank < 0 || show_rank >= plan.num_ranks())) {
      throw std::invalid_argument(
          fmt::format("--rank: {} is outside 0..{}", show_rank, plan.num_ranks() - 1));
    }
    const Summary s = summarise(plan, limits);

    if (json) {
      nlohmann::json out = {
          {"mode", std::string(xmsg::verbs::to_string(mode))},
          {"nodes", nodes},
          {"ppn", ppn},
          {"qps_per_rank", number(s.qps_per_rank)},
          {"qps_per_node", number(s.qps_per_node)},
          {"recv_memory_per_rank_bytes", s.recv_memory_per_rank},
          {"pmix_bytes_per_rank", number(s.pmix_bytes_per_rank)},
          {"wireup_scheme", "eager"},
          {"pmix_bytes_per_node", number(s.pmix_bytes_per_node)},
          {"wireup_memory_per_rank_bytes", number(s.wireup_memory_per_rank)},
          {"gets_per_rank", number(s.gets_per_rank)},
          {"qps_at_start_per_rank", number(s.qps_at_start_per_rank)},
          {"qps_after_alltoall_per_rank", number(s.qps_per_rank)},
      };
      std::puts(out.dump().c_str());
    } else {
      fmt::print("{} nodes x {} ranks per node = {} ranks, mode {}\n", nodes, ppn, plan.num_ranks(),
                 xmsg::verbs::to_string(mode));
      if (mode == PlanMode::xrc) {
        fmt::print("  QPs per rank        : {:.2f} mean ({:.2f} INI + {:.2f} TGT), min {}, max {}\n", s.qps_per_rank,
                   s.ini_per_rank, s.tgt_per_rank, s.min_qps, s.max_qps);
      } else {
        fmt::print("  QPs per rank        : {:.2f} mean (RC, one per remote rank), min {}, max {}\n", s.qps_per_rank,
                   s.min_qps, s.max_qps);
      }
      fmt::print("  QPs per node        : {:.2f}\n", s.qps_per_node);
      fmt::print("  QPs in the job      : {}\n", s.total_qps);
      fmt::print("  receive memory/rank : {} ({} bytes: one SRQ, {} buffers x {} bytes)\n",
                 human_bytes(static_cast<double>(s.recv_memory_per_rank)), s.recv_memory_per_rank, limits.srq_depth,
                 limits.eager_buffer_bytes);
      fmt::print("  PMIx bytes/rank     : {:.2f} (key \"{}\": {}-byte header + {} bytes per QP; key \"{}\": {} bytes)\n",
                 s.pmix_bytes_per_rank, xmsg::verbs::kWireUpKey, sizeof(xmsg::verbs::WireUpHeader),
                 sizeof(xmsg::verbs::WireUpQp), xmsg::verbs::kNodeKey, xmsg::verbs::kNodeKeyBytes);
      fmt::print("  wire-up (scheme eager: every record to every node, every QP at start-up):\n");
      fmt::print("    PMIx bytes/node   : {} received at start-up\n", human_bytes(s.pmix_bytes_per_node));
      fmt::print("    wire-up memory    : {} per rank (remote peers' records + node map)\n",
                 human_bytes(s.wireup_memory_per_rank));
      fmt::print("    bootstrap gets    : {:.0f} per rank\n", s.gets_per_rank);
      fmt::print("    QPs at start-up   : {:.2f} per rank (the same after a first all-to-all)\n", s.qps_at_start_per_rank);
    }
    if (show_rank >= 0) print_rank(plan, show_rank);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "xmsg_plan: %s\n", e.what());
    return kUsageError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xmsg_plan: %s\n", e.what());
    return 1;
  }
  return 0;
}
