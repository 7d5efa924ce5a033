#include "Handshake.hpp"

#include <xmsg/transport/transport.hpp>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace xmsg::transport::tcp {
namespace {

void put32(uint8_t* p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i)); }
void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v), p[1] = uint8_t(v >> 8); }
uint32_t get32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t(p[3]) << 24); }
uint16_t get16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

void fill_random(uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t got = ::getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw TransportError(std::string("tcp: getrandom failed: ") + std::strerror(errno));
    }
    p += got, n -= static_cast<size_t>(got);
  }
}

}  // namespace

std::array<uint8_t, HandshakeMessage::kWireSize> HandshakeMessage::encode() const {
  std::array<uint8_t, kWireSize> out{};
  uint8_t* p = out.data();
  put32(p, kMagic), put16(p + 4, kVersion), put16(p + 6, static_cast<uint16_t>(type));
  put32(p + 8, from), put32(p + 12, to), put32(p + 16, reason);
  std::memcpy(p + 20, nonce.data(), nonce.size());
  std::memcpy(p + 36, mac.data(), mac.size());
  return out;
}

std::optional<HandshakeMessage> HandshakeMessage::decode(std::span<const uint8_t, kWireSize> bytes, std::string& error) {
  const uint8_t* p = bytes.data();
  if (get32(p) != kMagic) {
    error = "not an xmsg tcp handshake (bad magic)";
    return std::nullopt;
  }
  if (get16(p + 4) != kVersion) {
    error = "handshake version " + std::to_string(get16(p + 4)) + ", expected " + std::to_string(kVersion);
    return std::nullopt;
  }
  uint16_t type = get16(p + 6);
  if (type < 1 || type > 4) {
    error = "unknown handshake message type " + std::to_string(type);
    return std::nullopt;
  }
  HandshakeMessage m;
  m.type = static_cast<HandshakeType>(type);
  m.from = get32(p + 8), m.to = get32(p + 12), m.reason = get32(p + 16);
  std::memcpy(m.nonce.data(), p + 20, m.nonce.size());
  std::memcpy(m.mac.data(), p + 36, m.mac.size());
  return m;
}

Digest JobSecret::proof(std::string_view label, uint32_t self, uint32_t other, const Nonce& first, const Nonce& second) const {
  std::vector<uint8_t> msg(label.begin(), label.end());
  uint8_t ranks[8];
  put32(ranks, self), put32(ranks + 4, other);
  msg.insert(msg.end(), ranks, ranks + 8);
  msg.insert(msg.end(), first.begin(), first.end());
  msg.insert(msg.end(), second.begin(), second.end());
  return hmac_sha256(std::span(reinterpret_cast<const uint8_t*>(secret_.data()), secret_.size()), msg);
}

Digest JobSecret::acceptor_proof(uint32_t acceptor, uint32_t connector, const Nonce& connector_nonce, const Nonce& acceptor_nonce) const {
  return proof("xmsg-tcp-acceptor", acceptor, connector, connector_nonce, acceptor_nonce);
}

Digest JobSecret::connector_proof(uint32_t connector, uint32_t acceptor, const Nonce& acceptor_nonce, const Nonce& connector_nonce) const {
  return proof("xmsg-tcp-connector", connector, acceptor, acceptor_nonce, connector_nonce);
}

Nonce random_nonce() {
  Nonce n;
  fill_random(n.data(), n.size());
  return n;
}

std::string random_secret() {
  uint8_t raw[32];
  fill_random(raw, sizeof raw);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : raw) out += hex[b >> 4], out += hex[b & 15];
  return out;
}

std::string read_secret_file(const std::string& path) {
  const std::string what = "XMSG_JOB_SECRET_FILE='" + path + "'";
  // O_NONBLOCK: a FIFO put there must not hang the rank.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw TransportError(what + ": cannot open the job secret: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw TransportError(what + ": cannot stat the job secret: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw TransportError(what + ": not a regular file");
  if (st.st_uid != ::geteuid())
    throw TransportError(what + ": owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                         std::to_string(::geteuid()) + "); the job secret must be a file of the job's own user");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw TransportError(what + ": mode " + mode +
                         ": group or others have access to it; the job secret must be readable by this user only (mode 0600)");
  }
  constexpr size_t kMax = 4096;
  std::string secret(kMax + 1, '\0');
  size_t got = 0;
  while (got < secret.size()) {
    ssize_t n = ::read(fd, secret.data() + got, secret.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw TransportError(what + ": cannot read the job secret: " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMax) throw TransportError(what + ": longer than " + std::to_string(kMax) + " bytes, not a job secret");
  secret.resize(got);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) throw TransportError(what + ": the file is empty (no job secret in it)");
  return secret;
}

}  // namespace xmsg::transport::tcp
