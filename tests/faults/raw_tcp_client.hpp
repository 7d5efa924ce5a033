// A hand-driven client of a rank's tcp listener, for tests that play a peer, or an impostor,
// with plain sockets: the transport's own handshake encoding (Handshake.hpp), nothing of its
// connection logic. Shared by tests/tcp/TcpJobProgram.cpp and tests/faults/impersonator.cpp.
// Failures throw std::runtime_error.
#pragma once

#include "Handshake.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace xmsg::test {

// A blocking TCP connection to "ip:port".
inline int connect_to(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("not an ip:port address: '" + address + "'");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("plain connect to " + address + " failed");
  }
  return fd;
}

// True when the other end closes the socket within `seconds` (reading and discarding).
inline bool closed_by_peer(int fd, int seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char buf[256];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;
  }
  return false;
}

inline void send_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0) throw std::runtime_error(std::string("raw send failed: ") + std::strerror(errno));
    p += k, n -= static_cast<size_t>(k);
  }
}

// The caller's side of the handshake: hello as rank `from` to rank `to`, then the welcome,
// whose proof is checked with `secret` (`welcome_proven`). Returns the proof made with
// `secret`, for the caller to send (or not).
inline transport::tcp::HandshakeMessage raw_hello(int fd, uint32_t from, uint32_t to, const std::string& secret,
                                                  bool& welcome_proven) {
  using transport::tcp::HandshakeMessage;
  HandshakeMessage hello;
  hello.type = transport::tcp::HandshakeType::kHello;
  hello.from = from, hello.to = to, hello.nonce = transport::tcp::random_nonce();
  auto wire = hello.encode();
  send_all(fd, wire.data(), wire.size());
  std::array<uint8_t, HandshakeMessage::kWireSize> welcome{};
  size_t got = 0;
  while (got < welcome.size()) {
    ssize_t n = ::recv(fd, welcome.data() + got, welcome.size() - got, 0);
    if (n <= 0) throw std::runtime_error("no welcome for a well-formed hello");
    got += static_cast<size_t>(n);
  }
  std::string error;
  auto w = HandshakeMessage::decode(welcome, error);
  if (!w || w->type != transport::tcp::HandshakeType::kWelcome) throw std::runtime_error("expected a welcome: " + error);
  const auto expected = transport::tcp::JobSecret(secret).acceptor_proof(to, from, hello.nonce, w->nonce);
  welcome_proven = transport::tcp::digests_equal(w->mac, expected);
  HandshakeMessage proof;
  proof.type = transport::tcp::HandshakeType::kProof;
  proof.from = from, proof.to = to;
  proof.mac = transport::tcp::JobSecret(secret).connector_proof(from, to, w->nonce, hello.nonce);
  return proof;
}

}  // namespace xmsg::test
