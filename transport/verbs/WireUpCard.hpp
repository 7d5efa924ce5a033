// WireUpCard: what a rank publishes for the lazy ("on demand") verbs wire-up, under one bootstrap
// key, and nothing else. A peer reads it with one bootstrap get the first time it sends to this
// rank (PMIx direct modex: the fence before it collects no data), so start-up moves no verbs data
// between nodes and a rank holds only the cards of the peers it has talked to.
//
// It carries what a sender needs to reach this rank: the port address, the SRQ number its XRC
// sends name, the rank's node (so no separate node map is read), and where this rank's connection
// manager listens (ConnectionManager: the INI/TGT or RC QP numbers are exchanged there, when the
// first message needs them). `cookie` is a random value a connection request must repeat: only a
// process that read the card from the job's key-value store can ask this rank for a QP.
//
// Host byte order except cm_ipv4/cm_port (network order, as sockaddr_in holds them); same
// homogeneous little-endian assumption as WireUpRecord.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace xmsg::verbs {

static_assert(std::endian::native == std::endian::little, "the wire-up card is little-endian");

inline constexpr std::string_view kWireUpCardKey = "xmsg.verbs.card";
inline constexpr std::uint32_t kWireUpCardMagic = 0x43564d58;  // "XMVC"
inline constexpr std::uint8_t kWireUpCardVersion = 1;

struct WireUpCard {
  std::uint32_t magic;
  std::uint8_t version;
  std::uint8_t mode;        // PlanMode
  std::uint8_t link_layer;  // IBV_LINK_LAYER_INFINIBAND (1) or IBV_LINK_LAYER_ETHERNET (2)
  std::uint8_t path_mtu;    // enum ibv_mtu of the publisher's port
  std::uint16_t lid;
  std::uint8_t port;
  std::uint8_t gid_index;
  std::uint32_t srq_num;    // XRC: the SRQ number senders name; RC: 0
  std::uint32_t node;       // the publisher's node id (as the transport plans it)
  std::uint32_t cm_ipv4;    // connection manager address, network order
  std::uint16_t cm_port;    // network order
  std::uint16_t reserved;
  std::uint32_t reserved2;  // keeps cookie 8-byte aligned
  std::uint64_t cookie;
  std::array<std::uint8_t, 16> gid;

  std::vector<std::byte> encode() const;
  // Throws std::runtime_error naming `publisher_rank` when the bytes are not a card of this
  // version.
  static WireUpCard decode(std::span<const std::byte> bytes, int publisher_rank);
};
static_assert(sizeof(WireUpCard) == 56, "WireUpCard must stay packed: it is published as is");

}  // namespace xmsg::verbs
