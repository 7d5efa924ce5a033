// This machine's hwloc topology, loaded once by the coordinator. It decides bindings and is
// handed to every node server's PMIx library (inherited across fork), which otherwise spends
// most of PMIx_server_init discovering the same topology again.
#pragma once

#include <hwloc.h>

namespace xmsg::launcher {

class Topology {
 public:
  Topology();  // throws std::runtime_error
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_{};
};

}  // namespace xmsg::launcher
