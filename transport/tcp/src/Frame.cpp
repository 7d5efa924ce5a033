#include "Frame.hpp"

#include <cstring>

namespace xmsg::transport::tcp {

std::span<std::byte> ReceiveBuffer::writable(size_t min_free) {
  if (data_.size() - end_ < min_free) {
    if (start_ > 0) {
      std::memmove(data_.data(), data_.data() + start_, end_ - start_);
      end_ -= start_, start_ = 0;
    }
    if (data_.size() - end_ < min_free) data_.resize(end_ + min_free);
  }
  return {data_.data() + end_, data_.size() - end_};
}

void ReceiveBuffer::consume(size_t n) {
  start_ += n;
  if (start_ == end_) start_ = end_ = 0;
}

ParsedFrame parse_frame(std::span<const std::byte> bytes, size_t max_payload) {
  ParsedFrame out;
  if (bytes.size() < sizeof(FrameHeader)) {
    out.need = sizeof(FrameHeader);
    return out;
  }
  std::memcpy(&out.header, bytes.data(), sizeof(FrameHeader));
  const FrameType t = out.header.type;
  if (t != FrameType::kData && t != FrameType::kBye && t != FrameType::kReadRequest && t != FrameType::kReadData &&
      t != FrameType::kDataThenPush && t != FrameType::kPush) {
    out.status = ParsedFrame::Status::kInvalid;
    out.error = "bad frame type 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", static_cast<unsigned>(out.header.type));
      return std::string(b);
    }();
    return out;
  }
  if (out.header.payload_bytes > max_payload) {
    out.status = ParsedFrame::Status::kInvalid;
    out.error = "frame payload of " + std::to_string(out.header.payload_bytes) + " bytes exceeds the limit of " + std::to_string(max_payload);
    return out;
  }
  const size_t fixed = t == FrameType::kReadRequest ? sizeof(ReadRequest)
                       : t == FrameType::kReadData  ? sizeof(ReadData)
                       : t == FrameType::kPush      ? sizeof(PushHeader)
                       : t == FrameType::kDataThenPush ? sizeof(protocol::RendezvousRts) + sizeof(uint64_t)
                                                      : 0;
  if (fixed && out.header.payload_bytes != fixed) {
    out.status = ParsedFrame::Status::kInvalid;
    out.error = "read frame with a payload of " + std::to_string(out.header.payload_bytes) + " bytes (expected " + std::to_string(fixed) + ")";
    return out;
  }
  size_t total = sizeof(FrameHeader) + out.header.payload_bytes;
  if (bytes.size() < total) {
    out.need = total;
    return out;
  }
  out.status = ParsedFrame::Status::kComplete;
  out.need = total;
  out.payload = bytes.subspan(sizeof(FrameHeader), out.header.payload_bytes);
  return out;
}

}  // namespace xmsg::transport::tcp
