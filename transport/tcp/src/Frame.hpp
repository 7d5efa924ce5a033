// Framing of the byte stream once a connection is authenticated: each message is a FrameHeader
// (the transport-neutral WireHeader plus this frame's payload size) followed by the payload.
#pragma once

#include <xmsg/transport/protocol.hpp>
#include <xmsg/transport/transport.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace xmsg::transport::tcp {

enum class FrameType : uint32_t {
  kData = 0x58540001,         // a message for the sink
  kBye = 0x58540002,          // orderly end: the EOF that follows is not a failure
  kReadRequest = 0x58540003,  // payload ReadRequest: send me a range of a buffer you exposed
  kReadData = 0x58540004,     // payload ReadData; then ReadData.length raw bytes of the range
  kDataThenPush = 0x58540005, // a kRendezvousRts for the sink, its payload followed by a uint64
                              // push length (not for the sink); a kPush frame comes next
  kPush = 0x58540006,         // payload Push; then Push.length raw bytes: the head of the
                              // exposed buffer named by the RTS before it, sent unasked
};

// The tcp form of a remote read (rendezvous): the reader names the range, the owner streams it
// straight from the exposed buffer and the reader receives it straight into its destination.
struct ReadRequest {
  uint64_t key;     // MemoryHandle.key from the owner's expose()
  uint64_t offset;  // into the exposed buffer
  uint64_t length;
  uint64_t read_id;  // the reader's, echoed in ReadData
};
struct PushHeader {
  uint64_t key;
  uint64_t length;
};
struct ReadData {
  uint64_t read_id;
  uint64_t length;  // raw bytes that follow this frame (0 when refused)
  uint64_t refused;  // nonzero: the owner had no such exposed range
};

struct FrameHeader {
  FrameType type;
  uint32_t payload_bytes;
  WireHeader wire;
};
static_assert(sizeof(FrameHeader) == 32);

// Bytes read from a socket and not yet consumed. Grows to hold the largest frame seen, never
// beyond what the peer is allowed to send (max frame), and compacts instead of growing when
// the consumed prefix makes room.
class ReceiveBuffer {
 public:
  explicit ReceiveBuffer(size_t initial_capacity) : data_(initial_capacity) {}
  // Room for at least `min_free` bytes at the end.
  std::span<std::byte> writable(size_t min_free);
  void produced(size_t n) { end_ += n; }
  std::span<const std::byte> readable() const { return {data_.data() + start_, end_ - start_}; }
  void consume(size_t n);
  size_t capacity() const { return data_.size(); }

 private:
  std::vector<std::byte> data_;
  size_t start_ = 0, end_ = 0;
};

// Result of looking at the front of the readable bytes.
struct ParsedFrame {
  enum class Status { kNeedMore, kComplete, kInvalid } status = Status::kNeedMore;
  size_t need = 0;  // kNeedMore: total bytes the frame needs (header alone if unknown yet)
  FrameHeader header{};
  std::span<const std::byte> payload;
  std::string error;  // kInvalid: what is wrong
};

ParsedFrame parse_frame(std::span<const std::byte> bytes, size_t max_payload);

}  // namespace xmsg::transport::tcp
