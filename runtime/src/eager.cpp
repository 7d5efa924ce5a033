// The eager protocol's receive side: a matched message is copied into the receive's buffer, or
// lands there straight from the transport (claim_eager / on_eager_landed, tcp).
#include "World.hpp"
#include "xmsg_internal.h"

#include <algorithm>
#include <cstring>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

void World::deliver_eager(Request* r, const WireHeader& h, std::span<const std::byte> payload) {
  const uint64_t n = std::min<uint64_t>(payload.size(), r->bytes);
  if (r->layout) unpack_eager(r, payload);
  else if (n) std::memcpy(r->buf, payload.data(), n);
  r->status_source = static_cast<int>(h.source);
  r->status_tag = h.tag;
  r->status_bytes = n;
  r->message_length = payload.size();
  complete(r, payload.size() > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
}

transport::EagerLanding World::claim_eager(const WireHeader& h) {
  Request* r = matching_.context(h.context).take_posted(static_cast<int>(h.source), h.tag);
  if (!r) return {};
  r->status_source = static_cast<int>(h.source);
  r->status_tag = h.tag;
  r->status_bytes = std::min(h.length, r->bytes);
  r->message_length = h.length;
  // In flight until it lands, so a peer failure meanwhile fails it (on_peer_failure).
  r->inflight = true;
  inflight_.push_back(r);
  if (r->layout) {
    // Lands whole, then is unpacked: at most the transport's eager limit.
    r->bounce.reset(new std::byte[r->status_bytes ? r->status_bytes : 1]);
    return {r, {r->bounce.get(), r->status_bytes}};
  }
  return {r, {static_cast<std::byte*>(r->buf), r->status_bytes}};
}

void World::on_eager_landed(void* token) {
  auto* r = static_cast<Request*>(token);
  if (r->layout) {
    if (r->status_bytes) r->layout->unpack(0, r->bounce.get(), r->status_bytes);
    r->bounce.reset();
  }
  complete(r, r->message_length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
}

}  // namespace xmsg::rt
