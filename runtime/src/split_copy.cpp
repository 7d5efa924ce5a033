// The split-copy rendezvous (shm, from XMSG_RNDV_SPLIT): the receiver reads the first part of
// the sender's buffer while the sender, told where the receiver's buffer is (SplitCts), writes
// the rest into it and says so (SplitFin); the receive completes on both events, the send on
// its write. See docs/protocols.md.
#include "World.hpp"

#include <string>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

void World::start_split_receive(Request* r, int source) {
  Peer& p = peers_[source];
  const uint64_t n = r->status_bytes;
  r->split_at = (n / 2) & ~uint64_t{4095};
  r->events = 2;  // our read, the sender's FIN for its write
  r->split_error = XMSG_SUCCESS;
  // Only transports advertising split_copy come here (shm): their exposure has no key or release.
  const transport::MemoryHandle mine = p.transport->expose(r->buf, n, transport::Access::read_write);
  send_control(source, MessageKind::kRendezvousCts,
               protocol::SplitCts{r->remote_req, reinterpret_cast<uint64_t>(r), mine.address, r->split_at},
               protocol::kSplitFlag);
  r->read_done.req = r;
  r->read_done.world = this;
  r->read_done.callback = [](World* w, Request* req, bool ok, const std::string&) { w->on_split_read_done(req, ok); };
  p.transport->read_remote(source, r->handle, 0, {static_cast<std::byte*>(r->buf), r->split_at}, r->read_done);
}

// The sender's side: write [split_at, length) into the receiver's buffer.
void World::on_split_cts(const WireHeader& h, const protocol::SplitCts& cts) {
  auto* s = reinterpret_cast<Request*>(cts.sender_request);
  s->remote_req = cts.receiver_request;
  s->split_at = cts.split_at;
  ++s->events;
  s->read_done.req = s;
  s->read_done.world = this;
  s->read_done.callback = [](World* w, Request* req, bool ok, const std::string&) { w->on_split_write_done(req, ok); };
  const transport::MemoryHandle dst{cts.receiver_buffer, s->bytes, 0};
  peers_[h.source].transport->write_remote(static_cast<int>(h.source), dst, s->split_at,
                                           {static_cast<const std::byte*>(s->buf) + s->split_at, s->bytes - s->split_at},
                                           s->read_done);
}

void World::on_split_write_done(Request* s, bool ok) {
  send_control(s->peer, MessageKind::kRendezvousFin, protocol::SplitFin{s->remote_req, ok ? 1u : 0u},
               protocol::kSplitFlag);
  if (--s->events == 0) {
    peers_[s->peer].transport->release(s->handle);
    complete(s, XMSG_SUCCESS);
  }
}

// The receiver's side: the sender wrote its part, or could not (then we read it ourselves).
void World::on_split_fin(const WireHeader& h, const protocol::SplitFin& fin) {
  auto* r = reinterpret_cast<Request*>(fin.receiver_request);
  if (fin.written == 0) {
    struct Sync final : transport::ReadCompletion {
      bool ok = false;
      void on_read_done(bool o, const std::string&) override { ok = o; }
    } sync;
    const uint64_t n = r->status_bytes;
    peers_[h.source].transport->read_remote(static_cast<int>(h.source), r->handle, r->split_at,
                                            {static_cast<std::byte*>(r->buf) + r->split_at, n - r->split_at}, sync);
    if (!sync.ok && r->split_error == XMSG_SUCCESS) r->split_error = XMSG_ERR_TRANSPORT;
  }
  if (--r->events == 0) finish_split_receive(r);
}

void World::on_split_read_done(Request* r, bool ok) {
  if (!ok && r->split_error == XMSG_SUCCESS)
    r->split_error = dead_[r->status_source] ? XMSG_ERR_PEER_FAILED : XMSG_ERR_TRANSPORT;
  if (--r->events == 0) finish_split_receive(r);
}

void World::finish_split_receive(Request* r) {
  send_control(r->status_source, MessageKind::kRendezvousFin, protocol::RendezvousFin{r->remote_req});
  complete(r, r->split_error);
}

}  // namespace xmsg::rt
