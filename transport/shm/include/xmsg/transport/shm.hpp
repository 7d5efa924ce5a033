// The shared-memory transport: ranks of one node exchange messages through each receiver's
// ReceiveQueue and read large payloads straight from the sender with process_vm_readv (CMA).
// See docs/shm.md for its environment variables and limits.
#pragma once

#include <xmsg/transport/transport.hpp>

#include <memory>

namespace xmsg::transport {

// Never returns nullptr: shared memory always works between ranks of one node.
std::unique_ptr<Transport> make_shm_transport(xmsg::bootstrap::Bootstrap& bootstrap);

}  // namespace xmsg::transport
