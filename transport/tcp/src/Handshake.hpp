// The connection handshake: who is calling, and proof of the job secret in both directions.
//
//   connector -> acceptor   kHello   {from, to, nonce_c}
//   acceptor  -> connector  kWelcome {from, to, nonce_a, mac_a}  or kReject {reason}
//   connector -> acceptor   kProof   {from, to, mac_c}           then data frames may follow
//
// mac_a = HMAC(secret, "xmsg-tcp-acceptor" | a | c | nonce_c | nonce_a) and
// mac_c = HMAC(secret, "xmsg-tcp-connector" | c | a | nonce_a | nonce_c): fresh nonces from both
// sides make a recorded exchange useless, and the role label stops a peer from reflecting one
// side's proof back as the other's. Every handshake message has the same fixed size.
#pragma once

#include "Sha256.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace xmsg::transport::tcp {

enum class HandshakeType : uint16_t { kHello = 1, kWelcome = 2, kProof = 3, kReject = 4 };

// Why an acceptor refuses a caller that is otherwise valid.
enum class RejectReason : uint32_t {
  kSimultaneous = 1,  // both ranks called at once; the lower rank's call is kept
  kDuplicate = 2,     // a connection from that rank already exists
  // The acceptor could not take the call: out of file descriptors (accept4 failed with EMFILE
  // or ENFILE), sent in answer to the hello. The connector fails the peer. Not authenticated
  // (nothing is proven at that point), so the figures it carries only go into the message: nonce bytes 0-7
  // and 8-15 the acceptor's soft and hard RLIMIT_NOFILE, mac bytes 0-7 its open tcp
  // connections, 8-11 the errno.
  kNoFileDescriptors = 3,
};

using Nonce = std::array<uint8_t, 16>;

struct HandshakeMessage {
  HandshakeType type = HandshakeType::kHello;
  uint32_t from = 0;
  uint32_t to = 0;
  uint32_t reason = 0;
  Nonce nonce{};
  Digest mac{};

  static constexpr uint32_t kMagic = 0x58544350;  // "XTCP"
  static constexpr uint16_t kVersion = 1;
  static constexpr size_t kWireSize = 4 + 2 + 2 + 4 + 4 + 4 + 16 + 32;

  std::array<uint8_t, kWireSize> encode() const;
  // nullopt (with `error` set) when magic, version or type are wrong: not one of ours.
  static std::optional<HandshakeMessage> decode(std::span<const uint8_t, kWireSize> bytes, std::string& error);
};

class JobSecret {
 public:
  explicit JobSecret(std::string secret) : secret_(std::move(secret)) {}
  Digest acceptor_proof(uint32_t acceptor, uint32_t connector, const Nonce& connector_nonce, const Nonce& acceptor_nonce) const;
  Digest connector_proof(uint32_t connector, uint32_t acceptor, const Nonce& acceptor_nonce, const Nonce& connector_nonce) const;
  bool empty() const { return secret_.empty(); }

 private:
  Digest proof(std::string_view label, uint32_t self, uint32_t other, const Nonce& first, const Nonce& second) const;
  std::string secret_;
};

Nonce random_nonce();
// 32 random bytes, hex: what rank 0 shares when the launcher published no secret.
std::string random_secret();

// The job secret from the file XMSG_JOB_SECRET_FILE names (xmsgrun writes it, 0600, in the
// job's private directory): its content without a trailing newline. Throws TransportError
// naming the variable and the path when the file cannot be read, is not a regular file, is
// empty or longer than 4096 bytes, is not owned by this user, or group or others have any
// permission on it.
std::string read_secret_file(const std::string& path);

}  // namespace xmsg::transport::tcp
