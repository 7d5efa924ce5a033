// Internal interface of libxmsg_mpi: what the chapter files (env, info, attributes, group,
// comm, datatype, p2p, coll, nbc, topology, rma) share. One concept per section:
//   errors      route a failure through the communicator's error handler
//   objects     per-communicator state the C API does not have (names, attributes, topology,
//               intercommunicator mapping, error handler, the tag sequence of collectives)
//   datatypes   the type map of derived datatypes, pack/unpack, and the (buffer, count, type)
//               views sends, receives and collectives use
//   requests    MPI-layer requests (tagged pointers next to plain xmsg requests) and progress
//   schedules   rounds of sends/receives/local steps on a communicator's collective context:
//               every collective this library implements itself, blocking or not
// The xmsg runtime keeps the fast paths (contiguous point-to-point and the blocking
// collectives on predefined types); this layer adds MPI's other concepts on top.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../src/xmsg_internal.h"

// Defines MPI_X as a weak alias of PMPI_X (the profiling interface).
#define XMSG_MPI_ALIAS(name) \
  extern "C" __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)));

// First statement of every MPI entry point (progress_thread.cpp): while the progress thread is
// engaged, the calling thread's outermost MPI call holds the progress lock.
#define XMSG_MPI_ENTRY ::xmsg::mpi::EntryGuard xmsg_entry_guard_

namespace xmsg::mpi {

// ---- errors --------------------------------------------------------------------------------
// Returns `code` after the error handler of `comm` ran (MPI_ERRORS_ARE_FATAL: print
// "<func>: <xmsg's message>" and abort the job). For failures the C API reported. Inline so
// that a successful call pays one compare (every MPI_Send/MPI_Recv goes through it).
int handle_failure(int code, const char* func, MPI_Comm comm);
inline int handle(int code, const char* func, MPI_Comm comm = MPI_COMM_WORLD) {
  if (code == MPI_SUCCESS) [[likely]]
    return code;
  return handle_failure(code, func, comm);
}
// The same for failures found here: records "<func>: <message>" and routes it.
int fail(int code, const char* func, MPI_Comm comm, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
// Error handler of a communicator (MPI_ERRORS_ARE_FATAL unless set).
MPI_Errhandler errhandler_of(MPI_Comm comm);
// The "MPI_ERR_..." class of a code (user codes map to their class).
int error_class_of(int code);
// Window error handlers (env.cpp's table; rma/ routes a window's errors through them).
// Whether `errhandler` may be set on a window: MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN or a
// live handler made by MPI_Win_create_errhandler.
bool is_win_errhandler(MPI_Errhandler errhandler);
// Calls the user function of a handler made by MPI_Win_create_errhandler with (win, code) and
// returns true; false (nothing called) when `errhandler` is not such a handler.
bool call_win_errhandler(MPI_Errhandler errhandler, MPI_Win win, int code);

// ---- attributes (attributes.cpp) ----------------------------------------------------------
enum class AttrKind { kComm, kType, kWin };
struct AttrMap {
  std::map<int, void*> values;
};
// Copies the attributes of `from` into `to` as MPI_Comm_dup / MPI_Type_dup do (calling each
// keyval's copy callback); `object` is the old handle the callback sees.
int copy_attributes(AttrKind kind, int object, const AttrMap& from, AttrMap* to);
// Deletes every attribute (the delete callbacks run), as the object is freed.
int delete_attributes(AttrKind kind, int object, AttrMap* attrs);
// One attribute of an object whose errors the caller reports itself (windows: rma/). They
// return an MPI code and record no message. valid_keyval: `keyval` was made for `kind` objects
// and not freed. set_attribute: MPI_ERR_KEYVAL unless valid; an old value's delete callback runs
// first (its failure is returned, the old value kept). delete_attribute: MPI_ERR_KEYVAL when
// the object has no attribute for `keyval`, else the delete callback's code (kept on failure).
bool valid_keyval(AttrKind kind, int keyval);
int set_attribute(AttrKind kind, int object, AttrMap* attrs, int keyval, void* value);
int delete_attribute(AttrKind kind, int object, AttrMap* attrs, int keyval);

// ---- per-communicator state (comm.cpp) ----------------------------------------------------
struct Topology {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH
  std::vector<int> dims, periods;              // cartesian
  std::vector<int> index, edges;               // graph (MPI_Graph_create's arrays)
  std::vector<int> sources, source_weights;    // distributed graph: in-neighbours
  std::vector<int> destinations, dest_weights; // and out-neighbours
  bool weighted = false;
};

struct CommState {
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  AttrMap attrs;
  std::map<std::string, std::string> info;
  uint32_t collective_seq = 0;  // collectives started here (the same count on every member)
  Topology topo;
  // Intercommunicator: the handle is a communicator over both groups (the "union", group
  // `low` first); ranks the program sees are ranks of its own group or of the remote one.
  bool inter = false;
  MPI_Comm local = MPI_COMM_NULL;  // intracommunicator of this rank's group
  int local_offset = 0;            // union rank of local rank 0
  int remote_offset = 0;           // union rank of remote rank 0
  int local_size = 0;
  int remote_size = 0;
  // Requests of this layer that use the communicator after their call returned (non-blocking
  // and persistent collectives, persistent point-to-point): MPI_Comm_free while any is alive
  // only marks it (`free_pending`); the last one to go frees it (retain_comm/release_comm).
  int users = 0;
  bool free_pending = false;
};
void retain_comm(MPI_Comm comm);
void release_comm(MPI_Comm comm);
// State of `comm` (created on first use); nullptr for MPI_COMM_NULL or a negative handle.
CommState* state_of(MPI_Comm comm);
// Forgets `comm` (after xmsg_comm_free), running attribute delete callbacks first.
int drop_state(MPI_Comm comm);
// Fast check used on every point-to-point call: true when `comm` is an intercommunicator.
// Until a program makes its first intercommunicator the answer is one load.
extern bool g_have_intercomms;
extern std::vector<char> g_inter_flags;  // one byte per handle
inline bool is_inter(MPI_Comm comm) {
  return g_have_intercomms && static_cast<size_t>(comm) < g_inter_flags.size() &&
         g_inter_flags[static_cast<size_t>(comm)];
}
// Sets up the state of a communicator just created from `parent` (error handler inherited).
void inherit_state(MPI_Comm parent, MPI_Comm created);
// World ranks of the members of an intracommunicator, in rank order.
int world_ranks_of(MPI_Comm comm, std::vector<int>* out);

// ---- groups (group.cpp) -------------------------------------------------------------------
// A group is an ordered list of world ranks.
int new_group(std::vector<int> world_ranks, MPI_Group* out);
const std::vector<int>* group_members(MPI_Group group);  // nullptr when invalid

// ---- datatypes (datatype.cpp) -------------------------------------------------------------
struct Block {
  MPI_Aint offset;  // from the start of one element
  int64_t bytes;
};

struct Type {
  bool predefined = false;
  bool committed = false;
  // One block of `size` bytes at true_lb and extent == size: the data of count elements is one
  // contiguous run of count*size bytes starting at buf + true_lb.
  bool contiguous = false;
  int64_t size = 0;  // bytes of data in one element
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  std::vector<Block> blocks;  // the data of one element in type-map order, adjacent blocks merged
  // The one xmsg datatype all the data is made of (reductions need it), 0 when mixed;
  // basic_count elements of it per element of this type.
  xmsg_datatype_t basic = 0;
  int64_t basic_count = 0;
  // Envelope and contents as MPI_Type_get_envelope / _contents report them.
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
  std::string name;
  AttrMap attrs;
  // Messages in flight that use this type (TypePin); MPI_Type_free of a pinned type parks it
  // until the last pin goes. Meaningless in the copies schedules keep (never pinned).
  mutable int64_t pins = 0;
  mutable bool parked = false;
};

// Called by the last TypePin of a type MPI_Type_free parked: the type goes (datatype.cpp).
void unpark_type(const Type* type);

// A handle of the library's own for the type behind `datatype` (a copy without attributes,
// committed when it is), for a request that builds from it after the program may have freed
// its handle (persistent collectives); predefined types are their own. Invalid handles come
// back as they are (the caller checked them). Freed with free_private_type.
MPI_Datatype private_type(MPI_Datatype datatype);
void free_private_type(MPI_Datatype datatype);
// The same for a user-defined op (a second handle on the same function, freed with
// free_private_op); predefined ops are their own (coll.cpp).
MPI_Op private_op(MPI_Op op);
void free_private_op(MPI_Op op);

// Keeps a derived type usable until the message that uses it completes, although the program
// may free it first (MPI_Type_free). A plain count, not a shared_ptr: the MPI layer runs on one
// thread at a time (MPI_THREAD_FUNNELED), and the shared_ptr's atomic count, taken per message
// on both sides, cost ~5 % of 64-byte windowed bandwidth (docs/results/2026-12-03-packed).
class TypePin {
 public:
  TypePin() = default;
  explicit TypePin(const Type* t) : t_(t) {
    if (t_) ++t_->pins;
  }
  TypePin(const TypePin& o) : TypePin(o.t_) {}
  TypePin& operator=(const TypePin& o) {
    if (this != &o) {
      reset();
      t_ = o.t_;
      if (t_) ++t_->pins;
    }
    return *this;
  }
  ~TypePin() { reset(); }
  void reset() {
    if (t_ && --t_->pins == 0 && t_->parked) unpark_type(t_);
    t_ = nullptr;
  }

 private:
  const Type* t_ = nullptr;
};

// The type of a handle (predefined or derived), nullptr when invalid or freed.
const Type* type_of(MPI_Datatype datatype);
Type* mutable_type_of(MPI_Datatype datatype);
// Valid and committed (predefined types always are); the message names `func` and `arg`.
int check_type(MPI_Datatype datatype, const char* func, const char* arg, MPI_Comm comm, const Type** out);
// True when the handle is one of xmsg's own predefined datatypes: the C API takes it directly.
inline bool is_xmsg_type(MPI_Datatype d) { return d > 0 && d < XMSG_DATATYPE_LAST; }
// Bytes [offset, offset + n) of the packed stream of the data at `buf` (any count of `type`
// elements; the caller keeps the range inside it) to `out`, and back.
void pack_range(const void* buf, const Type& type, int64_t offset, int64_t n, void* out);
void unpack_range(const void* in, const Type& type, int64_t offset, int64_t n, void* buf);
// Copies the data of `count` elements at `inbuf` into contiguous `out` (count * size bytes).
void pack(const void* inbuf, int64_t count, const Type& type, void* out);
// Copies `bytes` (at most count * size) of contiguous data into `count` elements at `outbuf`.
void unpack(const void* in, int64_t bytes, void* outbuf, int64_t count, const Type& type);

// Staging memory for packed data, from a pool of size classes (staging.cpp).
struct StagingRelease {
  void operator()(char* data) const;
};
using Staging = std::unique_ptr<char[], StagingRelease>;
Staging staging_buffer(int64_t bytes);

// What a send of (buf, count, datatype) hands to the C API: the buffer as it is when the data
// is contiguous, else a packed copy (owned here).
// The datatype engine's side of a packed message (xmsg_internal.h): (buf, type) as a packed
// byte stream the runtime asks for in pieces, each packed into or unpacked out of the
// transport's buffer (pack_range / unpack_range, datatype.cpp).
struct TypeLayout final : xmsgi_layout {
  const void* buf = nullptr;
  const Type* type = nullptr;
  TypePin keep;  // a derived `type` (MPI_Type_free may come before the message completes)
  void pack(uint64_t offset, void* dst, uint64_t n) const override;
  void unpack(uint64_t offset, const void* src, uint64_t n) const override;
};

struct SendView {
  const void* data = nullptr;
  int64_t count = 0;
  xmsg_datatype_t xtype = XMSG_BYTE;
  int64_t bytes = 0;
  Staging owned;
  // `allow_packed` and the data not contiguous: no staging copy, `packed` is set and `layout`
  // describes the data (point-to-point sends it with xmsgi_isend_packed).
  bool packed = false;
  TypeLayout layout;
  int init(const void* buf, int64_t count, MPI_Datatype datatype, const char* func, MPI_Comm comm,
           bool allow_packed = false);
};
// What a receive into (buf, count, datatype) gives the C API; finish() unpacks what arrived
// when the data is not contiguous.
struct RecvView {
  void* data = nullptr;
  int64_t count = 0;
  xmsg_datatype_t xtype = XMSG_BYTE;
  int64_t bytes = 0;
  void* user = nullptr;
  int64_t user_count = 0;
  const Type* type = nullptr;
  Staging owned;
  TypePin keep;  // a derived `type` until the view goes (MPI_Type_free may come before finish)
  bool packed = false;  // as SendView's: received with xmsgi_irecv_packed, finish() has nothing to do
  TypeLayout layout;
  int init(void* buf, int64_t count, MPI_Datatype datatype, const char* func, MPI_Comm comm,
           bool allow_packed = false);
  void finish(int64_t received_bytes);
};

// ---- the progress thread (progress_thread.cpp) -----------------------------------------------
// While requests that need this layer's progress are in flight (non-blocking collectives,
// requests freed before completion, windows whose targets serve requests as messages), a helper
// thread runs a progress pass every XMSG_PROGRESS_INTERVAL while the rank stays outside MPI, so
// a rank that computes does not hold up its peers. The layer stays single-threaded in effect:
// every entry point starts with XMSG_MPI_ENTRY, and while the helper is engaged the outermost
// call holds the progress lock for its whole duration, which the helper only try-locks. Not
// engaged (no such work, or XMSG_PROGRESS_THREAD=off), an entry costs a thread-local count and
// one load.
// Under MPI_THREAD_MULTIPLE (XMSG_THREAD_MULTIPLE) the same lock is the layer's one lock for
// every thread: each outermost entry takes it, and a thread waiting anywhere in the runtime
// hands it to a thread waiting to enter at each pause of its wait (let_other_threads_in).
extern std::atomic<bool> g_progress_engaged;
// Set by MPI_Init_thread before any other thread may call in, never changed afterwards.
extern bool g_thread_multiple;
extern __thread int t_entry_depth __attribute__((tls_model("initial-exec")));
extern __thread bool t_holds_progress_lock __attribute__((tls_model("initial-exec")));
void enter_engaged();
void leave_engaged();
struct EntryGuard {
  EntryGuard() {
    if (t_entry_depth++ == 0 && (g_progress_engaged.load(std::memory_order_acquire) || g_thread_multiple)) [[unlikely]]
      enter_engaged();
  }
  ~EntryGuard() {
    if (--t_entry_depth == 0 && t_holds_progress_lock) [[unlikely]]
      leave_engaged();
  }
  EntryGuard(const EntryGuard&) = delete;
  EntryGuard& operator=(const EntryGuard&) = delete;
};
// The contiguous fast path of MPI_Send, _Recv, _Isend and _Irecv runs before XMSG_MPI_ENTRY
// while this holds: with the helper not engaged nothing else runs the runtime, and the fast
// path registers no request, so it cannot engage it. These four carry the small-message
// ping-pong, where a few instructions per call show (docs/results/2026-12-04-progress-thread).
inline bool progress_thread_idle() {
  return !g_progress_engaged.load(std::memory_order_acquire) && !g_thread_multiple;
}
// MPI_Init_thread with MPI_THREAD_MULTIPLE granted: from here on every entry takes the lock.
void begin_thread_multiple();
// A request that wants background progress was registered: start or wake the helper.
void engage_progress_thread();
// MPI_Finalize: the helper ends (the caller's lock, if held, is handed over first).
void stop_progress_thread();

// ---- requests and progress (request.cpp) ---------------------------------------------------
// A request this library implements itself. Its MPI_Request handle is the object's address
// with the low bit set; plain xmsg requests are aligned pointers with the bit clear.
struct Request {
  virtual ~Request() = default;
  // Advances without blocking; sets *done once the operation is complete and fills *status.
  virtual int test(bool* done, MPI_Status* status) = 0;
  virtual int cancel() { return MPI_SUCCESS; }
  // Whether test() would report completion, without completing (MPI_Request_get_status);
  // fills *status when it would.
  virtual bool peek(MPI_Status* status) = 0;
  // Persistent requests: start() begins one round; inactive ones complete at once.
  virtual bool persistent() const { return false; }
  virtual int start() { return MPI_ERR_REQUEST; }
  // Whether the progress thread should move it on while the rank computes (a window that needs
  // nothing from its target says no).
  virtual bool wants_background() const { return true; }
  bool active = true;
  MPI_Comm comm = MPI_COMM_WORLD;  // whose error handler a failure goes to
};
inline bool is_layer_request(MPI_Request r) { return (reinterpret_cast<uintptr_t>(r) & 1u) != 0; }
inline Request* layer_request(MPI_Request r) {
  return reinterpret_cast<Request*>(reinterpret_cast<uintptr_t>(r) & ~uintptr_t{1});
}
inline MPI_Request handle_of(Request* r) {
  return reinterpret_cast<MPI_Request>(reinterpret_cast<uintptr_t>(r) | 1u);
}
// Requests that need this layer's progress (schedules) register while active, so that a
// rank blocked anywhere in MPI keeps them moving.
void register_progress(Request* r);
void unregister_progress(Request* r);
bool progress_pending();
// Whether any registered request wants the progress thread (Request::wants_background).
bool background_work();
// Advances every registered request once (never blocks).
void progress_all();
// Status of a completed xmsg request as MPI sees it (intercommunicator ranks translated).
void translate_inter_source(MPI_Comm comm, MPI_Status* out);
inline void to_mpi_status(const xmsg_status_t& in, MPI_Comm comm, MPI_Status* out) {
  if (!out) return;
  out->MPI_SOURCE = in.source;
  out->MPI_TAG = in.tag;
  out->MPI_ERROR = in.error;
  out->xmsg_cancelled = in.cancelled;
  out->xmsg_bytes = in.bytes;
  if (in.source >= 0 && is_inter(comm)) [[unlikely]]
    translate_inter_source(comm, out);
}
void empty_status(MPI_Status* status);
// A request that is complete from the start (MPI_Comm_idup, MPI_Ibsend).
int completed_request(MPI_Comm comm, MPI_Request* request);

// ---- schedules (schedule.cpp) ---------------------------------------------------------------
// A collective as rounds: a round's sends and receives are posted together after its local
// steps ran; the next round starts when all of them completed. Messages travel on the
// communicator's hidden collective context with a tag of their own per collective call, so
// they never meet user traffic or another collective.
class Schedule {
 public:
  // Takes the next tag of comm's collective sequence.
  explicit Schedule(MPI_Comm comm);
  // Uses `tag` (from reserve_tag: a persistent collective keeps one tag for all its rounds).
  Schedule(MPI_Comm comm, int tag);
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;
  static int reserve_tag(MPI_Comm comm);
  // Ranks are ranks of the communicator the schedule runs on (for an intercommunicator: of
  // the union; use the helpers below).
  void send(const void* buf, int64_t bytes, int peer);
  void recv(void* buf, int64_t bytes, int peer);
  void local(std::function<void()> step);
  // A local step that runs right after the round's messages are posted, so it overlaps their
  // transfer (a rank's own block of an allgather or alltoall, copied while the peers read).
  void local_after_posts(std::function<void()> step);
  // Ends the current round.
  void next_round();
  // Scratch memory that lives as long as the schedule.
  char* scratch(int64_t bytes);
  // Keeps an object alive as long as the schedule (a packed view, a copy of counts...).
  template <class T>
  T* keep(std::unique_ptr<T> object) {
    T* raw = object.get();
    kept_.push_back(std::shared_ptr<void>(std::move(object)));
    return raw;
  }
  void hold(std::shared_ptr<const void> object) { kept_.push_back(std::move(object)); }
  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  xmsg_comm_t transport_comm() const { return transport_comm_; }

  // Runs one step: posts the next round when the current one is done. Never blocks.
  int advance(bool* done);

 private:
  struct Op {
    enum Kind { kSend, kRecv, kLocal, kLocalAfterPosts } kind;
    void* buf;
    int64_t bytes;
    int peer;
    std::function<void()> step;
  };
  int post_round();
  MPI_Comm comm_;
  xmsg_comm_t transport_comm_;
  int rank_ = 0, size_ = 0;
  int tag_ = 0;
  std::vector<std::vector<Op>> rounds_;
  size_t current_ = 0;
  bool started_ = false;
  std::vector<xmsg_request_t> pending_;
  std::vector<xmsg_status_t> statuses_;  // of pending_, when the round completes
  // A receive brought another length than its step posted: the ranks passed different counts.
  // The schedule still runs to its end, so no peer waits for a rank that left, and from then on
  // its sends go one byte short (an empty one carries a byte) so that ranks that only get
  // forwarded data find out too; the collective then returns MPI_ERR_TRUNCATE.
  bool disagreed_ = false;
  struct Block {
    char* data;
    size_t bytes;
  };
  std::vector<Block> scratch_;
  std::vector<std::shared_ptr<const void>> kept_;
};
// Frees the scratch blocks finished schedules left for the next ones (MPI_Finalize).
void release_schedule_scratch();

// Runs `schedule` as an MPI request (non-blocking collectives).
int start_schedule(std::unique_ptr<Schedule> schedule, MPI_Request* request);
// Runs `schedule` to completion (blocking collectives built from schedules).
int run_schedule(std::unique_ptr<Schedule> schedule);
// A persistent collective: `build` fills a fresh schedule (with the tag reserved at init) for
// every MPI_Start.
int persistent_collective(MPI_Comm comm, std::function<int(Schedule&)> build, MPI_Request* request);

// Validates an intracommunicator for a collective named `func`.
int check_intra(MPI_Comm comm, const char* func, int* rank, int* size);

}  // namespace xmsg::mpi
