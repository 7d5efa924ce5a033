#include "AbstractSocket.hpp"

#include <xmsg/transport/transport.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <poll.h>
#include <unistd.h>

namespace xmsg::transport::shm {

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string hex64(uint64_t value) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(value));
  return hex;
}

socklen_t abstract_address(const std::string& name, sockaddr_un& sa) {
  std::memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path + 1, name.data(), std::min(name.size(), kAbstractNameMax));
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + std::min(name.size(), kAbstractNameMax));
}

std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

Descriptor listen_abstract(const std::string& name, const std::string& what) {
  Descriptor sock(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!sock) throw TransportError("shm: " + what + " " + errno_text("socket"));
  sockaddr_un sa;
  if (::bind(sock.get(), reinterpret_cast<const sockaddr*>(&sa), abstract_address(name, sa)) != 0 ||
      ::listen(sock.get(), SOMAXCONN) != 0) {
    const int err = errno;
    throw TransportError("shm: cannot listen on the " + what + " socket @" + name + ": " + std::strerror(err) +
                         (err == EADDRINUSE ? " (another process on this node holds it: the same job id)" : ""));
  }
  return sock;
}

Descriptor connect_abstract(const std::string& name) {
  Descriptor sock(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!sock) return sock;
  sockaddr_un sa;
  const socklen_t len = abstract_address(name, sa);
  int rc;
  do rc = ::connect(sock.get(), reinterpret_cast<const sockaddr*>(&sa), len);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    sock.reset();
    errno = err;
  }
  return sock;
}

ucred peer_credentials(int sock, const std::string& what) {
  ucred who{};
  socklen_t len = sizeof who;
  if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &who, &len) != 0)
    throw TransportError("shm: " + what + " " + errno_text("SO_PEERCRED"));
  return who;
}

void send_with_descriptors(int sock, const void* data, size_t bytes, const int* fds, size_t n,
                           const std::string& what) {
  alignas(cmsghdr) char control[CMSG_SPACE(kFdsPerMessage * sizeof(int))];
  iovec iov{const_cast<void*>(data), bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (n > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
    std::memset(control, 0, msg.msg_controllen);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, n * sizeof(int));
  }
  for (;;) {
    if (::sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes)) return;
    if (errno == EINTR) continue;
    if (errno == ETOOMANYREFS) {
      ::poll(nullptr, 0, 1);
      continue;
    }
    throw TransportError("shm: " + what + " " + errno_text("sendmsg"));
  }
}

Received receive_with_descriptors(int sock, void* buffer, size_t capacity, const std::string& what) {
  alignas(cmsghdr) char control[CMSG_SPACE(kFdsPerMessage * sizeof(int))] = {};
  iovec iov{buffer, capacity};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  Received r;
  do r.bytes = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (r.bytes < 0 && errno == EINTR);
  if (r.bytes < 0) throw TransportError("shm: " + what + ": " + std::strerror(errno));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
        int one;
        std::memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof one);
        r.descriptors.emplace_back(one);
      }
  r.truncated = (msg.msg_flags & MSG_TRUNC) != 0;
  r.descriptors_lost = (msg.msg_flags & MSG_CTRUNC) != 0;
  return r;
}

}  // namespace xmsg::transport::shm
