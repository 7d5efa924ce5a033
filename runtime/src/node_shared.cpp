// The C face of the shm transport's NodeSharedObject for the MPI layer (xmsg_internal.h).
#include "node_shared.hpp"
#include "xmsg_internal.h"

#include <xmsg/bootstrap/parameters.hpp>
#include <xmsg/transport/shm/NodeSharedObject.hpp>

#include <cstdio>
#include <exception>

static_assert(sizeof(xmsgi_shared_ticket) == sizeof(xmsg::transport::shm::JoinTicket),
              "xmsgi_shared_ticket mirrors JoinTicket");

struct xmsgi_shared {
  xmsg::transport::shm::NodeSharedObject object;
};

xmsg::transport::shm::NodeSharedObject::Pause xmsgi_pause_in_runtime() {
  return [spins = 0u]() mutable {
    xmsgi_progress();
    xmsgi_idle(&spins);
  };
}

namespace {

int refuse(const std::exception& e, char* why, size_t why_len) {
  if (why && why_len > 0) std::snprintf(why, why_len, "%s", e.what());
  return XMSG_ERR_NO_MEMORY;
}
}  // namespace

int xmsgi_shared_create(const char* name, uint64_t bytes, xmsgi_shared** out, xmsgi_shared_ticket* ticket, char* why,
                        size_t why_len) {
  try {
    auto* shared = new xmsgi_shared{xmsg::transport::shm::NodeSharedObject::create(
        name, bytes, xmsg::params::flag("XMSG_SHM_NAMELESS"))};
    const auto t = shared->object.ticket();
    *ticket = {t.creator_pid, {t.token[0], t.token[1]}, t.nameless, 0};
    *out = shared;
    return XMSG_SUCCESS;
  } catch (const std::exception& e) {
    return refuse(e, why, why_len);
  }
}

int xmsgi_shared_join(const char* name, uint64_t bytes, const xmsgi_shared_ticket* ticket, xmsgi_shared** out,
                      char* why, size_t why_len) {
  try {
    const xmsg::transport::shm::JoinTicket t{ticket->creator_pid, {ticket->token[0], ticket->token[1]},
                                             ticket->nameless, 0};
    *out = new xmsgi_shared{
        xmsg::transport::shm::NodeSharedObject::join(name, bytes, t, true, xmsgi_pause_in_runtime())};
    return XMSG_SUCCESS;
  } catch (const std::exception& e) {
    return refuse(e, why, why_len);
  }
}

int xmsgi_shared_share(xmsgi_shared* shared, int joiners, char* why, size_t why_len) {
  try {
    shared->object.share(joiners, xmsgi_pause_in_runtime());
    return XMSG_SUCCESS;
  } catch (const std::exception& e) {
    return refuse(e, why, why_len);
  }
}

void* xmsgi_shared_data(const xmsgi_shared* shared) { return shared ? shared->object.data() : nullptr; }

void xmsgi_shared_done_sharing(xmsgi_shared* shared) {
  if (shared) shared->object.done_sharing();
}

void xmsgi_shared_free(xmsgi_shared* shared) { delete shared; }
