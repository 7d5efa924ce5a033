// Per-peer send queues: what the transport could not take when it was sent (eager messages,
// RTS, stream fragments, control messages) waits here, in order, and progress() pushes it.
#include "World.hpp"

#include <algorithm>
#include <cstring>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

void World::enqueue(int peer, Request* r) {
  Peer& p = peers_[peer];
  p.queue.push_back(r);
  if (!p.pending) {
    p.pending = true;
    pending_peers_.push_back(peer);
  }
}

void World::send_control_bytes(int peer, MessageKind kind, uint8_t flags, std::span<const std::byte> payload) {
  WireHeader h = header(0, 0, kind, payload.size());
  h.flags = flags;
  Peer& p = peers_[peer];
  if (dead_[peer]) return;
  if (p.queue.empty() && p.transport->try_send(peer, h, payload)) return;
  Request* r = new_request(ReqType::kControl);
  r->stage = SendStage::kControl;
  r->peer = peer;
  r->control_header = h;
  static_assert(sizeof r->control_payload == protocol::kMaxControlBytes);
  std::memcpy(r->control_payload, payload.data(), payload.size());
  r->control_len = static_cast<uint32_t>(payload.size());
  enqueue(peer, r);
}

bool World::push(int peer, Request* r) {
  Peer& p = peers_[peer];
  switch (r->stage) {
    case SendStage::kEager:
      if (r->layout ? !try_send_packed_piece(peer, header(r->context, r->tag, MessageKind::kEager, r->bytes), r, 0,
                                             r->bytes)
                    : !p.transport->try_send(peer, header(r->context, r->tag, MessageKind::kEager, r->bytes),
                                             {static_cast<const std::byte*>(r->buf), r->bytes}))
        return false;
      p.queue.remove(r);
      complete(r, XMSG_SUCCESS);
      return true;
    case SendStage::kRts:
      // try_send_rts links r into inflight_ through a different Link: r leaves the queue only
      // once the RTS is out.
      if (!try_send_rts(peer, r)) return false;
      p.queue.remove(r);
      return true;
    case SendStage::kStream: {
      // Data fragments name the receiver's request in (context, tag); they arrive in order.
      const WireHeader h = protocol::data_header(static_cast<uint32_t>(rank_), r->remote_req, r->bytes);
      while (r->offset < r->bytes) {
        const uint64_t n = std::min(p.fragment, r->bytes - r->offset);
        if (r->layout ? !try_send_packed_piece(peer, h, r, r->offset, n)
                      : !p.transport->try_send(peer, h, {static_cast<const std::byte*>(r->buf) + r->offset, n}))
          return false;
        r->offset += n;
      }
      p.queue.remove(r);
      if (!r->layout) p.transport->release(r->handle);
      complete(r, XMSG_SUCCESS);
      return true;
    }
    case SendStage::kControl:
      if (!p.transport->try_send(peer, r->control_header,
                                 std::as_bytes(std::span(r->control_payload)).first(r->control_len)))
        return false;
      p.queue.remove(r);
      release(r);
      return true;
    case SendStage::kNone:
      break;
  }
  p.queue.remove(r);
  return true;
}

int World::flush_pending() {
  int n = 0;
  for (size_t i = 0; i < pending_peers_.size();) {
    const int peer = pending_peers_[i];
    Peer& p = peers_[peer];
    while (Request* r = p.queue.front()) {
      if (!push(peer, r)) break;
      ++n;
    }
    if (p.queue.empty()) {
      p.pending = false;
      pending_peers_[i] = pending_peers_.back();
      pending_peers_.pop_back();
    } else {
      ++i;
    }
  }
  return n;
}

}  // namespace xmsg::rt
