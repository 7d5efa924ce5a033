// MPI matching semantics across ranks: wildcards, non-overtaking, unexpected vs posted order,
// probe, cancel, self-send, communicators.
#include "p2p_util.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace {

struct Msg {
  int32_t source;
  int32_t tag;
  int64_t seq;
};

TEST(Matching, UnexpectedThenPostedEveryWildcardCombination) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  const int tags[4] = {10, 11, 12, 13};
  if (rank != 0) {
    for (int k = 0; k < 4; ++k) {
      Msg m{rank, tags[k], k};
      XMSG_OK(xmsg_send(&m, sizeof m, XMSG_BYTE, 0, tags[k], XMSG_COMM_WORLD));
    }
  }
  p2p_barrier();  // every message is now sent (eager): unexpected at rank 0
  if (rank != 0) return;
  std::set<std::pair<int, int>> got;
  xmsg_status_t st;
  Msg m{};
  for (int s = 1; s < size; ++s) {
    // (source, tag): skips the earlier tags of the same sender.
    XMSG_OK(xmsg_recv(&m, sizeof m, XMSG_BYTE, s, 13, XMSG_COMM_WORLD, &st));
    EXPECT_EQ(st.source, s);
    EXPECT_EQ(st.tag, 13);
    EXPECT_EQ(m.source, s);
    EXPECT_EQ(m.seq, 3);
    got.insert({s, 13});
    // (source, ANY_TAG): the earliest remaining from s.
    XMSG_OK(xmsg_recv(&m, sizeof m, XMSG_BYTE, s, XMSG_ANY_TAG, XMSG_COMM_WORLD, &st));
    EXPECT_EQ(st.source, s);
    EXPECT_EQ(st.tag, 10);
    EXPECT_EQ(m.seq, 0);
    got.insert({s, 10});
  }
  // (ANY_SOURCE, tag): one of the tag-11 messages.
  for (int i = 1; i < size; ++i) {
    XMSG_OK(xmsg_recv(&m, sizeof m, XMSG_BYTE, XMSG_ANY_SOURCE, 11, XMSG_COMM_WORLD, &st));
    EXPECT_EQ(st.tag, 11);
    EXPECT_EQ(m.source, st.source);
    EXPECT_TRUE(got.insert({st.source, 11}).second);
  }
  // (ANY_SOURCE, ANY_TAG): the rest, tag 12 from everyone.
  for (int i = 1; i < size; ++i) {
    XMSG_OK(xmsg_recv(&m, sizeof m, XMSG_BYTE, XMSG_ANY_SOURCE, XMSG_ANY_TAG, XMSG_COMM_WORLD, &st));
    EXPECT_EQ(st.tag, 12);
    EXPECT_EQ(m.tag, 12);
    EXPECT_TRUE(got.insert({st.source, 12}).second);
  }
  EXPECT_EQ(got.size(), static_cast<size_t>(4 * (size - 1)));
  int flag = 1;
  XMSG_OK(xmsg_iprobe(XMSG_ANY_SOURCE, XMSG_ANY_TAG, XMSG_COMM_WORLD, &flag, nullptr));
  EXPECT_EQ(flag, 0) << "no message may be left over";
}

TEST(Matching, PostedThenUnexpectedChoosesEarliestPostedReceive) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  Msg m[4]{};
  xmsg_request_t req[4];
  if (rank == 0) {
    // Posted in this order; rank 1 then sends tags 10, 11, 12, 13.
    XMSG_OK(xmsg_irecv(&m[0], sizeof(Msg), XMSG_BYTE, 1, 13, XMSG_COMM_WORLD, &req[0]));
    XMSG_OK(xmsg_irecv(&m[1], sizeof(Msg), XMSG_BYTE, XMSG_ANY_SOURCE, 11, XMSG_COMM_WORLD, &req[1]));
    XMSG_OK(xmsg_irecv(&m[2], sizeof(Msg), XMSG_BYTE, 1, XMSG_ANY_TAG, XMSG_COMM_WORLD, &req[2]));
    XMSG_OK(xmsg_irecv(&m[3], sizeof(Msg), XMSG_BYTE, XMSG_ANY_SOURCE, XMSG_ANY_TAG, XMSG_COMM_WORLD, &req[3]));
  }
  p2p_barrier();
  if (rank == 1) {
    for (int k = 0; k < 4; ++k) {
      Msg x{rank, 10 + k, k};
      XMSG_OK(xmsg_send(&x, sizeof x, XMSG_BYTE, 0, 10 + k, XMSG_COMM_WORLD));
    }
  }
  if (rank == 0) {
    xmsg_status_t st[4];
    XMSG_OK(xmsg_waitall(4, req, st));
    // tag 10 -> (1, ANY) [earlier than (ANY, ANY)]; 11 -> (ANY, 11); 12 -> (ANY, ANY); 13 -> (1, 13).
    EXPECT_EQ(m[0].tag, 13);
    EXPECT_EQ(m[1].tag, 11);
    EXPECT_EQ(m[2].tag, 10);
    EXPECT_EQ(m[3].tag, 12);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(st[i].source, 1);
      EXPECT_EQ(st[i].tag, m[i].tag);
      EXPECT_EQ(st[i].bytes, static_cast<int64_t>(sizeof(Msg)));
      for (int j = 0; j < 4; ++j) EXPECT_EQ(req[j], XMSG_REQUEST_NULL);
    }
  }
  p2p_barrier();
}

// Many outstanding messages of mixed protocols from every rank to rank 0 arrive in send order.
TEST(Matching, OrderUnderManyOutstandingMessages) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  constexpr int kPerSender = 600;
  auto size_of = [](int k) -> size_t { return k % 50 == 7 ? 70000 + k : (k % 5 == 0 ? 4000 : 8 + k % 64); };
  if (rank != 0) {
    std::vector<std::vector<uint8_t>> bufs(kPerSender);
    std::vector<xmsg_request_t> reqs(kPerSender);
    for (int k = 0; k < kPerSender; ++k) {
      bufs[k] = make_payload(k, rank, size_of(k));
      XMSG_OK(xmsg_isend(bufs[k].data(), bufs[k].size(), XMSG_BYTE, 0, 5, XMSG_COMM_WORLD, &reqs[k]));
    }
    XMSG_OK(xmsg_waitall(kPerSender, reqs.data(), XMSG_STATUSES_IGNORE));
  } else {
    std::vector<int> next(size, 0);
    std::vector<uint8_t> buf(80000);
    for (int i = 0; i < kPerSender * (size - 1); ++i) {
      xmsg_status_t st;
      XMSG_OK(xmsg_recv(buf.data(), buf.size(), XMSG_BYTE, XMSG_ANY_SOURCE, 5, XMSG_COMM_WORLD, &st));
      const int k = next[st.source]++;
      ASSERT_EQ(static_cast<size_t>(st.bytes), size_of(k)) << "message " << k << " from " << st.source;
      auto want = make_payload(k, st.source, size_of(k));
      ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin())) << "message " << k << " from " << st.source;
    }
  }
  p2p_barrier();
}

// One sender's small messages travel through its mailbox lane, longer ones through the shared
// ring, and a full mailbox spills into the ring: order must hold across the lanes, both when
// the messages pile up unexpected and when the receiver keeps pace.
TEST(Matching, OrderAcrossMailboxAndRingLanes) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  constexpr int kPerSender = 1500;
  auto size_of = [](int k) -> size_t {
    if (k % 500 == 250) return 70000 + k;  // rendezvous
    if (k % 97 == 0) return 97 + k % 200;  // just past the mailbox
    return k % 97;                          // mailbox (0-96 bytes), 300+ in a row overflow it
  };
  for (bool pile_up : {true, false}) {
    if (rank != 0) {
      std::vector<std::vector<uint8_t>> bufs(kPerSender);
      std::vector<xmsg_request_t> reqs(kPerSender);
      for (int k = 0; k < kPerSender; ++k) {
        bufs[k] = make_payload(k, rank, size_of(k));
        XMSG_OK(xmsg_isend(bufs[k].data(), bufs[k].size(), XMSG_BYTE, 0, k, XMSG_COMM_WORLD, &reqs[k]));
      }
      if (pile_up) p2p_barrier();
      XMSG_OK(xmsg_waitall(kPerSender, reqs.data(), XMSG_STATUSES_IGNORE));
    } else {
      if (pile_up) p2p_barrier();
      std::vector<int> next(size, 0);
      std::vector<uint8_t> buf(80000);
      for (int i = 0; i < kPerSender * (size - 1); ++i) {
        xmsg_status_t st;
        XMSG_OK(xmsg_recv(buf.data(), buf.size(), XMSG_BYTE, XMSG_ANY_SOURCE, XMSG_ANY_TAG, XMSG_COMM_WORLD, &st));
        const int k = next[st.source]++;
        ASSERT_EQ(st.tag, k) << "from " << st.source << (pile_up ? " (piled up)" : "");
        ASSERT_EQ(static_cast<size_t>(st.bytes), size_of(k)) << "message " << k << " from " << st.source;
        auto want = make_payload(k, st.source, size_of(k));
        ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin())) << "message " << k << " from " << st.source;
      }
    }
    p2p_barrier();
  }
}

TEST(Matching, SelfSendEagerAndLarge) {
  const int rank = world_rank();
  for (size_t n : {size_t{0}, size_t{5}, size_t{100000}, size_t{3} << 20}) {
    auto out = make_payload(n, rank, n);
    std::vector<uint8_t> in(n + 1, 0xEE);
    xmsg_request_t s;
    XMSG_OK(xmsg_isend(out.data(), n, XMSG_BYTE, rank, 3, XMSG_COMM_WORLD, &s));
    xmsg_status_t st;
    XMSG_OK(xmsg_recv(in.data(), n, XMSG_BYTE, rank, 3, XMSG_COMM_WORLD, &st));
    XMSG_OK(xmsg_wait(&s, XMSG_STATUS_IGNORE));
    EXPECT_EQ(st.source, rank);
    EXPECT_EQ(st.bytes, static_cast<int64_t>(n));
    EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
    EXPECT_EQ(in[n], 0xEE);
  }
  // On XMSG_COMM_SELF as well.
  int v = 42, w = 0;
  XMSG_OK(xmsg_send(&v, 1, XMSG_INT, 0, 0, XMSG_COMM_SELF));
  XMSG_OK(xmsg_recv(&w, 1, XMSG_INT, 0, 0, XMSG_COMM_SELF, XMSG_STATUS_IGNORE));
  EXPECT_EQ(w, 42);
}

TEST(Matching, ProbeReportsSourceTagAndCount) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (rank == 1) {
    std::vector<int> v(100);
    for (int i = 0; i < 100; ++i) v[i] = i * 3;
    XMSG_OK(xmsg_send(v.data(), 100, XMSG_INT, 0, 7, XMSG_COMM_WORLD));
    std::vector<double> big(50000, 2.5);  // rendezvous-sized
    XMSG_OK(xmsg_send(big.data(), big.size(), XMSG_DOUBLE, 0, 8, XMSG_COMM_WORLD));
  } else if (rank == 0) {
    int flag = 1;
    XMSG_OK(xmsg_iprobe(1, 99, XMSG_COMM_WORLD, &flag, nullptr));
    EXPECT_EQ(flag, 0);
    xmsg_status_t st;
    XMSG_OK(xmsg_probe(XMSG_ANY_SOURCE, XMSG_ANY_TAG, XMSG_COMM_WORLD, &st));
    EXPECT_EQ(st.source, 1);
    EXPECT_EQ(st.tag, 7);
    int64_t count = 0;
    XMSG_OK(xmsg_get_count(&st, XMSG_INT, &count));
    EXPECT_EQ(count, 100);
    std::vector<int> v(count);
    XMSG_OK(xmsg_recv(v.data(), count, XMSG_INT, st.source, st.tag, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
    EXPECT_EQ(v[99], 297);
    XMSG_OK(xmsg_probe(1, 8, XMSG_COMM_WORLD, &st));
    XMSG_OK(xmsg_get_count(&st, XMSG_DOUBLE, &count));
    EXPECT_EQ(count, 50000);
    std::vector<double> big(count);
    XMSG_OK(xmsg_recv(big.data(), count, XMSG_DOUBLE, 1, 8, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
    EXPECT_EQ(big[49999], 2.5);
  }
  p2p_barrier();
}

TEST(Matching, CancelPostedReceive) {
  int buf = 0;
  xmsg_request_t r;
  XMSG_OK(xmsg_irecv(&buf, 1, XMSG_INT, XMSG_ANY_SOURCE, 1234, XMSG_COMM_WORLD, &r));
  XMSG_OK(xmsg_cancel(&r));
  xmsg_status_t st;
  XMSG_OK(xmsg_wait(&r, &st));
  EXPECT_EQ(st.cancelled, 1);
  EXPECT_EQ(r, XMSG_REQUEST_NULL);
  // A later message with that tag is not swallowed by the cancelled receive.
  const int rank = world_rank();
  int v = 77;
  XMSG_OK(xmsg_send(&v, 1, XMSG_INT, rank, 1234, XMSG_COMM_WORLD));
  XMSG_OK(xmsg_recv(&buf, 1, XMSG_INT, rank, 1234, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
  EXPECT_EQ(buf, 77);
}

TEST(Matching, SendrecvRing) {
  const int rank = world_rank(), size = world_size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  std::vector<long> out(3000, rank), in(3000, -1);
  xmsg_status_t st;
  XMSG_OK(xmsg_sendrecv(out.data(), out.size(), XMSG_LONG, right, 4, in.data(), in.size(), XMSG_LONG, left, 4,
                        XMSG_COMM_WORLD, &st));
  EXPECT_EQ(st.source, left);
  EXPECT_EQ(in[0], left);
  EXPECT_EQ(in[2999], left);
}

TEST(Matching, WaitanyAndTestall) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (rank == 0) {
    int a = -1, b = -1;
    xmsg_request_t r[2];
    XMSG_OK(xmsg_irecv(&a, 1, XMSG_INT, 1, 21, XMSG_COMM_WORLD, &r[0]));
    XMSG_OK(xmsg_irecv(&b, 1, XMSG_INT, 1, 22, XMSG_COMM_WORLD, &r[1]));
    int flag = 1;
    XMSG_OK(xmsg_testall(2, r, &flag, XMSG_STATUSES_IGNORE));
    EXPECT_EQ(flag, 0);  // rank 1 sends only after the go below
    int go = 1;
    XMSG_OK(xmsg_send(&go, 1, XMSG_INT, 1, 20, XMSG_COMM_WORLD));
    int index = -1;
    xmsg_status_t st;
    XMSG_OK(xmsg_waitany(2, r, &index, &st));
    EXPECT_EQ(index, 1);  // only tag 22 was sent so far
    EXPECT_EQ(b, 222);
    XMSG_OK(xmsg_send(&go, 1, XMSG_INT, 1, 20, XMSG_COMM_WORLD));
    do {
      XMSG_OK(xmsg_testall(2, r, &flag, XMSG_STATUSES_IGNORE));
    } while (!flag);
    EXPECT_EQ(a, 111);
    XMSG_OK(xmsg_waitany(2, r, &index, XMSG_STATUS_IGNORE));
    EXPECT_EQ(index, XMSG_UNDEFINED);
  } else if (rank == 1) {
    int go = 0, a = 111, b = 222;
    XMSG_OK(xmsg_recv(&go, 1, XMSG_INT, 0, 20, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
    XMSG_OK(xmsg_send(&b, 1, XMSG_INT, 0, 22, XMSG_COMM_WORLD));
    XMSG_OK(xmsg_recv(&go, 1, XMSG_INT, 0, 20, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
    XMSG_OK(xmsg_send(&a, 1, XMSG_INT, 0, 21, XMSG_COMM_WORLD));
  }
  p2p_barrier();
}

TEST(Communicators, DupIsolatesTrafficAndSplitOrdersByKey) {
  const int rank = world_rank(), size = world_size();
  xmsg_comm_t dup;
  XMSG_OK(xmsg_comm_dup(XMSG_COMM_WORLD, &dup));
  // Same tag on two communicators: each receive gets its own communicator's message.
  int a = 1, b = 2, x = 0, y = 0;
  XMSG_OK(xmsg_send(&a, 1, XMSG_INT, rank, 9, XMSG_COMM_WORLD));
  XMSG_OK(xmsg_send(&b, 1, XMSG_INT, rank, 9, dup));
  XMSG_OK(xmsg_recv(&y, 1, XMSG_INT, rank, 9, dup, XMSG_STATUS_IGNORE));
  XMSG_OK(xmsg_recv(&x, 1, XMSG_INT, rank, 9, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 2);

  // Split by parity, reverse order by key.
  xmsg_comm_t half;
  XMSG_OK(xmsg_comm_split(XMSG_COMM_WORLD, rank % 2, -rank, &half));
  int hr = -1, hs = -1;
  XMSG_OK(xmsg_comm_rank(half, &hr));
  XMSG_OK(xmsg_comm_size(half, &hs));
  const int expect_size = (size + 1 - rank % 2) / 2;
  EXPECT_EQ(hs, expect_size);
  EXPECT_EQ(hr, expect_size - 1 - rank / 2);
  // A ring inside the half: the message comes from the neighbour with the expected world rank.
  int wr = rank, from = -1;
  xmsg_status_t st;
  XMSG_OK(xmsg_sendrecv(&wr, 1, XMSG_INT, (hr + 1) % hs, 0, &from, 1, XMSG_INT, (hr + hs - 1) % hs, 0, half, &st));
  EXPECT_EQ(st.source, (hr + hs - 1) % hs);
  EXPECT_EQ(from % 2, rank % 2);

  xmsg_comm_t none;
  XMSG_OK(xmsg_comm_split(XMSG_COMM_WORLD, rank == 0 ? XMSG_UNDEFINED : 1, 0, &none));
  if (rank == 0) {
    EXPECT_EQ(none, XMSG_COMM_NULL);
  } else {
    XMSG_OK(xmsg_comm_free(&none));
  }
  XMSG_OK(xmsg_comm_free(&half));
  XMSG_OK(xmsg_comm_free(&dup));
  EXPECT_EQ(dup, XMSG_COMM_NULL);
  EXPECT_EQ(xmsg_send(&a, 1, XMSG_INT, 0, 0, half), XMSG_ERR_COMM);
}

}  // namespace
