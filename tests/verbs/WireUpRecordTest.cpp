#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "VerbsLimits.hpp"
#include "WireUpRecord.hpp"

namespace {

using xmsg::verbs::WireUpQp;
using xmsg::verbs::WireUpRecord;

std::string runtime_error_message(auto&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "<no std::runtime_error thrown>";
}

WireUpRecord sample(std::size_t qps) {
  WireUpRecord record;
  record.header.mode = 1;
  record.header.link_layer = 2;
  record.header.path_mtu = 3;
  record.header.lid = 0x1234;
  record.header.port = 1;
  record.header.gid_index = 1;
  record.header.srq_num = 0xabcdef;
  for (std::size_t i = 0; i < 16; ++i) record.header.gid[i] = static_cast<std::uint8_t>(i * 7);
  for (std::size_t i = 0; i < qps; ++i) record.qps.push_back({static_cast<std::uint32_t>(100 + i), static_cast<std::uint32_t>(i * 3)});
  return record;
}

TEST(WireUpRecord, RoundTripsAndHasThePublishedSize) {
  for (std::size_t n : {0u, 1u, 7u, 1998u}) {
    const auto record = sample(n);
    const auto bytes = record.encode();
    ASSERT_EQ(bytes.size(), WireUpRecord::encoded_size(n));
    ASSERT_EQ(bytes.size(), 36 + 8 * n);
    const auto back = WireUpRecord::decode(bytes, 5);
    EXPECT_EQ(back.header.qp_count, n);
    EXPECT_EQ(back.header.srq_num, 0xabcdefu);
    EXPECT_EQ(back.header.lid, 0x1234);
    EXPECT_EQ(back.header.gid, record.header.gid);
    ASSERT_EQ(back.qps.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(back.qps[i].qpn, record.qps[i].qpn);
      EXPECT_EQ(back.qps[i].psn, record.qps[i].psn);
    }
  }
}

TEST(WireUpRecord, RejectsDamagedRecordsNamingThePublisher) {
  auto bytes = sample(3).encode();
  auto truncated = bytes;
  truncated.resize(20);
  EXPECT_NE(runtime_error_message([&] { WireUpRecord::decode(truncated, 7); }).find("rank 7"), std::string::npos);
  auto short_list = bytes;
  short_list.pop_back();
  EXPECT_NE(runtime_error_message([&] { WireUpRecord::decode(short_list, 8); }).find("announces 3 QPs"),
            std::string::npos);
  auto bad_magic = bytes;
  bad_magic[0] = std::byte{0};
  EXPECT_NE(runtime_error_message([&] { WireUpRecord::decode(bad_magic, 9); }).find("magic"), std::string::npos);
  auto bad_version = bytes;
  bad_version[4] = std::byte{99};
  EXPECT_NE(runtime_error_message([&] { WireUpRecord::decode(bad_version, 9); }).find("version"), std::string::npos);
}

// Restores one environment variable when the test ends, so tests never leak settings.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string invalid_argument_message(auto&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no std::invalid_argument thrown>";
}

TEST(VerbsLimits, ReadsTheEnvironmentAndNamesBadVariables) {
  {
    ScopedEnv depth("XMSG_VERBS_SRQ_DEPTH", "1024");
    ScopedEnv eager("XMSG_VERBS_EAGER_BUFFER", "4096");
    const auto limits = xmsg::verbs::VerbsLimits::from_environment();
    EXPECT_EQ(limits.srq_depth, 1024);
    EXPECT_EQ(limits.recv_memory_bytes(), 1024u * 4096u);
  }
  {
    ScopedEnv depth("XMSG_VERBS_SRQ_DEPTH", "lots");
    EXPECT_NE(invalid_argument_message([] { xmsg::verbs::VerbsLimits::from_environment(); }).find("XMSG_VERBS_SRQ_DEPTH"),
              std::string::npos);
  }
  {
    ScopedEnv eager("XMSG_VERBS_EAGER_BUFFER", "10");
    EXPECT_NE(invalid_argument_message([] { xmsg::verbs::VerbsLimits::from_environment(); }).find("XMSG_VERBS_EAGER_BUFFER"),
              std::string::npos);
  }
  {
    ScopedEnv send("XMSG_VERBS_SEND_DEPTH", "4x");
    EXPECT_NE(invalid_argument_message([] { xmsg::verbs::VerbsLimits::from_environment(); }).find("XMSG_VERBS_SEND_DEPTH"),
              std::string::npos);
  }
  const auto defaults = xmsg::verbs::VerbsLimits::from_environment();
  EXPECT_EQ(defaults.recv_memory_bytes(), 256u * 8192u);
}

}  // namespace
