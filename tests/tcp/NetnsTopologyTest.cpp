// Network-namespace nodes for real: two namespaces on a bridge, a TCP connection from one to
// the other, then teardown and a check that nothing is left on the host.
#include "Netns.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace xmsg::launcher {
namespace {

std::string test_suffix(char tag) {
  char b[8];
  std::snprintf(b, sizeof b, "t%c%04x", tag, static_cast<unsigned>(::getpid()) & 0xffff);
  return b;
}

void skip_unless_supported() {
  std::string why;
  if (!NetnsTopology::supported(why)) GTEST_SKIP() << why;
}

// Child: enter `node`, run `body` (returns the exit code). Parent: the pid.
template <class F>
pid_t in_node(const NetnsTopology& topo, int node, F body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 99;
    try {
      topo.enter(node);
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child in node %d: %s\n", node, e.what());
    }
    ::_exit(code);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

sockaddr_in endpoint(const std::string& ip, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  ::inet_pton(AF_INET, ip.c_str(), &sa.sin_addr);
  return sa;
}

TEST(NetnsTopology, NodesTalkOverTheBridgeAndTeardownLeavesNothing) {
  skip_unless_supported();
  const std::string suffix = test_suffix('a');
  {
    NetnsTopology topo(2, suffix);
    EXPECT_EQ(topo.namespace_name(1), "xn" + suffix + "-1");
    EXPECT_NE(topo.address(0), topo.address(1));
    EXPECT_EQ(topo.address(0).rfind("198.18.", 0), 0u) << topo.address(0);
    EXPECT_FALSE(NetnsTopology::leftovers(suffix).empty());

    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const uint16_t port = 47001;
    // Node 0 listens on its own address and echoes one message back, upper-cased.
    pid_t server = in_node(topo, 0, [&] {
      ::close(ready[0]);
      int l = ::socket(AF_INET, SOCK_STREAM, 0);
      int one = 1;
      ::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in sa = endpoint(topo.address(0), port);
      if (::bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(l, 1) != 0) return 2;
      ::write(ready[1], "r", 1);
      pollfd p{l, POLLIN, 0};
      if (::poll(&p, 1, 20000) != 1) return 3;
      int c = ::accept(l, nullptr, nullptr);
      char buf[16] = {};
      ssize_t n = ::read(c, buf, sizeof buf);
      for (ssize_t i = 0; i < n; ++i) buf[i] = static_cast<char>(std::toupper(buf[i]));
      ::write(c, buf, static_cast<size_t>(n));
      ::close(c);
      return 0;
    });
    ::close(ready[1]);
    char r;
    ASSERT_EQ(::read(ready[0], &r, 1), 1) << "node 0 did not start listening";
    ::close(ready[0]);

    pid_t client = in_node(topo, 1, [&] {
      int s = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in sa = endpoint(topo.address(0), port);
      if (::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return 4;
      if (::write(s, "hello", 5) != 5) return 5;
      char buf[16] = {};
      size_t got = 0;
      while (got < 5) {
        ssize_t n = ::read(s, buf + got, sizeof buf - got);
        if (n <= 0) return 6;
        got += static_cast<size_t>(n);
      }
      return std::string(buf, 5) == "HELLO" ? 0 : 7;
    });
    EXPECT_EQ(wait_exit(client), 0) << "client in node 1 failed (4 connect, 5 write, 6 read, 7 wrong echo)";
    EXPECT_EQ(wait_exit(server), 0) << "server in node 0 failed (2 bind/listen, 3 no connection)";

    // The host namespace does not know the nodes' subnet.
    sockaddr_in sa = endpoint(topo.address(0), port);
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int rc = ::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    bool reached = rc == 0;
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{s, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      reached = ::poll(&p, 1, 300) == 1 && ::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
    ::close(s);
    EXPECT_FALSE(reached) << "the host reached a node address: the subnet leaked into the host";
  }
  EXPECT_EQ(NetnsTopology::leftovers(suffix), std::vector<std::string>{});
}

TEST(NetnsTopology, SweepRemovesWhatACrashedJobLeft) {
  skip_unless_supported();
  const std::string suffix = test_suffix('b');
  {
    NetnsTopology topo(3, suffix);
    EXPECT_EQ(NetnsTopology::leftovers(suffix).size(), 3u /*ns*/ + 3u /*veth*/ + 1u /*bridge*/);
    // As if the launcher had died: someone else cleans up by suffix.
    EXPECT_GE(NetnsTopology::sweep(suffix), 4);
    EXPECT_EQ(NetnsTopology::leftovers(suffix), std::vector<std::string>{});
  }  // the destructor copes with everything being gone already
  EXPECT_EQ(NetnsTopology::leftovers(suffix), std::vector<std::string>{});
}

TEST(NetnsTopology, RejectsBadArgumentsByName) {
  try {
    NetnsTopology topo(0, "zz");
    FAIL() << "accepted 0 nodes";
  } catch (const NetnsError& e) {
    EXPECT_NE(std::string(e.what()).find("--nodes"), std::string::npos) << e.what();
  }
  try {
    NetnsTopology topo(2, "Bad-Suffix");
    FAIL() << "accepted a bad suffix";
  } catch (const NetnsError& e) {
    EXPECT_NE(std::string(e.what()).find("Bad-Suffix"), std::string::npos) << e.what();
  }
}

TEST(NetnsTopology, EnterRejectsAMissingNode) {
  skip_unless_supported();
  const std::string suffix = test_suffix('c');
  NetnsTopology topo(1, suffix);
  try {
    topo.enter(5);
    FAIL() << "entered node 5 of 1";
  } catch (const NetnsError& e) {
    EXPECT_NE(std::string(e.what()).find("enter(5)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace xmsg::launcher
