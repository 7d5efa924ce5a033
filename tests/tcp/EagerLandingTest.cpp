// Eager messages over tcp whose receive is posted before they arrive: the transport reads the
// header, the runtime matches it (claim_eager), and the payload goes from the socket straight
// into the user's buffer. Run on 3 virtual nodes with XMSG_TRANSPORTS=tcp so every pair is tcp;
// sizes stay within the eager limit (64 KiB), from below the transport's landing threshold
// (1 KiB) to above the size after which it reads headers alone (16 KiB).
#include "../p2p/p2p_util.hpp"

#include <algorithm>
#include <string>

namespace {

constexpr int kEagerSizes[] = {1000, 1024, 4096, 16383, 16384, 40000, 65536};

// Rank `from` tells rank `to` that its receives are posted.
void ready(int from, int to, int tag) {
  char token = 1;
  if (world_rank() == from) XMSG_OK(xmsg_send(&token, 1, XMSG_CHAR, to, tag, XMSG_COMM_WORLD));
  if (world_rank() == to) XMSG_OK(xmsg_recv(&token, 1, XMSG_CHAR, from, tag, XMSG_COMM_WORLD, nullptr));
}

bool matches(const std::vector<uint8_t>& got, size_t offset, uint64_t id, int src, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (got[offset + i] != pattern(id, src, i)) return false;
  return true;
}

TEST(EagerLanding, PostedReceivesGetEveryByteInOrder) {
  const int rank = world_rank();
  if (world_size() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (rank > 1) return;
  // Every size twice, all with one tag: the i-th receive must get the i-th message.
  std::vector<size_t> sizes;
  for (int round = 0; round < 2; ++round)
    for (int n : kEagerSizes) sizes.push_back(static_cast<size_t>(n));
  if (rank == 1) {
    std::vector<std::vector<uint8_t>> in(sizes.size());
    std::vector<xmsg_request_t> req(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
      in[i].assign(sizes[i], 0);
      XMSG_OK(xmsg_irecv(in[i].data(), sizes[i], XMSG_BYTE, 0, 70, XMSG_COMM_WORLD, &req[i]));
    }
    ready(1, 0, 71);
    for (size_t i = 0; i < sizes.size(); ++i) {
      xmsg_status_t st;
      XMSG_OK(xmsg_wait(&req[i], &st));
      EXPECT_EQ(st.bytes, static_cast<int64_t>(sizes[i])) << "receive " << i;
      EXPECT_EQ(st.source, 0);
      EXPECT_TRUE(matches(in[i], 0, i, 0, sizes[i])) << "receive " << i << " (" << sizes[i] << " bytes) got another message's bytes";
    }
  } else {
    ready(1, 0, 71);
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto out = make_payload(i, 0, sizes[i]);
      XMSG_OK(xmsg_send(out.data(), out.size(), XMSG_BYTE, 1, 70, XMSG_COMM_WORLD));
    }
  }
}

// A posted receive shorter than the message: what fits, XMSG_ERR_TRUNCATE, guard bytes intact,
// and the stream stays in step (the message right behind arrives whole).
TEST(EagerLanding, TruncatedPostedReceiveKeepsTheStreamInStep) {
  const int rank = world_rank();
  if (world_size() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (rank > 1) return;
  for (size_t n : {size_t{20000}, size_t{65536}}) {
    for (size_t cap : {size_t{0}, size_t{100}, n / 2, n - 1}) {
      const size_t next = 30000;
      if (rank == 1) {
        std::vector<uint8_t> in(cap + 128, 0x5A), after(next, 0);
        xmsg_request_t r[2];
        XMSG_OK(xmsg_irecv(in.data() + 64, cap, XMSG_BYTE, 0, 72, XMSG_COMM_WORLD, &r[0]));
        XMSG_OK(xmsg_irecv(after.data(), next, XMSG_BYTE, 0, 72, XMSG_COMM_WORLD, &r[1]));
        ready(1, 0, 73);
        xmsg_status_t st;
        EXPECT_EQ(xmsg_wait(&r[0], &st), XMSG_ERR_TRUNCATE) << n << " into " << cap;
        EXPECT_EQ(st.error, XMSG_ERR_TRUNCATE);
        EXPECT_EQ(st.bytes, static_cast<int64_t>(cap));
        EXPECT_TRUE(matches(in, 64, n, 0, cap)) << n << " into " << cap;
        for (size_t g = 0; g < 64; ++g) ASSERT_EQ(in[g], 0x5A) << "underflow at " << g;
        for (size_t g = 64 + cap; g < in.size(); ++g) ASSERT_EQ(in[g], 0x5A) << "overflow at " << g - 64;
        XMSG_OK(xmsg_wait(&r[1], &st));
        EXPECT_EQ(st.bytes, static_cast<int64_t>(next));
        EXPECT_TRUE(matches(after, 0, n + 1, 0, next)) << "the message after a truncated " << n << " into " << cap;
      } else {
        ready(1, 0, 73);
        auto a = make_payload(n, 0, n), b = make_payload(n + 1, 0, next);
        XMSG_OK(xmsg_send(a.data(), n, XMSG_BYTE, 1, 72, XMSG_COMM_WORLD));
        XMSG_OK(xmsg_send(b.data(), next, XMSG_BYTE, 1, 72, XMSG_COMM_WORLD));
      }
    }
  }
}

// ANY_SOURCE receives posted first, every other rank sending at once: each receive gets one
// whole message, and each sender's messages arrive in the order sent.
TEST(EagerLanding, AnySourcePostedReceives) {
  const int rank = world_rank(), size = world_size();
  if (size < 3) GTEST_SKIP() << "needs at least 3 ranks";
  const int per_sender = 6;
  const size_t n = 30000;
  if (rank == 0) {
    const size_t total = static_cast<size_t>(per_sender * (size - 1));
    std::vector<std::vector<uint8_t>> in(total, std::vector<uint8_t>(n + 16, 0));
    std::vector<xmsg_request_t> req(total);
    for (size_t i = 0; i < total; ++i)
      XMSG_OK(xmsg_irecv(in[i].data(), n + 16, XMSG_BYTE, XMSG_ANY_SOURCE, 74, XMSG_COMM_WORLD, &req[i]));
    for (int s = 1; s < size; ++s) ready(0, s, 75);
    std::vector<int> next(static_cast<size_t>(size), 0);
    for (size_t i = 0; i < total; ++i) {
      xmsg_status_t st;
      XMSG_OK(xmsg_wait(&req[i], &st));
      ASSERT_GE(st.source, 1);
      ASSERT_LT(st.source, size);
      EXPECT_EQ(st.bytes, static_cast<int64_t>(n));
      const int k = next[static_cast<size_t>(st.source)]++;
      EXPECT_TRUE(matches(in[i], 0, static_cast<uint64_t>(k), st.source, n))
          << "receive " << i << ": not message " << k << " of rank " << st.source;
    }
    for (int s = 1; s < size; ++s) EXPECT_EQ(next[static_cast<size_t>(s)], per_sender);
  } else {
    ready(0, rank, 75);
    for (int k = 0; k < per_sender; ++k) {
      auto out = make_payload(static_cast<uint64_t>(k), rank, n);
      XMSG_OK(xmsg_send(out.data(), n, XMSG_BYTE, 0, 74, XMSG_COMM_WORLD));
    }
  }
}

// One receive posted, three messages with its tag: the first lands in it, the two others
// arrive unexpected and are taken by the receives posted afterwards, in order.
TEST(EagerLanding, UnexpectedAfterPostedStayInOrder) {
  const int rank = world_rank();
  if (world_size() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (rank > 1) return;
  const size_t sizes[] = {20000, 30000, 1024};
  if (rank == 1) {
    std::vector<uint8_t> first(sizes[0]);
    xmsg_request_t r;
    XMSG_OK(xmsg_irecv(first.data(), first.size(), XMSG_BYTE, 0, 76, XMSG_COMM_WORLD, &r));
    ready(1, 0, 77);
    XMSG_OK(xmsg_wait(&r, nullptr));
    EXPECT_TRUE(matches(first, 0, 0, 0, sizes[0]));
    // Both others are sent by now (rank 0 says so): they wait as unexpected messages.
    ready(0, 1, 78);
    int flag = 0;
    while (!flag) XMSG_OK(xmsg_iprobe(0, 76, XMSG_COMM_WORLD, &flag, nullptr));
    for (int k = 1; k < 3; ++k) {
      std::vector<uint8_t> in(40000, 0);
      xmsg_status_t st;
      XMSG_OK(xmsg_recv(in.data(), in.size(), XMSG_BYTE, 0, 76, XMSG_COMM_WORLD, &st));
      EXPECT_EQ(st.bytes, static_cast<int64_t>(sizes[k]));
      EXPECT_TRUE(matches(in, 0, static_cast<uint64_t>(k), 0, sizes[k])) << "message " << k;
    }
  } else {
    ready(1, 0, 77);
    for (int k = 0; k < 3; ++k) {
      auto out = make_payload(static_cast<uint64_t>(k), 0, sizes[k]);
      XMSG_OK(xmsg_send(out.data(), out.size(), XMSG_BYTE, 1, 76, XMSG_COMM_WORLD));
    }
    ready(0, 1, 78);
  }
}

}  // namespace
