// memcpy for the small-message lanes (mailbox slots): no library call on the latency path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <xmsg/transport/transport.hpp>

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

// memcpy of n <= 96 bytes (a mailbox slot's payload) the same way: a fixed 32 or 64 byte block,
// then the last 32 bytes (overlapping). Fixed sizes, because a variable-length block compiles
// to `rep movsq`, whose start-up alone costs more than the whole copy here.
inline void copy_upto96(void* dst, const void* src, size_t n) {
  if (n <= 32) return copy_upto32(dst, src, n);
  auto* d = static_cast<std::byte*>(dst);
  auto* s = static_cast<const std::byte*>(src);
  if (n > 64)
    std::memcpy(d, s, 64);
  else
    std::memcpy(d, s, 32);
  std::memcpy(d + n - 32, s + n - 32, 32);
}

// A WireHeader that the caller has just built on its stack, copied in 4-byte words (and the
// 8-byte length): the compiler's 16-byte load spans fields the caller stored separately, and
// x86 cannot forward such a load from the store buffer (it waits for the stores to reach the
// cache). A same-run A/B showed no change beyond noise; kept because 4-byte loads are always
// forwarded, whatever widths the caller's compiler picked for its stores.
inline void copy_header(WireHeader* dst, const WireHeader& src) {
  const auto* in = reinterpret_cast<const std::byte*>(&src);
  auto* out = reinterpret_cast<std::byte*>(dst);
  uint32_t a, b, c, d;
  std::memcpy(&a, in, 4);
  std::memcpy(&b, in + 4, 4);
  std::memcpy(&c, in + 8, 4);
  std::memcpy(&d, in + 12, 4);
  asm("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));  // keeps the compiler from merging the loads again
  std::memcpy(out, &a, 4);
  std::memcpy(out + 4, &b, 4);
  std::memcpy(out + 8, &c, 4);
  std::memcpy(out + 12, &d, 4);
  dst->length = src.length;
}

}  // namespace xmsg::transport::shm
