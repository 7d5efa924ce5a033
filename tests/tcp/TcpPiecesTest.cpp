// The tcp transport's pieces on their own: hashing, handshake encoding and proofs, framing,
// the send queue and the environment settings.
#include "Frame.hpp"
#include "Handshake.hpp"
#include "SendQueue.hpp"
#include "Sha256.hpp"
#include "TcpConfig.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

namespace xmsg::transport::tcp {
namespace {

std::string hex(const Digest& d) {
  std::string out;
  char b[3];
  for (uint8_t x : d) std::snprintf(b, sizeof b, "%02x", x), out += b;
  return out;
}
std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

TEST(Sha256, MatchesFipsVectors) {
  EXPECT_EQ(hex(sha256(bytes_of(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256(bytes_of("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256(bytes_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a' fed in uneven pieces exercises the block buffering.
  Sha256 s;
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, chunk.size());
    s.update(bytes_of(chunk.substr(0, n)));
    left -= n;
  }
  EXPECT_EQ(hex(s.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(HmacSha256, MatchesRfc4231) {
  std::string key1(20, '\x0b');
  EXPECT_EQ(hex(hmac_sha256(bytes_of(key1), bytes_of("Hi There"))),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex(hmac_sha256(bytes_of("Jefe"), bytes_of("what do ya want for nothing?"))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block is hashed first.
  std::string key6(131, '\xaa');
  EXPECT_EQ(hex(hmac_sha256(bytes_of(key6), bytes_of("Test Using Larger Than Block-Size Key - Hash Key First"))),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Handshake, EncodesAndDecodesEveryField) {
  HandshakeMessage m;
  m.type = HandshakeType::kWelcome;
  m.from = 7, m.to = 123456, m.reason = 2;
  m.nonce = random_nonce();
  for (size_t i = 0; i < m.mac.size(); ++i) m.mac[i] = uint8_t(i * 7);
  auto wire = m.encode();
  std::string error;
  auto back = HandshakeMessage::decode(wire, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->type, m.type);
  EXPECT_EQ(back->from, 7u);
  EXPECT_EQ(back->to, 123456u);
  EXPECT_EQ(back->reason, 2u);
  EXPECT_EQ(back->nonce, m.nonce);
  EXPECT_EQ(back->mac, m.mac);
}

TEST(Handshake, RejectsForeignBytes) {
  std::array<uint8_t, HandshakeMessage::kWireSize> junk{};
  std::memcpy(junk.data(), "GET / HTTP/1.0\r\n", 16);
  std::string error;
  EXPECT_FALSE(HandshakeMessage::decode(junk, error));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;

  HandshakeMessage m;
  auto wire = m.encode();
  wire[4] = 99;  // version
  EXPECT_FALSE(HandshakeMessage::decode(wire, error));
  EXPECT_NE(error.find("version"), std::string::npos) << error;
  wire = m.encode();
  wire[6] = 77;  // type
  EXPECT_FALSE(HandshakeMessage::decode(wire, error));
  EXPECT_NE(error.find("type"), std::string::npos) << error;
}

TEST(JobSecretProofs, DependOnSecretRolesRanksAndNonces) {
  JobSecret a("secret-a"), b("secret-b");
  Nonce n1 = random_nonce(), n2 = random_nonce();
  EXPECT_NE(n1, n2);
  Digest base = a.connector_proof(1, 2, n1, n2);
  EXPECT_TRUE(digests_equal(base, a.connector_proof(1, 2, n1, n2)));
  EXPECT_FALSE(digests_equal(base, b.connector_proof(1, 2, n1, n2)));  // other job
  EXPECT_FALSE(digests_equal(base, a.acceptor_proof(1, 2, n1, n2)));   // reflected role
  EXPECT_FALSE(digests_equal(base, a.connector_proof(3, 2, n1, n2)));  // other rank
  EXPECT_FALSE(digests_equal(base, a.connector_proof(1, 2, n2, n1)));  // replayed nonces
  EXPECT_EQ(random_secret().size(), 64u);
  EXPECT_NE(random_secret(), random_secret());
}

std::vector<std::byte> frame_bytes(uint32_t payload_size, uint8_t fill) {
  FrameHeader h{FrameType::kData, payload_size, {3, 4, -5, MessageKind::kEager, 0, 0, payload_size}};
  std::vector<std::byte> out(sizeof h + payload_size, std::byte{fill});
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

TEST(Frame, ParsesWholeFramesAndAsksForTheRest) {
  auto f = frame_bytes(100, 0x5a);
  auto partial = parse_frame(std::span(f).first(10), 1000);
  EXPECT_EQ(partial.status, ParsedFrame::Status::kNeedMore);
  EXPECT_EQ(partial.need, sizeof(FrameHeader));
  partial = parse_frame(std::span(f).first(50), 1000);
  EXPECT_EQ(partial.status, ParsedFrame::Status::kNeedMore);
  EXPECT_EQ(partial.need, sizeof(FrameHeader) + 100);
  auto whole = parse_frame(f, 1000);
  ASSERT_EQ(whole.status, ParsedFrame::Status::kComplete);
  EXPECT_EQ(whole.header.wire.source, 3u);
  EXPECT_EQ(whole.header.wire.tag, -5);
  ASSERT_EQ(whole.payload.size(), 100u);
  EXPECT_EQ(whole.payload[99], std::byte{0x5a});
}

TEST(Frame, RejectsOversizedAndUnknownFrames) {
  auto f = frame_bytes(2000, 0);
  auto r = parse_frame(f, 1000);
  EXPECT_EQ(r.status, ParsedFrame::Status::kInvalid);
  EXPECT_NE(r.error.find("exceeds"), std::string::npos) << r.error;
  f[0] = std::byte{0x11};
  r = parse_frame(f, 100000);
  EXPECT_EQ(r.status, ParsedFrame::Status::kInvalid);
  EXPECT_NE(r.error.find("frame type"), std::string::npos) << r.error;
}

TEST(ReceiveBuffer, ReassemblesFramesFedInOddPieces) {
  std::vector<std::byte> stream;
  for (uint32_t i = 0; i < 20; ++i) {
    auto f = frame_bytes(i * 997, uint8_t(i));
    stream.insert(stream.end(), f.begin(), f.end());
  }
  ReceiveBuffer rx(64);
  size_t fed = 0, piece = 1;
  uint32_t next = 0;
  while (next < 20) {
    ParsedFrame p = parse_frame(rx.readable(), 1 << 20);
    ASSERT_NE(p.status, ParsedFrame::Status::kInvalid) << p.error;
    if (p.status == ParsedFrame::Status::kComplete) {
      EXPECT_EQ(p.payload.size(), next * 997u);
      if (!p.payload.empty()) {
        EXPECT_EQ(p.payload.back(), std::byte(uint8_t(next)));
      }
      rx.consume(p.need);
      ++next;
      continue;
    }
    ASSERT_LT(fed, stream.size());
    size_t n = std::min(piece, stream.size() - fed);
    auto room = rx.writable(n);
    std::memcpy(room.data(), stream.data() + fed, n);
    rx.produced(n);
    fed += n;
    piece = piece * 3 % 5003 + 1;
  }
  EXPECT_EQ(fed, stream.size());
  EXPECT_TRUE(rx.readable().empty());
}

// Sends everything queued through a socketpair, at most `max_iov` blocks per sendmsg, and
// collects what arrives on the other end.
void drain_through_socket(SendQueue& q, int max_iov, std::vector<std::byte>* received) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  iovec iov[8];
  ASSERT_LE(max_iov, 8);
  while (!q.empty()) {
    const int n = q.gather(iov, max_iov);
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    const ssize_t sent = ::sendmsg(sv[0], &msg, MSG_DONTWAIT);
    if (sent <= 0) {
      ::close(sv[0]);
      ::close(sv[1]);
      FAIL() << "sendmsg returned " << sent;
    }
    q.consume(static_cast<size_t>(sent));
    std::vector<std::byte> buf(static_cast<size_t>(sent));
    size_t got = 0;
    while (got < buf.size()) {
      const ssize_t r = ::read(sv[1], buf.data() + got, buf.size() - got);
      if (r <= 0) {
        ::close(sv[0]);
        ::close(sv[1]);
        FAIL() << "read returned " << r;
      }
      got += static_cast<size_t>(r);
    }
    received->insert(received->end(), buf.begin(), buf.end());
  }
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(SendQueue, GathersInBlocksAndDrainsThroughASocket) {
  SendQueue q;
  std::vector<std::byte> data(3 * SendQueue::kBlockBytes + 12345);
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(uint8_t(i * 31 + 7));
  q.append(std::span(data).first(100));
  q.append(std::span(data).subspan(100));
  EXPECT_EQ(q.bytes(), data.size());
  iovec iov[8];
  int n = q.gather(iov, 8);
  EXPECT_EQ(n, 4);
  EXPECT_LE(iov[0].iov_len, SendQueue::kBlockBytes);

  std::vector<std::byte> received;
  ASSERT_NO_FATAL_FAILURE(drain_through_socket(q, 2, &received));
  EXPECT_EQ(received, data);
}

TEST(SendQueue, SendsBorrowedRangesWithoutCopyingThemInOrder) {
  SendQueue q;
  std::vector<std::byte> borrowed(200000);
  for (size_t i = 0; i < borrowed.size(); ++i) borrowed[i] = std::byte(uint8_t(i * 7 + 1));
  const std::vector<std::byte> head(10, std::byte{0xa1}), tail(5, std::byte{0xb2});
  q.append(head);
  q.append_borrowed(borrowed);
  q.append(tail);  // must not land in (or overwrite) the borrowed block
  EXPECT_EQ(q.bytes(), head.size() + borrowed.size() + tail.size());
  EXPECT_EQ(q.copied_bytes(), head.size() + tail.size());
  iovec iov[8];
  ASSERT_EQ(q.gather(iov, 8), 3);
  EXPECT_EQ(iov[1].iov_base, borrowed.data());  // the caller's memory itself, not a copy

  std::vector<std::byte> received;
  ASSERT_NO_FATAL_FAILURE(drain_through_socket(q, 8, &received));
  EXPECT_EQ(q.copied_bytes(), 0u);
  std::vector<std::byte> expected;
  expected.reserve(head.size() + borrowed.size() + tail.size());
  expected.insert(expected.end(), head.begin(), head.end());
  expected.insert(expected.end(), borrowed.begin(), borrowed.end());
  expected.insert(expected.end(), tail.begin(), tail.end());
  EXPECT_EQ(received, expected);
}

TEST(Frame, ReadFramesHaveTheirFixedPayloadSize) {
  std::vector<std::byte> f(sizeof(FrameHeader) + sizeof(ReadRequest));
  FrameHeader h{FrameType::kReadRequest, sizeof(ReadRequest), {}};
  std::memcpy(f.data(), &h, sizeof h);
  EXPECT_EQ(parse_frame(f, 1000).status, ParsedFrame::Status::kComplete);
  h.payload_bytes = 8;
  std::memcpy(f.data(), &h, sizeof h);
  auto r = parse_frame(f, 1000);
  EXPECT_EQ(r.status, ParsedFrame::Status::kInvalid);
  EXPECT_NE(r.error.find("read frame"), std::string::npos) << r.error;
}

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char* name_;
};

// TcpConfig's member initialisers are the defaults of a config built by hand (the tests do);
// from_environment() takes the parameter table's. Both must agree.
TEST(TcpConfig, DefaultsAreTheParameterTables) {
  for (const char* name : {"XMSG_TCP_MAX_PAYLOAD", "XMSG_TCP_QUEUE_BYTES", "XMSG_TCP_RNDV_PUSH", "XMSG_TCP_PUSH_MAX",
                           "XMSG_TCP_PUSH_WHOLE", "XMSG_TCP_PUSH_LARGE", "XMSG_TCP_PUSH_BUDGET", "XMSG_TCP_LAND_MIN",
                           "XMSG_TCP_HANDSHAKE_TIMEOUT_MS", "XMSG_TCP_CONNECT_TIMEOUT_MS", "XMSG_TCP_POLL"})
    ::unsetenv(name);
  const TcpConfig constants;
  const TcpConfig table = TcpConfig::from_environment();
  EXPECT_EQ(table.max_payload, constants.max_payload);
  EXPECT_EQ(table.queue_limit, constants.queue_limit);
  EXPECT_EQ(table.rendezvous_push, constants.rendezvous_push);
  EXPECT_EQ(table.push_max_message, constants.push_max_message);
  EXPECT_EQ(table.push_whole_message, constants.push_whole_message);
  EXPECT_EQ(table.push_large_message, constants.push_large_message);
  EXPECT_EQ(table.push_budget, constants.push_budget);
  EXPECT_EQ(table.land_min, constants.land_min);
  EXPECT_EQ(table.handshake_timeout, constants.handshake_timeout);
  EXPECT_EQ(table.connect_timeout, constants.connect_timeout);
  EXPECT_EQ(table.poll_by_recv, constants.poll_by_recv);
}

TEST(TcpConfig, ReadsTheEnvironmentAndNamesBadVariables) {
  {
    ScopedEnv a("XMSG_TCP_QUEUE_BYTES", "8388608"), b("XMSG_TCP_HANDSHAKE_TIMEOUT_MS", "250"),
        d("XMSG_TCP_CONNECT_TIMEOUT_MS", "1500");
    auto c = TcpConfig::from_environment();
    EXPECT_EQ(c.queue_limit, 8388608u);
    EXPECT_EQ(c.handshake_timeout.count(), 250);
    EXPECT_EQ(c.connect_timeout.count(), 1500);
  }
  EXPECT_EQ(TcpConfig::from_environment().connect_timeout.count(), 30000);
  {
    ScopedEnv a("XMSG_TCP_CONNECT_TIMEOUT_MS", "soon");
    try {
      TcpConfig::from_environment();
      FAIL() << "accepted XMSG_TCP_CONNECT_TIMEOUT_MS=soon";
    } catch (const TransportError& e) {
      EXPECT_NE(std::string(e.what()).find("XMSG_TCP_CONNECT_TIMEOUT_MS"), std::string::npos) << e.what();
    }
  }
  {
    ScopedEnv a("XMSG_TCP_QUEUE_BYTES", "lots");
    try {
      TcpConfig::from_environment();
      FAIL() << "accepted XMSG_TCP_QUEUE_BYTES=lots";
    } catch (const TransportError& e) {
      EXPECT_NE(std::string(e.what()).find("XMSG_TCP_QUEUE_BYTES"), std::string::npos) << e.what();
    }
  }
  {
    ScopedEnv a("XMSG_TCP_MAX_PAYLOAD", "1048576"), b("XMSG_TCP_QUEUE_BYTES", "65536");
    EXPECT_THROW(TcpConfig::from_environment(), TransportError);
  }
  EXPECT_TRUE(TcpConfig::from_environment().poll_by_recv);
  {
    ScopedEnv a("XMSG_TCP_POLL", "epoll");
    EXPECT_FALSE(TcpConfig::from_environment().poll_by_recv);
  }
  {
    ScopedEnv a("XMSG_TCP_POLL", "sometimes");
    try {
      TcpConfig::from_environment();
      FAIL() << "accepted XMSG_TCP_POLL=sometimes";
    } catch (const TransportError& e) {
      EXPECT_NE(std::string(e.what()).find("XMSG_TCP_POLL"), std::string::npos) << e.what();
    }
  }
}

TEST(TcpConfig, CongestionControlIsCheckedAgainstTheKernel) {
  // reno is built into every Linux kernel and always allowed, so the default always applies.
  EXPECT_EQ(TcpConfig::from_environment().congestion, "reno");
  {
    ScopedEnv a("XMSG_TCP_CONGESTION", "system");
    EXPECT_EQ(TcpConfig::from_environment().congestion, "");
  }
  {
    ScopedEnv a("XMSG_TCP_CONGESTION", "reno");
    EXPECT_EQ(TcpConfig::from_environment().congestion, "reno");
  }
  {
    ScopedEnv a("XMSG_TCP_CONGESTION", "no-such-cc");
    try {
      TcpConfig::from_environment();
      FAIL() << "accepted XMSG_TCP_CONGESTION=no-such-cc";
    } catch (const TransportError& e) {
      EXPECT_NE(std::string(e.what()).find("XMSG_TCP_CONGESTION='no-such-cc'"), std::string::npos) << e.what();
    }
  }
}

TEST(TcpConfig, ChoosesAnAddress) {
  EXPECT_EQ(choose_listen_address("10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(choose_listen_address("lo"), "127.0.0.1");
  try {
    choose_listen_address("no-such-if0");
    FAIL() << "accepted a missing interface";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-if0"), std::string::npos) << e.what();
  }
  std::string any = choose_listen_address("");
  in_addr a{};
  EXPECT_EQ(::inet_pton(AF_INET, any.c_str(), &a), 1) << any;
}

// The job secret file (XMSG_JOB_SECRET_FILE): read as written, refused with a message naming
// the variable and the path when anyone but its user may reach it, or it holds nothing.
class SecretFile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(::mkdtemp(dir_), nullptr);
    path_ = std::string(dir_) + "/secret";
  }
  void TearDown() override {
    ::unlink(path_.c_str());
    ::rmdir((path_ + ".d").c_str());
    ::rmdir(dir_);
  }
  void write(const std::string& content, mode_t mode) {
    ::unlink(path_.c_str());
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ASSERT_EQ(::fchmod(fd, mode), 0);
    ::close(fd);
  }
  std::string refusal(const std::string& path) {
    try {
      read_secret_file(path);
    } catch (const TransportError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("XMSG_JOB_SECRET_FILE='" + path + "'"), std::string::npos) << what;
      return what;
    }
    ADD_FAILURE() << "read_secret_file accepted " << path;
    return {};
  }
  char dir_[64] = "/tmp/xmsg-secret-unit-XXXXXX";
  std::string path_;
};

TEST_F(SecretFile, ReadsThePrivateFileAsWritten) {
  write("0123456789abcdef0123456789abcdef", 0600);
  EXPECT_EQ(read_secret_file(path_), "0123456789abcdef0123456789abcdef");
  write("0123456789abcdef0123456789abcdef\n", 0400);  // a trailing newline is not part of it
  EXPECT_EQ(read_secret_file(path_), "0123456789abcdef0123456789abcdef");
}

TEST_F(SecretFile, RefusesFilesOthersMayReach) {
  for (mode_t mode : {0640, 0604, 0620, 0602, 0610, 0666}) {
    write("0123456789abcdef0123456789abcdef", mode);
    const std::string why = refusal(path_);
    EXPECT_NE(why.find("group or others"), std::string::npos) << why;
  }
}

TEST_F(SecretFile, RefusesMissingEmptyAndOtherKindsOfFiles) {
  EXPECT_NE(refusal(path_).find("cannot open"), std::string::npos);
  write("", 0600);
  EXPECT_NE(refusal(path_).find("empty"), std::string::npos);
  write("\n", 0600);
  EXPECT_NE(refusal(path_).find("empty"), std::string::npos);
  write(std::string(5000, 'a'), 0600);
  EXPECT_NE(refusal(path_).find("longer than"), std::string::npos);
  ASSERT_EQ(::mkdir((path_ + ".d").c_str(), 0700), 0);
  EXPECT_NE(refusal(path_ + ".d").find("not a regular file"), std::string::npos);
}

TEST_F(SecretFile, RefusesAFileOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  write("0123456789abcdef0123456789abcdef", 0600);
  ASSERT_EQ(::chown(path_.c_str(), 65534, 65534), 0);
  const std::string why = refusal(path_);
  EXPECT_NE(why.find("owned by uid 65534"), std::string::npos) << why;
}

}  // namespace
}  // namespace xmsg::transport::tcp
