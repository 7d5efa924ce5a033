// The tcp transport: ranks on different nodes without RDMA (docs/tcp.md).
//
// One connection per pair of ranks, opened lazily by the first send in either direction and
// authenticated with the job secret before any message is accepted. Non-blocking sockets
// driven by progress(); what the kernel does not take waits in a bounded per-peer queue.
#pragma once

#include <xmsg/transport/transport.hpp>

#include <memory>

namespace xmsg::bootstrap {
class Bootstrap;
}

namespace xmsg::transport {

// Reads XMSG_TCP_* from the environment (see docs/tcp.md); throws TransportError naming the
// variable when one is malformed, or when no listening socket can be opened.
std::unique_ptr<Transport> make_tcp_transport(xmsg::bootstrap::Bootstrap& bootstrap);

// True when every byte try_send accepted has been handed to the kernel (`transport` must come
// from make_tcp_transport). Data still queued only moves while someone calls progress(): call
// this before blocking in a fence, or a peer waiting for that data waits forever.
bool tcp_output_flushed(const Transport& transport);

}  // namespace xmsg::transport
