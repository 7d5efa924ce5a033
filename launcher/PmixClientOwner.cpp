#include "PmixClientOwner.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>  // SIOCOUTQ
#include <linux/tcp.h>      // tcpi_bytes_acked (glibc's netinet/tcp.h stops before it)
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

namespace xmsg::launcher {

namespace {

// What the library has sent on a connection when it calls client_connected: the handshake's
// status and the client's index, a uint32_t each (ptl_base_connection_hdlr.c, OpenPMIx 4.2).
constexpr int64_t kHandshakeAnswerBytes = 8;

uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

std::string printable(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, host, sizeof host);
  else
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(port_of(a));
}

constexpr uint8_t kTcpEstablished = 1;  // the kernel's tcp_states.h
constexpr uint8_t kTcpCloseWait = 8;

void fill_sockid(inet_diag_sockid& id, const SocketEnd& end) {
  if (end.local.ss_family == AF_INET) {
    const auto& l = reinterpret_cast<const sockaddr_in&>(end.local);
    const auto& r = reinterpret_cast<const sockaddr_in&>(end.remote);
    id.idiag_sport = l.sin_port;
    id.idiag_dport = r.sin_port;
    std::memcpy(id.idiag_src, &l.sin_addr, sizeof l.sin_addr);
    std::memcpy(id.idiag_dst, &r.sin_addr, sizeof r.sin_addr);
  } else {
    const auto& l = reinterpret_cast<const sockaddr_in6&>(end.local);
    const auto& r = reinterpret_cast<const sockaddr_in6&>(end.remote);
    id.idiag_sport = l.sin6_port;
    id.idiag_dport = r.sin6_port;
    std::memcpy(id.idiag_src, &l.sin6_addr, sizeof l.sin6_addr);
    std::memcpy(id.idiag_dst, &r.sin6_addr, sizeof r.sin6_addr);
  }
  id.idiag_cookie[0] = id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
}

// Bytes written to this end so far: acknowledged by the peer, plus still queued (unsent or
// unacknowledged). What has gone out is not enough: Nagle's algorithm may hold the library's
// second 4-byte answer until the first is acknowledged (seen in the soft-RoCE guest). -1 where
// the kernel does not say.
int64_t bytes_written(int fd) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return -1;
  if (len < offsetof(tcp_info, tcpi_bytes_acked) + sizeof ti.tcpi_bytes_acked) return -1;
  int queued = 0;
  if (::ioctl(fd, SIOCOUTQ, &queued) != 0) return -1;
  return static_cast<int64_t>(ti.tcpi_bytes_acked) + queued;
}

// One sock_diag lookup by the address pair (a dump would walk the kernel's whole table).
std::optional<SocketInfo> look_up_by_sock_diag(const SocketEnd& end) {
  const int nl = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0) return std::nullopt;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } req{};
  req.header.nlmsg_len = sizeof req;
  req.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.header.nlmsg_flags = NLM_F_REQUEST;
  req.body.sdiag_family = static_cast<uint8_t>(end.local.ss_family);
  req.body.sdiag_protocol = IPPROTO_TCP;
  req.body.idiag_states = ~0u;
  fill_sockid(req.body.id, end);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  std::optional<SocketInfo> found;
  if (::sendto(nl, &req, sizeof req, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) ==
      static_cast<ssize_t>(sizeof req)) {
    alignas(nlmsghdr) char answer[8192];
    const ssize_t n = ::recv(nl, answer, sizeof answer, 0);
    const auto* h = reinterpret_cast<const nlmsghdr*>(answer);
    // None found: the kernel answers with an error message.
    if (n >= static_cast<ssize_t>(sizeof *h) && NLMSG_OK(h, static_cast<size_t>(n)) &&
        h->nlmsg_type == SOCK_DIAG_BY_FAMILY && h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
      const auto* m = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      found = SocketInfo{m->idiag_state, m->idiag_uid, m->idiag_inode};
    }
  }
  ::close(nl);
  return found;
}

// An address as /proc/net/tcp{,6} prints it: each 32-bit word of the address as the kernel
// holds it (network order read as a native integer), then the port.
std::string proc_net_form(const sockaddr_storage& a) {
  char buf[64];
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    std::snprintf(buf, sizeof buf, "%08X:%04X", static_cast<unsigned>(in.sin_addr.s_addr), ntohs(in.sin_port));
  } else {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    uint32_t w[4];
    std::memcpy(w, &in6.sin6_addr, sizeof w);
    std::snprintf(buf, sizeof buf, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3], ntohs(in6.sin6_port));
  }
  return buf;
}

// The whole table, read line by line: only where sock_diag does not answer.
std::optional<SocketInfo> look_up_in_proc_net(const SocketEnd& end) {
  std::FILE* f = std::fopen(end.local.ss_family == AF_INET ? "/proc/self/net/tcp" : "/proc/self/net/tcp6", "re");
  if (!f) return std::nullopt;
  const std::string local = proc_net_form(end.local), remote = proc_net_form(end.remote);
  std::optional<SocketInfo> found;
  char line[512];
  char l[64], r[64];
  unsigned state = 0;
  unsigned long uid = 0;
  unsigned long long inode = 0;
  while (!found && std::fgets(line, sizeof line, f))
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    if (std::sscanf(line, " %*s %63s %63s %x %*s %*s %*s %lu %*s %llu", l, r, &state, &uid, &inode) == 5 &&
        local == l && remote == r)
      found = SocketInfo{static_cast<uint8_t>(state), static_cast<uid_t>(uid), inode};
  std::fclose(f);
  return found;
}

// Whether `fd` is the connection being accepted; fills `out` (or `error`) when it is.
bool is_connecting(int fd, uint16_t port, const std::set<uint64_t>& seen, ConnectingClient& out, std::string& error) {
  // Cheapest tests first: the library's event loop makes every client it handled non-blocking.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_NONBLOCK)) return false;
  SocketEnd server;
  socklen_t len = sizeof server.local;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&server.local), &len) != 0) return false;
  if ((server.local.ss_family != AF_INET && server.local.ss_family != AF_INET6) || port_of(server.local) != port)
    return false;
  len = sizeof server.remote;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&server.remote), &len) != 0) return false;
  if (bytes_written(fd) != kHandshakeAnswerBytes) return false;  // not handled yet
  struct stat st {};
  if (::fstat(fd, &st) != 0 || seen.count(st.st_ino)) return false;
  // The client's end: its own address is the server end's peer. Only an established one
  // counts: a closed one is no client's, and in TIME_WAIT the kernel reports uid 0 for it (a
  // job run as root would take an attacker's connection, closed right after its handshake,
  // for one of its own).
  const SocketEnd client{server.remote, server.local};
  const auto owner = socket_info(client);
  if (!owner || owner->state != kTcpEstablished) {
    error = "the client's socket (" + printable(client.local) + ") is no longer connected";
  } else {
    out = ConnectingClient{owner->uid, printable(client.local), owner->inode, server, st.st_ino, fd};
  }
  return true;
}

}  // namespace

std::optional<SocketInfo> socket_info(const SocketEnd& end, bool proc_net_only) {
  // A kernel without the tcp_diag module (the soft-RoCE guest's) answers sock_diag with an
  // error, as it does for a socket that does not exist.
  if (!proc_net_only)
    if (auto found = look_up_by_sock_diag(end)) return found;
  return look_up_in_proc_net(end);
}

uint16_t pmix_port_in(const std::vector<std::string>& env) {
  for (const auto& var : env) {
    if (var.rfind("PMIX_SERVER_URI", 0) != 0) continue;
    for (const char* scheme : {"tcp4://", "tcp6://"}) {
      const size_t at = var.find(scheme);
      if (at == std::string::npos) continue;
      const size_t colon = var.rfind(':');  // after the host ("[::1]" has colons of its own)
      if (colon == std::string::npos || colon < at + std::strlen(scheme)) continue;
      const long port = std::strtol(var.c_str() + colon + 1, nullptr, 10);
      if (port > 0 && port < 65536) return static_cast<uint16_t>(port);
    }
  }
  return 0;
}

std::variant<ConnectingClient, NotIdentified, std::string> connecting_pmix_client(
    uint16_t port, const std::set<uint64_t>& seen, int near_fd) {
  ConnectingClient found;
  std::string error;
  auto done = [&]() -> std::variant<ConnectingClient, NotIdentified, std::string> {
    if (!error.empty()) return error;
    return found;
  };
  // Descriptors are handed out lowest first, so while a job starts each connection lands just
  // above the one before: try around it first. Only one connection can pass every test.
  if (near_fd >= 0)
    for (int fd = near_fd + 8; fd >= 0 && fd >= near_fd - 8; --fd)
      if (is_connecting(fd, port, seen, found, error)) return done();
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return NotIdentified{std::string("cannot list /proc/self/fd: ") + std::strerror(errno)};
  std::vector<int> fds;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && fd != ::dirfd(dir)) fds.push_back(static_cast<int>(fd));
  }
  ::closedir(dir);
  std::sort(fds.rbegin(), fds.rend());
  for (int fd : fds)
    if (is_connecting(fd, port, seen, found, error)) return done();
  return NotIdentified{
      "no connection to the server's port looks like the one being accepted (blocking, 8 bytes "
      "answered, not seen before; OpenPMIx 4.2's order: has the library changed?)"};
}

bool server_end_open(const SocketEnd& end) {
  const auto e = socket_info(end);
  return e && (e->state == kTcpEstablished || e->state == kTcpCloseWait);
}

int take_client_socket(pid_t pid, uint64_t inode) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  if (pid <= 0 || inode == 0) return -1;
  const std::string want = "socket:[" + std::to_string(inode) + "]";
  // The rank's process first, then its descendants breadth first (/proc/P/task/T/children), at
  // most 64 processes: a wrapper and what it starts, not a whole process tree.
  std::vector<pid_t> tree{pid};
  for (size_t next = 0; next < tree.size() && next < 64; ++next) {
    const pid_t holder = tree[next];
    const std::string base = "/proc/" + std::to_string(holder);
    if (DIR* d = ::opendir((base + "/fd").c_str())) {
      int remote_fd = -1;
      while (dirent* e = ::readdir(d)) {
        char target[64];
        const ssize_t n = ::readlinkat(::dirfd(d), e->d_name, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        if (want == target) {
          remote_fd = std::atoi(e->d_name);
          break;
        }
      }
      ::closedir(d);
      if (remote_fd >= 0) {
        const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, holder, 0));
        if (pidfd < 0) return -1;
        const int fd = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, remote_fd, 0));  // O_CLOEXEC
        ::close(pidfd);
        return fd;
      }
    }
    if (DIR* tasks = ::opendir((base + "/task").c_str())) {
      while (dirent* t = ::readdir(tasks)) {
        if (t->d_name[0] == '.') continue;
        std::ifstream children(base + "/task/" + t->d_name + "/children");
        for (pid_t child; children >> child;) tree.push_back(child);
      }
      ::closedir(tasks);
    }
  }
  return -1;
#else
  (void)pid;
  (void)inode;
  return -1;
#endif
}

}  // namespace xmsg::launcher
