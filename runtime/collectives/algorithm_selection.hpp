// Which algorithm each collective runs, by message size and communicator size: the one table
// (algorithm_selection.cpp) and its thresholds, each overridable by an XMSG_COLL_* variable.
#pragma once

#include <cstdint>
#include <optional>

#include "coll.hpp"

namespace xmsg::coll {

// How the shared-memory barrier waits (see shm_barrier in shm_collectives.cpp).
enum class ShmBarrier { kAuto, kRooted, kAll };

struct Thresholds {
  bool shm;                     // XMSG_COLL_SHM (default 1): shared-memory path for one-node communicators
  int64_t shm_slot;             // XMSG_COLL_SHM_SLOT: bytes per rank slot; data that fits goes through it
  int64_t shm_bcast_max;        // XMSG_COLL_SHM_BCAST_MAX: largest bcast through the slot (also <= shm_slot)
  ShmBarrier shm_barrier;       // XMSG_COLL_SHM_BARRIER: auto (by the collective before), rooted or all
  int64_t pipe_allgather_min;   // XMSG_COLL_PIPE_ALLGATHER_MIN: smallest one-node allgather block through the pipelines
  int64_t pipe_reduce_scatter_min;  // XMSG_COLL_PIPE_REDUCE_SCATTER_MIN: smallest one-node reduce_scatter vector through them
  int64_t pipe_chunk;           // XMSG_COLL_PIPE_CHUNK: bytes of one pipeline chunk (rounded up to a page)
  int64_t pipe_chunks;          // XMSG_COLL_PIPE_CHUNKS: chunks in each rank's pipeline ring
  // XMSG_COLL_PIPE_*_MAX: largest one-node bcast / allreduce (commutative op) / alltoall block
  // through the pipelines; unset: below the size the measured profile gives single copy
  // (node_profile.hpp).
  std::optional<int64_t> pipe_bcast_max;
  std::optional<int64_t> pipe_allreduce_max;
  std::optional<int64_t> pipe_alltoall_max;
  std::optional<int64_t> pipe_allgather_max;
  std::optional<int64_t> pipe_reduce_scatter_max;
  int64_t cma_bcast_min;        // XMSG_COLL_CMA_BCAST_MIN: one-node bcasts from this size read the root's buffer (CMA)
  int64_t cma_allreduce_min;    // XMSG_COLL_CMA_ALLREDUCE_MIN: one-node allreduce vectors from this size: CMA reduce-scatter+allgather
  int64_t cma_alltoall_min;     // XMSG_COLL_CMA_ALLTOALL_MIN: one-node alltoall blocks from this size read peers' sendbufs (CMA)
  int64_t cma_allgather_min;    // XMSG_COLL_CMA_ALLGATHER_MIN: one-node allgather blocks from this size read peers' sendbufs (CMA)
  int64_t cma_reduce_scatter_min;  // XMSG_COLL_CMA_REDUCE_SCATTER_MIN: one-node reduce_scatter vectors from this size: CMA reads of a rank's segment
  bool node_aware;              // XMSG_COLL_NODE_AWARE (default 1): hierarchical when the job spans nodes
  int64_t barrier_linear_max;   // communicator size <= this: linear barrier, else dissemination
  int64_t bcast_flat_max;       // oversubscribed and bytes <= this: linear bcast
  int64_t reduce_flat_max;      // oversubscribed and bytes <= this: linear reduce
  int64_t allreduce_flat_max;   // oversubscribed and bytes <= this: linear allreduce
  int64_t bcast_large;          // bytes >= this (and n > 2): scatter+allgather, else binomial
  int64_t allreduce_large;      // bytes >= this (and count >= p2): Rabenseifner, else recursive doubling
  int64_t allgather_large;      // block bytes >= this: ring, else Bruck
  int64_t alltoall_small;       // block bytes <= this and n >= alltoall_bruck_ranks (not oversubscribed): Bruck
  int64_t alltoall_bruck_ranks;
  int64_t alltoall_large;       // block bytes >= this: pairwise; in between: linear
  int64_t alltoall_flat_max;    // oversubscribed and block <= this: linear at any size
  int64_t gather_small;         // block bytes * n <= this: binomial gather/scatter, else linear
};

// Read once from the environment (defaults in docs/collectives.md).
const Thresholds& thresholds();

// XMSG_COLL_TRACE=1: one line per communicator region with its measured profile and the
// sizes it gives single copy (`sizes`, indexed by LargeCollective), printed by rank 0.
void trace_profile(const Comm& c, const NodeProfile& p, const SingleCopySizes sizes[kLargeCollectives]);

// More ranks of the job on its fullest node than this node has CPUs
// (XMSG_COLL_OVERSUBSCRIBED=0/1 forces the answer). Every rank must reach the same answer:
// the rank count per node is the same everywhere, and nodes are assumed to have as many CPUs.
bool oversubscribed();
// The fullest node's ranks over its CPUs, rounded up (1 when not more ranks than CPUs).
int ranks_per_core();

int run_barrier(const Comm& c);
int run_bcast(const Comm& c, Dst buf, int64_t bytes, int root);
int run_reduce(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op, int root);
int run_allreduce(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op);
int run_gather(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root);
int run_scatter(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root);
// sendbuf: our block (nullptr: already in place in recvbuf).
int run_allgather(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
// counts[j]: elements that end on rank j; sendbuf never in place.
int run_reduce_scatter(const Comm& c, const void* sendbuf, void* recvbuf, const int64_t* counts, const ReduceOp& op);
int run_alltoall(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
int run_alltoallv(const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls, Dst recvbuf,
                  const int64_t* rcounts, const int64_t* rdispls);

// Node-aware variants (node_aware.cpp). *done says whether they ran; when false nothing was
// sent and the caller uses the flat table.
bool node_aware_possible(const Comm& c);
int node_aware_barrier(const Comm& c, bool* done);
int node_aware_bcast(const Comm& c, Dst buf, int64_t bytes, int root, bool* done);
int node_aware_allreduce(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op,
                         bool* done);

}  // namespace xmsg::coll
