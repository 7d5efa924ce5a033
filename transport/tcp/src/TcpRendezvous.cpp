// Remote read and pushed rendezvous heads: exposing buffers, asking for and serving ranges,
// sending an RTS with its head behind it, and landing pushed heads.
#include "TcpTransport.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace xmsg::transport::tcp {

// ---- remote read -------------------------------------------------------------------------

MemoryHandle TcpTransport::expose(const void* buffer, size_t length, Access) {  // tcp writes nothing remotely
  const uint64_t key = next_key_++;
  exposed_.emplace(key, std::span(static_cast<const std::byte*>(buffer), length));
  return {reinterpret_cast<uint64_t>(buffer), length, key};
}

void TcpTransport::release(const MemoryHandle& handle, Access) {
  exposed_.erase(handle.key);
  // Released after the receiver's FIN: whatever it staged of this message is gone.
  if (auto it = large_pushes_.find(handle.key); it != large_pushes_.end()) {
    if (Peer* p = peer_or_null(it->second)) p->large_pushed -= handle.length;  // the size expose() gave it
    large_pushes_.erase(it);
  }
}

void TcpTransport::read_remote(int peer, const MemoryHandle& source, uint64_t offset, std::span<std::byte> dst,
                               ReadCompletion& done) {
  Peer* p = peer_or_null(peer);
  if (!p) return done.on_read_done(false, "tcp: rank " + std::to_string(peer) + " is not a tcp peer");
  if (p->failed) return done.on_read_done(false, p->failure);
  if (dst.empty()) return done.on_read_done(true, {});
  Connection* c = p->established;
  if (offset == 0 && c && c->push && c->push->key == source.key && !c->push->claimed) {
    // The head is on its way (or arriving): it lands in dst; only the rest is asked for.
    Connection::Push& push = *c->push;
    push.claimed = true;
    const size_t head = std::min<size_t>(push.length, dst.size());
    push.dst = dst.first(head);
    if (dst.size() > head) request_read(*p, source.key, head, dst.subspan(head), done);
    else push.done = &done;  // the rest (if any) was read before this call; see finish_push
    return;
  }
  if (offset == 0) {
    auto it = pushed_.find({peer, source.key});
    if (it != pushed_.end()) {
      // The head arrived before its receive was posted (like an unexpected eager message).
      std::vector<std::byte> head = std::move(it->second);
      pushed_.erase(it);
      const size_t n = std::min(head.size(), dst.size());
      std::memcpy(dst.data(), head.data(), n);
      if (dst.size() > n) return request_read(*p, source.key, n, dst.subspan(n), done);
      return done.on_read_done(true, {});
    }
  }
  request_read(*p, source.key, offset, dst, done);
}

void TcpTransport::request_read(Peer& p, uint64_t key, uint64_t offset, std::span<std::byte> dst, ReadCompletion& done) {
  const uint64_t id = next_read_id_++;
  p.reads.push_back({id, dst, &done});
  const ReadRequest request{key, offset, dst.size(), id};
  queue_frame(p, FrameHeader{FrameType::kReadRequest, sizeof request, {}}, std::as_bytes(std::span(&request, 1)));
}

bool TcpTransport::start_push(Connection& c, Peer& p, const PushHeader& header) {
  if (!c.push || c.push->key != header.key || c.push->length != header.length || c.push->landing) {
    fail_peer(p, "protocol error: pushed data that no RTS announced");
    return false;
  }
  Connection::Push& push = *c.push;
  push.landing = true;
  if (push.claimed && push.dst.size() == header.length) {
    c.direct = push.dst.data();
  } else {
    push.buffer.resize(header.length);
    c.direct = push.buffer.data();
  }
  c.direct_left = header.length;
  return true;
}

void TcpTransport::finish_push(Connection& c) {
  Connection::Push push = std::move(*c.push);
  c.push.reset();
  c.direct = nullptr;
  if (!push.claimed) {
    pushed_[{c.peer, push.key}] = std::move(push.buffer);
    return;
  }
  if (!push.buffer.empty()) std::memcpy(push.dst.data(), push.buffer.data(), push.dst.size());
  if (push.done) push.done->on_read_done(true, {});
}

bool TcpTransport::try_send_pushed(Peer& p, const WireHeader& header, std::span<const std::byte> payload, bool& accepted) {
  protocol::RendezvousRts rts;
  std::memcpy(&rts, payload.data(), sizeof rts);
  auto it = exposed_.find(rts.handle.key);
  if (it == exposed_.end() || config_.rendezvous_push == 0) return false;
  const uint64_t size = it->second.size();
  // A large message goes whole only while the whole pushes of the peer's not yet finished
  // messages stay within the budget: that bounds what a receiver that posts late must stage.
  const bool large = size > config_.push_whole_message && size <= config_.push_large_message &&
                     p.large_pushed + size <= config_.push_budget;
  const uint64_t head = size <= config_.push_whole_message || large ? size
                        : size <= config_.push_max_message        ? std::min<uint64_t>(config_.rendezvous_push, size)
                                                                  : 0;
  if (head == 0) return false;
  const size_t copied = 2 * sizeof(FrameHeader) + payload.size() + sizeof head + sizeof(PushHeader);
  if (!p.queue.empty() && p.queue.copied_bytes() + copied > config_.queue_limit) {
    accepted = false;
    return true;
  }
  const FrameHeader rts_frame{FrameType::kDataThenPush, static_cast<uint32_t>(payload.size() + sizeof head), header};
  const FrameHeader push_frame{FrameType::kPush, sizeof(PushHeader), {}};
  const PushHeader push{rts.handle.key, head};
  p.queue.append(std::as_bytes(std::span(&rts_frame, 1)));
  p.queue.append(payload);
  p.queue.append(std::as_bytes(std::span(&head, 1)));
  p.queue.append(std::as_bytes(std::span(&push_frame, 1)));
  p.queue.append(std::as_bytes(std::span(&push, 1)));
  // Valid until the receiver's FIN, which it sends only after the whole message arrived.
  p.queue.append_borrowed(it->second.first(head));
  if (large) {
    p.large_pushed += size;
    large_pushes_[rts.handle.key] = p.rank;
  }
  accepted = true;
  if (p.established) flush(p);
  else if (!p.outgoing && !p.incoming) start_connect(p);
  return true;
}

void TcpTransport::serve_read(Peer& p, const ReadRequest& request) {
  ReadData data{request.read_id, request.length, 0};
  auto it = exposed_.find(request.key);
  // Only ranges this rank exposed and has not released leave the process.
  if (it == exposed_.end() || request.offset > it->second.size() || request.length > it->second.size() - request.offset) {
    data.length = 0;
    data.refused = 1;
    queue_frame(p, FrameHeader{FrameType::kReadData, sizeof data, {}}, std::as_bytes(std::span(&data, 1)));
    return;
  }
  const FrameHeader fh{FrameType::kReadData, sizeof data, {}};
  p.queue.append(std::as_bytes(std::span(&fh, 1)));
  p.queue.append(std::as_bytes(std::span(&data, 1)));
  // The exposed buffer stays valid until the reader's FIN, which follows these bytes.
  p.queue.append_borrowed(it->second.subspan(request.offset, request.length));
  flush(p);
}

bool TcpTransport::start_read_data(Connection& c, Peer& p, const ReadData& data) {
  if (p.reads.empty() || p.reads.front().id != data.read_id) {
    fail_peer(p, "protocol error: read data for read " + std::to_string(data.read_id) + ", which was not asked for");
    return false;
  }
  PendingRead read = p.reads.front();
  p.reads.pop_front();
  if (data.refused) {
    read.done->on_read_done(false, "tcp: rank " + std::to_string(p.rank) + " has no exposed buffer for the read");
    return c.state != ConnectionState::kClosed;
  }
  if (data.length != read.dst.size()) {
    fail_peer(p, "protocol error: read data of " + std::to_string(data.length) + " bytes for a read of " +
                     std::to_string(read.dst.size()));
    return false;
  }
  const size_t prelanded = std::exchange(c.prelanded, 0);
  c.direct = read.dst.data() + prelanded;
  c.direct_left = read.dst.size() - prelanded;
  c.direct_done = read.done;
  return true;
}

}  // namespace xmsg::transport::tcp
