#include <gtest/gtest.h>

#include <stdexcept>

#include "WireUpCard.hpp"

using namespace xmsg::verbs;

TEST(WireUpCard, RoundTripsEveryField) {
  WireUpCard card{};
  card.mode = 1;
  card.link_layer = 2;
  card.path_mtu = 3;
  card.lid = 0x1234;
  card.port = 1;
  card.gid_index = 5;
  card.srq_num = 0xabcdef;
  card.node = 999;
  card.cm_ipv4 = 0x0f02000a;
  card.cm_port = 0x3412;
  card.cookie = 0x0123456789abcdefULL;
  for (int i = 0; i < 16; ++i) card.gid[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 7);
  const auto bytes = card.encode();
  ASSERT_EQ(bytes.size(), sizeof(WireUpCard));
  const WireUpCard back = WireUpCard::decode(bytes, 7);
  EXPECT_EQ(back.magic, kWireUpCardMagic);
  EXPECT_EQ(back.version, kWireUpCardVersion);
  EXPECT_EQ(back.mode, 1);
  EXPECT_EQ(back.link_layer, 2);
  EXPECT_EQ(back.path_mtu, 3);
  EXPECT_EQ(back.lid, 0x1234);
  EXPECT_EQ(back.gid_index, 5);
  EXPECT_EQ(back.srq_num, 0xabcdefu);
  EXPECT_EQ(back.node, 999u);
  EXPECT_EQ(back.cm_ipv4, 0x0f02000au);
  EXPECT_EQ(back.cm_port, 0x3412);
  EXPECT_EQ(back.cookie, 0x0123456789abcdefULL);
  EXPECT_EQ(back.gid, card.gid);
}

TEST(WireUpCard, RejectsWrongSizeMagicAndVersionNamingThePublisher) {
  WireUpCard card{};
  auto bytes = card.encode();
  auto expect_error = [](std::span<const std::byte> b, const char* what) {
    try {
      WireUpCard::decode(b, 42);
      FAIL() << "decoded a bad card";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("rank 42"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(std::span(bytes).first(bytes.size() - 1), "bytes, expected");
  auto bad_magic = bytes;
  bad_magic[0] = std::byte{0};
  expect_error(bad_magic, "magic");
  auto bad_version = bytes;
  bad_version[4] = std::byte{99};
  expect_error(bad_version, "version 99");
}
