// TransportSelector: which transport carries each peer. Pure logic, unit-tested.
//
// Rule: a peer on the same node goes over shm; otherwise verbs when it is available; else tcp.
// XMSG_TRANSPORTS (comma-separated, e.g. "tcp" or "shm,tcp") restricts the candidates and sets
// their order: each peer gets the first listed transport that is available and can reach it
// (shm only reaches ranks of the same node). XMSG_TRANSPORTS=tcp forces tcp for every pair,
// including ranks of one node.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace xmsg::transport {

class TransportSelector {
 public:
  // `preference`: the value of XMSG_TRANSPORTS, or empty for the default order.
  // `built`: names of transports compiled in. Throws std::invalid_argument naming a bad entry.
  TransportSelector(std::string_view preference, const std::vector<std::string>& built) {
    const std::vector<std::string> default_order{"shm", "verbs", "tcp"};
    if (preference.empty()) {
      for (const auto& n : default_order)
        if (contains(built, n)) order_.push_back(n);
      return;
    }
    size_t pos = 0;
    while (pos <= preference.size()) {
      size_t comma = preference.find(',', pos);
      if (comma == std::string_view::npos) comma = preference.size();
      std::string item(preference.substr(pos, comma - pos));
      pos = comma + 1;
      if (item.empty()) continue;
      if (!contains(default_order, item))
        throw std::invalid_argument("XMSG_TRANSPORTS: unknown transport '" + item +
                                    "' (known: shm, verbs, tcp)");
      if (!contains(built, item))
        throw std::invalid_argument("XMSG_TRANSPORTS: transport '" + item + "' is not built into this library");
      if (!contains(order_, item)) order_.push_back(item);
    }
    if (order_.empty()) throw std::invalid_argument("XMSG_TRANSPORTS: names no transport");
  }

  // Transports to instantiate, in order. When every rank shares one node and shm is allowed,
  // the network transports are not needed at all.
  std::vector<std::string> wanted(int num_nodes) const {
    if (num_nodes == 1 && !order_.empty() && order_.front() == "shm") return {"shm"};
    return order_;
  }

  // The transport for one peer, given which transports came up here; nullopt when none can.
  std::optional<std::string> choose(bool same_node, const std::vector<std::string>& available) const {
    for (const auto& n : order_) {
      if (n == "shm" && !same_node) continue;
      if (contains(available, n)) return n;
    }
    return std::nullopt;
  }

  const std::vector<std::string>& order() const { return order_; }

  // Whether `name` carries pairs of ranks that share a node although shm could: it comes first
  // in the order. The same on every rank (it depends on XMSG_TRANSPORTS alone).
  bool carries_same_node_pairs(std::string_view name) const { return !order_.empty() && order_.front() == name; }

 private:
  static bool contains(const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
      if (x == s) return true;
    return false;
  }
  std::vector<std::string> order_;
};

}  // namespace xmsg::transport
