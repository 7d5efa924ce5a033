// memcpy for the small-message lanes (mailbox slots): no library call on the latency path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace xmsg::transport::shm {

// memcpy of n <= 32 bytes without a library call: two overlapping copies of the largest power
// of two not above n.
inline void copy_upto32(void* dst, const void* src, size_t n) {
  auto* d = static_cast<std::byte*>(dst);
  auto* s = static_cast<const std::byte*>(src);
  auto two = [&](auto word) {
    constexpr size_t k = sizeof word;
    decltype(word) head, tail;
    std::memcpy(&head, s, k);
    std::memcpy(&tail, s + n - k, k);
    std::memcpy(d, &head, k);
    std::memcpy(d + n - k, &tail, k);
  };
  struct Block16 {
    uint64_t lo, hi;
  };
  if (n >= 16) two(Block16{});
  else if (n >= 8) two(uint64_t{});
  else if (n >= 4) two(uint32_t{});
  else if (n) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

// memcpy of n <= 96 bytes (a mailbox slot's payload) the same way.
inline void copy_upto96(void* dst, const void* src, size_t n) {
  if (n <= 32) return copy_upto32(dst, src, n);
  auto* d = static_cast<std::byte*>(dst);
  auto* s = static_cast<const std::byte*>(src);
  const size_t whole = n > 64 ? 64 : 32;
  std::memcpy(d, s, whole);
  copy_upto32(d + whole, s + whole, n - whole);
}

}  // namespace xmsg::transport::shm
