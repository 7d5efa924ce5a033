// The runtime's side of waiting on the shm transport's node objects (node_shared.cpp).
#pragma once

#include <xmsg/transport/shm/NodeSharedObject.hpp>

// How a rank waits while a node object changes hands (NodeSharedObject::share and join): as in
// any wait of the runtime, progress, then the idle policy with its hooks (the MPI layer's lock
// hand-over under MPI_THREAD_MULTIPLE).
xmsg::transport::shm::NodeSharedObject::Pause xmsgi_pause_in_runtime();
