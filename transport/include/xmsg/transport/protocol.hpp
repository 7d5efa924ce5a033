// The runtime's protocol messages as they travel: every payload a WireHeader's kind announces,
// declared once, used by the runtime (runtime/src/protocol_*.cpp) and by any transport that
// looks inside one (tcp pushes the head of a rendezvous buffer behind its RTS). docs/protocols.md
// describes the exchanges these messages make up.
//
// Request ids are the sending side's Request pointers, opaque to the peer and only ever handed
// back to the rank that made them.
#pragma once

#include <xmsg/transport/transport.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>

namespace xmsg::transport::protocol {

// WireHeader.flags of kRendezvousCts and kRendezvousFin: the split copy's variants.
constexpr uint8_t kSplitFlag = 1;
// WireHeader.flags of kRendezvousRts: the sender's data is a packed stream (a non-contiguous
// buffer), not exposed for remote read; the receiver answers with a CTS and gets fragments.
constexpr uint8_t kPackedFlag = 2;

// kRendezvousRts (header.length = message length): the sender's request and exposed buffer.
struct RendezvousRts {
  uint64_t sender_request;
  MemoryHandle handle;
};
static_assert(sizeof(RendezvousRts) == 32);

// kRendezvousCts: the receiver cannot read the sender's buffer; the sender streams it as
// kRendezvousData fragments naming `receiver_request`.
struct RendezvousCts {
  uint64_t sender_request;
  uint64_t receiver_request;
};
static_assert(sizeof(RendezvousCts) == 16);

// kRendezvousCts | kSplitFlag: the receiver reads [0, split_at) while the sender writes
// [split_at, length) into `receiver_buffer` (an address the sender's transport can write).
struct SplitCts {
  uint64_t sender_request;
  uint64_t receiver_request;
  uint64_t receiver_buffer;
  uint64_t split_at;
};
static_assert(sizeof(SplitCts) == 32);

// kRendezvousFin: the receiver has the data; the sender's buffer may go.
struct RendezvousFin {
  uint64_t sender_request;
};
static_assert(sizeof(RendezvousFin) == 8);

// kRendezvousFin | kSplitFlag: the sender wrote its part (written = 1) or could not (0: the
// receiver then reads that part itself).
struct SplitFin {
  uint64_t receiver_request;
  uint64_t written;
};
static_assert(sizeof(SplitFin) == 16);

// kRendezvousData carries no control payload: the receiver's request id rides in the header's
// (context, tag), the fragment is the payload, header.length the whole message's length.
inline WireHeader data_header(uint32_t source, uint64_t receiver_request, uint64_t length) {
  return {source, static_cast<uint32_t>(receiver_request >> 32),
          static_cast<int32_t>(receiver_request & 0xffffffffu), MessageKind::kRendezvousData, 0, 0, length};
}
inline uint64_t data_request(const WireHeader& h) {
  return (static_cast<uint64_t>(h.context) << 32) | static_cast<uint32_t>(h.tag);
}

// The largest control payload, what a queued control message keeps.
constexpr std::size_t kMaxControlBytes = 32;

template <class Message>
std::span<const std::byte> bytes_of(const Message& m) {
  static_assert(std::is_trivially_copyable_v<Message> && sizeof(Message) <= kMaxControlBytes);
  return std::as_bytes(std::span(&m, 1));
}

// Payloads are not aligned in every transport's buffer: copied out, never cast.
template <class Message>
Message decode(std::span<const std::byte> payload) {
  static_assert(std::is_trivially_copyable_v<Message>);
  Message m{};
  std::memcpy(&m, payload.data(), std::min(payload.size(), sizeof m));
  return m;
}

}  // namespace xmsg::transport::protocol
