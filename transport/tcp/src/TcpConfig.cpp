#include "TcpConfig.hpp"

#include <xmsg/transport/transport.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xmsg::transport::tcp {
namespace {

size_t env_size(const char* name, size_t fallback, size_t min, size_t max) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (errno != 0 || *end != '\0' || v[0] == '-' || n < min || n > max)
    throw TransportError(std::string(name) + "='" + v + "': expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return static_cast<size_t>(n);
}

std::string first_line(const char* path) {
  std::string line;
  if (std::FILE* f = std::fopen(path, "r")) {
    char buffer[256];
    if (std::fgets(buffer, sizeof buffer, f)) line = buffer;
    std::fclose(f);
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

// Why sockets of this process cannot use congestion control `name` (empty: they can). Tried on a
// scratch socket, because the kernel alone knows what is loaded and what this process may pick.
std::string congestion_refused(const std::string& name) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot open a socket to try it: ") + std::strerror(errno);
  const int rc = ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(), static_cast<socklen_t>(name.size()));
  const int err = errno;
  ::close(fd);
  if (rc == 0) return {};
  return std::string("the kernel refuses it (") + std::strerror(err) + "); available: " +
         first_line("/proc/sys/net/ipv4/tcp_available_congestion_control") +
         "; allowed without CAP_NET_ADMIN: " + first_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control") +
         "; 'system' keeps the kernel's default";
}

}  // namespace

TcpConfig TcpConfig::from_environment() {
  TcpConfig c;
  if (const char* v = std::getenv("XMSG_TCP_IF")) c.interface = v;
  c.max_payload = env_size("XMSG_TCP_MAX_PAYLOAD", c.max_payload, 1024, size_t(1) << 30);
  c.queue_limit = env_size("XMSG_TCP_QUEUE_BYTES", c.queue_limit, 64 * 1024, size_t(1) << 34);
  if (c.queue_limit < c.max_payload + 64)
    throw TransportError("XMSG_TCP_QUEUE_BYTES=" + std::to_string(c.queue_limit) + " must exceed XMSG_TCP_MAX_PAYLOAD=" +
                         std::to_string(c.max_payload) + " so that one largest message fits");
  c.rendezvous_push = env_size("XMSG_TCP_RNDV_PUSH", c.rendezvous_push, 0, size_t(1) << 30);
  c.push_max_message = env_size("XMSG_TCP_PUSH_MAX", c.push_max_message, 0, size_t(1) << 40);
  c.push_whole_message = env_size("XMSG_TCP_PUSH_WHOLE", c.push_whole_message, 0, size_t(1) << 40);
  c.push_large_message = env_size("XMSG_TCP_PUSH_LARGE", c.push_large_message, 0, size_t(1) << 40);
  c.push_budget = env_size("XMSG_TCP_PUSH_BUDGET", c.push_budget, 0, size_t(1) << 40);
  c.land_min = env_size("XMSG_TCP_LAND_MIN", c.land_min, 0, size_t(1) << 40);
  c.handshake_timeout = std::chrono::milliseconds(env_size("XMSG_TCP_HANDSHAKE_TIMEOUT_MS", 10000, 10, 3600 * 1000));
  c.connect_timeout = std::chrono::milliseconds(env_size("XMSG_TCP_CONNECT_TIMEOUT_MS", 30000, 10, 24 * 3600 * 1000));
  if (const char* poll = std::getenv("XMSG_TCP_POLL"); poll && *poll) {
    if (std::strcmp(poll, "recv") == 0) c.poll_by_recv = true;
    else if (std::strcmp(poll, "epoll") == 0) c.poll_by_recv = false;
    else throw TransportError(std::string("XMSG_TCP_POLL='") + poll + "': expected recv or epoll");
  }
  if (const char* cc = std::getenv("XMSG_TCP_CONGESTION"); cc && *cc) {
    c.congestion = std::strcmp(cc, "system") == 0 ? "" : cc;
    c.congestion_explicit = true;
  }
  if (!c.congestion.empty()) {
    std::string why = congestion_refused(c.congestion);
    if (!why.empty() && c.congestion_explicit)
      throw TransportError("XMSG_TCP_CONGESTION='" + c.congestion + "': " + why);
    if (!why.empty()) c.congestion.clear();  // the built-in choice falls back to the system's
  }
  const char* verbose = std::getenv("XMSG_VERBOSE");
  c.verbose = verbose && *verbose && std::strcmp(verbose, "0") != 0;
  return c;
}

std::string choose_listen_address(const std::string& choice) {
  in_addr probe{};
  if (!choice.empty() && ::inet_pton(AF_INET, choice.c_str(), &probe) == 1) return choice;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    if (!choice.empty()) throw TransportError("XMSG_TCP_IF='" + choice + "': cannot list interfaces: " + std::strerror(errno));
    return "127.0.0.1";
  }
  std::string found;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    bool named = !choice.empty() && choice == i->ifa_name;
    bool usable = choice.empty() && (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK);
    if (!named && !usable) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    found = text;
    break;
  }
  ::freeifaddrs(list);
  if (!found.empty()) return found;
  if (!choice.empty()) throw TransportError("XMSG_TCP_IF='" + choice + "': no such interface with an IPv4 address");
  return "127.0.0.1";
}

}  // namespace xmsg::transport::tcp
