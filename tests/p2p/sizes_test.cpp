// Message sizes around every protocol threshold, huge messages, truncation, many outstanding
// requests. The thresholds follow the environment the test runs in (ctest runs this program
// with the defaults and with small limits and the no-remote-read rendezvous).
#include "p2p_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace {

uint64_t env_or(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : dflt;
}

std::vector<size_t> threshold_sizes() {
  // Unset, the limit is the transport's own: shm with CMA 8 KiB, the others 64 KiB.
  const uint64_t eager = env_or("XMSG_EAGER_LIMIT", 65536);
  const uint64_t shm_eager = env_or("XMSG_EAGER_LIMIT", 8192);
  const uint64_t frag = env_or("XMSG_RNDV_FRAGMENT", 65536);
  std::vector<size_t> s{0, 1, 2, 31, 32, 33, 63, 64, 65, 95, 96, 97, 4095, 4096, 4097};
  for (uint64_t t : {eager, shm_eager, frag, 2 * frag, 262144ul})
    for (int d = -1; d <= 1; ++d) s.push_back(t + d);
  s.push_back((1u << 20) + 3);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

// Rank 0 sends each size to rank 1 (alternately before and after rank 1 posts its receive),
// rank 1 checks every byte and the guard after it, then echoes.
TEST(Sizes, EveryThresholdPlusMinusOneBothOrders) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (rank > 1) return;
  int iteration = 0;
  for (size_t n : threshold_sizes()) {
    const bool post_first = (iteration++ % 2) == 0;
    auto out = make_payload(n, 0, n);
    std::vector<uint8_t> in(n + 64, 0xA5);
    if (rank == 0) {
      if (!post_first) {
        XMSG_OK(xmsg_send(out.data(), n, XMSG_BYTE, 1, 1, XMSG_COMM_WORLD));
      } else {
        char go;
        XMSG_OK(xmsg_recv(&go, 1, XMSG_CHAR, 1, 2, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
        XMSG_OK(xmsg_send(out.data(), n, XMSG_BYTE, 1, 1, XMSG_COMM_WORLD));
      }
      xmsg_status_t st;
      XMSG_OK(xmsg_recv(in.data(), n, XMSG_BYTE, 1, 3, XMSG_COMM_WORLD, &st));
      EXPECT_EQ(st.bytes, static_cast<int64_t>(n));
      EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << "echo of " << n << " bytes differs";
    } else {
      xmsg_request_t r;
      XMSG_OK(xmsg_irecv(in.data(), n, XMSG_BYTE, 0, 1, XMSG_COMM_WORLD, &r));
      if (post_first) {
        char go = 1;
        XMSG_OK(xmsg_send(&go, 1, XMSG_CHAR, 0, 2, XMSG_COMM_WORLD));
      }
      xmsg_status_t st;
      XMSG_OK(xmsg_wait(&r, &st));
      EXPECT_EQ(st.bytes, static_cast<int64_t>(n));
      EXPECT_EQ(st.source, 0);
      EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << n << " bytes differ";
      for (size_t g = n; g < n + 64; ++g) ASSERT_EQ(in[g], 0xA5) << "overflow past " << n << " bytes";
      XMSG_OK(xmsg_send(in.data(), n, XMSG_BYTE, 0, 3, XMSG_COMM_WORLD));
    }
  }
}

TEST(Sizes, SixtyFourMiB) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  const size_t n = 64u << 20;
  if (rank == 0) {
    std::vector<uint8_t> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(i * 7 + (i >> 20));
    XMSG_OK(xmsg_send(out.data(), n, XMSG_BYTE, 1, 64, XMSG_COMM_WORLD));
  } else if (rank == 1) {
    std::vector<uint8_t> in(n, 0);
    xmsg_status_t st;
    XMSG_OK(xmsg_recv(in.data(), n, XMSG_BYTE, 0, 64, XMSG_COMM_WORLD, &st));
    EXPECT_EQ(st.bytes, static_cast<int64_t>(n));
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += in[i] != static_cast<uint8_t>(i * 7 + (i >> 20));
    EXPECT_EQ(bad, 0u);
  }
  p2p_barrier();
}

// A message longer than the receive buffer: the part that fits, XMSG_ERR_TRUNCATE with a
// message, guard bytes untouched, and the sender completes normally.
TEST(Sizes, TruncationDeliversWhatFitsWithoutOverflow) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (rank > 1) return;
  for (size_t n : {size_t{10}, size_t{100}, size_t{20000}, size_t{300000}}) {
    const size_t cap = n / 2;
    auto out = make_payload(n, 0, n);
    if (rank == 0) {
      XMSG_OK(xmsg_send(out.data(), n, XMSG_BYTE, 1, 50, XMSG_COMM_WORLD));
    } else {
      std::vector<uint8_t> in(cap + 128, 0x5A);
      xmsg_status_t st;
      int rc = xmsg_recv(in.data() + 64, cap, XMSG_BYTE, 0, 50, XMSG_COMM_WORLD, &st);
      EXPECT_EQ(rc, XMSG_ERR_TRUNCATE) << n;
      EXPECT_NE(std::string(xmsg_last_error_message()).find("receive buffer"), std::string::npos)
          << xmsg_last_error_message();
      EXPECT_EQ(st.error, XMSG_ERR_TRUNCATE);
      EXPECT_EQ(st.bytes, static_cast<int64_t>(cap));
      EXPECT_TRUE(std::equal(out.begin(), out.begin() + cap, in.begin() + 64));
      for (size_t g = 0; g < 64; ++g) ASSERT_EQ(in[g], 0x5A);
      for (size_t g = 64 + cap; g < in.size(); ++g) ASSERT_EQ(in[g], 0x5A) << "overflow at " << g - 64;
    }
  }
  // Truncation through a non-blocking receive reports the error in wait's status too.
  if (rank == 0) {
    int v[4] = {1, 2, 3, 4};
    XMSG_OK(xmsg_send(v, 4, XMSG_INT, 1, 51, XMSG_COMM_WORLD));
  } else {
    int v[3] = {0, 0, 0};
    xmsg_request_t r;
    XMSG_OK(xmsg_irecv(v, 2, XMSG_INT, 0, 51, XMSG_COMM_WORLD, &r));
    xmsg_status_t st;
    EXPECT_EQ(xmsg_wait(&r, &st), XMSG_ERR_TRUNCATE);
    EXPECT_EQ(v[1], 2);
    EXPECT_EQ(v[2], 0);
  }
}

TEST(Sizes, TenThousandOutstandingIsends) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  constexpr int kCount = 10000;
  if (rank == 0) {
    std::vector<int64_t> vals(kCount * 4);
    std::vector<xmsg_request_t> r(kCount);
    for (int i = 0; i < kCount; ++i) {
      for (int j = 0; j < 4; ++j) vals[i * 4 + j] = int64_t{i} * 4 + j;
      XMSG_OK(xmsg_isend(&vals[i * 4], 4, XMSG_INT64_T, 1, 77, XMSG_COMM_WORLD, &r[i]));
    }
    char go = 1;  // the receiver posts only now: the sends sit in queues meanwhile
    XMSG_OK(xmsg_send(&go, 1, XMSG_CHAR, 1, 78, XMSG_COMM_WORLD));
    XMSG_OK(xmsg_waitall(kCount, r.data(), XMSG_STATUSES_IGNORE));
  } else if (rank == 1) {
    char go;
    XMSG_OK(xmsg_recv(&go, 1, XMSG_CHAR, 0, 78, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
    std::vector<int64_t> vals(kCount * 4, -1);
    std::vector<xmsg_request_t> r(kCount);
    for (int i = 0; i < kCount; ++i)
      XMSG_OK(xmsg_irecv(&vals[i * 4], 4, XMSG_INT64_T, 0, 77, XMSG_COMM_WORLD, &r[i]));
    XMSG_OK(xmsg_waitall(kCount, r.data(), XMSG_STATUSES_IGNORE));
    for (int i = 0; i < kCount * 4; ++i) ASSERT_EQ(vals[i], i);
  }
  p2p_barrier();
}

}  // namespace
