#include "TcpConfig.hpp"

#include <xmsg/bootstrap/parameters.hpp>
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

size_t setting(const char* name) { return static_cast<size_t>(params::integer(name)); }

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

// A malformed value is the table's ParameterError; tcp reports it as its own error, like every
// other failure to construct the transport.
TcpConfig TcpConfig::from_environment() try {
  TcpConfig c;
  c.interface = params::text("XMSG_TCP_IF");
  c.max_payload = setting("XMSG_TCP_MAX_PAYLOAD");
  c.queue_limit = setting("XMSG_TCP_QUEUE_BYTES");
  if (c.queue_limit < c.max_payload + 64)
    throw TransportError("XMSG_TCP_QUEUE_BYTES=" + std::to_string(c.queue_limit) + " must exceed XMSG_TCP_MAX_PAYLOAD=" +
                         std::to_string(c.max_payload) + " so that one largest message fits");
  c.rendezvous_push = setting("XMSG_TCP_RNDV_PUSH");
  c.push_max_message = setting("XMSG_TCP_PUSH_MAX");
  c.push_whole_message = setting("XMSG_TCP_PUSH_WHOLE");
  c.push_large_message = setting("XMSG_TCP_PUSH_LARGE");
  c.push_budget = setting("XMSG_TCP_PUSH_BUDGET");
  c.land_min = setting("XMSG_TCP_LAND_MIN");
  c.handshake_timeout = std::chrono::milliseconds(setting("XMSG_TCP_HANDSHAKE_TIMEOUT_MS"));
  c.connect_timeout = std::chrono::milliseconds(setting("XMSG_TCP_CONNECT_TIMEOUT_MS"));
  c.poll_by_recv = params::choice("XMSG_TCP_POLL") == "recv";
  if (auto cc = params::raw("XMSG_TCP_CONGESTION")) {
    c.congestion = *cc == "system" ? "" : *cc;
    c.congestion_explicit = true;
  }
  if (!c.congestion.empty()) {
    std::string why = congestion_refused(c.congestion);
    if (!why.empty() && c.congestion_explicit)
      throw TransportError("XMSG_TCP_CONGESTION='" + c.congestion + "': " + why);
    if (!why.empty()) c.congestion.clear();  // the built-in choice falls back to the system's
  }
  c.verbose = params::flag("XMSG_VERBOSE");
  return c;
} catch (const params::ParameterError& e) {
  throw TransportError(e.what());
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
