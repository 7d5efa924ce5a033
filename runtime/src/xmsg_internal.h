// Internal contract between the point-to-point core (runtime/src) and the collectives and MPI
// layer (runtime/collectives, runtime/mpi). Not installed; C++ linkage is fine.
//
// Collective traffic travels on a communicator's hidden collective context: it never matches
// user point-to-point traffic on the same communicator, whatever the tags. Tags on the
// collective context are free for collectives except [XMSGI_TAG_RESERVED, XMSG_TAG_UB], which
// the runtime uses for communicator creation.
#pragma once

#include <xmsg/xmsg.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>

#define XMSGI_TAG_RESERVED 0x3fff0000

// Non-blocking point-to-point on the collective context of `comm`. Ranks are ranks of `comm`,
// `bytes` >= 0, `tag` in [0, XMSGI_TAG_RESERVED); source may be XMSG_ANY_SOURCE and tag
// XMSG_ANY_TAG on receives. Complete with xmsg_wait/xmsg_waitall/xmsg_test...
int xmsgi_coll_isend(const void* buf, int64_t bytes, int dest, int tag, xmsg_comm_t comm, xmsg_request_t* req);
int xmsgi_coll_irecv(void* buf, int64_t bytes, int source, int tag, xmsg_comm_t comm, xmsg_request_t* req);

// A non-contiguous buffer as the MPI layer's datatype engine sees it: the message is the packed
// byte stream [0, bytes) of the buffer's data, and the runtime asks for it in pieces, packed
// straight into a transport's buffer or unpacked straight out of one (docs/protocols.md,
// "Packed messages"). Pieces are asked for at any offset, any size (point-to-point asks in
// order; the collectives jump between blocks). The object must stay valid until its request
// completes.
struct xmsgi_layout {
  virtual void pack(uint64_t offset, void* dst, uint64_t n) const = 0;          // stream -> dst
  virtual void unpack(uint64_t offset, const void* src, uint64_t n) const = 0;  // src -> stream
 protected:
  ~xmsgi_layout() = default;
};

// xmsg_isend / xmsg_issend (synchronous) and xmsg_irecv of a packed stream of `bytes` (the
// receive's capacity) described by `layout`; `comm`'s ranks, user context.
int xmsgi_isend_packed(const xmsgi_layout* layout, int64_t bytes, int dest, int tag, xmsg_comm_t comm,
                       int synchronous, xmsg_request_t* request);
int xmsgi_irecv_packed(const xmsgi_layout* layout, int64_t bytes, int source, int tag, xmsg_comm_t comm,
                       xmsg_request_t* request);

// xmsgi_isend_packed / xmsgi_irecv_packed on the collective context of `comm` (runtime/collectives).
int xmsgi_coll_isend_packed(const xmsgi_layout* layout, int64_t bytes, int dest, int tag, xmsg_comm_t comm,
                            xmsg_request_t* request);
int xmsgi_coll_irecv_packed(const xmsgi_layout* layout, int64_t bytes, int source, int tag, xmsg_comm_t comm,
                            xmsg_request_t* request);
// Cuts a pending packed request loose from its layout before the caller abandons it (a
// collective whose peers went another way returns while its sends may still be read): a send
// goes on from a private packed copy of its stream, a receive discards what still arrives.
// Nothing happens to a finished or a contiguous request.
void xmsgi_request_orphan(xmsg_request_t request);

// The collectives below on buffers that may be laid out by a datatype: where a layout is given,
// its packed stream stands for the buffer (the pointer beside it is unused); sizes are bytes of
// the stream: `bytes` for bcast, one rank's block otherwise. Argument checks of the typed calls
// apply; sendbuf may be XMSG_IN_PLACE where the typed call allows it (not for alltoall).
int xmsgi_bcast_laid(void* buf, const xmsgi_layout* layout, int64_t bytes, int root, xmsg_comm_t comm);
int xmsgi_alltoall_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                        const xmsgi_layout* recv_layout, int64_t block, xmsg_comm_t comm);
int xmsgi_allgather_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                         const xmsgi_layout* recv_layout, int64_t block, xmsg_comm_t comm);
int xmsgi_gather_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                      const xmsgi_layout* recv_layout, int64_t block, int root, xmsg_comm_t comm);
int xmsgi_scatter_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                       const xmsgi_layout* recv_layout, int64_t block, int root, xmsg_comm_t comm);
// The v-variants: counts and displacements are bytes of the (packed) streams, displacements
// not negative; the root's arrays only at the root.
int xmsgi_gatherv_laid(const void* sendbuf, const xmsgi_layout* send_layout, int64_t sendbytes, void* recvbuf,
                       const xmsgi_layout* recv_layout, const int64_t* counts, const int64_t* displs, int root,
                       xmsg_comm_t comm);
int xmsgi_scatterv_laid(const void* sendbuf, const xmsgi_layout* send_layout, const int64_t* counts,
                        const int64_t* displs, void* recvbuf, const xmsgi_layout* recv_layout, int64_t recvbytes,
                        int root, xmsg_comm_t comm);
int xmsgi_allgatherv_laid(const void* sendbuf, const xmsgi_layout* send_layout, int64_t sendbytes, void* recvbuf,
                          const xmsgi_layout* recv_layout, const int64_t* counts, const int64_t* displs,
                          xmsg_comm_t comm);
int xmsgi_alltoallv_laid(const void* sendbuf, const xmsgi_layout* send_layout, const int64_t* sendcounts,
                         const int64_t* sdispls, void* recvbuf, const xmsgi_layout* recv_layout,
                         const int64_t* recvcounts, const int64_t* rdispls, xmsg_comm_t comm);

// Records the message xmsg_last_error_message() returns (printf-style) and returns `code`.
int xmsgi_error(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Nothing throws across the C API (transport/include/xmsg/transport/transport.hpp says who may
// throw): each entry point that reaches below runs its body through this, and an exception
// (a buffer the transport cannot register, memory exhausted) becomes an error return naming
// the call. Free on the path that does not throw.
template <class Body>
int xmsgi_guard(const char* func, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return xmsgi_error(XMSG_ERR_NO_MEMORY, "%s: out of memory", func);
  } catch (const std::exception& e) {
    return xmsgi_error(XMSG_ERR_TRANSPORT, "%s: %s", func, e.what());
  } catch (...) {
    return xmsgi_error(XMSG_ERR_INTERNAL, "%s: unexpected exception", func);
  }
}

// Validates `comm` (initialised library, live handle); fills rank/size when non-null.
// On failure records "<func>: ..." and returns the error code.
int xmsgi_check_comm(xmsg_comm_t comm, const char* func, int* rank, int* size);
// Validates a predefined datatype; fills its element size when non-null.
int xmsgi_check_type(xmsg_datatype_t datatype, const char* func, size_t* elem_size);

// Element size of a predefined datatype, 0 for anything else. Inline: every send and receive
// asks (a table lookup once compiled).
template <class V>
struct XmsgiValueIndex {
  V value;
  int index;
};
inline size_t xmsgi_type_size(xmsg_datatype_t t) {
  switch (t) {
    case XMSG_BYTE: case XMSG_CHAR: case XMSG_SIGNED_CHAR: case XMSG_UNSIGNED_CHAR:
    case XMSG_INT8_T: case XMSG_UINT8_T: return 1;
    case XMSG_C_BOOL: return sizeof(bool);
    case XMSG_SHORT: case XMSG_UNSIGNED_SHORT: return sizeof(short);
    case XMSG_INT16_T: case XMSG_UINT16_T: return 2;
    case XMSG_INT: case XMSG_UNSIGNED: return sizeof(int);
    case XMSG_INT32_T: case XMSG_UINT32_T: return 4;
    case XMSG_LONG: case XMSG_UNSIGNED_LONG: return sizeof(long);
    case XMSG_LONG_LONG: case XMSG_UNSIGNED_LONG_LONG: return sizeof(long long);
    case XMSG_INT64_T: case XMSG_UINT64_T: return 8;
    case XMSG_FLOAT: return sizeof(float);
    case XMSG_DOUBLE: return sizeof(double);
    case XMSG_LONG_DOUBLE: return sizeof(long double);
    case XMSG_FLOAT_INT: return sizeof(XmsgiValueIndex<float>);
    case XMSG_DOUBLE_INT: return sizeof(XmsgiValueIndex<double>);
    case XMSG_LONG_INT: return sizeof(XmsgiValueIndex<long>);
    case XMSG_2INT: return sizeof(XmsgiValueIndex<int>);
    case XMSG_SHORT_INT: return sizeof(XmsgiValueIndex<short>);
    case XMSG_LONG_DOUBLE_INT: return sizeof(XmsgiValueIndex<long double>);
    case XMSG_FLOAT_COMPLEX: return 2 * sizeof(float);
    case XMSG_DOUBLE_COMPLEX: return 2 * sizeof(double);
    case XMSG_LONG_DOUBLE_COMPLEX: return 2 * sizeof(long double);
    default: return 0;
  }
}

// Node-awareness: node_ids[i] = node id (0 .. num_nodes-1 of the job) of comm rank i, for
// i < size of comm. `node_ids` must hold comm-size entries.
int xmsgi_comm_node_ids(xmsg_comm_t comm, int* node_ids);
// World rank of comm rank `rank`.
int xmsgi_comm_world_rank(xmsg_comm_t comm, int rank, int* world_rank);

// Whether `request` is complete, without completing or freeing it; fills *status when it is.
int xmsgi_request_peek(xmsg_request_t request, int* done, xmsg_status_t* status);

// Runs the progress engine once (never blocks); returns how many events it handled.
int xmsgi_progress(void);
// XMSG_PROGRESS_INTERVAL in microseconds, or 0 with XMSG_PROGRESS_THREAD off: how often the
// MPI layer's progress thread moves requests on while the rank computes outside MPI.
int xmsgi_progress_interval_us(void);
// XMSG_THREAD_MULTIPLE: whether MPI_Init_thread may grant MPI_THREAD_MULTIPLE (1) or at most
// MPI_THREAD_SERIALIZED (0).
int xmsgi_thread_multiple_allowed(void);
// XMSG_COLL_SCRATCH_CACHE in bytes: how much scratch of finished collective schedules the MPI
// layer keeps for the next ones.
int64_t xmsgi_schedule_scratch_cache(void);
// Descriptors that turn readable when input for xmsgi_progress() may have arrived (each
// transport's wait_fds); writes at most `max` into `fds` and returns how many (0: sleep instead).
int xmsgi_wait_fds(int* fds, int max);

// ---- for the shared-memory collectives (runtime/collectives/shm_collectives.cpp) ----
// The job id (safe in file names) and the context id of `comm` name its node segment.
const char* xmsgi_job_id(void);
// XMSG_SHM_CMA on this rank: single-copy (process_vm_readv/writev) transfers allowed.
int xmsgi_single_copy_allowed(void);
int xmsgi_comm_context(xmsg_comm_t comm, uint32_t* context);
// Called by every waiter of the runtime that found nothing to do (nullptr: none). The MPI
// layer sets it while it has collective schedules in flight, so that a rank blocked in any
// call keeps them moving; the hook must not block.
void xmsgi_set_idle_hook(void (*hook)(void));
// Called by every waiter of the runtime at each pause, before the idle hook (nullptr: none).
// The MPI layer under MPI_THREAD_MULTIPLE sets it to hand its lock to another thread that is
// waiting to enter, so that a thread blocked in a receive cannot keep out the thread that
// would send what a peer needs first. The runtime's state is consistent at every pause. The
// hook returns non-zero when another thread ran meanwhile.
void xmsgi_set_yield_hook(int (*hook)(void));
// The name of this rank's node as the bootstrap knows it (PMIX_HOSTNAME: under
// `xmsgrun --nodes K` each virtual node has its own), nullptr before xmsg_init.
const char* xmsgi_hostname(void);
// One step of a wait loop with the runtime's policy (spin; yield when oversubscribed).
void xmsgi_idle(unsigned* spins);
// XMSG_SUCCESS, or XMSG_ERR_PEER_FAILED with the message recorded when the runtime has found
// rank `rank` of `comm` dead (its transport's liveness check, run by xmsgi_progress).
int xmsgi_check_peer(xmsg_comm_t comm, int rank, const char* func);
// ---- memory shared by the ranks of one node (runtime/src/node_shared.cpp) ----
// For the MPI layer's one-node windows: the shm transport's NodeSharedObject, nameless (a
// memfd the creator hands to the others over an abstract unix socket) where XMSG_SHM_NAMELESS
// is on, else a 0600 /dev/shm object named `name`; every page reserved at creation. One rank
// creates it and sends the ticket, then hands the object over (xmsgi_shared_share) while the
// others join; it calls xmsgi_shared_done_sharing once they all have (or gave up). Failures
// return XMSG_ERR_NO_MEMORY with the reason (naming the object) in `why` (`why_len` bytes).
struct xmsgi_shared_ticket {
  int64_t creator_pid;
  uint64_t token[2];
  int32_t nameless;
  int32_t unused;
};
typedef struct xmsgi_shared xmsgi_shared;
int xmsgi_shared_create(const char* name, uint64_t bytes, xmsgi_shared** out, struct xmsgi_shared_ticket* ticket,
                        char* why, size_t why_len);
int xmsgi_shared_join(const char* name, uint64_t bytes, const struct xmsgi_shared_ticket* ticket, xmsgi_shared** out,
                      char* why, size_t why_len);
int xmsgi_shared_share(xmsgi_shared* shared, int joiners, char* why, size_t why_len);
void* xmsgi_shared_data(const xmsgi_shared* shared);
void xmsgi_shared_done_sharing(xmsgi_shared* shared);
// Unmaps; nullptr is ignored.
void xmsgi_shared_free(xmsgi_shared* shared);

// ---- one-sided access to peers' memory (runtime/src/remote_memory.cpp) ----
// For the MPI layer's windows across nodes: memory a rank exposes to every peer whose transport
// reads and writes it without that peer's CPU (remote_read and remote_write: CMA on one node,
// RDMA WRITE/READ over verbs), and reads and writes of such a peer's memory. tcp has neither:
// its peers stay on messages. Keys are per transport and of fixed size, so ranks allgather them.
#define XMSGI_REMOTE_SLOTS 4
struct xmsgi_remote_key {
  char transport[8];  // the transport's name ("" when the slot is unused)
  uint64_t address;
  uint64_t length;
  uint64_t key;
};
struct xmsgi_remote_keys {
  xmsgi_remote_key slot[XMSGI_REMOTE_SLOTS];
};
// Counts an origin's transfers in flight (incremented by each call that returns success,
// decremented by its completion); the first failure's code and message stay.
struct xmsgi_remote_done {
  int64_t pending = 0;
  int error = 0;
  char reason[200] = {};
};
// XMSG_RMA_REMOTE on this rank (windows may take the remote path).
int xmsgi_remote_enabled(void);
// Exposes [buf, buf+bytes) for reads and writes through every active transport that can do both.
int xmsgi_remote_expose(void* buf, uint64_t bytes, xmsgi_remote_keys* out);
void xmsgi_remote_release(const xmsgi_remote_keys* keys);
// The name of the transport that reaches comm rank `rank` one-sidedly, given the keys that rank
// exposed; nullptr when there is none (tcp, this rank itself, a transport it exposed nothing on).
const char* xmsgi_remote_transport(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys);
// Writes src / reads into dst: n bytes at `offset` of what comm rank `rank` exposed in `keys`
// (xmsgi_remote_transport non-null). Completion, possibly before the call returns, decrements
// done->pending; success and failure both come through `done`, a bad call is an error return.
int xmsgi_remote_write(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, uint64_t offset, const void* src,
                       uint64_t n, xmsgi_remote_done* done);
int xmsgi_remote_read(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, uint64_t offset, void* dst,
                      uint64_t n, xmsgi_remote_done* done);
// 64-bit atomics done by the device (Capabilities::remote_atomics: verbs), on 8 aligned bytes at
// `offset` of what comm rank `rank` exposed, `rank` may be this rank itself: so that the ops of
// every rank, the owner's own included, are atomic against each other. xmsgi_remote_atomics
// names the transport that reaches `rank` so (nullptr: none). compare_swap 0: *result = old, location += operand;
// 1: *result = old, location = operand if old == compare. Completion as for the transfers.
const char* xmsgi_remote_atomics(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys);
int xmsgi_remote_atomic(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, uint64_t offset,
                        int compare_swap, uint64_t operand, uint64_t compare, uint64_t* result,
                        xmsgi_remote_done* done);

// Implemented by the collectives: drops what they keep for `comm` (called as it is freed).
void xmsgi_coll_comm_freed(xmsg_comm_t comm);
