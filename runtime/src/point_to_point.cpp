// The point-to-point entry points (send, isend, recv, irecv, iprobe, cancel), matching of
// posted receives against arrivals, and the dispatch of every arriving message to its
// protocol's handler.
#include "World.hpp"

#include "xmsg_internal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

int World::send_slow(uint32_t context, const Comm* comm, int dest, int tag, const void* buf, uint64_t len,
                     const char* func) {
  if (dest == rank_) {
    on_message(header(context, tag, MessageKind::kEager, len), {static_cast<const std::byte*>(buf), len});
    return XMSG_SUCCESS;
  }
  Peer& p = peers_[dest];
  if (len <= p.eager_limit && p.queue.empty()) {
    // Fast path: no request, no allocation. Waits for ring space by draining our own ring.
    const WireHeader h = header(context, tag, MessageKind::kEager, len);
    const std::span<const std::byte> payload{static_cast<const std::byte*>(buf), len};
    if (dead_[dest]) return peer_failed_error(func, comm, dest);
    if (p.transport->try_send(dest, h, payload)) return XMSG_SUCCESS;
    Idle idle;
    for (;;) {
      if (progress() > 0) idle.reset();
      if (dead_[dest]) return peer_failed_error(func, comm, dest);
      if (p.transport->try_send(dest, h, payload)) return XMSG_SUCCESS;
      idle.pause(*this);
    }
  }
  Request* r = nullptr;
  int rc = isend(context, comm, dest, tag, buf, len, &r, func);
  if (rc != XMSG_SUCCESS) return rc;
  wait(r, func);
  rc = report(r, func);
  release(r);
  return rc;
}

int World::isend(uint32_t context, const Comm* comm, int dest, int tag, const void* buf, uint64_t len,
                 Request** out, const char* func, bool synchronous) {
  Request* r = new_request(ReqType::kSend);
  r->context = context;
  r->comm = comm;
  r->peer = dest;
  r->tag = tag;
  r->buf = const_cast<void*>(buf);
  r->bytes = len;
  *out = r;
  if (dest == rank_) {
    on_message(header(context, tag, MessageKind::kEager, len), {static_cast<const std::byte*>(buf), len});
    complete(r, XMSG_SUCCESS);
    return XMSG_SUCCESS;
  }
  if (dead_[dest]) {
    release(r);
    *out = nullptr;
    return peer_failed_error(func, comm, dest);
  }
  Peer& p = peers_[dest];
  if (len <= p.eager_limit && !synchronous) {
    r->stage = SendStage::kEager;
    if (p.queue.empty() &&
        p.transport->try_send(dest, header(context, tag, MessageKind::kEager, len),
                              {static_cast<const std::byte*>(buf), len})) {
      complete(r, XMSG_SUCCESS);
      return XMSG_SUCCESS;
    }
  } else {
    r->stage = SendStage::kRts;
    r->handle = p.transport->expose(buf, len);
    if (p.queue.empty() && try_send_rts(dest, r)) return XMSG_SUCCESS;
  }
  enqueue(dest, r);
  return XMSG_SUCCESS;
}

int World::recv(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
                xmsg_status_t* status, const char* func) {
  // In place only if no earlier-posted receive or queued message could claim the source's next
  // message first (MPI's matching order), and only while spinning is the policy: the loop below
  // polls one lane and calls the full progress less often. A larger buffer expects a message the
  // transport cannot show in place: posting the receive before it arrives is faster then (the
  // message is copied straight into the buffer instead of being found after the fact).
  if (source >= 0 && source != rank_ && spin_limit_ == ~0u && capacity <= peers_[source].peek_payload &&
      !dead_[source]) {
    ContextQueues& q = matching_.context(context);
    if (q.posted_from(source).empty() && q.wildcard().empty() && !q.find_unexpected(source, tag)) {
      int rc;
      if (recv_in_place(context, comm, source, tag, buf, capacity, status, func, &rc)) return rc;
    }
  }
  Request* r = nullptr;
  if (int rc = irecv(context, comm, source, tag, buf, capacity, &r, func)) return rc;
  wait(r, func);
  fill_status(r, status);
  const int rc = report(r, func);
  release(r);
  return rc;
}

bool World::recv_in_place(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
                          xmsg_status_t* status, const char* func, int* rc) {
  transport::Transport* t = peers_[source].transport;
  Idle idle;
  for (;;) {
    std::span<const std::byte> payload;
    bool other_input = false;
    // A full progress call costs a few dozen looks: once per kInPlaceLooks, so it rarely
    // stands between the message landing and the waiter seeing it.
    if (const WireHeader* h = t->wait_peek(source, kInPlaceLooks, &payload, &other_input)) {
      if (h->kind != MessageKind::kEager || h->context != context || !tag_matches(tag, h->tag)) return false;
      const uint64_t length = payload.size();
      const uint64_t n = std::min(length, capacity);  // capacity <= peek_payload
      const int mtag = h->tag;
      t->take_peeked(source, buf, n);
      *rc = length > capacity ? truncation_error(func, comm, source, mtag, length, capacity) : XMSG_SUCCESS;
      if (status) {
        status->source = world_to_comm(comm, source);
        status->tag = mtag;
        status->error = *rc;
        status->cancelled = 0;
        status->bytes = static_cast<int64_t>(n);
      }
      return true;
    }
    // Something else arrived on this transport (the source's ring, another lane): post the
    // receive before it is delivered, so a message for us lands in the buffer directly.
    if (other_input) return false;
    // The rest of the world (other transports, queued sends, liveness); whatever it delivers
    // may be ours or may change the matching order.
    if (progress() > 0 || dead_[source]) return false;
    // Whatever ran meanwhile may have taken our message off the lane into the unexpected
    // queue (another thread under MPI_THREAD_MULTIPLE, the MPI layer's schedules): post.
    if (idle.pause(*this)) return false;
  }
}

int World::irecv(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
                 Request** out, const char* func, const xmsgi_layout* layout) {
  if (source >= 0 && dead_[source]) {
    *out = nullptr;
    return peer_failed_error(func, comm, source);
  }
  if (source < 0 && comm && dead_count_ > 0) {
    for (int w : comm->world_of)
      if (dead_[w]) {
        *out = nullptr;
        return peer_failed_error(func, comm, w);
      }
  }
  Request* r = new_request(ReqType::kRecv);
  r->context = context;
  r->comm = comm;
  r->peer = source;
  r->tag = tag;
  r->buf = buf;
  r->bytes = capacity;
  r->layout = layout;
  *out = r;
  match_or_post(r);
  return XMSG_SUCCESS;
}

void World::match_or_post(Request* r) {
  ContextQueues& q = matching_.context(r->context);
  if (Unexpected* u = q.find_unexpected(r->peer, r->tag)) {
    q.remove_unexpected(u);
    if (u->kind == MessageKind::kEager) {
      const uint64_t n = std::min(u->length, r->bytes);
      if (r->layout) unpack_eager(r, {u->data, u->length});
      else if (n) std::memcpy(r->buf, u->data, n);
      r->status_source = u->source;
      r->status_tag = u->tag;
      r->status_bytes = n;
      r->message_length = u->length;
      complete(r, u->length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
    } else {
      start_rendezvous_receive(r, u->source, u->tag, u->length, u->rts, u->packed);
    }
    std::free(u->data);
    delete u;
    return;
  }
  r->seq = ++seq_;
  q.post(r);
}

int World::iprobe(uint32_t context, const Comm* comm, int source, int tag, bool* found, xmsg_status_t* status,
                  const char* func) {
  progress();
  if (Unexpected* u = matching_.context(context).find_unexpected(source, tag)) {
    *found = true;
    if (status) {
      status->source = world_to_comm(comm, u->source);
      status->tag = u->tag;
      status->error = XMSG_SUCCESS;
      status->cancelled = 0;
      status->bytes = static_cast<int64_t>(u->length);
    }
    return XMSG_SUCCESS;
  }
  *found = false;
  if (source >= 0 && dead_[source]) return peer_failed_error(func, comm, source);
  return XMSG_SUCCESS;
}

void World::on_message(const WireHeader& h, std::span<const std::byte> payload) {
  switch (h.kind) {
    case MessageKind::kEager:
    case MessageKind::kRendezvousRts:
      on_arrival(h, payload);
      return;
    case MessageKind::kRendezvousCts:
      if (h.flags & protocol::kSplitFlag) on_split_cts(h, protocol::decode<protocol::SplitCts>(payload));
      else on_cts(h, protocol::decode<protocol::RendezvousCts>(payload));
      return;
    case MessageKind::kRendezvousData:
      on_data(h, payload);
      return;
    case MessageKind::kRendezvousFin:
      if (h.flags & protocol::kSplitFlag) on_split_fin(h, protocol::decode<protocol::SplitFin>(payload));
      else on_fin(h, protocol::decode<protocol::RendezvousFin>(payload));
      return;
    case MessageKind::kControl:
      return;
  }
}

// An eager message or an RTS: to the receive it matches, else into the unexpected queue (an
// eager payload is copied, an RTS keeps the sender's buffer where it is).
void World::on_arrival(const WireHeader& h, std::span<const std::byte> payload) {
  ContextQueues& q = matching_.context(h.context);
  const int source = static_cast<int>(h.source);
  if (Request* r = q.take_posted(source, h.tag)) {
    if (h.kind == MessageKind::kEager) deliver_eager(r, h, payload);
    else
      start_rendezvous_receive(r, source, h.tag, h.length, protocol::decode<protocol::RendezvousRts>(payload),
                               (h.flags & protocol::kPackedFlag) != 0);
    return;
  }
  auto* u = new Unexpected;
  u->source = source;
  u->tag = h.tag;
  u->kind = h.kind;
  u->length = h.length;
  if (h.kind == MessageKind::kEager) {
    if (!payload.empty()) {
      u->data = static_cast<std::byte*>(std::malloc(payload.size()));
      std::memcpy(u->data, payload.data(), payload.size());
    }
  } else {
    u->rts = protocol::decode<protocol::RendezvousRts>(payload);
    u->packed = (h.flags & protocol::kPackedFlag) != 0;
  }
  q.add_unexpected(u);
}

}  // namespace xmsg::rt
