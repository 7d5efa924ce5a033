// plain_copy (runtime/collectives/plain_copy.cpp): every byte lands where memcpy would put it,
// and nothing around the destination changes, for sources and destinations at any offset
// within a cache line and sizes on both sides of where the vector loop takes over.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "plain_copy.hpp"

namespace {

TEST(PlainCopy, CopiesExactlyAtEveryAlignment) {
  constexpr size_t kGuard = 128;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{2047}, size_t{2048}, size_t{2049},
                       size_t{4096 + 17}, size_t{65536 + 5}})
    for (size_t from : {0, 1, 8, 16, 63})
      for (size_t to : {0, 3, 16, 48}) {
        std::vector<uint8_t> src(bytes + 2 * kGuard), dst(bytes + 2 * kGuard, 0xEE);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
        // Offsets from 64-byte boundaries of the buffers (vector data is 16-aligned at least).
        const auto line = [](std::vector<uint8_t>& v) {
          return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(v.data()) + 63) & ~uintptr_t{63});
        };
        uint8_t* s = line(src) + from;
        uint8_t* d = line(dst) + to;
        ASSERT_LE(d + bytes, dst.data() + dst.size());
        ASSERT_LE(s + bytes, src.data() + src.size());
        xmsg::coll::plain_copy(d, s, bytes);
        for (size_t i = 0; i < bytes; ++i)
          ASSERT_EQ(d[i], s[i]) << "bytes " << bytes << " from +" << from << " to +" << to << " at " << i;
        for (uint8_t* p = dst.data(); p < d; ++p) ASSERT_EQ(*p, 0xEE) << "before the destination, bytes " << bytes;
        for (uint8_t* p = d + bytes; p < dst.data() + dst.size(); ++p)
          ASSERT_EQ(*p, 0xEE) << "after the destination, bytes " << bytes;
      }
}

}  // namespace
