// The rendezvous protocol: RTS (the sender's exposed buffer) -> the receiver reads it (remote
// read) and sends FIN; without remote read, CTS -> the sender streams DATA fragments. See
// docs/protocols.md.
#include "World.hpp"
#include "xmsg_internal.h"

#include <algorithm>
#include <cstring>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

bool World::try_send_rts(int peer, Request* r) {
  const protocol::RendezvousRts rts{reinterpret_cast<uint64_t>(r), r->handle};
  WireHeader h = header(r->context, r->tag, MessageKind::kRendezvousRts, r->bytes);
  if (r->layout) h.flags = protocol::kPackedFlag;
  if (!peers_[peer].transport->try_send(peer, h, protocol::bytes_of(rts))) return false;
  r->stage = SendStage::kNone;
  r->events = 1;  // the receiver's FIN
  r->inflight = true;
  inflight_.push_back(r);
  return true;
}

void World::start_rendezvous_receive(Request* r, int source, int tag, uint64_t length,
                                     const protocol::RendezvousRts& rts, bool sender_packed) {
  const uint64_t n = std::min(length, r->bytes);
  r->status_source = source;
  r->status_tag = tag;
  r->status_bytes = n;
  r->message_length = length;
  r->remote_req = rts.sender_request;
  r->handle = rts.handle;
  Peer& p = peers_[source];
  if (n == 0) {
    send_control(source, MessageKind::kRendezvousFin, protocol::RendezvousFin{r->remote_req});
    complete(r, length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
    return;
  }
  r->inflight = true;
  inflight_.push_back(r);
  if (r->layout || sender_packed) {
    start_packed_receive(r, source, sender_packed);
    return;
  }
  if (split_copy_applies(source, n, length)) {
    start_split_receive(r, source);
    return;
  }
  if (p.remote_read) {
    r->read_done.req = r;
    r->read_done.world = this;
    r->read_done.callback = [](World* w, Request* req, bool ok, const std::string& why) {
      w->on_read_done(req, ok, why);
    };
    p.transport->read_remote(source, r->handle, 0, {static_cast<std::byte*>(r->buf), n}, r->read_done);
    return;
  }
  ask_for_stream(r, source);
}

bool World::awaits_read_by(int peer) const {
  for (Request* r = inflight_.front(); r; r = InflightList::next(r))
    if (r->type == ReqType::kSend && r->peer == peer) return true;
  return false;
}

void World::on_read_done(Request* r, bool ok, const std::string&) {
  const int source = r->status_source;
  if (ok) {
    send_control(source, MessageKind::kRendezvousFin, protocol::RendezvousFin{r->remote_req});
    complete(r, r->message_length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
    return;
  }
  if (dead_[source]) {
    fail_request(r, source);
    return;
  }
  // The remote read was refused (e.g. CMA not permitted): let the sender stream the data.
  // (A packed receive's chunks come back through on_packed_chunk_read, which does the same.)
  peers_[source].remote_read = false;
  ask_for_stream(r, source);
}

// The receiver has the sender stream the whole message as DATA fragments (on_data takes them).
void World::ask_for_stream(Request* r, int source) {
  r->offset = 0;
  send_control(source, MessageKind::kRendezvousCts,
               protocol::RendezvousCts{r->remote_req, reinterpret_cast<uint64_t>(r)});
}

// The sender's side of a CTS: stream the buffer as DATA fragments (send_queue.cpp pushes them).
void World::on_cts(const WireHeader& h, const protocol::RendezvousCts& cts) {
  auto* s = reinterpret_cast<Request*>(cts.sender_request);
  s->remote_req = cts.receiver_request;
  s->offset = 0;
  s->stage = SendStage::kStream;
  if (s->inflight) {
    inflight_.remove(s);
    s->inflight = false;
  }
  enqueue(static_cast<int>(h.source), s);
}

void World::on_data(const WireHeader& h, std::span<const std::byte> fragment) {
  auto* r = reinterpret_cast<Request*>(protocol::data_request(h));
  if (r->offset < r->bytes) {
    const uint64_t n = std::min<uint64_t>(fragment.size(), r->bytes - r->offset);
    if (r->layout) r->layout->unpack(r->offset, fragment.data(), n);
    else std::memcpy(static_cast<std::byte*>(r->buf) + r->offset, fragment.data(), n);
  }
  r->offset += fragment.size();
  if (r->offset >= r->message_length) complete(r, r->message_length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
}

void World::on_fin(const WireHeader& h, const protocol::RendezvousFin& fin) {
  auto* s = reinterpret_cast<Request*>(fin.sender_request);
  if (--s->events == 0) {
    if (!s->layout) peers_[h.source].transport->release(s->handle);
    complete(s, XMSG_SUCCESS);
  }
}

}  // namespace xmsg::rt
