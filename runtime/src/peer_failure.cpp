// A failed peer (a transport's on_peer_failure): every request that waits on it fails with
// XMSG_ERR_PEER_FAILED naming the rank and the transport's reason, and later calls that need it
// fail at once.
#include "World.hpp"

#include "xmsg_internal.h"

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

int World::peer_failed_error(const char* func, const Comm* comm, int w) const {
  return xmsgi_error(XMSG_ERR_PEER_FAILED, "%s: peer rank %d (world rank %d) failed: %s", func,
                     comm && comm->contains_world(w) ? comm->comm_of[w] : w, w, dead_reason_[w].c_str());
}

void World::fail_request(Request* r, int peer) {
  r->status_source = peer;
  r->bounce.reset();
  complete(r, XMSG_ERR_PEER_FAILED);
}

void World::on_peer_failure(int peer, const std::string& reason) {
  if (dead_[peer]) return;
  dead_[peer] = 1;
  ++dead_count_;
  dead_reason_[peer] = reason;
  matching_.for_each([&](uint32_t ctx, ContextQueues& q) {
    while (Request* r = q.posted_from(peer).front()) {
      q.unpost(r);
      fail_request(r, peer);
    }
    const uint32_t cid = ctx / 2;
    const Comm* c = cid < comm_by_cid_.size() ? comm_by_cid_[cid] : nullptr;
    if (!c || c->contains_world(peer)) {
      while (Request* r = q.wildcard().front()) {
        q.unpost(r);
        fail_request(r, peer);
      }
    }
  });
  Peer& p = peers_[peer];
  while (Request* r = p.queue.pop_front()) {
    if (r->type == ReqType::kControl) release(r);
    else fail_request(r, peer);
  }
  for (Request* r = inflight_.front(); r;) {
    Request* next = InflightList::next(r);
    const int other = r->type == ReqType::kSend ? r->peer : r->status_source;
    if (other == peer) fail_request(r, peer);
    r = next;
  }
}

}  // namespace xmsg::rt
