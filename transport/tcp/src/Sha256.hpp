// SHA-256 and HMAC-SHA-256 (FIPS 180-4, RFC 2104), enough to prove knowledge of the job secret.
// The runtime library may depend only on rdma-core, PMIx and hwloc, hence our own few lines
// instead of a crypto library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace xmsg::transport::tcp {

using Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> data);
  Digest finish();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

Digest sha256(std::span<const uint8_t> data);
Digest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> message);

// Compares without an early exit so the time taken does not reveal how many bytes matched.
bool digests_equal(const Digest& a, const Digest& b);

}  // namespace xmsg::transport::tcp
