// SegmentRendezvous between threads and processes of this test: each "rank" hands the others its
// identity and a memfd through the node's leader, and what arrives must be the sender's own
// object. Connections the kernel says come from another user are dropped; a forged pid, a leader
// of another user or a missing leader is an error.
#include "SegmentRendezvous.hpp"

#include <xmsg/transport/transport.hpp>

#include <gtest/gtest.h>

#include "as_nobody.hpp"

#include <pwd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace xmsg::transport;
using namespace xmsg::transport::shm;

namespace {

std::string unique_job(const char* what) { return std::string("rdv-test.") + std::to_string(::getpid()) + "." + what; }

SegmentIdentity identity_of(int rank) {
  SegmentIdentity id{};
  id.magic = 0x1234;
  id.owner_pid = ::getpid();
  id.owner_rank = static_cast<uint64_t>(rank);
  id.probe_value = 1000 + static_cast<uint64_t>(rank);
  return id;
}

// A memfd holding `rank` in its first word.
int object_of(int rank) {
  const int fd = ::memfd_create("rdv-test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  const uint64_t word = 7000 + static_cast<uint64_t>(rank);
  EXPECT_EQ(::pwrite(fd, &word, sizeof word, 0), static_cast<ssize_t>(sizeof word));
  return fd;
}

// Connects to `job`'s leader `leader` as this process and sends `id` with descriptor `fd`;
// returns the connection (the leader answers on it), or -1.
int connect_and_send(const std::string& job, int leader, const SegmentIdentity& id, int fd) {
  const int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  const std::string name = SegmentRendezvous::address_of(job, leader);
  std::memcpy(sa.sun_path + 1, name.data(), name.size());
  if (::connect(s, reinterpret_cast<const sockaddr*>(&sa),
                static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())) != 0) {
    ::close(s);
    return -1;
  }
  iovec iov{const_cast<SegmentIdentity*>(&id), sizeof id};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  if (::sendmsg(s, &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof id)) {
    ::close(s);
    return -1;
  }
  return s;
}

std::vector<int> all_but(int ranks, int me) {
  std::vector<int> peers;
  for (int q = ranks - 1; q >= 0; --q)
    if (q != me) peers.push_back(q);
  return peers;
}

// Whether `got` holds, in the order of `peers`, each peer's own identity and object.
std::string check_arrivals(const std::vector<SegmentRendezvous::Arrival>& got, const std::vector<int>& peers) {
  if (got.size() != peers.size()) return "got " + std::to_string(got.size()) + " arrivals";
  for (size_t i = 0; i < peers.size(); ++i) {
    const auto q = static_cast<uint64_t>(peers[i]);
    if (got[i].identity.owner_rank != q) return "entry " + std::to_string(i) + " is rank " + std::to_string(got[i].identity.owner_rank);
    if (got[i].identity.probe_value != 1000 + q) return "rank " + std::to_string(q) + "'s identity is not its own";
    if (!got[i].segment) return "rank " + std::to_string(q) + " came without a descriptor";
    uint64_t word = 0;
    if (::pread(got[i].segment.get(), &word, sizeof word, 0) != sizeof word || word != 7000 + q)
      return "rank " + std::to_string(q) + "'s descriptor is not its object";
  }
  return "";
}

}  // namespace

TEST(SegmentRendezvous, EveryRankReceivesEveryPeersObject) {
  constexpr int kRanks = 5;
  const std::string job = unique_job("all");
  std::vector<SegmentRendezvous> ranks;
  for (int r = 0; r < kRanks; ++r) ranks.emplace_back(job, r, 0);  // the leader listens before anyone joins
  std::vector<std::string> verdict(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      const int fd = object_of(r);
      try {
        verdict[r] = check_arrivals(ranks[r].exchange(all_but(kRanks, r), identity_of(r), fd), all_but(kRanks, r));
      } catch (const TransportError& e) {
        verdict[r] = e.what();
      }
      ::close(fd);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(verdict[r], "") << "rank " << r;
}

// 300 processes: each rank's table takes two messages (253 descriptors at most in one).
TEST(SegmentRendezvous, ALargeNodeTakesSeveralMessagesPerRank) {
  constexpr int kRanks = 300;
  const std::string job = unique_job("large");
  SegmentRendezvous leader(job, 0, 0);
  std::vector<pid_t> children;
  for (int r = 1; r < kRanks; ++r) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 1;
      try {
        leader.close();  // the child does not lead
        SegmentRendezvous me(job, r, 0);
        const int fd = object_of(r);
        const std::string v = check_arrivals(me.exchange(all_but(kRanks, r), identity_of(r), fd), all_but(kRanks, r));
        if (!v.empty()) std::fprintf(stderr, "rank %d: %s\n", r, v.c_str());
        status = v.empty() ? 0 : 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  const int fd = object_of(0);
  EXPECT_EQ(check_arrivals(leader.exchange(all_but(kRanks, 0), identity_of(0), fd), all_but(kRanks, 0)), "");
  ::close(fd);
  int failed = 0;
  for (pid_t c : children) {
    int status = -1;
    ::waitpid(c, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(failed, 0) << "ranks that did not get every peer's object";
}

TEST(SegmentRendezvous, AMissingLeaderIsAnErrorNamingIt) {
  const std::string job = unique_job("missing");
  SegmentRendezvous mine(job, 5, 3);
  const int fd = object_of(5);
  try {
    mine.exchange(std::vector<int>{3}, identity_of(5), fd);
    ADD_FAILURE() << "exchange without a leader returned";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("XMSG_SHM_NAMELESS"), std::string::npos) << e.what();
  }
  ::close(fd);
}

TEST(SegmentRendezvous, TheSameAddressCannotBeBoundTwice) {
  const std::string job = unique_job("twice");
  SegmentRendezvous first(job, 2, 2);
  try {
    SegmentRendezvous second(job, 2, 2);
    ADD_FAILURE() << "a second leader bound rank 2's address";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("same job id"), std::string::npos) << e.what();
  }
}

TEST(SegmentRendezvous, ALongJobIdIsHashedIntoTheAddress) {
  const std::string job(300, 'j');
  const std::string name = SegmentRendezvous::address_of(job, 511);
  EXPECT_LE(name.size(), sizeof(sockaddr_un::sun_path) - 1);
  EXPECT_NE(name, SegmentRendezvous::address_of(std::string(300, 'k'), 511));
  SegmentRendezvous bound(job, 511, 511);  // binds: the name fits
}

TEST(SegmentRendezvous, AnIdentityClaimingAnotherPidIsRefused) {
  const std::string job = unique_job("pid");
  SegmentRendezvous leader(job, 0, 0);
  SegmentIdentity forged = identity_of(1);
  forged.owner_pid = 1;
  const int bait = object_of(1);
  const int conn = connect_and_send(job, 0, forged, bait);
  ASSERT_GE(conn, 0);
  ::close(bait);
  const int fd = object_of(0);
  try {
    leader.exchange(std::vector<int>{1}, identity_of(0), fd);
    ADD_FAILURE() << "a forged pid was accepted";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("claiming pid 1"), std::string::npos) << e.what();
  }
  ::close(fd);
  ::close(conn);
}

TEST(SegmentRendezvous, AnotherUsersConnectionIsDropped) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  if (!::getpwnam("nobody")) GTEST_SKIP() << "no user nobody";
  const std::string job = unique_job("user");
  SegmentRendezvous leader(job, 0, 0);
  // The intruder claims rank 1 with its own object and its own (true) pid, as another user, and
  // leaves its connection in the leader's queue.
  const int sent = as_nobody([&] {
    SegmentIdentity claim = identity_of(1);
    claim.owner_pid = ::getpid();
    const int bait = ::memfd_create("rdv-bait", MFD_CLOEXEC);
    const uint64_t word = 666;
    if (bait < 0 || ::pwrite(bait, &word, sizeof word, 0) != sizeof word) return 4;
    return connect_and_send(job, 0, claim, bait) >= 0 ? 0 : 5;
  });
  ASSERT_EQ(sent, 0) << "the intruder could not connect";
  SegmentRendezvous one(job, 1, 0);
  const int fd0 = object_of(0), fd1 = object_of(1);
  std::string at1;
  std::thread member([&] {
    try {
      at1 = check_arrivals(one.exchange(std::vector<int>{0}, identity_of(1), fd1), {0});
    } catch (const TransportError& e) {
      at1 = e.what();
    }
  });
  EXPECT_EQ(check_arrivals(leader.exchange(std::vector<int>{1}, identity_of(0), fd0), {1}), "")
      << "the leader took the intruder's object";
  member.join();
  EXPECT_EQ(at1, "");
  ::close(fd0);
  ::close(fd1);
}

TEST(SegmentRendezvous, ALeaderOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to listen as another user";
  if (!::getpwnam("nobody")) GTEST_SKIP() << "no user nobody";
  const std::string job = unique_job("squat");
  int ready[2], hold[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(hold), 0);
  // The squatter listens on rank 0's address until the test is done with it.
  std::thread squatter([&] {
    as_nobody([&] {
      ::close(hold[1]);  // else this child keeps its own pipe open and never sees the end
      try {
        SegmentRendezvous taken(job, 0, 0);
        char c = 1;
        if (::write(ready[1], &c, 1) != 1) return 1;
        return ::read(hold[0], &c, 1) >= 0 ? 0 : 1;
      } catch (...) {
        return 2;
      }
    });
  });
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  SegmentRendezvous member(job, 1, 0);
  const int fd = object_of(1);
  try {
    member.exchange(std::vector<int>{0}, identity_of(1), fd);
    ADD_FAILURE() << "a member joined another user's leader";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("another user took rank 0's address"), std::string::npos) << e.what();
  }
  ::close(hold[1]);
  squatter.join();
  ::close(fd);
  for (int f : {ready[0], ready[1], hold[0]}) ::close(f);
}
