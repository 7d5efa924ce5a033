// How ring records of 1.25-8 KiB are written and read.
//
// Every payload line of a record changes cores: the producer writes lines that the consumer
// read on the previous lap, the consumer reads lines that sit in the producer's cache. When a
// hand-off costs ~0.2 us (this project's VM when its two vCPUs are far apart), what a copy of
// 1-8 KiB costs is how many of those transfers overlap, not how many instructions it runs.
// OSU-style one-way latency, same runs, glibc memcpy on both sides -> the two helpers below
// (docs/results/2026-11-30-s4/, `pp-*.txt`):
//              1 KiB   1.25 KiB  1.5 KiB  2 KiB   4 KiB   8 KiB    MPICH 2 KiB
//   far        0.459   0.585     0.665    0.798   0.779   1.037    0.750 us
//              0.453   0.516     0.546    0.597   0.717   0.909
//   near       0.119   0.135     0.143    0.156   0.276   0.353    0.209 us
//              0.119   0.127     0.129    0.146   0.235   0.315
// Window-64 bandwidth: 8 KiB far +11%, elsewhere within noise in both placements.
#pragma once

#include <cstddef>
#include <cstring>

namespace xmsg::transport::shm {

// Both helpers change nothing below this: at 1-1.1 KiB either of them cost ~10% with far
// hand-offs (1088 B: 0.463 -> 0.504-0.514 us), from 1.25 KiB on they gain (1280 B: 0.544 ->
// 0.524).
inline constexpr size_t kOverlapFrom = 1280;

// Producer side: `rep movsb`. glibc switches to it only at 2112 bytes on this CPU; below that
// its vector loop ran slower into the ring (far, 2 KiB: 0.744 -> 0.606 us with this alone).
inline void copy_into_record(void* dst, const void* src, size_t n) {
// Sanitizer builds take memcpy: they cannot see inside the asm.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  if (n >= kOverlapFrom) {
    asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
    return;
  }
#endif
  if (n) std::memcpy(dst, src, n);
}

// Consumer side: ask for every line of a payload of up to 8 KiB before the copy out starts, so
// the transfers overlap instead of following the copy loop's pace. Above 8 KiB the hardware
// prefetcher keeps up (16 KiB far: 1.456 -> 1.403 us, within noise) and streaming bandwidth
// paid for the instructions (16-64 KiB window bandwidth -3..-5% near).
inline void prefetch_record(const std::byte* payload, size_t n) {
  if (n < kOverlapFrom || n > 8192) return;
  for (size_t off = 0; off < n; off += 64) __builtin_prefetch(payload + off, 0, 3);
}

}  // namespace xmsg::transport::shm
