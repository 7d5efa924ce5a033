// ConnectionPlan: which queue pairs every rank of a job creates, and over which one a rank reaches
// each remote rank. Pure arithmetic on (rank -> node), no verbs calls, so the transport and the
// xmsg_plan tool agree by construction and both ends of a connection compute the same answer
// without asking each other.
//
// Modes:
//   XRC  rank r creates one INI QP per remote node m (send only). Node n holds one TGT QP
//        (receive only) for every remote sender rank s; the local rank tgt_owner(s, n) creates
//        it. INI(s, n) <-> TGT(s on n) form one connection; the sender names the destination
//        rank's SRQ number in each work request, so that one INI QP reaches every rank of n.
//   RC   rank r creates one RC QP per remote rank (ranks on other nodes), all feeding r's one SRQ.
//
// Ranks of the same node never get a QP: they talk through shared memory. The plan is lazy
// (per-rank lists are computed on demand) because a whole RC plan at 1000 nodes x 64 ranks
// has 4e9 QPs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xmsg::verbs {

enum class PlanMode : std::uint8_t { xrc = 1, rc = 2 };

std::string_view to_string(PlanMode mode);
// Parses "xrc" / "rc"; throws std::invalid_argument naming `argument_name`.
PlanMode parse_plan_mode(std::string_view text, std::string_view argument_name = "mode");

enum class QpKind : std::uint8_t { xrc_ini, xrc_tgt, rc };

std::string_view to_string(QpKind kind);

// One QP a rank creates.
//   xrc_ini: peer = remote node id (the node this INI reaches)
//   xrc_tgt: peer = remote sender rank whose INI QP this TGT answers (node of the TGT = owner's)
//   rc:      peer = remote rank
struct PlannedQp {
  QpKind kind;
  int peer;
  friend bool operator==(const PlannedQp&, const PlannedQp&) = default;
};

// How rank `from` reaches rank `to`.
//   xrc: over from's INI QP to node_of(to); the TGT on that node is owned by `tgt_owner`; the
//        work request names to's SRQ number.
//   rc:  over from's RC QP to `to` (tgt_owner = -1).
struct Path {
  PlanMode mode;
  int from;
  int to;
  int via_node;    // node_of(to)
  int tgt_owner;   // xrc only
  friend bool operator==(const Path&, const Path&) = default;
};

class ConnectionPlan {
 public:
  // Upper bound on ranks in one plan; keeps every count below within 64-bit and int ranges.
  static constexpr int kMaxRanks = 1 << 24;

  // Uniform block layout: rank = node * ppn + local index. Throws std::invalid_argument naming
  // `nodes` or `ppn` when they are < 1 or the job exceeds kMaxRanks.
  static ConnectionPlan uniform(int nodes, int ppn, PlanMode mode);

  // Any layout: node_of_rank[r] is r's node. Node ids must be 0..N-1 and every node must hold
  // at least one rank. Throws std::invalid_argument naming `node_of_rank`.
  ConnectionPlan(std::vector<int> node_of_rank, PlanMode mode);

  PlanMode mode() const { return mode_; }
  int num_ranks() const { return static_cast<int>(node_of_.size()); }
  int num_nodes() const { return static_cast<int>(ranks_of_node_.size()); }
  int ranks_on_node(int node) const { return static_cast<int>(ranks_of_node_.at(static_cast<std::size_t>(node)).size()); }
  int node_of(int rank) const;
  // Ranks on `node`, ascending.
  const std::vector<int>& ranks_on(int node) const;
  // Index of `rank` among the ranks of its node.
  int local_index(int rank) const;

  // The local rank of `node` that creates and owns the TGT QP answering sender `sender`
  // (a rank on another node). Round-robin over the node's ranks: sender % local_count, which
  // gives every local rank the same share of TGTs when the layout is uniform.
  int tgt_owner(int sender, int node) const;

  // Every QP `rank` creates, in the canonical order the wire-up record uses:
  // XRC: INIs by ascending remote node, then TGTs by ascending sender rank. RC: by remote rank.
  std::vector<PlannedQp> qps_of(int rank) const;
  // Counts without building the lists (O(1) / O(1) amortised).
  int ini_count(int rank) const;  // XRC: INI QPs; RC: 0
  int tgt_count(int rank) const;  // XRC: TGT QPs owned; RC: 0
  int rc_count(int rank) const;   // RC: RC QPs; XRC: 0
  int qp_count(int rank) const { return ini_count(rank) + tgt_count(rank) + rc_count(rank); }

  // Route from `from` to `to`; nullopt when both are on the same node (shared memory).
  std::optional<Path> path(int from, int to) const;

  // Position of the counterpart in the canonical list of its creator, for the wire-up: the INI
  // of `sender` towards `node` within sender's qps_of(), the TGT for `sender` within
  // tgt_owner(sender,node)'s qps_of(), the RC QP of `owner` towards `peer` within owner's list.
  int ini_index(int sender, int node) const;
  int tgt_index(int sender, int node) const;
  int rc_index(int owner, int peer) const;

  // Whole-job totals.
  std::int64_t total_qps() const;
  std::int64_t qps_on_node(int node) const;
  double mean_qps_per_rank() const;
  double mean_qps_per_node() const;

 private:
  ConnectionPlan(std::vector<int> node_of_rank, PlanMode mode, bool validated);
  void check_rank(int rank, std::string_view argument_name) const;
  void check_node(int node, std::string_view argument_name) const;

  PlanMode mode_;
  std::vector<int> node_of_;
  std::vector<int> local_index_;
  std::vector<std::vector<int>> ranks_of_node_;
  std::vector<int> tgt_count_;  // per rank, XRC only
};

}  // namespace xmsg::verbs
