// The lazy wire-up's out-of-band exchange over real loopback TCP sockets: requests answered by a
// handler, both sides starting at once, rejects, a responder that is gone, one that never answers,
// and garbage on the port.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ConnectionManager.hpp"

using namespace xmsg::verbs;
using namespace std::chrono_literals;

namespace {

const std::uint32_t kLoopback = htonl(INADDR_LOOPBACK);

ConnectionMessage request_from(int from, int to, std::uint32_t qpn, std::uint64_t cookie) {
  ConnectionMessage m{};
  m.magic = kConnectionMagic;
  m.version = kConnectionVersion;
  m.kind = ConnectionMessageKind::request;
  m.from_rank = static_cast<std::uint32_t>(from);
  m.to_rank = static_cast<std::uint32_t>(to);
  m.qpn = qpn;
  m.cookie = cookie;
  return m;
}

// A rank: answers requests naming its cookie with qpn = 1000 + requester, records replies.
struct Rank : ConnectionManager::Handler {
  explicit Rank(int r) : rank(r), cm(kLoopback) {}
  int rank;
  std::uint64_t cookie = 0x5eed0000u + static_cast<std::uint64_t>(rank);
  ConnectionManager cm;
  std::map<int, ConnectionMessage> requests;  // by requester
  std::map<int, ConnectionMessage> replies;   // by tag
  std::map<int, std::string> failures;        // by tag
  ConnectionMessage on_request(const ConnectionMessage& request) override {
    requests[static_cast<int>(request.from_rank)] = request;
    ConnectionMessage reply = request;
    reply.kind = ConnectionMessageKind::accept;
    reply.from_rank = static_cast<std::uint32_t>(rank);
    reply.to_rank = request.from_rank;
    reply.qpn = 1000 + request.from_rank;
    if (request.cookie != cookie) {
      reply.kind = ConnectionMessageKind::reject;
      reply.reject_reason = static_cast<std::uint16_t>(ConnectionReject::bad_cookie);
    }
    return reply;
  }
  void on_reply(int tag, const ConnectionMessage& reply) override { replies[tag] = reply; }
  void on_failure(int tag, const std::string& reason) override { failures[tag] = reason; }
  bool ended(int tag) const { return replies.count(tag) + failures.count(tag) > 0; }
};

void pump_until(const std::function<bool()>& done, std::initializer_list<Rank*> ranks) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    for (Rank* r : ranks) r->cm.poll(*r);
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the exchange did not end";
  }
}

}  // namespace

TEST(ConnectionManager, RequestGetsTheHandlersReply) {
  Rank a(0), b(1);
  a.cm.start(7, request_from(0, 1, 11, b.cookie), b.cm.ipv4(), b.cm.port(), 5s);
  EXPECT_EQ(a.cm.in_flight(), 1);
  pump_until([&] { return a.ended(7); }, {&a, &b});
  ASSERT_EQ(a.failures.count(7), 0u) << a.failures[7];
  EXPECT_EQ(a.replies[7].kind, ConnectionMessageKind::accept);
  EXPECT_EQ(a.replies[7].from_rank, 1u);
  EXPECT_EQ(a.replies[7].qpn, 1000u);
  EXPECT_EQ(b.requests.at(0).qpn, 11u);
  EXPECT_EQ(a.cm.in_flight(), 0);
}

TEST(ConnectionManager, BothSidesStartAtOnce) {
  Rank a(0), b(1);
  a.cm.start(1, request_from(0, 1, 11, b.cookie), b.cm.ipv4(), b.cm.port(), 5s);
  b.cm.start(0, request_from(1, 0, 22, a.cookie), a.cm.ipv4(), a.cm.port(), 5s);
  pump_until([&] { return a.ended(1) && b.ended(0); }, {&a, &b});
  EXPECT_EQ(a.replies.at(1).qpn, 1000u);
  EXPECT_EQ(b.replies.at(0).qpn, 1001u);
  EXPECT_EQ(a.requests.at(1).qpn, 22u);
  EXPECT_EQ(b.requests.at(0).qpn, 11u);
}

TEST(ConnectionManager, ManyRequestersAtOneResponder) {
  Rank responder(0);
  std::vector<std::unique_ptr<Rank>> senders;
  for (int r = 1; r <= 20; ++r) {
    senders.push_back(std::make_unique<Rank>(r));
    senders.back()->cm.start(0, request_from(r, 0, static_cast<std::uint32_t>(r), responder.cookie),
                             responder.cm.ipv4(), responder.cm.port(), 5s);
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    responder.cm.poll(responder);
    bool all = true;
    for (auto& s : senders) {
      s->cm.poll(*s);
      all = all && s->ended(0);
    }
    if (all) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  }
  EXPECT_EQ(responder.requests.size(), 20u);
  for (auto& s : senders) EXPECT_EQ(s->replies.at(0).qpn, 1000u + static_cast<std::uint32_t>(s->rank));
}

TEST(ConnectionManager, RejectReachesTheRequester) {
  Rank a(0), b(1);
  a.cm.start(3, request_from(0, 1, 11, /*cookie=*/12345), b.cm.ipv4(), b.cm.port(), 5s);
  pump_until([&] { return a.ended(3); }, {&a, &b});
  ASSERT_EQ(a.replies.count(3), 1u);
  EXPECT_EQ(a.replies[3].kind, ConnectionMessageKind::reject);
  EXPECT_EQ(static_cast<ConnectionReject>(a.replies[3].reject_reason), ConnectionReject::bad_cookie);
  EXPECT_NE(describe(ConnectionReject::bad_cookie).find("cookie"), std::string::npos);
}

TEST(ConnectionManager, ResponderGoneFailsAtOnceNamingTheAddress) {
  Rank a(0);
  std::uint32_t ip = 0;
  std::uint16_t port = 0;
  {
    Rank gone(1);
    ip = gone.cm.ipv4();
    port = gone.cm.port();
  }  // its listening socket is closed: the port refuses
  const auto start = std::chrono::steady_clock::now();
  try {
    a.cm.start(1, request_from(0, 1, 11, 0), ip, port, 30s);
  } catch (const std::runtime_error& e) {
    // Linux may refuse a loopback connect at once, before poll() is ever called.
    EXPECT_NE(std::string(e.what()).find(ConnectionManager::address_text(ip, port)), std::string::npos);
    return;
  }
  pump_until([&] { return a.ended(1); }, {&a});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "a refused connection must not wait for the timeout";
  ASSERT_EQ(a.failures.count(1), 1u);
  EXPECT_NE(a.failures[1].find(ConnectionManager::address_text(ip, port)), std::string::npos) << a.failures[1];
}

TEST(ConnectionManager, SilentResponderTimesOut) {
  Rank a(0), b(1);  // b never polls: its kernel accepts, nobody answers
  a.cm.start(1, request_from(0, 1, 11, b.cookie), b.cm.ipv4(), b.cm.port(), 300ms);
  const auto start = std::chrono::steady_clock::now();
  pump_until([&] { return a.ended(1); }, {&a});
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
  ASSERT_EQ(a.failures.count(1), 1u);
  EXPECT_NE(a.failures[1].find("no reply in time"), std::string::npos) << a.failures[1];
}

TEST(ConnectionManager, GarbageOnThePortIsDroppedAndRealRequestsStillWork) {
  Rank a(0), b(1);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = b.cm.ipv4();
  sa.sin_port = b.cm.port();
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  char junk[sizeof(ConnectionMessage)];
  std::memset(junk, 'x', sizeof junk);
  ASSERT_EQ(::send(fd, junk, sizeof junk, 0), static_cast<ssize_t>(sizeof junk));
  a.cm.start(1, request_from(0, 1, 11, b.cookie), b.cm.ipv4(), b.cm.port(), 5s);
  pump_until([&] { return a.ended(1); }, {&a, &b});
  EXPECT_EQ(a.replies.at(1).kind, ConnectionMessageKind::accept);
  EXPECT_EQ(b.requests.size(), 1u);
  char byte;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "the junk connection is closed without an answer";
  ::close(fd);
}
