#include "Netns.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace xmsg::launcher {
namespace {

struct CommandResult {
  int status = -1;  // exit code, or -1 when it could not run / was killed
  std::string output;  // stdout + stderr
};

// Runs `ip <args>` without a shell (names are never interpreted) and captures its output.
CommandResult run_ip(const std::vector<std::string>& args) {
  CommandResult result;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> argv;
  static char ip[] = "ip";
  argv.push_back(ip);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    ::execvp("ip", argv.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  if (pid < 0) {
    ::close(pipefd[0]);
    result.output = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) result.output.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (result.status == 127) result.output = "cannot run `ip` (install iproute2)";
  return result;
}

std::string command_text(const std::vector<std::string>& args) {
  std::string s = "ip";
  for (const auto& a : args) s += " " + a;
  return s;
}

void must(const std::vector<std::string>& args) {
  CommandResult r = run_ip(args);
  if (r.status != 0) {
    while (!r.output.empty() && r.output.back() == '\n') r.output.pop_back();
    throw NetnsError("netns: `" + command_text(args) + "` failed: " + r.output);
  }
}

bool valid_suffix(const std::string& s) {
  if (s.empty() || s.size() > 6) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

std::vector<std::string> words_at_line_starts(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string w;
    if (l >> w) {
      // `ip -br link` names peers as "name@peer".
      if (auto at = w.find('@'); at != std::string::npos) w.resize(at);
      out.push_back(w);
    }
  }
  return out;
}

}  // namespace

NetnsTopology::NetnsTopology(int nodes, std::string suffix) : nodes_(nodes), suffix_(std::move(suffix)) {
  if (nodes < 1 || nodes > 250)
    throw NetnsError("netns: --nodes " + std::to_string(nodes) + " must be in [1, 250] for network-namespace nodes");
  if (suffix_.empty()) {
    char b[8];
    std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(::getpid()) & 0xffffff);
    suffix_ = b;
  }
  if (!valid_suffix(suffix_)) throw NetnsError("netns: suffix '" + suffix_ + "' must be 1-6 characters of [a-z0-9]");
  create();
}

NetnsTopology::~NetnsTopology() { teardown(); }

std::string NetnsTopology::namespace_name(int node) const { return "xn" + suffix_ + "-" + std::to_string(node); }
std::string NetnsTopology::veth_name(int node) const { return "xv" + suffix_ + "-" + std::to_string(node); }
std::string NetnsTopology::bridge_name() const { return "xb" + suffix_; }
std::string NetnsTopology::address(int node) const {
  return "198.18." + std::to_string(subnet_octet_) + "." + std::to_string(node + 1);
}
std::string NetnsTopology::subnet() const { return "198.18." + std::to_string(subnet_octet_) + ".0/24"; }

void NetnsTopology::create() {
  // The host must not know the subnet in any form: neither as an address nor as a route.
  CommandResult addrs = run_ip({"-4", "-o", "addr", "show"});
  CommandResult routes = run_ip({"-4", "route", "show", "table", "all"});
  if (addrs.status != 0) throw NetnsError("netns: `ip -4 addr` failed: " + addrs.output);
  std::string host = addrs.output + routes.output;
  if (host.find("198.18.0.0/15") != std::string::npos)
    throw NetnsError("netns: the host already uses 198.18.0.0/15; cannot pick a private test subnet");
  unsigned start = static_cast<unsigned>(::getpid()) % 250;
  subnet_octet_ = -1;
  for (unsigned i = 0; i < 250 && subnet_octet_ < 0; ++i) {
    unsigned x = (start + i) % 250 + 1;
    if (host.find("198.18." + std::to_string(x) + ".") == std::string::npos) subnet_octet_ = static_cast<int>(x);
  }
  if (subnet_octet_ < 0) throw NetnsError("netns: no free /24 in 198.18.0.0/16 on this host");

  try {
    must({"link", "add", bridge_name(), "type", "bridge"});
    must({"link", "set", bridge_name(), "up"});
    for (int i = 0; i < nodes_; ++i) {
      const std::string ns = namespace_name(i), veth = veth_name(i);
      must({"netns", "add", ns});
      must({"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns});
      must({"link", "set", veth, "master", bridge_name()});
      must({"link", "set", veth, "up"});
      must({"-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0"});
      must({"-n", ns, "link", "set", "eth0", "up"});
      must({"-n", ns, "link", "set", "lo", "up"});
    }
  } catch (...) {
    teardown();
    throw;
  }
}

void NetnsTopology::enter(int node) const {
  if (node < 0 || node >= nodes_)
    throw NetnsError("netns: enter(" + std::to_string(node) + "): node out of range [0, " + std::to_string(nodes_) + ")");
  std::string path = "/run/netns/" + namespace_name(node);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw NetnsError("netns: cannot open " + path + ": " + std::strerror(errno));
  int rc = ::setns(fd, CLONE_NEWNET);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw NetnsError("netns: setns(" + path + ") failed: " + std::strerror(err));
}

void NetnsTopology::teardown() noexcept {
  if (torn_down_) return;
  torn_down_ = true;
  sweep(suffix_);
}

int NetnsTopology::sweep(const std::string& suffix) noexcept {
  if (!valid_suffix(suffix)) return 0;
  int deleted = 0;
  try {
    const std::string ns_prefix = "xn" + suffix + "-", veth_prefix = "xv" + suffix + "-", bridge = "xb" + suffix;
    // Deleting a namespace destroys its eth0 and with it the host end of the pair.
    for (const auto& name : words_at_line_starts(run_ip({"netns", "list"}).output))
      if (name.rfind(ns_prefix, 0) == 0 && run_ip({"netns", "del", name}).status == 0) ++deleted;
    for (const auto& name : words_at_line_starts(run_ip({"-br", "link", "show"}).output))
      if ((name.rfind(veth_prefix, 0) == 0 || name == bridge) && run_ip({"link", "del", name}).status == 0) ++deleted;
  } catch (...) {
  }
  return deleted;
}

std::vector<std::string> NetnsTopology::leftovers(const std::string& suffix) {
  std::vector<std::string> out;
  const std::string ns_prefix = "xn" + suffix + "-", veth_prefix = "xv" + suffix + "-", bridge = "xb" + suffix;
  for (const auto& name : words_at_line_starts(run_ip({"netns", "list"}).output))
    if (name.rfind(ns_prefix, 0) == 0) out.push_back("netns " + name);
  for (const auto& name : words_at_line_starts(run_ip({"-br", "link", "show"}).output))
    if (name.rfind(veth_prefix, 0) == 0 || name == bridge) out.push_back("link " + name);
  return out;
}

bool NetnsTopology::supported(std::string& why) {
  if (::geteuid() != 0) {
    why = "network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)";
    return false;
  }
  CommandResult r = run_ip({"netns", "list"});
  if (r.status != 0) {
    why = "`ip netns list` failed: " + r.output;
    return false;
  }
  if (::access("/proc/self/ns/net", R_OK) != 0) {
    why = "the kernel has no network namespaces (/proc/self/ns/net)";
    return false;
  }
  return true;
}

}  // namespace xmsg::launcher
