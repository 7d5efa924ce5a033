#include "ConnectionManager.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace xmsg::verbs {

namespace {

// An accepted socket whose requester sends nothing is closed after this; it holds only an fd.
constexpr auto kIncomingTimeout = std::chrono::seconds(10);

std::string errno_text(int err) { return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")"; }

}  // namespace

std::string describe(ConnectionReject reason) {
  switch (reason) {
    case ConnectionReject::none: return "no reason";
    case ConnectionReject::bad_cookie: return "the request did not carry the cookie of the responder's card";
    case ConnectionReject::wrong_rank: return "the request names another rank";
    case ConnectionReject::wrong_mode: return "the two ranks run different verbs modes (XRC and RC)";
    case ConnectionReject::not_a_peer: return "the requester is not a verbs peer of the responder (XMSG_TRANSPORTS differs?)";
    case ConnectionReject::qp_failed: return "the responder could not create or connect its QP (see its stderr)";
    case ConnectionReject::conflict: return "the responder already connected this pair to another QP";
  }
  return "unknown reason " + std::to_string(static_cast<int>(reason));
}

std::string ConnectionManager::address_text(std::uint32_t ipv4, std::uint16_t port) {
  char text[INET_ADDRSTRLEN] = {};
  in_addr a{};
  a.s_addr = ipv4;
  ::inet_ntop(AF_INET, &a, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(port));
}

ConnectionManager::ConnectionManager(std::uint32_t ipv4) : ipv4_(ipv4) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("connection manager: socket() failed: " + errno_text(errno));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = ipv4;
  sa.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(listen_fd_, SOMAXCONN) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    throw std::runtime_error("connection manager: cannot listen on " + address_text(ipv4, 0) + ": " + errno_text(err));
  }
  socklen_t len = sizeof sa;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = sa.sin_port;
}

ConnectionManager::~ConnectionManager() {
  for (auto& x : outgoing_) ::close(x.fd);
  for (auto& x : incoming_) ::close(x.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void ConnectionManager::start(int peer, const ConnectionMessage& request, std::uint32_t ipv4, std::uint16_t port,
                              std::chrono::steady_clock::duration timeout) {
  Exchange x;
  x.peer = peer;
  x.address = address_text(ipv4, port);
  x.deadline = std::chrono::steady_clock::now() + timeout;
  std::memcpy(x.buffer.data(), &request, sizeof request);
  x.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (x.fd < 0) throw std::runtime_error("connection manager: socket() failed: " + errno_text(errno));
  const int one = 1;
  ::setsockopt(x.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = ipv4;
  sa.sin_port = port;
  if (::connect(x.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    const int err = errno;
    ::close(x.fd);
    throw std::runtime_error("connection manager: connect to " + x.address + " failed: " + errno_text(err));
  }
  outgoing_.push_back(std::move(x));
}

bool ConnectionManager::advance_outgoing(Exchange& x, Handler& handler, int& events) {
  auto fail = [&](const std::string& why) {
    ::close(x.fd);
    ++events;
    handler.on_failure(x.peer, "connection request to " + x.address + " " + why);
    return true;
  };
  pollfd p{x.fd, static_cast<short>(x.writing ? POLLOUT : POLLIN), 0};
  if (::poll(&p, 1, 0) < 0) return fail("failed: poll: " + errno_text(errno));
  if (p.revents == 0) {
    if (std::chrono::steady_clock::now() > x.deadline) return fail("got no reply in time (peer busy elsewhere or gone)");
    return false;
  }
  if (x.writing) {
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(x.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return fail("failed: " + errno_text(err));
    const ssize_t n = ::send(x.fd, x.buffer.data() + x.done, x.buffer.size() - x.done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return false;
      return fail("failed: send: " + errno_text(errno));
    }
    x.done += static_cast<std::size_t>(n);
    if (x.done == x.buffer.size()) {
      x.writing = false;
      x.done = 0;
    }
    return false;
  }
  const ssize_t n = ::recv(x.fd, x.buffer.data() + x.done, x.buffer.size() - x.done, 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return false;
    return fail("failed: recv: " + errno_text(errno));
  }
  if (n == 0) return fail("was closed by the responder before it replied");
  x.done += static_cast<std::size_t>(n);
  if (x.done < x.buffer.size()) return false;
  ConnectionMessage reply;
  std::memcpy(&reply, x.buffer.data(), sizeof reply);
  if (reply.magic != kConnectionMagic || reply.version != kConnectionVersion ||
      (reply.kind != ConnectionMessageKind::accept && reply.kind != ConnectionMessageKind::reject)) {
    return fail("got a malformed reply (not an xmsg connection manager of this version)");
  }
  ::close(x.fd);
  ++events;
  handler.on_reply(x.peer, reply);
  return true;
}

bool ConnectionManager::advance_incoming(Exchange& x, Handler& handler, int& events) {
  if (std::chrono::steady_clock::now() > x.deadline) {
    ::close(x.fd);
    return true;
  }
  if (!x.writing) {
    const ssize_t n = ::recv(x.fd, x.buffer.data() + x.done, x.buffer.size() - x.done, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      ::close(x.fd);
      return true;
    }
    if (n < 0) return false;
    x.done += static_cast<std::size_t>(n);
    if (x.done < x.buffer.size()) return false;
    ConnectionMessage request;
    std::memcpy(&request, x.buffer.data(), sizeof request);
    if (request.magic != kConnectionMagic || request.version != kConnectionVersion ||
        request.kind != ConnectionMessageKind::request) {
      ::close(x.fd);  // not ours: a port scanner or another program; nothing to answer
      return true;
    }
    ++events;
    const ConnectionMessage reply = handler.on_request(request);
    std::memcpy(x.buffer.data(), &reply, sizeof reply);
    x.writing = true;
    x.done = 0;
  }
  const ssize_t n = ::send(x.fd, x.buffer.data() + x.done, x.buffer.size() - x.done, MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  if (n < 0) {
    ::close(x.fd);
    return true;
  }
  x.done += static_cast<std::size_t>(n);
  if (x.done < x.buffer.size()) return false;
  ::close(x.fd);
  return true;
}

int ConnectionManager::poll(Handler& handler) {
  int events = 0;
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;  // EAGAIN: nobody waiting (other errors: the requester sees its own failure)
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Exchange x;
    x.fd = fd;
    x.writing = false;
    x.deadline = std::chrono::steady_clock::now() + kIncomingTimeout;
    incoming_.push_back(std::move(x));
  }
  for (std::size_t i = 0; i < incoming_.size();) {
    if (advance_incoming(incoming_[i], handler, events)) {
      incoming_[i] = std::move(incoming_.back());
      incoming_.pop_back();
    } else {
      ++i;
    }
  }
  // Handlers may start new requests (outgoing_ grows): index, and move only finished ones.
  for (std::size_t i = 0; i < outgoing_.size();) {
    Exchange x = std::move(outgoing_[i]);
    const bool ended = advance_outgoing(x, handler, events);
    if (ended) {
      outgoing_[i] = std::move(outgoing_.back());
      outgoing_.pop_back();
    } else {
      outgoing_[i] = std::move(x);
      ++i;
    }
  }
  return events;
}

}  // namespace xmsg::verbs
