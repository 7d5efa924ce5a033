// Blocking receives of at most 96 bytes from one source: between shm peers they take the
// sender's next mailbox message in place, without posting a request. These tests put that path
// against everything that may claim a message first: earlier-posted receives, unexpected
// messages, other tags, other communicators, the ring lane, truncation.
#include "p2p_util.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace {

constexpr int kPeer = 1;  // rank 0 receives from rank 1; other ranks only join the barriers

// Sizes 0-96 (the mailbox: one line up to 32, two lines above), with a message past the
// mailbox every so often (the ring lane).
size_t size_of(int k) { return k % 41 == 40 ? 97 + k % 100 : static_cast<size_t>(k % 97); }

TEST(BlockingRecv, EarlierPostedWildcardReceiveTakesTheFirstMessage) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  const char first[] = "first", second[] = "second";
  if (rank == 0) {
    char posted[32] = {}, blocking[32] = {};
    xmsg_request_t req;
    XMSG_OK(xmsg_irecv(posted, sizeof posted, XMSG_CHAR, XMSG_ANY_SOURCE, XMSG_ANY_TAG, XMSG_COMM_WORLD, &req));
    p2p_barrier();  // the receive is posted before rank 1 sends
    xmsg_status_t st;
    XMSG_OK(xmsg_recv(blocking, sizeof blocking, XMSG_CHAR, kPeer, 7, XMSG_COMM_WORLD, &st));
    EXPECT_STREQ(blocking, second);
    EXPECT_EQ(st.bytes, static_cast<int64_t>(sizeof second));
    XMSG_OK(xmsg_wait(&req, &st));
    EXPECT_STREQ(posted, first);
    EXPECT_EQ(st.source, kPeer);
    EXPECT_EQ(st.tag, 7);
  } else {
    p2p_barrier();
    if (rank == kPeer) {
      XMSG_OK(xmsg_send(first, sizeof first, XMSG_CHAR, 0, 7, XMSG_COMM_WORLD));
      XMSG_OK(xmsg_send(second, sizeof second, XMSG_CHAR, 0, 7, XMSG_COMM_WORLD));
    }
  }
  p2p_barrier();
}

// Rank 1 alternates two tags; rank 0 first takes every message of one tag, then of the other,
// with exact-size buffers: the other tag's messages sit at the mailbox head and must turn
// unexpected in order, and the taken ones must come in send order with their bytes.
TEST(BlockingRecv, OtherTagsAtTheHeadKeepTheirOrder) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  constexpr int kMessages = 600;  // > a mailbox of 128: some spill into the ring
  if (rank == kPeer) {
    // Non-blocking: with a small eager limit the longer ones are rendezvous, which a blocking
    // send would hold until rank 0 gets to their tag.
    std::vector<std::vector<uint8_t>> bufs(kMessages);
    std::vector<xmsg_request_t> reqs(kMessages);
    for (int k = 0; k < kMessages; ++k) {
      bufs[k] = make_payload(k, rank, size_of(k));
      XMSG_OK(xmsg_isend(bufs[k].data(), bufs[k].size(), XMSG_BYTE, 0, 100 + k % 2, XMSG_COMM_WORLD, &reqs[k]));
    }
    XMSG_OK(xmsg_waitall(kMessages, reqs.data(), XMSG_STATUSES_IGNORE));
  } else if (rank == 0) {
    for (int parity : {1, 0}) {
      for (int k = parity; k < kMessages; k += 2) {
        std::vector<uint8_t> buf(size_of(k) + 1, 0xee);
        xmsg_status_t st;
        XMSG_OK(xmsg_recv(buf.data(), size_of(k), XMSG_BYTE, kPeer, 100 + parity, XMSG_COMM_WORLD, &st));
        ASSERT_EQ(st.source, kPeer);
        ASSERT_EQ(st.tag, 100 + parity);
        ASSERT_EQ(static_cast<size_t>(st.bytes), size_of(k)) << "message " << k;
        auto want = make_payload(k, kPeer, size_of(k));
        ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin())) << "message " << k;
        ASSERT_EQ(buf.back(), 0xee) << "message " << k << " wrote past its size";
      }
    }
  }
  p2p_barrier();
}

// Ping-pong with ANY_TAG: the in-place path reports the tag and count of what it took, and a
// message queued unexpected earlier (piled up before the first receive) still comes first.
TEST(BlockingRecv, AnyTagPingPongAfterUnexpectedBacklog) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  constexpr int kBacklog = 50, kRounds = 2000;
  if (rank == kPeer) {
    for (int k = 0; k < kBacklog; ++k) {
      auto data = make_payload(k, rank, k % 97);
      XMSG_OK(xmsg_send(data.data(), data.size(), XMSG_BYTE, 0, k, XMSG_COMM_WORLD));
    }
  }
  p2p_barrier();  // rank 0 progresses meanwhile: some of the backlog turns unexpected
  if (rank == 0) {
    for (int k = 0; k < kBacklog + kRounds; ++k) {
      uint8_t buf[96];
      xmsg_status_t st;
      XMSG_OK(xmsg_recv(buf, sizeof buf, XMSG_BYTE, kPeer, XMSG_ANY_TAG, XMSG_COMM_WORLD, &st));
      const size_t n = k % 97;
      ASSERT_EQ(st.tag, k);
      ASSERT_EQ(static_cast<size_t>(st.bytes), n);
      auto want = make_payload(k, kPeer, n);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), buf)) << "message " << k;
      if (k >= kBacklog) XMSG_OK(xmsg_send(buf, 1, XMSG_BYTE, kPeer, k, XMSG_COMM_WORLD));
    }
  } else if (rank == kPeer) {
    for (int k = kBacklog; k < kBacklog + kRounds; ++k) {
      auto data = make_payload(k, rank, k % 97);
      XMSG_OK(xmsg_send(data.data(), data.size(), XMSG_BYTE, 0, k, XMSG_COMM_WORLD));
      uint8_t ack;
      xmsg_status_t st;
      XMSG_OK(xmsg_recv(&ack, 1, XMSG_BYTE, 0, XMSG_ANY_TAG, XMSG_COMM_WORLD, &st));
      ASSERT_EQ(st.tag, k);
      ASSERT_EQ(ack, data.empty() ? ack : data[0]);
    }
  }
  p2p_barrier();
}

// A message on another communicator at the head of the mailbox is not ours.
TEST(BlockingRecv, OtherCommunicatorAtTheHeadIsLeftForIt) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  xmsg_comm_t dup;
  XMSG_OK(xmsg_comm_dup(XMSG_COMM_WORLD, &dup));
  const int on_dup = 111, on_world = 222;
  if (rank == kPeer) {
    XMSG_OK(xmsg_send(&on_dup, 1, XMSG_INT, 0, 3, dup));
    XMSG_OK(xmsg_send(&on_world, 1, XMSG_INT, 0, 3, XMSG_COMM_WORLD));
  } else if (rank == 0) {
    int v = 0;
    XMSG_OK(xmsg_recv(&v, 1, XMSG_INT, kPeer, 3, XMSG_COMM_WORLD, nullptr));
    EXPECT_EQ(v, on_world);
    XMSG_OK(xmsg_recv(&v, 1, XMSG_INT, kPeer, 3, dup, nullptr));
    EXPECT_EQ(v, on_dup);
  }
  p2p_barrier();
  XMSG_OK(xmsg_comm_free(&dup));
}

// Truncation in place: the error names the sizes, the bytes that fit arrive, none past them.
TEST(BlockingRecv, TruncationDeliversWhatFits) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  const char text[] = "twenty bytes of text";  // 21 with the terminator
  if (rank == kPeer) {
    XMSG_OK(xmsg_send(text, sizeof text, XMSG_CHAR, 0, 9, XMSG_COMM_WORLD));
  } else if (rank == 0) {
    char buf[12];
    std::memset(buf, '#', sizeof buf);
    xmsg_status_t st;
    EXPECT_EQ(xmsg_recv(buf, 8, XMSG_CHAR, kPeer, 9, XMSG_COMM_WORLD, &st), XMSG_ERR_TRUNCATE);
    const std::string msg = xmsg_last_error_message();
    EXPECT_NE(msg.find("xmsg_recv"), std::string::npos) << msg;
    EXPECT_NE(msg.find("21 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("holds 8"), std::string::npos) << msg;
    EXPECT_EQ(std::string(buf, 8), std::string(text, 8));
    EXPECT_EQ(buf[8], '#');
    EXPECT_EQ(st.bytes, 8);
    EXPECT_EQ(st.error, XMSG_ERR_TRUNCATE);
    EXPECT_EQ(st.tag, 9);
  }
  p2p_barrier();
  // A two-line mailbox record cut inside its second line, and one cut inside its first.
  std::vector<uint8_t> long_text = make_payload(7, kPeer, 90);
  for (size_t capacity : {size_t{70}, size_t{20}}) {
    if (rank == kPeer) {
      XMSG_OK(xmsg_send(long_text.data(), long_text.size(), XMSG_BYTE, 0, 10, XMSG_COMM_WORLD));
    } else if (rank == 0) {
      std::vector<uint8_t> buf(96, 0xee);
      xmsg_status_t st;
      EXPECT_EQ(xmsg_recv(buf.data(), capacity, XMSG_BYTE, kPeer, 10, XMSG_COMM_WORLD, &st), XMSG_ERR_TRUNCATE);
      const std::string msg = xmsg_last_error_message();
      EXPECT_NE(msg.find("90 bytes"), std::string::npos) << msg;
      EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + capacity, long_text.begin())) << capacity;
      EXPECT_EQ(buf[capacity], 0xee) << capacity;
      EXPECT_EQ(st.bytes, static_cast<int64_t>(capacity));
    }
    p2p_barrier();
  }
}

}  // namespace
