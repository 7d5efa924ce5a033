// NodeSharedObject between threads and processes of this test: a nameless object's creator hands
// its memfd over an abstract socket to the callers that show the ticket's token, and only to
// them: a wrong token or another user's connection is dropped without counting as a joiner, a
// caller that never comes is an error after the patience given, and a gone creator is an error
// naming it. No /dev/shm name appears on the way.
#include <xmsg/transport/shm/NodeSharedObject.hpp>
#include <xmsg/transport/transport.hpp>

#include <gtest/gtest.h>

#include "as_nobody.hpp"

#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace xmsg::transport;
using namespace xmsg::transport::shm;

namespace {

std::string unique_name(const char* what) {
  return "/xmsg-nso-test." + std::to_string(::getpid()) + "-" + what;
}

bool dev_shm_has(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

// Connects to the socket of object `name` and sends `token`; returns the connection, or -1 when
// it cannot connect. A send the creator cut short (it may drop a caller before reading a byte)
// still returns the connection: the answer, none, is what counts.
int claim_with(const std::string& name, const uint64_t token[2]) {
  const int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  const std::string address = NodeSharedObject::address_of(name);
  std::memcpy(sa.sun_path + 1, address.data(), address.size());
  if (::connect(s, reinterpret_cast<const sockaddr*>(&sa),
                static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + address.size())) != 0) {
    ::close(s);
    return -1;
  }
  (void)::send(s, token, 2 * sizeof(uint64_t), MSG_NOSIGNAL);
  return s;
}

// Whether the creator answered connection `s` with a descriptor (it waits for the answer or
// the end of the connection).
bool handed_a_descriptor(int s) {
  char data[64];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{data, sizeof data};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(s, &msg, MSG_CMSG_CLOEXEC) < 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_type == SCM_RIGHTS) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      ::close(fd);
      return true;
    }
  return false;
}

}  // namespace

TEST(NodeSharedObject, JoinersMapTheCreatorsMemoryAndNothingIsNamed) {
  const std::string name = unique_name("share");
  constexpr int kJoiners = 5;
  constexpr size_t kBytes = 1 << 20;
  NodeSharedObject creator = NodeSharedObject::create(name, kBytes, true);
  ASSERT_TRUE(creator.nameless());
  static_cast<uint64_t*>(creator.data())[0] = 4242;
  const JoinTicket ticket = creator.ticket();
  std::vector<std::string> failures(kJoiners);
  std::vector<NodeSharedObject> joined(kJoiners);
  std::vector<std::thread> joiners;
  for (int j = 0; j < kJoiners; ++j)
    joiners.emplace_back([&, j] {
      try {
        joined[static_cast<size_t>(j)] = NodeSharedObject::join(name, kBytes, ticket, j % 2 == 0);
      } catch (const TransportError& e) {
        failures[static_cast<size_t>(j)] = e.what();
      }
    });
  creator.share(kJoiners, {}, 10000);
  for (auto& t : joiners) t.join();
  for (int j = 0; j < kJoiners; ++j) {
    ASSERT_EQ(failures[static_cast<size_t>(j)], "") << "joiner " << j;
    const auto& o = joined[static_cast<size_t>(j)];
    ASSERT_EQ(o.size(), kBytes);
    EXPECT_EQ(static_cast<uint64_t*>(o.data())[0], 4242u) << "joiner " << j << " mapped something else";
    EXPECT_NE(o.data(), creator.data()) << "a separate mapping of the same memory";
  }
  static_cast<uint64_t*>(joined[0].data())[1] = 77;
  EXPECT_EQ(static_cast<uint64_t*>(creator.data())[1], 77u);
  EXPECT_FALSE(dev_shm_has(name));
  creator.done_sharing();
}

TEST(NodeSharedObject, WaitsPauseAsTheCallerSays) {
  // Under MPI_THREAD_MULTIPLE a creator and a joiner must not block while they hold the MPI
  // layer's lock: each waits by calling its Pause (the runtime's progress and lock hand-over).
  const std::string name = unique_name("pause");
  NodeSharedObject creator = NodeSharedObject::create(name, 4096, true);
  std::atomic<int> creator_pauses{0}, joiner_pauses{0};
  std::string failure = "not joined";
  std::thread joiner([&] {
    // Late, so the creator has to wait: it pauses meanwhile.
    while (creator_pauses.load() < 10) std::this_thread::yield();
    try {
      NodeSharedObject::join(name, 4096, creator.ticket(), false, [&] { ++joiner_pauses; });
      failure.clear();
    } catch (const TransportError& e) {
      failure = e.what();
    }
  });
  creator.share(1, [&] { ++creator_pauses; }, 10000);
  joiner.join();
  EXPECT_EQ(failure, "");
  EXPECT_GE(creator_pauses.load(), 10);
}

TEST(NodeSharedObject, AWrongTokenIsDroppedAndNotCounted) {
  const std::string name = unique_name("token");
  NodeSharedObject creator = NodeSharedObject::create(name, 4096, true);
  const JoinTicket ticket = creator.ticket();
  const uint64_t guess[2] = {ticket.token[0] ^ 1, ticket.token[1]};
  const int intruder = claim_with(name, guess);
  ASSERT_GE(intruder, 0);
  std::string failure = "not joined";
  std::thread joiner([&] {
    try {
      NodeSharedObject::join(name, 4096, ticket, false);
      failure.clear();
    } catch (const TransportError& e) {
      failure = e.what();
    }
  });
  creator.share(1, {}, 10000);  // returns only once the true joiner has it: the intruder did not count
  joiner.join();
  EXPECT_EQ(failure, "");
  EXPECT_FALSE(handed_a_descriptor(intruder)) << "a caller with the wrong token got the descriptor";
  ::close(intruder);
}

TEST(NodeSharedObject, AnotherUsersConnectionIsDroppedEvenWithTheToken) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  if (!::getpwnam("nobody")) GTEST_SKIP() << "no user nobody";
  const std::string name = unique_name("user");
  NodeSharedObject creator = NodeSharedObject::create(name, 4096, true);
  const JoinTicket ticket = creator.ticket();
  std::atomic<bool> served{false};
  std::thread serving([&] {
    creator.share(1, {}, 10000);
    served = true;
  });
  // The other user shows the right token (as if it had read it somewhere) and waits for the
  // answer: it must get none, and the creator must still be waiting for its one joiner.
  const int got = as_nobody([&] {
    const int s = claim_with(name, ticket.token);
    if (s < 0) return 5;
    return handed_a_descriptor(s) ? 6 : 0;
  });
  EXPECT_EQ(got, 0) << (got == 6 ? "another user got the descriptor" : "the other user could not connect");
  EXPECT_FALSE(served.load());
  NodeSharedObject::join(name, 4096, ticket, false);
  serving.join();
  EXPECT_TRUE(served.load());
}

TEST(NodeSharedObject, AJoinerThatNeverComesIsAnErrorAfterThePatienceGiven) {
  const std::string name = unique_name("late");
  NodeSharedObject creator = NodeSharedObject::create(name, 4096, true);
  try {
    creator.share(2, {}, 200);
    ADD_FAILURE() << "share returned without its joiners";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 2 ranks did not come"), std::string::npos) << e.what();
  }
  // The socket is gone with the failure: a late joiner gets an error, not a hang.
  try {
    NodeSharedObject::join(name, 4096, creator.ticket(), false);
    ADD_FAILURE() << "joined after the creator gave up";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach the creator of " + name), std::string::npos) << e.what();
  }
}

TEST(NodeSharedObject, ALongNameIsHashedIntoTheAddress) {
  const std::string name = "/xmsg-" + std::string(200, 'j') + "-coll-1-0";
  const std::string address = NodeSharedObject::address_of(name);
  EXPECT_LE(address.size(), sizeof(sockaddr_un::sun_path) - 1);
  EXPECT_NE(address, NodeSharedObject::address_of("/xmsg-" + std::string(200, 'j') + "-coll-2-0"));
  NodeSharedObject creator = NodeSharedObject::create(name, 4096, true);
  std::thread joiner([&] { NodeSharedObject::join(name, 4096, creator.ticket(), false); });
  creator.share(1, {}, 10000);
  joiner.join();
}

TEST(NodeSharedObject, NamedObjectsNeedNoSharing) {
  const std::string name = unique_name("named");
  NodeSharedObject creator = NodeSharedObject::create(name, 4096, false);
  EXPECT_FALSE(creator.nameless());
  EXPECT_TRUE(dev_shm_has(name));
  creator.share(3, {}, 100);  // nothing to hand over: returns at once
  NodeSharedObject joined = NodeSharedObject::join(name, 4096, creator.ticket(), false);
  creator.done_sharing();
  EXPECT_FALSE(dev_shm_has(name));
  static_cast<uint64_t*>(creator.data())[0] = 9;
  EXPECT_EQ(static_cast<uint64_t*>(joined.data())[0], 9u);
}
