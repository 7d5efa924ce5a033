// Internal header of the one-sided communication files (runtime/mpi/rma/*.cpp): the wire
// format of requests, the Window every file works on, the target-side Service, and the helpers
// one file defines and others call. Nothing here is part of the library's interface.
//
// MPI-3.1 chapter 11, one-sided communication, emulated with messages so that it works on
// every transport alike (shm, tcp, verbs). docs/rma.md is the reference page.
//
// Each window owns a private duplicate of its communicator. An origin turns every RMA call
// into one request message (header, the target datatype's block list, packed data) sent to
// the target on tag kReqTag; replies (get data, lock grants, flush acks) come back on a tag
// the origin chose and pre-posted a receive for. Requests to oneself take the same path
// (a send to self), so there is one implementation of every operation and its ordering.
//
// The target side is a Request registered with register_progress(): the runtime's idle hook
// runs it whenever the rank waits anywhere in MPI (a barrier, a receive, a shm collective),
// and every wait in these files runs it too. It handles one message at a time, in arrival
// order, so operations of one origin are applied in program order and accumulates are atomic
// against each other (nothing else touches the memory in between). A target that computes
// outside MPI serves nothing until it next enters the library.
//
// Completion: small data is copied into the request message; large puts send their data as
// the next message, from the origin buffer, which the epoch's end or flush_local waits for.
// Remote completion (flush, unlock, fence) is a flush request answered after everything
// earlier from that origin was applied, because messages of one (source, tag) do not overtake.
//
// Windows whose memory this library allocates for ranks that all share a node live in one
// mapped segment; there the origin moves the data itself (the direct path) and takes the
// target's lock in the segment. Windows across nodes expose every rank's memory to the
// transports that read and write it one-sidedly (RDMA over verbs, CMA inside a node): puts and
// gets to those ranks are remote writes and reads (remote.cpp), the rest messages.
#pragma once

#include "../mpi_impl.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace xmsg::mpi::rma {

// A full barrier for the stores other processes read through a window's shared segment. Other
// processes, not threads: GCC refuses std::atomic_thread_fence under -fsanitize=thread, and
// ThreadSanitizer does not see another process's accesses anyway.
inline void process_fence() { __sync_synchronize(); }

constexpr int kReqTag = 1;
constexpr int kPostTag = 2;
constexpr int kFirstReplyTag = 16;
constexpr int kLastReplyTag = 1 << 29;

enum Kind : int32_t { kPut = 1, kGet, kAcc, kGetAcc, kCas, kLock, kUnlock, kFlush, kComplete, kBatch };
// A kBatch message carries, after its header, requests one after another, each as an int64_t
// length and the request padded to 8 bytes (never a batch, never a put whose data follows). The origin holds
// its small puts and accumulates to a target (each up to kBatchPiece bytes) until the next
// request to that target that must go now, a synchronisation, or kBatchBytes held: a flush
// after an accumulate is then one message and its answer, where it was two and an answer
// (over tcp each message is a system call at both ends). MPI completes these operations at
// the target only at synchronisation, so holding them changes nothing a program may see.
constexpr int64_t kBatchPiece = 2048;
constexpr int64_t kBatchBytes = 8192;

// Fixed part of a request message; nblocks WireBlocks and the data follow.
struct Hdr {
  int32_t kind;
  int32_t reply_tag;
  int64_t disp;
  int64_t count;   // target_count
  int64_t extent;  // extent of the target datatype
  int32_t nblocks;
  int32_t op;
  int32_t basic;  // xmsg datatype the data is made of (accumulates)
  int32_t lock_type;
  int64_t data_bytes;  // bytes of target data the operation covers (count * size)
  int32_t split;       // put: the data follows as the next message from this origin
  int32_t pad;
};
// From this size on a put's data travels as a message of its own, sent from the origin
// buffer and received into the window when the datatypes allow (no copy at either end
// beyond the transport's), and a get's answer is sent straight from the window.
constexpr int64_t kSplitBytes = 4096;
struct WireBlock {
  int64_t offset;
  int64_t bytes;
};
// Answer to flush / unlock: the first target-side failure seen from this origin since the
// last answer (dynamic windows are checked at the target only).
struct Ack {
  int32_t code;
  int32_t pad;
  int64_t addr;
  int64_t bytes;
};

struct RankInfo {
  int64_t size;
  int32_t disp_unit;
  int32_t pad;
};

struct Outgoing {
  xmsg_request_t req = XMSG_REQUEST_NULL;
  std::unique_ptr<char[]> buf;
  int target = -1;
};

// An origin-side receive of data coming back (get, get_accumulate, fetch, cas).
struct GetOp {
  xmsg_request_t req = XMSG_REQUEST_NULL;
  int target = -1;
  bool done = false;
  std::unique_ptr<char[]> staging;  // null when the data lands in the user's buffer
  int64_t bytes = 0;
  void* user = nullptr;
  int64_t count = 0;
  Type type;  // the origin (result) datatype, copied: the program may free its handle
};

struct CmaPeer {
  uint64_t base;  // the rank's window memory, in its address space
  int64_t pid;
};

struct Region {
  uintptr_t base;
  uintptr_t size;
};

struct LockWaiter {
  int origin;
  int type;
  int tag;
};

// The passive-target locks an origin holds, per target rank: a vector, not a map, since
// MPI_Win_lock and _unlock are on the path of every locked operation (a map node was an
// allocation each).
class HeldLocks {
 public:
  void resize(int ranks) { state_.assign(static_cast<size_t>(ranks), kNone); }
  bool count(int rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < state_.size() && state_[static_cast<size_t>(rank)] != kNone;
  }
  bool empty() const { return held_ == 0; }
  void hold(int rank, int lock_type, bool nocheck) {
    state_[static_cast<size_t>(rank)] =
        static_cast<uint8_t>((lock_type == MPI_LOCK_EXCLUSIVE ? kExclusive : kShared) | (nocheck ? kNocheck : 0));
    ++held_;
  }
  // Lets go of `rank` (held: count(rank)); says how it was taken.
  void release(int rank, int* lock_type, bool* nocheck) {
    const uint8_t s = state_[static_cast<size_t>(rank)];
    *lock_type = (s & kExclusive) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    *nocheck = (s & kNocheck) != 0;
    state_[static_cast<size_t>(rank)] = kNone;
    --held_;
  }

 private:
  static constexpr uint8_t kNone = 0, kShared = 1, kExclusive = 2, kNocheck = 4;
  std::vector<uint8_t> state_;
  int held_ = 0;
};

struct Window;
struct Service final : Request {
  Window* w = nullptr;
  int test(bool* done, MPI_Status* status) override;
  bool peek(MPI_Status*) override { return false; }
  // Direct and single-copy windows need nothing from their target between synchronisations.
  bool wants_background() const override;
};

struct Window {
  int handle = 0;
  MPI_Comm comm = MPI_COMM_NULL;  // the program's
  xmsg_comm_t xcomm = XMSG_COMM_NULL;  // private duplicate for this window's traffic
  int rank = 0, size = 0;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  void* base = nullptr;
  MPI_Aint win_size = 0;
  int disp_unit = 1;
  std::vector<RankInfo> ranks;
  // allocate: memory we own; shared: the mapped segment and each rank's offset in it.
  void* owned = nullptr;
  void* segment = nullptr;  // the data of `shared`
  xmsgi_shared* shared = nullptr;
  size_t segment_bytes = 0;
  std::vector<int64_t> seg_offset;
  // Every rank's memory is in `segment`, mapped here: operations are loads and stores by the
  // origin, accumulates serialised by a spin lock in the segment's control block.
  bool direct = false;
  std::atomic<uint32_t>* acc_lock = nullptr;
  // Direct and single-copy paths: each rank's passive-target lock word, a cache line apart
  // (direct_lock), in `segment` (the single-copy path maps only the control block).
  std::atomic<uint64_t>* lock_words = nullptr;
  // Direct and single-copy paths with at most kPscwMaxRanks ranks: PSCW as counters in the
  // control block (direct.cpp, pscw_*). posts[t * size + o]: exposure epochs target t opened to
  // origin o; completes[t * 8]: access epochs that ended at t (a cache line each). Cumulative,
  // compared with this rank's own counts: epochs started per target, completions expected.
  std::atomic<uint32_t>* pscw_posts = nullptr;
  std::atomic<uint64_t>* pscw_completes = nullptr;
  std::vector<uint32_t> pscw_started;
  uint64_t pscw_expected = 0;
  // Single-copy path (MPI_Win_create on one node, cma.cpp): every rank's window address and pid.
  bool cma = false;
  std::vector<CmaPeer> cma_peers;
  // Remote path (remote.cpp, windows by MPI_Win_create and _allocate across nodes): every
  // rank's memory as the transports exposed it; remote_via[r] names the transport reaching
  // rank r one-sidedly, null where there is none (tcp, this rank): puts and gets to those stay
  // messages. remote_done[r] counts the transfers to r in flight (completions hold its address).
  bool remote = false;
  bool remote_exposed = false;
  xmsgi_remote_keys my_keys{};
  std::vector<xmsgi_remote_keys> remote_keys;
  std::vector<const char*> remote_via;
  std::unique_ptr<xmsgi_remote_done[]> remote_done;
  std::vector<std::pair<int, std::unique_ptr<char[]>>> remote_staging;  // packed put sources, per target
  // Accumulate-class operations on 64-bit integers are the device's atomics (device_atomics.cpp),
  // and so are the passive-target locks: each rank's lock word (lock_word_memory, exposed with
  // lock_keys) taken and released by the origins' device atomics.
  bool device_atomics = false;
  bool device_locks = false;
  uint64_t* lock_word_memory = nullptr;
  xmsgi_remote_keys my_lock_keys{};
  std::vector<xmsgi_remote_keys> lock_keys;
  std::vector<Region> attached;  // dynamic
  std::string name;
  std::map<std::string, std::string> info;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  AttrMap attrs;
  // What MPI_Win_get_attr hands out pointers to: they must stay valid as long as the window.
  MPI_Aint attr_size = 0;
  int attr_disp_unit = 0, attr_flavor = 0, attr_model = 0;

  // ---- origin side
  std::vector<Outgoing> sends;
  std::vector<std::shared_ptr<GetOp>> gets;
  std::vector<char> dirty;  // per target: operations since its last flush
  // Per target: operations since its last flush that only the flush's answer shows complete
  // (puts, accumulates). A fetching operation (get, get_accumulate, fetch_and_op,
  // compare_and_swap) served by the target's messages is complete when its result is here,
  // and cannot fail there on a window whose size the origin checked: a flush after only those
  // needs no round trip (over tcp, MPI_Fetch_and_op + MPI_Win_flush took two).
  std::vector<char> needs_ack;
  std::vector<std::vector<char>> held;  // per target: requests held for a batch (kBatch)
  int next_tag = kFirstReplyTag;
  bool fence_open = false;
  bool started = false;
  std::vector<int> access;  // PSCW access group (window ranks)
  std::vector<char> in_access;
  HeldLocks locks;
  bool lock_all = false;
  bool lock_all_nocheck = false;

  // ---- target side
  Service service;
  xmsg_request_t in_req = XMSG_REQUEST_NULL;
  std::vector<char> in_buf;
  int64_t in_bytes = 0;
  int in_src = -1;
  // A split put whose data is being received: its header and blocks, where it lands.
  bool in_data = false;
  std::vector<char> put_hdr;
  char* put_at = nullptr;
  std::unique_ptr<char[]> put_staging;
  std::vector<Outgoing> replies;
  std::vector<Ack> pending_error;  // per origin
  bool posted = false;
  int expected_completes = 0;
  int completes = 0;
  int excl_holder = -1;
  int shared_holders = 0;
  std::deque<LockWaiter> lock_queue;
  int service_error = MPI_SUCCESS;
};

// The target of an origin-side operation: rank, displacement and the target datatype.
struct Target {
  int rank;
  MPI_Aint disp;
  int64_t count;
  const Type* type;
};

// Accumulates of every origin exclude each other (MPI's per-element atomicity, here per
// call); held only for the copy and combine, never across an MPI wait.
struct AccGuard {
  std::atomic<uint32_t>* lock;
  explicit AccGuard(std::atomic<uint32_t>* l) : lock(l) {
    unsigned spins = 0;
    while (lock->exchange(1, std::memory_order_acquire) != 0)
      while (lock->load(std::memory_order_relaxed) != 0)
        if (++spins > 64) sched_yield();
  }
  ~AccGuard() { lock->store(0, std::memory_order_release); }
};

// ---- waiting ---------------------------------------------------------------------------------
// Every wait here keeps all windows' services (and schedules) moving.
template <class Done>
void spin_until(Done&& done) {
  unsigned spins = 0;
  while (!done()) {
    progress_all();
    xmsgi_progress();
    xmsgi_idle(&spins);
  }
}

// ---- errors through the window's handler (attributes.cpp) ------------------------------------
// Formats "<func>: <message>", records it and routes `code` to the window's error handler.
int raise(Window* w, int code, const char* func, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
// A failure some helper already recorded (check_type, the C API): route it to the window.
int reraise(Window* w, int code, const char* func);
// Runs the window's error handler on `code` with `message`; returns `code` when the handler returns.
int dispatch(Window* w, int code, const char* message);

// ---- windows (window.cpp) --------------------------------------------------------------------
// The window of a handle, nullptr when invalid or freed.
Window* window_of(MPI_Win win);
// Valid window or MPI_ERR_WIN through MPI_COMM_WORLD's handler.
int check_win(MPI_Win win, const char* func, Window** out);
// The window's name in quotes, or its handle (for messages; one static buffer).
const char* win_name(const Window* w);
// Keeps the keys of `info` in the window (MPI_Win_get_info reports them).
void store_info(Window* w, MPI_Info info);

// ---- target side (target.cpp) ----------------------------------------------------------------
// The byte range [*lo, *hi) `count` elements of the block list cover, relative to the
// displacement. Blocks: WireBlock (a request's) or Block (a datatype's: the origin's range check,
// once per operation, without copying the list).
template <class Blocks>
void footprint(const Blocks* b, int32_t n, int64_t count, int64_t extent, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = 0;
  if (count <= 0 || n <= 0) return;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (int32_t i = 0; i < n; ++i) {
    if (b[i].bytes <= 0) continue;
    first = std::min<int64_t>(first, b[i].offset);
    last = std::max<int64_t>(last, b[i].offset + b[i].bytes);
  }
  if (first == INT64_MAX) return;
  const int64_t span = (count - 1) * extent;
  *lo = std::min(first, first + span);
  *hi = std::max(last, last + span);
}
// cur = in (op) cur on packed data of `basic` elements.
void combine(const char* in, char* cur, int64_t bytes, int32_t basic, int32_t op);
// One pass of the window's service over the requests that arrived; never blocks.
void serve(Window* w);

// ---- origin side (origin.cpp) ----------------------------------------------------------------
bool poll_get(GetOp& g);
bool poll_send(Outgoing& o);
// Local completion of everything to `target` (-1: every target).
void complete_local(Window* w, int target);
int take_tag(Window* w);
// A request message: header, the target datatype's blocks and room for `payload` bytes at *data_at.
std::unique_ptr<char[]> build(const Hdr& h0, const Target& t, int64_t payload, char** data_at, int64_t* total);
// Sends a request to `target` and marks it as needing a flush.
// `answered`: a fetching operation, whose result comes back (Window::needs_ack).
// `holdable`: a put or accumulate whose data is in the request, which may wait for a batch.
int post(Window* w, int target, std::unique_ptr<char[]> buf, int64_t total, const char* func, bool answered = false,
         bool holdable = false);
// Sends what is held for `target` (-1: every target) as one batch message.
int send_held(Window* w, int target);
// A receive for data coming back into (buf, count, type); posted before the request goes out.
int expect(Window* w, int target, int tag, void* buf, int64_t count, const Type* type, int64_t bytes,
           std::shared_ptr<GetOp>* out, const char* func);
// An accumulate (`fetch`: get_accumulate) as a request to target t.rank's service: the
// origin's data packed into it, the fetched data expected into (result, rcount, rt) through
// *fetched. Checked by the caller.
int accumulate_request(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                       const Type* rt, const Target& t, int64_t bytes, MPI_Op op, bool fetch, const char* func,
                       std::shared_ptr<GetOp>* fetched);
// Sends a flush / unlock to each target and waits for their answers.
int sync_targets(Window* w, const std::vector<int>& targets, int32_t kind, const char* func);
std::vector<int> dirty_targets(Window* w);
// An access epoch to `target` is open (fence, PSCW start, lock, lock_all).
bool in_epoch(const Window* w, int target);
// Checks shared by every communication call.
int check_target(Window* w, int target_rank, MPI_Aint target_disp, const char* func, bool* skip);
int check_count(Window* w, int count, const char* arg, const char* func);
int check_dtype(Window* w, MPI_Datatype d, const char* arg, const char* func, const Type** out);
int check_range(Window* w, const Target& t, const char* func);
int check_acc_op(Window* w, MPI_Op op, const Type* origin, const Type* target, const char* func, bool allow_no_op);

// ---- the direct path (direct.cpp) ------------------------------------------------------------
char* direct_addr(Window* w, int rank, MPI_Aint disp);
void direct_put(Window* w, const void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp,
                int64_t tcount, const Type& tt, int64_t bytes);
void direct_get(Window* w, void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp, int64_t tcount,
                const Type& tt, int64_t bytes);
void direct_accumulate(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                       const Type* rt, int rank, MPI_Aint disp, int64_t tcount, const Type& tt, int64_t bytes,
                       MPI_Op op);
// The same with the target's memory at `at` (this process's own window memory on the
// single-copy path too). accumulate_at holds the window's accumulate lock.
void put_at(char* at, const void* origin, int64_t ocount, const Type& ot, int64_t tcount, const Type& tt,
            int64_t bytes);
void get_at(const char* at, void* origin, int64_t ocount, const Type& ot, int64_t tcount, const Type& tt,
            int64_t bytes);
void accumulate_at(Window* w, char* at, const void* origin, int64_t ocount, const Type* ot, void* result,
                   int64_t rcount, const Type* rt, int64_t tcount, const Type& tt, int64_t bytes, MPI_Op op);

// ---- the remote path (remote.cpp) -----------------------------------------------------------
// Calls run(window_offset, stream_offset, bytes) for each contiguous run `count` elements of
// `type` cover (adjacent blocks, and elements whose blocks abut, merged), in stream order.
template <class Run>
int for_each_run(const Type& type, int64_t count, Run&& run) {
  int64_t start = 0, length = 0, stream = 0, stream_start = 0;
  for (int64_t i = 0; i < count; ++i) {
    for (const Block& b : type.blocks) {
      if (b.bytes <= 0) continue;
      const int64_t at = i * type.extent + b.offset;
      if (length > 0 && at == start + length) {
        length += b.bytes;
      } else {
        if (length > 0)
          if (int e = run(start, stream_start, length)) return e;
        start = at;
        length = b.bytes;
        stream_start = stream;
      }
      stream += b.bytes;
    }
  }
  return length > 0 ? run(start, stream_start, length) : MPI_SUCCESS;
}

// Collective: exposes this rank's window memory (base, win_size) through every transport that
// can read and write it one-sidedly and learns every rank's keys. Off with XMSG_RMA_REMOTE=off,
// or when any rank could not expose (then every rank keeps messages).
void set_up_remote(Window* w);
// Collective: exposes [buf, buf+bytes) through every transport that reads and writes it
// one-sidedly and gathers every rank's keys into *all. *exposed: this rank's exposure worked
// (to be released); returns whether exposure and gather both worked here.
bool expose_to_all(Window* w, void* buf, uint64_t bytes, xmsgi_remote_keys* mine, std::vector<xmsgi_remote_keys>* all,
                   bool* exposed);
// Byte offset of t.disp in the target's window.
inline int64_t base_offset(const Window* w, const Target& t) {
  return static_cast<int64_t>(t.disp) * w->ranks[static_cast<size_t>(t.rank)].disp_unit;
}
// After the window's last epoch (MPI_Win_free's barrier): withdraws the exposure.
void release_remote(Window* w);
// Whether a put or get to `rank` goes through the remote path.
inline bool remote_reach(const Window* w, int rank) {
  return w->remote && w->remote_via[static_cast<size_t>(rank)] != nullptr;
}
// A put / get of the checked transfer as remote writes / reads, one per contiguous run of the
// target datatype, for at most a few dozen runs; remote_get only into contiguous origin
// buffers. *taken false: not for the remote path, the caller sends a request. `copy`: the
// origin buffer is free on return (MPI_Rput), so the data is copied first.
int remote_put(Window* w, const void* origin, int64_t ocount, const Type& ot, const Target& t, int64_t bytes,
               bool copy, const char* func, bool* taken);
int remote_get(Window* w, void* origin, const Type& ot, const Target& t, const char* func, bool* taken);
// Waits until the transfers to `target` (-1: every target) are complete, at the origin and at the
// target alike (RDMA WRITE completions come with the target's acknowledgement).
void remote_wait(Window* w, int target);
// The first transfer to `target` (-1: any) that failed, raised on the window; MPI_SUCCESS if none.
int remote_failure(Window* w, int target, const char* func);

// ---- accumulates as the device's atomics (device_atomics.cpp) ------------------------------
// Collective, after set_up_remote: whether every rank reaches every rank, itself included, with
// device atomics (Window::device_atomics). Off with XMSG_RMA_DEVICE_ATOMICS=off.
void set_up_device_atomics(Window* w);
// Whether an accumulate-class operation on `target_type` goes through the device: on such a
// window, every one on 64-bit integers does, whoever issues it.
bool takes_device_atomics(const Window* w, const Type& target_type);
// The checked accumulate (get_accumulate, fetch_and_op: `result` set) as device atomics, done
// when it returns. *taken false: the target's alignment rules it out (the same for every
// origin), the caller takes the message path.
int device_accumulate(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                      const Type* rt, const Target& t, int64_t bytes, MPI_Op op, const char* func, bool* taken);
int device_compare_and_swap(Window* w, const void* origin, const void* compare, void* result, const Target& t,
                            const char* func, bool* taken);
// Passive-target locks of a device_locks window: the lock word of `rank` taken (waiting until it
// is granted) and released by device atomics, no message to the target.
int device_lock(Window* w, int rank, int lock_type, const char* func);
int device_unlock(Window* w, int rank, int lock_type, const char* func);
// After the window's last epoch: withdraws the lock word's exposure and frees it.
void release_device_locks(Window* w);

// ---- the single-copy path (cma.cpp) ----------------------------------------------------------
// MPI_Win_create windows on one node (Window::cma): the origin reads and writes the target's
// memory with process_vm_readv/writev. MPI_SUCCESS, or a failed call raised on the window.
int cma_put(Window* w, const void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp, int64_t tcount,
            const Type& tt, int64_t bytes, const char* func);
int cma_get(Window* w, void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp, int64_t tcount,
            const Type& tt, int64_t bytes, const char* func);
int cma_accumulate(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                   const Type* rt, int rank, MPI_Aint disp, int64_t tcount, const Type& tt, int64_t bytes, MPI_Op op,
                   const char* func);
int cma_compare_and_swap(Window* w, const void* origin, const void* compare, void* result, int64_t n, int rank,
                         MPI_Aint disp, const char* func);

// Passive-target locks of the direct and single-copy paths: the origin takes and releases
// target `rank`'s lock word in the segment itself, so the target takes no part (one busy
// outside MPI delays no origin). Waiting keeps every window's service and the runtime moving.
constexpr int64_t kLockWordStride = 64;  // bytes between two ranks' lock words
void direct_lock(Window* w, int rank, int lock_type);
void direct_unlock(Window* w, int rank, int lock_type);
// PSCW on those paths (Window::pscw_posts set): no token and no completion message, and no
// target service. Larger windows keep the messages (the counters grow with the square).
constexpr int kPscwMaxRanks = 64;
// Bytes of the control block's PSCW part for `ranks` ranks (0 above kPscwMaxRanks).
int64_t pscw_bytes(int ranks);
void pscw_place(Window* w, char* at);
void pscw_post(Window* w, const std::vector<int>& origins);
void pscw_start(Window* w, const std::vector<int>& targets, bool wait);
void pscw_complete(Window* w, const std::vector<int>& targets);
// Every access epoch to this rank's exposure epochs so far has completed.
bool pscw_exposure_done(const Window* w);

}  // namespace xmsg::mpi::rma
