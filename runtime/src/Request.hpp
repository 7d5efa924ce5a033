// Requests: one object per outstanding operation, drawn from a pool (no malloc on the fast
// path). The C handle xmsg_request_t points at one. Control messages (CTS, FIN) waiting for
// queue space are requests too, so every per-peer send queue holds one type.
#pragma once

#include <xmsg/transport/transport.hpp>
#include <xmsg/xmsg.h>

#include "IntrusiveList.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace xmsg::rt {
struct Comm;
class World;
}  // namespace xmsg::rt

enum class ReqType : uint8_t { kSend, kRecv, kControl };

// What a queued send still has to put on the wire.
enum class SendStage : uint8_t { kNone, kEager, kRts, kStream, kControl };

struct xmsg_request_s;
struct xmsgi_layout;

// Adapter so a request can receive a transport's read completion without a virtual base on
// the request itself.
struct ReadDone final : xmsg::transport::ReadCompletion {
  using Callback = void (*)(xmsg::rt::World*, xmsg_request_s*, bool, const std::string&);
  xmsg_request_s* req = nullptr;
  xmsg::rt::World* world = nullptr;
  Callback callback = nullptr;
  void on_read_done(bool ok, const std::string& reason) override { callback(world, req, ok, reason); }
};

struct xmsg_request_s {
  static constexpr uint32_t kMagic = 0x52455131;  // "REQ1"
  uint32_t magic = 0;
  ReqType type = ReqType::kSend;
  SendStage stage = SendStage::kNone;
  bool done = false;
  bool detached = false;   // xmsg_request_free'd while pending: release on completion
  bool posted = false;     // sits in a posted-receive list
  bool inflight = false;   // rendezvous in progress (in World's inflight list)
  int error = XMSG_SUCCESS;

  // Matching / addressing.
  uint32_t context = 0;
  int peer = -1;           // world rank: destination, or source (-1 = any) of a receive
  int tag = 0;
  const xmsg::rt::Comm* comm = nullptr;
  void* buf = nullptr;
  uint64_t bytes = 0;      // send: message length; receive: capacity
  // Non-null: the data is the packed stream of a non-contiguous buffer (buf unused), packed or
  // unpacked piece by piece (runtime/src/packed.cpp).
  const xmsgi_layout* layout = nullptr;
  // What `layout` points at once the request was orphaned (xmsgi_request_orphan): a private
  // packed copy (send) or a sink (receive), freed when the request is.
  std::shared_ptr<const xmsgi_layout> owned_layout;
  uint64_t seq = 0;        // posting order, to choose between source and wildcard lists

  // Status of a completed receive.
  int status_source = -1;  // world rank
  int status_tag = 0;
  uint64_t status_bytes = 0;
  uint64_t message_length = 0;  // as sent (> status_bytes when truncated)
  bool cancelled = false;

  // Rendezvous.
  uint64_t remote_req = 0;  // the peer's request id
  uint64_t offset = 0;      // stream: bytes sent / received so far
  xmsg::transport::MemoryHandle handle{};
  ReadDone read_done;
  // Split copy: events still awaited (own copy done, peer's FIN), where the receiver's part ends.
  uint32_t events = 0;
  int split_error = XMSG_SUCCESS;
  uint64_t split_at = 0;
  // Packed receives: where a piece lands before it is unpacked (a tcp eager landing, a chunk
  // of a remote read); whether the chunk being read completed inside read_remote().
  std::unique_ptr<std::byte[]> bounce;
  bool chunk_reading = false;
  bool chunk_done = false;

  // Control message (CTS/FIN) payload.
  xmsg::transport::WireHeader control_header{};
  uint64_t control_payload[4] = {0, 0, 0, 0};  // protocol::kMaxControlBytes
  uint32_t control_len = 0;

  // What every path reads before writing: matching, state and status. The rendezvous and
  // control fields are written by the paths that use them, so a recycled request does not
  // clear them (a full reset is ~300 bytes of stores per message, with 64 in flight per window
  // in a bandwidth test).
  void reset(ReqType t) {
    magic = kMagic;
    type = t;
    stage = SendStage::kNone;
    done = detached = posted = inflight = cancelled = false;
    error = XMSG_SUCCESS;
    context = 0;
    peer = -1;
    tag = 0;
    comm = nullptr;
    buf = nullptr;
    layout = nullptr;
    bytes = seq = 0;
    status_source = -1;
    status_tag = 0;
    status_bytes = message_length = 0;
    remote_req = offset = 0;
    events = 0;
    split_error = XMSG_SUCCESS;
  }

  xmsg::rt::Link<xmsg_request_s> link;      // posted list or a peer's send queue
  xmsg::rt::Link<xmsg_request_s> inflight_link;
  xmsg_request_s* pool_next = nullptr;
};

namespace xmsg::rt {

using Request = xmsg_request_s;

class RequestPool {
 public:
  Request* get() {
    if (!free_) grow();
    Request* r = free_;
    free_ = r->pool_next;
    ++live_;
    return r;
  }
  void put(Request* r) {
    r->magic = 0;
    r->pool_next = free_;
    free_ = r;
    --live_;
  }
  size_t live() const { return live_; }

 private:
  void grow() {
    constexpr size_t kBlock = 256;
    blocks_.push_back(std::make_unique<Request[]>(kBlock));
    Request* b = blocks_.back().get();
    for (size_t i = 0; i < kBlock; ++i) {
      b[i].pool_next = free_;
      free_ = &b[i];
    }
  }
  std::vector<std::unique_ptr<Request[]>> blocks_;
  Request* free_ = nullptr;
  size_t live_ = 0;
};

}  // namespace xmsg::rt
