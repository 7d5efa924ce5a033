// WireUpRecord: the one bundled value a rank publishes under a single bootstrap (PMIx) key so
// that two fences wire the whole job. Its QP list follows ConnectionPlan::qps_of() order, so a
// peer finds the entry meant for it by index (ConnectionPlan::ini_index/tgt_index/rc_index)
// without any per-connection handshake.
//
// Layout: WireUpHeader followed by header.qp_count WireUpQp entries, host byte order. xmsg
// assumes a homogeneous little-endian cluster (static_assert below), the same assumption the
// rest of the wire header makes.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace xmsg::verbs {

static_assert(std::endian::native == std::endian::little, "the wire-up record is little-endian");

inline constexpr std::string_view kWireUpKey = "xmsg.verbs.wireup";
// The publisher's node id (4 bytes, host order), put beside the record in the same commit. The
// QPs a rank creates depend only on its own node's membership, but matching a peer's entries
// needs every rank's node; launchers that do not serve PMIX_NODEID for remote ranks (xmsgrun's
// virtual nodes today) leave Bootstrap::node_of() unable to say, so the transport reads this
// key instead. Kept out of the record so learning the layout does not mean fetching every
// rank's QP list.
inline constexpr std::string_view kNodeKey = "xmsg.verbs.node";
inline constexpr std::size_t kNodeKeyBytes = sizeof(std::uint32_t);
inline constexpr std::uint32_t kWireUpMagic = 0x42564d58;  // "XMVB"
inline constexpr std::uint8_t kWireUpVersion = 1;

struct WireUpHeader {
  std::uint32_t magic;
  std::uint8_t version;
  std::uint8_t mode;        // PlanMode
  std::uint8_t link_layer;  // IBV_LINK_LAYER_INFINIBAND (1) or IBV_LINK_LAYER_ETHERNET (2)
  std::uint8_t path_mtu;    // enum ibv_mtu of the publisher's port
  std::uint16_t lid;        // InfiniBand addressing
  std::uint8_t port;
  std::uint8_t gid_index;   // informational: the publisher's own GID table index
  std::uint32_t srq_num;    // XRC: the SRQ number senders name; RC: 0
  std::uint32_t qp_count;   // entries that follow
  std::array<std::uint8_t, 16> gid;  // RoCE v2: the IPv4-mapped GID; IB: the port GID
};
static_assert(sizeof(WireUpHeader) == 36, "WireUpHeader must stay packed: it is published as is");

// One QP of the publisher, in plan order.
struct WireUpQp {
  std::uint32_t qpn;
  std::uint32_t psn;  // starting packet sequence number (24 bits used)
};
static_assert(sizeof(WireUpQp) == 8);

struct WireUpRecord {
  WireUpHeader header{};
  std::vector<WireUpQp> qps;

  static constexpr std::size_t encoded_size(std::size_t qp_count) {
    return sizeof(WireUpHeader) + qp_count * sizeof(WireUpQp);
  }
  // Everything a rank publishes for verbs: the record and the node key.
  static constexpr std::size_t published_bytes(std::size_t qp_count) { return encoded_size(qp_count) + kNodeKeyBytes; }
  std::vector<std::byte> encode() const;
  // Throws std::runtime_error naming `publisher_rank` when the bytes are not a record of this
  // version or their length disagrees with qp_count.
  static WireUpRecord decode(std::span<const std::byte> bytes, int publisher_rank);
};

}  // namespace xmsg::verbs
