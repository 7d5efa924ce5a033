// Network-namespace nodes: `xmsgrun --nodes K --netns` gives each virtual node its own network
// namespace, joined to the others by a veth pair into a per-job bridge, so tcp traffic between
// nodes crosses real (virtual) interfaces. Everything stays on this machine: the bridge has no
// address and no route in the host, and the nodes' subnet is checked against every address
// and route the host already has.
//
// Names carry a per-job suffix so parallel jobs never collide (IFNAMSIZ allows 15 characters):
//   namespaces  xn<suffix>-<node>      bridge  xb<suffix>      host veths  xv<suffix>-<node>
// Inside each namespace the node's interface is called eth0 (address 198.18.<X>.<node+1>/24),
// so the tcp transport's default choice (first non-loopback interface) finds it.
//
// Built with iproute2 (`ip`, fork/exec): needs root (CAP_NET_ADMIN + CAP_SYS_ADMIN).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace xmsg::launcher {

class NetnsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NetnsTopology {
 public:
  // Creates `nodes` namespaces, the bridge and the veth pairs. `suffix`: 1..6 characters of
  // [a-z0-9]; empty picks one from the pid. On failure removes what it made and throws
  // NetnsError with the failing `ip` command and its output.
  explicit NetnsTopology(int nodes, std::string suffix = "");
  // Removes everything (teardown()). Processes still inside a namespace keep it alive until
  // they exit, so stop the node servers first.
  ~NetnsTopology();
  NetnsTopology(const NetnsTopology&) = delete;
  NetnsTopology& operator=(const NetnsTopology&) = delete;

  int nodes() const { return nodes_; }
  const std::string& suffix() const { return suffix_; }
  std::string namespace_name(int node) const;
  std::string address(int node) const;  // IPv4 of the node's eth0, without prefix length
  std::string subnet() const;           // e.g. "198.18.7.0/24"

  // Moves the calling process (thread) into node's network namespace. Call it in the node
  // server right after fork, before PMIx_server_init: its ranks inherit the namespace.
  // Throws NetnsError naming the node when the node does not exist or setns fails.
  void enter(int node) const;

  // Deletes the namespaces, veths and bridge; safe to call twice; never throws.
  void teardown() noexcept;

  // Deletes whatever a job with this suffix left behind (e.g. after the launcher was killed).
  // Returns how many objects it deleted.
  static int sweep(const std::string& suffix) noexcept;
  // Names of namespaces and links with this suffix that exist now (empty when all clean).
  static std::vector<std::string> leftovers(const std::string& suffix);
  // True when this process may create namespaces (root, `ip` present, netns supported);
  // otherwise `why` says what is missing.
  static bool supported(std::string& why);

 private:
  void create();
  std::string bridge_name() const;
  std::string veth_name(int node) const;

  int nodes_;
  std::string suffix_;
  int subnet_octet_ = 0;  // X in 198.18.X.0/24
  bool torn_down_ = false;
};

}  // namespace xmsg::launcher
