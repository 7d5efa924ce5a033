// xmsg_plan: what the verbs transport would create for a job of N nodes x P ranks per node.
// Same planner, same wire-up record, same wire-up card and same receive sizes as the transport,
// so its numbers are what a real job allocates and publishes. It models both verbs wire-ups
// (eager: every record to every node at start-up; lazy: one card per rank, connections on first
// send) and, for comparison, the tcp transport's wire-up. Reference: docs/xmsg_plan.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <netinet/in.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "human_bytes.hpp"
#include "ConnectionPlan.hpp"
#include "VerbsLimits.hpp"
#include "WireUpCard.hpp"
#include "WireUpRecord.hpp"

namespace {

using xmsg::verbs::ConnectionPlan;
using xmsg::verbs::PlanMode;

constexpr int kUsageError = 2;

// Issue 18's targets for the verbs wire-up at 1000 nodes x 64 ranks per node (XRC).
constexpr double kTargetPmixBytesPerNode = 8.0 * 1024 * 1024;    // received per node at start-up
constexpr double kTargetWireupBytesPerRank = 1.0 * 1024 * 1024;  // state per rank before traffic
constexpr double kTargetQpsAtStart = 0;                          // QPs before the first send
constexpr int kTargetNodes = 1000;
constexpr int kTargetPpn = 64;

// Lazy verbs wire-up (VerbsTransport::connect_lazy), per rank:
// - before traffic: one "heard from" byte (heard_) and one "is a verbs peer" byte (is_peer_) per
//   job rank, plus its own card;
// - per remote peer talked to: the peer's card (cards_) and its route entry (routes_:
//   VerbsTransport::Route, 16 bytes: QP index, node, remote SRQ number, two flags). The maps'
//   node overhead is not counted, as the eager figures count decoded records, not containers.
constexpr double kLazyStateBytesPerJobRank = 2;
constexpr double kLazyRouteEntryBytes = 16;
constexpr double kCardBytes = static_cast<double>(sizeof(xmsg::verbs::WireUpCard));

// tcp wire-up (TcpTransport::connect): each rank publishes its listen address "a.b.c.d:port" as a
// string without terminator. Modelled at its longest, "255.255.255.255:65535" (21 bytes): the
// real length depends on the addresses and ephemeral ports the job gets (7..21 bytes), and the
// longest bounds what a node receives.
constexpr std::string_view kTcpLongestAddress = "255.255.255.255:65535";
constexpr double kTcpAddressBytes = static_cast<double>(kTcpLongestAddress.size());
// The job secret: 32 random bytes as hex (random_secret()), which rank 0 publishes under
// "xmsg.tcp.secret" when the launcher gave none (xmsgrun hands its ranks a 0600 file named by
// XMSG_JOB_SECRET_FILE). Modelled as under mpirun or srun (no launcher secret), the launchers
// of multi-node jobs: every rank then reads it from rank 0, one more get. Under xmsgrun there is neither the 64 bytes nor that get.
constexpr double kTcpSecretBytes = 64;
// What connect() keeps per peer for the wire-up: the address string and the sockaddr_in parsed
// from it, plus the per-job-rank table of peers (one pointer per rank). The rest of a Peer
// (send queue, pending reads: per-connection machinery, allocated at connect() too) is not
// counted, as the verbs figures do not count QP objects.
constexpr double kTcpPeerWireupBytes = kTcpAddressBytes + static_cast<double>(sizeof(sockaddr_in));
constexpr double kTcpTableBytesPerJobRank = static_cast<double>(sizeof(void*));

// JSON numbers: integral means print as integers, others keep two decimals of precision.
nlohmann::json number(double value) {
  if (std::floor(value) == value && std::fabs(value) < 9.0e15) return static_cast<std::int64_t>(value);
  return std::round(value * 100.0) / 100.0;
}

// Text: integers as integers, others with two decimals.
std::string count_text(double value) {
  if (std::floor(value) == value && std::fabs(value) < 9.0e15) return fmt::format("{}", static_cast<std::int64_t>(value));
  return fmt::format("{:.2f}", value);
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
  double remote_ranks_per_rank = 0;  // ranks on other nodes, mean over ranks
  std::uint64_t recv_memory_per_rank = 0;
  // The wire-up as VerbsTransport::connect_eager does it ("eager"): every rank publishes its
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
  s.remote_ranks_per_rank = remote_peers / plan.num_ranks();
  s.wireup_memory_per_rank = remote_memory / plan.num_ranks() +
                             static_cast<double>(sizeof(std::uint32_t)) * plan.num_ranks();
  s.gets_per_rank = plan.num_ranks() + s.remote_ranks_per_rank;
  s.qps_at_start_per_rank = s.qps_per_rank;
  return s;
}

// One verbs wire-up scheme, per rank = mean over the job's ranks. "At start" = when connect()
// returns, before any traffic; "after all-to-all" = cumulative, once every rank has sent to every
// other rank (the job's first all-to-all).
struct Wireup {
  std::string_view scheme;
  double pmix_bytes_per_rank = 0;   // published
  double pmix_bytes_per_node = 0;   // received by each node at start-up
  double wireup_memory_per_rank = 0;
  double gets_per_rank = 0;
  double qps_at_start_per_rank = 0;
  double qps_after_alltoall_per_rank = 0;
  double wireup_memory_after_alltoall_per_rank = 0;
  double gets_after_alltoall_per_rank = 0;
  // Connection-manager handshakes on the path of this rank's sends (one per connection it sends
  // over): XRC one per remote node (its INI QP), RC one per remote peer (the pair's one handshake
  // counts for both ends, whichever asked).
  double handshakes_after_alltoall_per_rank = 0;
};

Wireup eager_wireup(const Summary& s) {
  Wireup w;
  w.scheme = "eager";
  w.pmix_bytes_per_rank = s.pmix_bytes_per_rank;
  w.pmix_bytes_per_node = s.pmix_bytes_per_node;
  w.wireup_memory_per_rank = s.wireup_memory_per_rank;
  w.gets_per_rank = s.gets_per_rank;
  w.qps_at_start_per_rank = s.qps_at_start_per_rank;
  // Everything happened in connect(): traffic adds no QP, no get, no state, no handshake.
  w.qps_after_alltoall_per_rank = s.qps_per_rank;
  w.wireup_memory_after_alltoall_per_rank = s.wireup_memory_per_rank;
  w.gets_after_alltoall_per_rank = s.gets_per_rank;
  w.handshakes_after_alltoall_per_rank = 0;
  return w;
}

// The lazy wire-up (VerbsTransport::connect_lazy): put one WireUpCard, commit, fence without data
// collection (a barrier: no verbs data reaches any node), no get, no QP. The first send to a peer
// gets that peer's card (direct modex) and keeps it; XRC: the first send to any rank of a remote
// node creates the INI QP toward that node and does one handshake with the destination rank,
// which creates the TGT QP in its node's XRC domain; later ranks of that node need only their
// card. RC: one RC QP and one handshake per remote peer. After the first all-to-all the QPs are
// those of the eager plan.
Wireup lazy_wireup(const ConnectionPlan& plan, const Summary& s) {
  Wireup w;
  w.scheme = "lazy";
  w.pmix_bytes_per_rank = kCardBytes;
  w.pmix_bytes_per_node = 0;
  w.wireup_memory_per_rank = kLazyStateBytesPerJobRank * plan.num_ranks() + kCardBytes;
  w.gets_per_rank = 0;
  w.qps_at_start_per_rank = 0;
  w.qps_after_alltoall_per_rank = s.qps_per_rank;
  w.wireup_memory_after_alltoall_per_rank =
      w.wireup_memory_per_rank + s.remote_ranks_per_rank * (kCardBytes + kLazyRouteEntryBytes);
  w.gets_after_alltoall_per_rank = s.remote_ranks_per_rank;
  w.handshakes_after_alltoall_per_rank = plan.mode() == PlanMode::xrc ? s.ini_per_rank : s.remote_ranks_per_rank;
  return w;
}

bool meets_targets(const Wireup& w) {
  return w.pmix_bytes_per_node <= kTargetPmixBytesPerNode && w.wireup_memory_per_rank <= kTargetWireupBytesPerRank &&
         w.qps_at_start_per_rank <= kTargetQpsAtStart;
}

std::string targets_text(const Wireup& w) {
  auto mark = [](bool ok) { return ok ? "yes" : "NO"; };
  return fmt::format("PMIx/node at start <= {} {}, state/rank before traffic <= {} {}, no QP before the first send {}",
                     human_bytes(kTargetPmixBytesPerNode), mark(w.pmix_bytes_per_node <= kTargetPmixBytesPerNode),
                     human_bytes(kTargetWireupBytesPerRank),
                     mark(w.wireup_memory_per_rank <= kTargetWireupBytesPerRank),
                     mark(w.qps_at_start_per_rank <= kTargetQpsAtStart));
}

// The tcp transport's wire-up (TcpTransport::connect), in a job where tcp carries the ranks on
// other nodes (the default selection without a verbs device: shm within a node, tcp between
// nodes; XMSG_TRANSPORTS=tcp would make every other rank a peer). connect() opens the listener,
// puts the address (and rank 0 the secret), commits and fences WITHOUT data collection, then gets
// the secret from rank 0 (one direct modex per node). A peer's address is read (direct modex)
// when this rank first connects to it; connections are made on the first send to a peer (or
// accepted from it): one socket per pair, one handshake (hello/welcome/proof) per pair.
struct TcpWireup {
  double peers_per_rank = 0;
  double pmix_bytes_per_rank = 0;   // the address
  double pmix_bytes_per_node = 0;   // received by each node at start-up
  double wireup_memory_per_rank = 0;
  double gets_per_rank = 0;
  double connections_at_start_per_rank = 0;
  double connections_after_alltoall_per_rank = 0;
  double wireup_memory_after_alltoall_per_rank = 0;
  double gets_after_alltoall_per_rank = 0;
  double handshakes_after_alltoall_per_rank = 0;
};

TcpWireup tcp_wireup(const ConnectionPlan& plan, const Summary& s) {
  TcpWireup t;
  t.peers_per_rank = s.remote_ranks_per_rank;
  t.pmix_bytes_per_rank = kTcpAddressBytes;
  t.pmix_bytes_per_node = kTcpSecretBytes;  // the secret, once per node; no address moves at start-up
  // The peer table and each peer's sockaddr_in exist from connect(); the address string is read
  // on the first connection to that peer.
  t.wireup_memory_per_rank = kTcpTableBytesPerJobRank * plan.num_ranks() +
                             static_cast<double>(sizeof(sockaddr_in)) * t.peers_per_rank;
  t.gets_per_rank = 1;  // the secret from rank 0
  t.connections_at_start_per_rank = 0;
  // One connection per pair (when both call at once, the first proven one is kept), so each
  // rank ends with one per peer and took part in one handshake per peer.
  t.connections_after_alltoall_per_rank = t.peers_per_rank;
  t.wireup_memory_after_alltoall_per_rank = t.wireup_memory_per_rank + kTcpAddressBytes * t.peers_per_rank;
  t.gets_after_alltoall_per_rank = t.peers_per_rank + 1;  // every peer's address + the secret
  t.handshakes_after_alltoall_per_rank = t.peers_per_rank;
  return t;
}

nlohmann::json wireup_json(const Wireup& w) {
  nlohmann::json j = {
      {"wireup_scheme", std::string(w.scheme)},
      {"pmix_bytes_per_rank", number(w.pmix_bytes_per_rank)},
      {"pmix_bytes_per_node", number(w.pmix_bytes_per_node)},
      {"wireup_memory_per_rank_bytes", number(w.wireup_memory_per_rank)},
      {"gets_per_rank", number(w.gets_per_rank)},
      {"qps_at_start_per_rank", number(w.qps_at_start_per_rank)},
      {"qps_after_alltoall_per_rank", number(w.qps_after_alltoall_per_rank)},
      {"wireup_memory_after_alltoall_per_rank_bytes", number(w.wireup_memory_after_alltoall_per_rank)},
      {"gets_after_alltoall_per_rank", number(w.gets_after_alltoall_per_rank)},
      {"handshakes_after_alltoall_per_rank", number(w.handshakes_after_alltoall_per_rank)},
  };
  if (w.scheme == "lazy") j["card_bytes"] = number(kCardBytes);
  return j;
}

nlohmann::json tcp_json(const TcpWireup& t) {
  return {
      {"peers_per_rank", number(t.peers_per_rank)},
      {"address_bytes", number(kTcpAddressBytes)},
      {"secret_bytes", number(kTcpSecretBytes)},
      {"pmix_bytes_per_rank", number(t.pmix_bytes_per_rank)},
      {"pmix_bytes_per_node", number(t.pmix_bytes_per_node)},
      {"wireup_memory_per_rank_bytes", number(t.wireup_memory_per_rank)},
      {"gets_per_rank", number(t.gets_per_rank)},
      {"connections_at_start_per_rank", number(t.connections_at_start_per_rank)},
      {"connections_after_alltoall_per_rank", number(t.connections_after_alltoall_per_rank)},
      {"wireup_memory_after_alltoall_per_rank_bytes", number(t.wireup_memory_after_alltoall_per_rank)},
      {"gets_after_alltoall_per_rank", number(t.gets_after_alltoall_per_rank)},
      {"handshakes_after_alltoall_per_rank", number(t.handshakes_after_alltoall_per_rank)},
  };
}

struct Schemes {
  bool eager = true;
  bool lazy = true;
};

Schemes parse_schemes(std::string_view text) {
  if (text == "both") return {true, true};
  if (text == "eager") return {true, false};
  if (text == "lazy") return {false, true};
  throw std::invalid_argument("--scheme: expected 'eager', 'lazy' or 'both', got '" + std::string(text) + "'");
}

void print_scheme(const Wireup& w, PlanMode mode) {
  if (w.scheme == "eager") {
    fmt::print("  wire-up (scheme eager: every record to every node, every QP at start-up):\n");
    fmt::print("    PMIx bytes/node   : {} received at start-up\n", human_bytes(w.pmix_bytes_per_node));
    fmt::print("    wire-up memory    : {} per rank (remote peers' records + node map)\n",
               human_bytes(w.wireup_memory_per_rank));
    fmt::print("    bootstrap gets    : {} per rank\n", count_text(w.gets_per_rank));
    fmt::print("    QPs at start-up   : {:.2f} per rank (the same after a first all-to-all)\n", w.qps_at_start_per_rank);
  } else {
    fmt::print("  wire-up (scheme lazy: one card per rank, fence without data, QPs on the first send):\n");
    fmt::print("    PMIx bytes/rank   : {} (key \"{}\": one {}-byte card)\n", count_text(w.pmix_bytes_per_rank),
               xmsg::verbs::kWireUpCardKey, sizeof(xmsg::verbs::WireUpCard));
    fmt::print("    PMIx bytes/node   : {} received at start-up (the fence collects no data)\n",
               human_bytes(w.pmix_bytes_per_node));
    fmt::print("    wire-up memory    : {} per rank before traffic ({} bytes per job rank + its own card)\n",
               human_bytes(w.wireup_memory_per_rank), count_text(kLazyStateBytesPerJobRank));
    fmt::print("    bootstrap gets    : {} per rank at start-up\n", count_text(w.gets_per_rank));
    fmt::print("    QPs at start-up   : {} per rank\n", count_text(w.qps_at_start_per_rank));
    fmt::print("    after all-to-all  : {} QPs, {} gets (one card per remote rank), {} handshakes ({}), "
               "{} wire-up memory (+ card and {}-byte route per remote rank) per rank\n",
               count_text(w.qps_after_alltoall_per_rank), count_text(w.gets_after_alltoall_per_rank),
               count_text(w.handshakes_after_alltoall_per_rank),
               mode == PlanMode::xrc ? "one per remote node" : "one per remote rank",
               human_bytes(w.wireup_memory_after_alltoall_per_rank), count_text(kLazyRouteEntryBytes));
  }
  fmt::print("    issue-18 targets  : {} (set for {} x {} XRC; this job's figures)\n", targets_text(w), kTargetNodes,
             kTargetPpn);
}

void print_tcp(const TcpWireup& t) {
  fmt::print("  tcp (if tcp carried the ranks on other nodes: address put, fence without data, address read and connection made on the first send):\n");
  fmt::print("    PMIx bytes/rank   : {} (key \"xmsg.tcp.addr\": \"a.b.c.d:port\", at most {} bytes)\n",
             count_text(t.pmix_bytes_per_rank), kTcpLongestAddress.size());
  fmt::print("    PMIx bytes/node   : {} received at start-up (rank 0's {}-byte secret; addresses travel on first connect)\n",
             human_bytes(t.pmix_bytes_per_node), count_text(kTcpSecretBytes));
  fmt::print("    wire-up memory    : {} per rank at start-up (peer table + sockaddrs)\n",
             human_bytes(t.wireup_memory_per_rank));
  fmt::print("    bootstrap gets    : {} per rank at start-up (the secret), {} after all-to-all ({} peers' addresses)\n",
             count_text(t.gets_per_rank), count_text(t.gets_after_alltoall_per_rank), count_text(t.peers_per_rank));
  fmt::print("    connections       : {} at start-up, {} per rank after all-to-all ({} handshakes)\n",
             count_text(t.connections_at_start_per_rank), count_text(t.connections_after_alltoall_per_rank),
             count_text(t.handshakes_after_alltoall_per_rank));
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

// --table: one markdown table over a fixed grid of jobs. Counts only (ConnectionPlan::uniform and
// its O(1) per-rank counts), never a per-rank QP list, so 1000 x 64 RC (4e9 QPs) costs no more
// than its 64000 ranks.
void print_table(const Schemes& schemes, const xmsg::verbs::VerbsLimits& limits) {
  constexpr int kNodes[] = {2, 16, 128, 1000};
  constexpr int kPpn[] = {1, 16, 64};
  constexpr PlanMode kModes[] = {PlanMode::xrc, PlanMode::rc};

  {
    const ConnectionPlan plan = ConnectionPlan::uniform(kTargetNodes, kTargetPpn, PlanMode::xrc);
    const Summary s = summarise(plan, limits);
    fmt::print("Issue 18 targets at {} nodes x {} ranks per node, XRC: <= {} PMIx data received per node at start-up, "
               "<= {} wire-up state per rank before traffic, no QP before the first send.\n",
               kTargetNodes, kTargetPpn, human_bytes(kTargetPmixBytesPerNode), human_bytes(kTargetWireupBytesPerRank));
    for (const Wireup& w : {eager_wireup(s), lazy_wireup(plan, s)}) {
      if ((w.scheme == "eager" && !schemes.eager) || (w.scheme == "lazy" && !schemes.lazy)) continue;
      fmt::print("- {}: {} received per node, {} per rank, {} QPs per rank at start-up: targets {}.\n", w.scheme,
                 human_bytes(w.pmix_bytes_per_node), human_bytes(w.wireup_memory_per_rank),
                 count_text(w.qps_at_start_per_rank), meets_targets(w) ? "met" : "NOT met");
    }
  }
  fmt::print("\nPer rank = mean over the job's ranks; \"after all-to-all\" = once every rank has sent to every other. "
             "tcp rows: tcp carrying the ranks on other nodes, QP columns count its connections.\n\n");
  fmt::print("| N | ppn | transport | scheme | PMIx B published/rank | PMIx B received/node at start | "
             "wire-up memory/rank at start | gets/rank at start | QPs/rank at start | QPs/rank after all-to-all | "
             "memory/rank after all-to-all |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const int nodes : kNodes) {
    for (const int ppn : kPpn) {
      std::unique_ptr<TcpWireup> tcp;
      for (const PlanMode mode : kModes) {
        const ConnectionPlan plan = ConnectionPlan::uniform(nodes, ppn, mode);
        const Summary s = summarise(plan, limits);
        if (!tcp) tcp = std::make_unique<TcpWireup>(tcp_wireup(plan, s));
        for (const Wireup& w : {eager_wireup(s), lazy_wireup(plan, s)}) {
          if ((w.scheme == "eager" && !schemes.eager) || (w.scheme == "lazy" && !schemes.lazy)) continue;
          fmt::print("| {} | {} | verbs {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", nodes, ppn,
                     xmsg::verbs::to_string(mode), w.scheme, human_bytes(w.pmix_bytes_per_rank),
                     human_bytes(w.pmix_bytes_per_node), human_bytes(w.wireup_memory_per_rank),
                     count_text(w.gets_per_rank), count_text(w.qps_at_start_per_rank),
                     count_text(w.qps_after_alltoall_per_rank), human_bytes(w.wireup_memory_after_alltoall_per_rank));
        }
      }
      fmt::print("| {} | {} | tcp | - | {} | {} | {} | {} | {} | {} | {} |\n", nodes, ppn,
                 human_bytes(tcp->pmix_bytes_per_rank), human_bytes(tcp->pmix_bytes_per_node),
                 human_bytes(tcp->wireup_memory_per_rank), count_text(tcp->gets_per_rank),
                 count_text(tcp->connections_at_start_per_rank), count_text(tcp->connections_after_alltoall_per_rank),
                 human_bytes(tcp->wireup_memory_after_alltoall_per_rank));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xmsg_plan: QPs, receive memory, PMIx bytes and wire-up cost of the verbs transport (and tcp) for N nodes x P ranks"};
  int nodes = 0;
  int ppn = 0;
  std::string mode_text = "xrc";
  std::string scheme_text = "both";
  bool json = false;
  bool table = false;
  int show_rank = -1;
  xmsg::verbs::VerbsLimits limits;
  auto* nodes_opt = app.add_option("--nodes", nodes, "number of nodes (>= 1; required unless --table)");
  auto* ppn_opt = app.add_option("--ppn", ppn, "ranks per node (>= 1; required unless --table)");
  auto* mode_opt = app.add_option("--mode", mode_text, "xrc or rc (default xrc)");
  app.add_option("--scheme", scheme_text, "verbs wire-up to show: eager, lazy or both (default both)");
  auto* json_opt = app.add_flag("--json", json, "print one JSON object");
  app.add_option("--srq-depth", limits.srq_depth, "receive buffers posted per rank (XMSG_VERBS_SRQ_DEPTH)");
  app.add_option("--eager-buffer", limits.eager_buffer_bytes, "bytes per receive buffer (XMSG_VERBS_EAGER_BUFFER)");
  auto* rank_opt = app.add_option("--rank", show_rank, "also list the QPs of this rank");
  app.add_flag("--table", table,
               "print a markdown table: N in {2,16,128,1000} x ppn in {1,16,64}, xrc and rc, both schemes, and tcp")
      ->excludes(nodes_opt)
      ->excludes(ppn_opt)
      ->excludes(mode_opt)
      ->excludes(json_opt)
      ->excludes(rank_opt);

  try {
    app.parse(argc, argv);
    if (!table && nodes_opt->count() == 0) throw CLI::RequiredError("--nodes");
    if (!table && ppn_opt->count() == 0) throw CLI::RequiredError("--ppn");
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "xmsg_plan: %s\n", e.what());
    return kUsageError;
  }

  try {
    const auto validate_limits = [&] {
      try {
        limits.validate();
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        throw std::invalid_argument(what.rfind("srq_depth", 0) == 0       ? "--srq-depth" + what.substr(9)
                                    : what.rfind("eager_buffer_bytes", 0) == 0 ? "--eager-buffer" + what.substr(18)
                                                                             : what);
      }
    };
    const Schemes schemes = parse_schemes(scheme_text);
    if (table) {
      validate_limits();
      print_table(schemes, limits);
      return 0;
    }
    const PlanMode mode = xmsg::verbs::parse_plan_mode(mode_text, "--mode");
    if (nodes < 1) throw std::invalid_argument(fmt::format("--nodes: must be >= 1, got {}", nodes));
    if (ppn < 1) throw std::invalid_argument(fmt::format("--ppn: must be >= 1, got {}", ppn));
    validate_limits();
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
    const Wireup eager = eager_wireup(s);
    const Wireup lazy = lazy_wireup(plan, s);
    const TcpWireup tcp = tcp_wireup(plan, s);

    if (json) {
      // The top-level wire-up keys describe the eager scheme, as they always have; "wireup" holds
      // each selected scheme under the same key names, "tcp" the tcp transport's wire-up.
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
      nlohmann::json wireup = nlohmann::json::object();
      if (schemes.eager) wireup["eager"] = wireup_json(eager);
      if (schemes.lazy) wireup["lazy"] = wireup_json(lazy);
      out["wireup"] = std::move(wireup);
      out["tcp"] = tcp_json(tcp);
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
      fmt::print("  PMIx bytes/rank     : {:.2f} (eager, key \"{}\": {}-byte header + {} bytes per QP; key \"{}\": {} bytes)\n",
                 s.pmix_bytes_per_rank, xmsg::verbs::kWireUpKey, sizeof(xmsg::verbs::WireUpHeader),
                 sizeof(xmsg::verbs::WireUpQp), xmsg::verbs::kNodeKey, xmsg::verbs::kNodeKeyBytes);
      if (schemes.eager) print_scheme(eager, mode);
      if (schemes.lazy) print_scheme(lazy, mode);
      print_tcp(tcp);
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
