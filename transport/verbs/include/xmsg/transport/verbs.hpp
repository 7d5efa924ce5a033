// The verbs transport: ranks on different nodes over RDMA (docs/verbs.md).
//
// XRC when the device has it (one INI QP per remote node, TGT QPs shared through the node's XRC
// domain), RC QPs into one shared receive queue otherwise; wired through the bootstrap with one
// bundled key and two fences. Eager messages are SENDs into the receiver's SRQ; rendezvous
// payloads are fetched with RDMA READ.
#pragma once

#include <xmsg/transport/transport.hpp>

#include <memory>

namespace xmsg::bootstrap {
class Bootstrap;
}

namespace xmsg::transport {

// nullptr when this machine has no RDMA device (said on stderr when XMSG_VERBOSE is set), so
// the runtime carries on with the other transports. Throws TransportError naming the device
// when one exists but cannot be used (port down, XMSG_VERBS_MODE=xrc without XRC, bad
// XMSG_VERBS_* / XMSG_IB_DEVICE values).
std::unique_ptr<Transport> make_verbs_transport(xmsg::bootstrap::Bootstrap& bootstrap);

}  // namespace xmsg::transport
