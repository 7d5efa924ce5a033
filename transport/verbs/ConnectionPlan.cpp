#include "ConnectionPlan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace xmsg::verbs {

namespace {

[[noreturn]] void reject(std::string_view argument_name, const std::string& why) {
  throw std::invalid_argument(std::string(argument_name) + ": " + why);
}

// Number of s in [0, limit) with s % modulus == residue.
std::int64_t count_residue_below(std::int64_t limit, int modulus, int residue) {
  if (residue >= limit) return 0;
  return (limit - 1 - residue) / modulus + 1;
}

}  // namespace

std::string_view to_string(PlanMode mode) {
  switch (mode) {
    case PlanMode::xrc: return "xrc";
    case PlanMode::rc: return "rc";
  }
  return "?";
}

PlanMode parse_plan_mode(std::string_view text, std::string_view argument_name) {
  if (text == "xrc") return PlanMode::xrc;
  if (text == "rc") return PlanMode::rc;
  reject(argument_name, "expected 'xrc' or 'rc', got '" + std::string(text) + "'");
}

std::string_view to_string(QpKind kind) {
  switch (kind) {
    case QpKind::xrc_ini: return "xrc-ini";
    case QpKind::xrc_tgt: return "xrc-tgt";
    case QpKind::rc: return "rc";
  }
  return "?";
}

ConnectionPlan ConnectionPlan::uniform(int nodes, int ppn, PlanMode mode) {
  if (nodes < 1) reject("nodes", "must be >= 1, got " + std::to_string(nodes));
  if (ppn < 1) reject("ppn", "must be >= 1, got " + std::to_string(ppn));
  if (static_cast<std::int64_t>(nodes) * ppn > kMaxRanks) {
    reject("nodes", "nodes x ppn = " + std::to_string(static_cast<std::int64_t>(nodes) * ppn) +
                        " exceeds the planner's limit of " + std::to_string(kMaxRanks) + " ranks");
  }
  std::vector<int> node_of(static_cast<std::size_t>(nodes) * ppn);
  for (std::size_t r = 0; r < node_of.size(); ++r) node_of[r] = static_cast<int>(r / ppn);
  return ConnectionPlan(std::move(node_of), mode, true);
}

ConnectionPlan::ConnectionPlan(std::vector<int> node_of_rank, PlanMode mode)
    : ConnectionPlan(std::move(node_of_rank), mode, false) {}

ConnectionPlan::ConnectionPlan(std::vector<int> node_of_rank, PlanMode mode, bool validated)
    : mode_(mode), node_of_(std::move(node_of_rank)) {
  if (mode_ != PlanMode::xrc && mode_ != PlanMode::rc) reject("mode", "unknown plan mode");
  if (!validated) {
    if (node_of_.empty()) reject("node_of_rank", "a job needs at least one rank");
    if (node_of_.size() > static_cast<std::size_t>(kMaxRanks)) {
      reject("node_of_rank", std::to_string(node_of_.size()) + " ranks exceed the planner's limit of " +
                                 std::to_string(kMaxRanks));
    }
  }
  int max_node = -1;
  for (std::size_t r = 0; r < node_of_.size(); ++r) {
    if (node_of_[r] < 0) {
      reject("node_of_rank", "rank " + std::to_string(r) + " has negative node id " + std::to_string(node_of_[r]));
    }
    if (node_of_[r] >= static_cast<int>(node_of_.size())) {
      reject("node_of_rank", "rank " + std::to_string(r) + " has node id " + std::to_string(node_of_[r]) +
                                 " but there are only " + std::to_string(node_of_.size()) + " ranks");
    }
    max_node = std::max(max_node, node_of_[r]);
  }
  ranks_of_node_.assign(static_cast<std::size_t>(max_node) + 1, {});
  local_index_.resize(node_of_.size());
  for (std::size_t r = 0; r < node_of_.size(); ++r) {
    auto& local = ranks_of_node_[static_cast<std::size_t>(node_of_[r])];
    local_index_[r] = static_cast<int>(local.size());
    local.push_back(static_cast<int>(r));
  }
  for (std::size_t n = 0; n < ranks_of_node_.size(); ++n) {
    if (ranks_of_node_[n].empty()) {
      reject("node_of_rank", "node " + std::to_string(n) + " holds no rank (node ids must be 0..N-1 without gaps)");
    }
  }

  tgt_count_.assign(node_of_.size(), 0);
  if (mode_ == PlanMode::xrc) {
    const auto total = static_cast<std::int64_t>(node_of_.size());
    std::vector<int> local_hits;
    for (const auto& local : ranks_of_node_) {
      const int width = static_cast<int>(local.size());
      // Senders of this node are all ranks not on it; subtract the local ranks from the
      // residue classes of all ranks.
      local_hits.assign(static_cast<std::size_t>(width), 0);
      for (int l : local) ++local_hits[static_cast<std::size_t>(l % width)];
      for (int i = 0; i < width; ++i) {
        tgt_count_[static_cast<std::size_t>(local[static_cast<std::size_t>(i)])] =
            static_cast<int>(count_residue_below(total, width, i) - local_hits[static_cast<std::size_t>(i)]);
      }
    }
  }
}

void ConnectionPlan::check_rank(int rank, std::string_view argument_name) const {
  if (rank < 0 || rank >= num_ranks()) {
    reject(argument_name, "rank " + std::to_string(rank) + " is outside 0.." + std::to_string(num_ranks() - 1));
  }
}

void ConnectionPlan::check_node(int node, std::string_view argument_name) const {
  if (node < 0 || node >= num_nodes()) {
    reject(argument_name, "node " + std::to_string(node) + " is outside 0.." + std::to_string(num_nodes() - 1));
  }
}

int ConnectionPlan::node_of(int rank) const {
  check_rank(rank, "rank");
  return node_of_[static_cast<std::size_t>(rank)];
}

const std::vector<int>& ConnectionPlan::ranks_on(int node) const {
  check_node(node, "node");
  return ranks_of_node_[static_cast<std::size_t>(node)];
}

int ConnectionPlan::local_index(int rank) const {
  check_rank(rank, "rank");
  return local_index_[static_cast<std::size_t>(rank)];
}

int ConnectionPlan::tgt_owner(int sender, int node) const {
  check_rank(sender, "sender");
  check_node(node, "node");
  if (node_of_[static_cast<std::size_t>(sender)] == node) {
    reject("sender", "rank " + std::to_string(sender) + " is on node " + std::to_string(node) +
                         " itself; local ranks get no TGT QP");
  }
  const auto& local = ranks_of_node_[static_cast<std::size_t>(node)];
  return local[static_cast<std::size_t>(sender) % local.size()];
}

int ConnectionPlan::ini_count(int rank) const {
  check_rank(rank, "rank");
  return mode_ == PlanMode::xrc ? num_nodes() - 1 : 0;
}

int ConnectionPlan::tgt_count(int rank) const {
  check_rank(rank, "rank");
  return tgt_count_[static_cast<std::size_t>(rank)];
}

int ConnectionPlan::rc_count(int rank) const {
  check_rank(rank, "rank");
  if (mode_ != PlanMode::rc) return 0;
  return num_ranks() - static_cast<int>(ranks_of_node_[static_cast<std::size_t>(node_of_[static_cast<std::size_t>(rank)])].size());
}

std::vector<PlannedQp> ConnectionPlan::qps_of(int rank) const {
  check_rank(rank, "rank");
  const int my_node = node_of_[static_cast<std::size_t>(rank)];
  std::vector<PlannedQp> qps;
  qps.reserve(static_cast<std::size_t>(qp_count(rank)));
  if (mode_ == PlanMode::xrc) {
    for (int n = 0; n < num_nodes(); ++n) {
      if (n != my_node) qps.push_back({QpKind::xrc_ini, n});
    }
    const auto& local = ranks_of_node_[static_cast<std::size_t>(my_node)];
    const int width = static_cast<int>(local.size());
    const int me = local_index_[static_cast<std::size_t>(rank)];
    for (int s = me; s < num_ranks(); s += width) {
      if (node_of_[static_cast<std::size_t>(s)] != my_node) qps.push_back({QpKind::xrc_tgt, s});
    }
  } else {
    for (int r = 0; r < num_ranks(); ++r) {
      if (node_of_[static_cast<std::size_t>(r)] != my_node) qps.push_back({QpKind::rc, r});
    }
  }
  return qps;
}

std::optional<Path> ConnectionPlan::path(int from, int to) const {
  check_rank(from, "from");
  check_rank(to, "to");
  const int to_node = node_of_[static_cast<std::size_t>(to)];
  if (node_of_[static_cast<std::size_t>(from)] == to_node) return std::nullopt;
  if (mode_ == PlanMode::xrc) return Path{mode_, from, to, to_node, tgt_owner(from, to_node)};
  return Path{mode_, from, to, to_node, -1};
}

int ConnectionPlan::ini_index(int sender, int node) const {
  check_rank(sender, "sender");
  check_node(node, "node");
  const int my_node = node_of_[static_cast<std::size_t>(sender)];
  if (mode_ != PlanMode::xrc) reject("mode", "INI QPs exist only in XRC mode");
  if (node == my_node) reject("node", "rank " + std::to_string(sender) + " has no INI QP to its own node");
  return node < my_node ? node : node - 1;
}

int ConnectionPlan::tgt_index(int sender, int node) const {
  const int owner = tgt_owner(sender, node);
  if (mode_ != PlanMode::xrc) reject("mode", "TGT QPs exist only in XRC mode");
  const auto& local = ranks_of_node_[static_cast<std::size_t>(node)];
  const int width = static_cast<int>(local.size());
  const int residue = local_index_[static_cast<std::size_t>(owner)];
  // Senders before `sender` in the owner's residue class, less the local ranks in that class.
  std::int64_t before = count_residue_below(sender, width, residue);
  for (int l : local) {
    if (l >= sender) break;
    if (l % width == residue) --before;
  }
  return ini_count(owner) + static_cast<int>(before);
}

int ConnectionPlan::rc_index(int owner, int peer) const {
  check_rank(owner, "owner");
  check_rank(peer, "peer");
  if (mode_ != PlanMode::rc) reject("mode", "RC QPs exist only in RC mode");
  const auto& local = ranks_of_node_[static_cast<std::size_t>(node_of_[static_cast<std::size_t>(owner)])];
  if (node_of_[static_cast<std::size_t>(peer)] == node_of_[static_cast<std::size_t>(owner)]) {
    reject("peer", "rank " + std::to_string(peer) + " shares a node with rank " + std::to_string(owner));
  }
  const auto local_before = std::lower_bound(local.begin(), local.end(), peer) - local.begin();
  return peer - static_cast<int>(local_before);
}

std::int64_t ConnectionPlan::qps_on_node(int node) const {
  check_node(node, "node");
  std::int64_t sum = 0;
  for (int r : ranks_of_node_[static_cast<std::size_t>(node)]) sum += qp_count(r);
  return sum;
}

std::int64_t ConnectionPlan::total_qps() const {
  std::int64_t sum = 0;
  for (int r = 0; r < num_ranks(); ++r) sum += qp_count(r);
  return sum;
}

double ConnectionPlan::mean_qps_per_rank() const {
  return static_cast<double>(total_qps()) / num_ranks();
}

double ConnectionPlan::mean_qps_per_node() const {
  return static_cast<double>(total_qps()) / num_nodes();
}

}  // namespace xmsg::verbs
