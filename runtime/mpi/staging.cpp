// Staging buffers for non-contiguous data (packed sends, receives to unpack): drawn from a
// pool of power-of-two size classes, so a bandwidth loop of large derived-type messages does
// not pay malloc's mmap/munmap and the page faults of fresh memory on every message (OSU
// osu_bw -D vect:8:4 at 1 MiB: 1.49 -> see docs/mpi.md).
#include "mpi_impl.hpp"

#include <array>
#include <bit>
#include <cstdlib>

namespace xmsg::mpi {
namespace {

constexpr size_t kHeader = 64;          // keeps the data 64-byte aligned; holds the class
constexpr int kClasses = 40;
constexpr size_t kKeepPerClass = 64;    // buffers kept per class
constexpr size_t kKeepBytes = 256u << 20;  // and at most this much memory kept in all

struct Pool {
  std::array<std::vector<char*>, kClasses> free;
  size_t kept_bytes = 0;
  ~Pool() {
    for (auto& list : free)
      for (char* p : list) std::free(p);
  }
};
Pool& pool() {
  static Pool p;
  return p;
}

int class_of(int64_t bytes) {
  const auto n = static_cast<uint64_t>(bytes < 64 ? 64 : bytes);
  return static_cast<int>(std::bit_width(n - 1));  // 2^class >= n
}

}  // namespace

void StagingRelease::operator()(char* data) const {
  if (!data) return;
  char* base = data - kHeader;
  const int c = *reinterpret_cast<int*>(base);
  Pool& p = pool();
  const size_t size = size_t{1} << c;
  if (c < kClasses && p.free[static_cast<size_t>(c)].size() < kKeepPerClass && p.kept_bytes + size <= kKeepBytes) {
    p.free[static_cast<size_t>(c)].push_back(base);
    p.kept_bytes += size;
    return;
  }
  std::free(base);
}

Staging staging_buffer(int64_t bytes) {
  const int c = class_of(bytes);
  Pool& p = pool();
  char* base = nullptr;
  if (c < kClasses && !p.free[static_cast<size_t>(c)].empty()) {
    base = p.free[static_cast<size_t>(c)].back();
    p.free[static_cast<size_t>(c)].pop_back();
    p.kept_bytes -= size_t{1} << c;
  } else {
    base = static_cast<char*>(std::aligned_alloc(64, kHeader + (size_t{1} << c)));
    if (!base) throw std::bad_alloc();
    *reinterpret_cast<int*>(base) = c;
  }
  return Staging(base + kHeader);
}

}  // namespace xmsg::mpi
