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
// and every wait in this file runs it too. It handles one message at a time, in arrival
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
// mapped segment; there the origin moves the data itself (the direct path) and only the
// synchronisation still travels as messages.
#include "mpi_impl.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

namespace xmsg::mpi {
namespace {

// A full barrier for the stores other processes read through a window's shared segment. Other
// processes, not threads: GCC refuses std::atomic_thread_fence under -fsanitize=thread, and
// ThreadSanitizer does not see another process's accesses anyway.
inline void process_fence() { __sync_synchronize(); }

constexpr int kReqTag = 1;
constexpr int kPostTag = 2;
constexpr int kFirstReplyTag = 16;
constexpr int kLastReplyTag = 1 << 29;

enum Kind : int32_t { kPut = 1, kGet, kAcc, kGetAcc, kCas, kLock, kUnlock, kFlush, kComplete };

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

struct Region {
  uintptr_t base;
  uintptr_t size;
};

struct LockWaiter {
  int origin;
  int type;
  int tag;
};

struct Window;
struct Service final : Request {
  Window* w = nullptr;
  int test(bool* done, MPI_Status* status) override;
  bool peek(MPI_Status*) override { return false; }
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
  void* segment = nullptr;
  size_t segment_bytes = 0;
  std::vector<int64_t> seg_offset;
  // Every rank's memory is in `segment`, mapped here: operations are loads and stores by the
  // origin, accumulates serialised by a spin lock in the segment's control block.
  bool direct = false;
  std::atomic<uint32_t>* acc_lock = nullptr;
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
  int next_tag = kFirstReplyTag;
  bool fence_open = false;
  bool started = false;
  std::vector<int> access;  // PSCW access group (window ranks)
  std::vector<char> in_access;
  std::map<int, bool> locks;  // target -> MPI_MODE_NOCHECK given
  std::map<int, int> lock_types;
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

std::vector<std::unique_ptr<Window>>& windows() {
  static std::vector<std::unique_ptr<Window>> table(1);  // 0 is MPI_WIN_NULL
  return table;
}

// ---- errors through the window's handler -----------------------------------------------------
[[noreturn]] void fatal(int code, const char* message) {
  std::fprintf(stderr, "%s (MPI_ERRORS_ARE_FATAL: aborting the job)\n", message);
  std::fflush(stderr);
  xmsg_abort(MPI_COMM_WORLD, code ? code : 1, message);
  std::_Exit(code ? code : 1);
}

int dispatch(Window* w, int code, const char* message) {
  MPI_Errhandler eh = w->errhandler;
  if (eh == MPI_ERRORS_RETURN) return code;
  // Handlers made with MPI_Win_create_errhandler live in env.cpp's table, which this file
  // cannot call into yet: they are treated as MPI_ERRORS_ARE_FATAL (docs/rma.md).
  fatal(code, message);
}

int raise(Window* w, int code, const char* func, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
int raise(Window* w, int code, const char* func, const char* fmt, ...) {
  char what[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  char message[768];
  std::snprintf(message, sizeof message, "%s: %s", func, what);
  xmsgi_error(code, "%s", message);
  return dispatch(w, code, message);
}

// A failure some helper already recorded (check_type, the C API): route it to the window.
int reraise(Window* w, int code, const char* func) {
  if (code == MPI_SUCCESS) return code;
  const char* detail = xmsg_last_error_message();
  char message[768];
  if (detail && *detail && std::strncmp(detail, "MPI_", 4) == 0) std::snprintf(message, sizeof message, "%s", detail);
  else std::snprintf(message, sizeof message, "%s: %s", func, detail && *detail ? detail : xmsg_error_string(code));
  return dispatch(w, code, message);
}

const char* win_name(const Window* w) {
  static char buf[160];
  if (!w->name.empty()) std::snprintf(buf, sizeof buf, "'%s'", w->name.c_str());
  else std::snprintf(buf, sizeof buf, "%d", w->handle);
  return buf;
}

Window* window_of(MPI_Win win) {
  auto& t = windows();
  if (win <= 0 || static_cast<size_t>(win) >= t.size()) return nullptr;
  return t[static_cast<size_t>(win)].get();
}

int check_win(MPI_Win win, const char* func, Window** out) {
  *out = window_of(win);
  if (*out) return MPI_SUCCESS;
  if (win == MPI_WIN_NULL) return fail(MPI_ERR_WIN, func, MPI_COMM_WORLD, "win is MPI_WIN_NULL");
  return fail(MPI_ERR_WIN, func, MPI_COMM_WORLD, "win %d is not a window (never created or already freed)", win);
}

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

bool poll_get(GetOp& g) {
  if (g.done) return true;
  int flag = 0;
  xmsg_status_t st{};
  if (xmsg_test(&g.req, &flag, &st) != XMSG_SUCCESS) flag = 1;
  if (!flag) return false;
  if (g.staging) unpack(g.staging.get(), g.bytes, g.user, g.count, g.type);
  g.done = true;
  return true;
}

bool poll_send(Outgoing& o) {
  if (o.req == XMSG_REQUEST_NULL) return true;
  int flag = 0;
  xmsg_status_t st{};
  if (xmsg_test(&o.req, &flag, &st) != XMSG_SUCCESS) flag = 1;
  if (flag) {
    o.req = XMSG_REQUEST_NULL;
    o.buf.reset();
  }
  return flag != 0;
}

// Local completion of everything to `target` (-1: every target).
void complete_local(Window* w, int target) {
  spin_until([&] {
    bool all = true;
    for (auto& g : w->gets)
      if ((target < 0 || g->target == target) && !poll_get(*g)) all = false;
    for (auto& o : w->sends)
      if ((target < 0 || o.target == target) && !poll_send(o)) all = false;
    return all;
  });
  std::erase_if(w->gets, [](const std::shared_ptr<GetOp>& g) { return g->done; });
  std::erase_if(w->sends, [](const Outgoing& o) { return o.req == XMSG_REQUEST_NULL; });
}

void reap(Window* w) {
  if (w->sends.size() < 64 && w->gets.size() < 64) return;
  for (auto& g : w->gets) poll_get(*g);
  for (auto& o : w->sends) poll_send(o);
  std::erase_if(w->gets, [](const std::shared_ptr<GetOp>& g) { return g->done; });
  std::erase_if(w->sends, [](const Outgoing& o) { return o.req == XMSG_REQUEST_NULL; });
}

int take_tag(Window* w) {
  int t = w->next_tag++;
  if (w->next_tag > kLastReplyTag) w->next_tag = kFirstReplyTag;
  return t;
}

// ---- target side -----------------------------------------------------------------------------
// Where the operation's bytes live at this rank, or nullptr with the failure recorded for
// `origin` when [lo, hi) around the displacement leaves the window.
char* resolve(Window* w, int origin, int64_t disp, int64_t lo, int64_t hi) {
  if (hi <= lo) return reinterpret_cast<char*>(w->base) + (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? disp : 0);
  if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    const uintptr_t a = static_cast<uintptr_t>(disp);
    for (const Region& r : w->attached)
      if (static_cast<int64_t>(a - r.base) + lo >= 0 && a + static_cast<uintptr_t>(hi) <= r.base + r.size)
        return reinterpret_cast<char*>(a);
  } else {
    const int64_t off = disp * w->disp_unit;
    if (off + lo >= 0 && off + hi <= w->win_size) return static_cast<char*>(w->base) + off;
  }
  Ack& e = w->pending_error[static_cast<size_t>(origin)];
  if (e.code == MPI_SUCCESS) e = Ack{MPI_ERR_RMA_RANGE, 0, disp, hi - lo};
  return nullptr;
}

void footprint(const WireBlock* b, int32_t n, int64_t count, int64_t extent, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = 0;
  if (count <= 0 || n <= 0) return;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (int32_t i = 0; i < n; ++i) {
    if (b[i].bytes <= 0) continue;
    first = std::min(first, b[i].offset);
    last = std::max(last, b[i].offset + b[i].bytes);
  }
  if (first == INT64_MAX) return;
  const int64_t span = (count - 1) * extent;
  *lo = std::min(first, first + span);
  *hi = std::max(last, last + span);
}

void gather_target(const char* base, const WireBlock* b, int32_t n, int64_t count, int64_t extent, char* out) {
  for (int64_t e = 0; e < count; ++e)
    for (int32_t i = 0; i < n; ++i) {
      std::memcpy(out, base + e * extent + b[i].offset, static_cast<size_t>(b[i].bytes));
      out += b[i].bytes;
    }
}

void scatter_target(char* base, const WireBlock* b, int32_t n, int64_t count, int64_t extent, const char* in) {
  for (int64_t e = 0; e < count; ++e)
    for (int32_t i = 0; i < n; ++i) {
      std::memcpy(base + e * extent + b[i].offset, in, static_cast<size_t>(b[i].bytes));
      in += b[i].bytes;
    }
}

// cur = in (op) cur on packed data of `basic` elements (pair types travel packed: their
// padding is restored around the reduction).
void combine(const char* in, char* cur, int64_t bytes, int32_t basic, int32_t op) {
  if (op == MPI_NO_OP || bytes <= 0) return;
  if (op == MPI_REPLACE) {
    std::memcpy(cur, in, static_cast<size_t>(bytes));
    return;
  }
  const Type* t = type_of(basic);
  if (!t || t->size <= 0) return;
  const int64_t n = bytes / t->size;
  if (t->contiguous) {
    xmsg_reduce_local(in, cur, n, basic, op);
    return;
  }
  std::vector<char> a(static_cast<size_t>(n * t->extent)), c(static_cast<size_t>(n * t->extent));
  unpack(in, bytes, a.data(), n, *t);
  unpack(cur, bytes, c.data(), n, *t);
  xmsg_reduce_local(a.data(), c.data(), n, basic, op);
  pack(c.data(), n, *t, cur);
}

bool contiguous(const WireBlock* b, int32_t n, int64_t count, int64_t extent) {
  return n == 1 && (count == 1 || b[0].bytes == extent);
}

void reply_take(Window* w, int origin, int tag, std::unique_ptr<char[]> buf, int64_t bytes) {
  Outgoing o;
  o.target = origin;
  o.buf = std::move(buf);
  if (xmsg_isend(o.buf.get(), bytes, XMSG_BYTE, origin, tag, w->xcomm, &o.req) != XMSG_SUCCESS) {
    w->service_error = MPI_ERR_OTHER;
    return;
  }
  w->replies.push_back(std::move(o));
}

// Sends window memory as it is: the origin waits for it before its epoch ends, so the
// memory is not changed under the send by a correct program.
void reply_from(Window* w, int origin, int tag, const char* data, int64_t bytes) {
  Outgoing o;
  o.target = origin;
  if (xmsg_isend(data, bytes, XMSG_BYTE, origin, tag, w->xcomm, &o.req) != XMSG_SUCCESS) {
    w->service_error = MPI_ERR_OTHER;
    return;
  }
  w->replies.push_back(std::move(o));
}

void reply(Window* w, int origin, int tag, const void* data, int64_t bytes) {
  Outgoing o;
  o.target = origin;
  if (bytes > 0) {
    o.buf.reset(new char[static_cast<size_t>(bytes)]);
    std::memcpy(o.buf.get(), data, static_cast<size_t>(bytes));
  }
  if (xmsg_isend(o.buf.get(), bytes, XMSG_BYTE, origin, tag, w->xcomm, &o.req) != XMSG_SUCCESS) {
    w->service_error = MPI_ERR_OTHER;
    return;
  }
  w->replies.push_back(std::move(o));
}

void send_ack(Window* w, int origin, int tag) {
  Ack a = w->pending_error[static_cast<size_t>(origin)];
  w->pending_error[static_cast<size_t>(origin)] = Ack{};
  reply(w, origin, tag, &a, sizeof a);
}

void grant_locks(Window* w) {
  while (!w->lock_queue.empty()) {
    LockWaiter& q = w->lock_queue.front();
    if (w->excl_holder >= 0) return;
    if (q.type == MPI_LOCK_EXCLUSIVE) {
      if (w->shared_holders > 0) return;
      w->excl_holder = q.origin;
    } else {
      ++w->shared_holders;
    }
    int32_t granted = 1;
    reply(w, q.origin, q.tag, &granted, sizeof granted);
    w->lock_queue.pop_front();
  }
}

void process(Window* w, int origin, char* msg, int64_t bytes) {
  if (bytes < static_cast<int64_t>(sizeof(Hdr))) return;
  Hdr h;
  std::memcpy(&h, msg, sizeof h);
  const WireBlock* blocks = reinterpret_cast<const WireBlock*>(msg + sizeof h);
  char* data = msg + sizeof h + static_cast<size_t>(h.nblocks) * sizeof(WireBlock);
  int64_t lo = 0, hi = 0;
  footprint(blocks, h.nblocks, h.count, h.extent, &lo, &hi);
  switch (h.kind) {
    case kPut: {
      char* at = resolve(w, origin, h.disp, lo, hi);
      if (!h.split) {
        if (at) scatter_target(at, blocks, h.nblocks, h.count, h.extent, data);
        break;
      }
      // The data is the next message from `origin` on the request tag (nothing overtakes).
      w->in_data = true;
      w->put_hdr.assign(msg, data);
      w->put_at = at;
      char* land = nullptr;
      if (at && contiguous(blocks, h.nblocks, h.count, h.extent)) {
        land = at + blocks[0].offset;
      } else {
        w->put_staging.reset(new char[static_cast<size_t>(std::max<int64_t>(h.data_bytes, 1))]);
        land = w->put_staging.get();
      }
      if (xmsg_irecv(land, h.data_bytes, XMSG_BYTE, origin, kReqTag, w->xcomm, &w->in_req) != XMSG_SUCCESS) {
        w->in_req = XMSG_REQUEST_NULL;
        w->in_data = false;
        w->service_error = MPI_ERR_OTHER;
      }
      break;
    }
    case kGet: {
      char* at = resolve(w, origin, h.disp, lo, hi);
      if (at && contiguous(blocks, h.nblocks, h.count, h.extent)) {
        reply_from(w, origin, h.reply_tag, at + blocks[0].offset, h.data_bytes);
        break;
      }
      std::unique_ptr<char[]> out(new char[static_cast<size_t>(std::max<int64_t>(h.data_bytes, 1))]);
      if (at) gather_target(at, blocks, h.nblocks, h.count, h.extent, out.get());
      else std::memset(out.get(), 0, static_cast<size_t>(h.data_bytes));
      reply_take(w, origin, h.reply_tag, std::move(out), h.data_bytes);
      break;
    }
    case kAcc:
    case kGetAcc: {
      char* direct = resolve(w, origin, h.disp, lo, hi);
      if (direct && contiguous(blocks, h.nblocks, h.count, h.extent)) {
        // In place: the old values go out first (copied), then the op combines into memory.
        char* at = direct + blocks[0].offset;
        if (h.kind == kGetAcc) reply(w, origin, h.reply_tag, at, h.data_bytes);
        combine(data, at, h.data_bytes, h.basic, h.op);
        break;
      }
      std::unique_ptr<char[]> cur(new char[static_cast<size_t>(std::max<int64_t>(h.data_bytes, 1))]());
      char* at = direct;
      if (at) gather_target(at, blocks, h.nblocks, h.count, h.extent, cur.get());
      if (h.kind == kGetAcc) reply(w, origin, h.reply_tag, cur.get(), h.data_bytes);
      if (at && h.op != MPI_NO_OP) {
        combine(data, cur.get(), h.data_bytes, h.basic, h.op);
        scatter_target(at, blocks, h.nblocks, h.count, h.extent, cur.get());
      }
      break;
    }
    case kCas: {
      const int64_t n = h.data_bytes;
      std::unique_ptr<char[]> old(new char[static_cast<size_t>(std::max<int64_t>(n, 1))]());
      if (char* at = resolve(w, origin, h.disp, 0, n)) {
        std::memcpy(old.get(), at, static_cast<size_t>(n));
        if (std::memcmp(old.get(), data + n, static_cast<size_t>(n)) == 0)
          std::memcpy(at, data, static_cast<size_t>(n));
      }
      reply(w, origin, h.reply_tag, old.get(), n);
      break;
    }
    case kLock:
      w->lock_queue.push_back(LockWaiter{origin, h.lock_type, h.reply_tag});
      grant_locks(w);
      break;
    case kUnlock:
      if (w->excl_holder == origin) w->excl_holder = -1;
      else if (w->shared_holders > 0) --w->shared_holders;
      send_ack(w, origin, h.reply_tag);
      grant_locks(w);
      break;
    case kFlush:
      send_ack(w, origin, h.reply_tag);
      break;
    case kComplete:
      ++w->completes;
      break;
    default:
      break;
  }
}

// One pass: every request that has arrived, one at a time in arrival order (a large one may
// take several passes to land); never blocks.
void serve(Window* w) {
  for (int budget = 0; budget < 256; ++budget) {
    if (w->in_req != XMSG_REQUEST_NULL) {
      int flag = 0;
      xmsg_status_t st{};
      if (xmsg_test(&w->in_req, &flag, &st) != XMSG_SUCCESS) {
        w->in_req = XMSG_REQUEST_NULL;
        w->service_error = MPI_ERR_OTHER;
        break;
      }
      if (!flag) break;
      w->in_req = XMSG_REQUEST_NULL;
      if (w->in_data) {
        w->in_data = false;
        if (w->put_staging && w->put_at) {
          Hdr h;
          std::memcpy(&h, w->put_hdr.data(), sizeof h);
          const WireBlock* blocks = reinterpret_cast<const WireBlock*>(w->put_hdr.data() + sizeof h);
          scatter_target(w->put_at, blocks, h.nblocks, h.count, h.extent, w->put_staging.get());
        }
        w->put_staging.reset();
        w->put_at = nullptr;
      } else {
        process(w, w->in_src, w->in_buf.data(), w->in_bytes);
      }
      if (w->in_req != XMSG_REQUEST_NULL) continue;  // a split put's data is on its way
    }
    int flag = 0;
    xmsg_status_t st{};
    if (xmsg_iprobe(XMSG_ANY_SOURCE, kReqTag, w->xcomm, &flag, &st) != XMSG_SUCCESS || !flag) break;
    // Grown only, never shrunk: resizing down and up again would clear it each time.
    if (w->in_buf.size() < static_cast<size_t>(st.bytes)) w->in_buf.resize(static_cast<size_t>(st.bytes));
    w->in_bytes = st.bytes;
    w->in_src = st.source;
    if (xmsg_irecv(w->in_buf.data(), st.bytes, XMSG_BYTE, st.source, kReqTag, w->xcomm, &w->in_req) != XMSG_SUCCESS) {
      w->in_req = XMSG_REQUEST_NULL;
      w->service_error = MPI_ERR_OTHER;
      break;
    }
  }
  if (!w->replies.empty()) {
    for (auto& o : w->replies) poll_send(o);
    std::erase_if(w->replies, [](const Outgoing& o) { return o.req == XMSG_REQUEST_NULL; });
  }
}

int Service::test(bool* done, MPI_Status*) {
  *done = false;
  serve(w);
  return MPI_SUCCESS;
}

// ---- origin side: building and sending requests -----------------------------------------------
struct Target {
  int rank;
  MPI_Aint disp;
  int64_t count;
  const Type* type;
};

std::unique_ptr<char[]> build(const Hdr& h0, const Target& t, int64_t payload, char** data_at, int64_t* total) {
  Hdr h = h0;
  h.disp = t.disp;
  h.count = t.count;
  h.extent = t.type ? t.type->extent : 0;
  h.nblocks = t.type ? static_cast<int32_t>(t.type->blocks.size()) : 0;
  *total = static_cast<int64_t>(sizeof h) + h.nblocks * static_cast<int64_t>(sizeof(WireBlock)) + payload;
  std::unique_ptr<char[]> buf(new char[static_cast<size_t>(*total)]);
  std::memcpy(buf.get(), &h, sizeof h);
  auto* b = reinterpret_cast<WireBlock*>(buf.get() + sizeof h);
  for (int32_t i = 0; i < h.nblocks; ++i) b[i] = WireBlock{t.type->blocks[static_cast<size_t>(i)].offset,
                                                           t.type->blocks[static_cast<size_t>(i)].bytes};
  *data_at = buf.get() + sizeof h + static_cast<size_t>(h.nblocks) * sizeof(WireBlock);
  return buf;
}

int post(Window* w, int target, std::unique_ptr<char[]> buf, int64_t total, const char* func) {
  Outgoing o;
  o.target = target;
  o.buf = std::move(buf);
  if (int e = xmsg_isend(o.buf.get(), total, XMSG_BYTE, target, kReqTag, w->xcomm, &o.req)) return reraise(w, e, func);
  w->sends.push_back(std::move(o));
  w->dirty[static_cast<size_t>(target)] = 1;
  reap(w);
  return MPI_SUCCESS;
}

// A receive for data coming back into (buf, count, type); posted before the request goes out.
int expect(Window* w, int target, int tag, void* buf, int64_t count, const Type* type, int64_t bytes,
           std::shared_ptr<GetOp>* out, const char* func) {
  auto g = std::make_shared<GetOp>();
  g->target = target;
  g->bytes = bytes;
  void* land = nullptr;
  if (type->contiguous) {
    land = static_cast<char*>(buf) + type->true_lb;
  } else {
    g->staging.reset(new char[static_cast<size_t>(std::max<int64_t>(bytes, 1))]);
    g->user = buf;
    g->count = count;
    g->type = *type;
    land = g->staging.get();
  }
  if (int e = xmsg_irecv(land, bytes, XMSG_BYTE, target, tag, w->xcomm, &g->req)) return reraise(w, e, func);
  w->gets.push_back(g);
  *out = g;
  return MPI_SUCCESS;
}

// Sends a flush / unlock to each target and waits for their answers; reports the first
// target-side failure.
int sync_targets(Window* w, const std::vector<int>& targets, int32_t kind, const char* func) {
  struct Pending {
    int target;
    Ack ack;
    xmsg_request_t req;
  };
  // Direct-path stores are complete once issued; the fence orders them before the answer.
  process_fence();
  std::vector<Pending> p(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    p[i].target = targets[i];
    p[i].ack = Ack{};
    const int tag = take_tag(w);
    if (int e = xmsg_irecv(&p[i].ack, sizeof(Ack), XMSG_BYTE, targets[i], tag, w->xcomm, &p[i].req))
      return reraise(w, e, func);
    Hdr h{};
    h.kind = kind;
    h.reply_tag = tag;
    Target t{targets[i], 0, 0, nullptr};
    char* data = nullptr;
    int64_t total = 0;
    auto buf = build(h, t, 0, &data, &total);
    if (int e = post(w, targets[i], std::move(buf), total, func)) return e;
  }
  spin_until([&] {
    bool all = true;
    for (auto& x : p) {
      if (x.req == XMSG_REQUEST_NULL) continue;
      int flag = 0;
      xmsg_status_t st{};
      if (xmsg_test(&x.req, &flag, &st) != XMSG_SUCCESS) flag = 1;
      if (flag) x.req = XMSG_REQUEST_NULL;
      else all = false;
    }
    return all;
  });
  for (int t : targets) {
    complete_local(w, t);
    w->dirty[static_cast<size_t>(t)] = 0;
  }
  for (auto& x : p)
    if (x.ack.code != MPI_SUCCESS)
      return raise(w, x.ack.code, func,
                   "an earlier RMA operation on window %s reached outside the window: rank %d has no window memory "
                   "at displacement %lld (%lld bytes)",
                   win_name(w), x.target, static_cast<long long>(x.ack.addr), static_cast<long long>(x.ack.bytes));
  return MPI_SUCCESS;
}

std::vector<int> dirty_targets(Window* w) {
  std::vector<int> out;
  for (int r = 0; r < w->size; ++r)
    if (w->dirty[static_cast<size_t>(r)]) out.push_back(r);
  return out;
}

bool in_epoch(const Window* w, int target) {
  return w->fence_open || w->lock_all || w->locks.count(target) ||
         (w->started && w->in_access[static_cast<size_t>(target)]);
}

// Checks shared by every communication call. *skip: MPI_PROC_NULL target (nothing to do).
int check_target(Window* w, int target_rank, MPI_Aint target_disp, const char* func, bool* skip) {
  *skip = false;
  if (target_rank == MPI_PROC_NULL) {
    *skip = true;
    return MPI_SUCCESS;
  }
  if (target_rank < 0 || target_rank >= w->size)
    return raise(w, MPI_ERR_RANK, func, "target_rank %d is not a rank of window %s (size %d)", target_rank, win_name(w),
                 w->size);
  if (!in_epoch(w, target_rank))
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "no access epoch to rank %d on window %s (call MPI_Win_fence, MPI_Win_start, MPI_Win_lock or "
                 "MPI_Win_lock_all first)",
                 target_rank, win_name(w));
  if (target_disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return raise(w, MPI_ERR_DISP, func, "target_disp %lld is negative (window %s, rank %d)",
                 static_cast<long long>(target_disp), win_name(w), target_rank);
  return MPI_SUCCESS;
}

int check_count(Window* w, int count, const char* arg, const char* func) {
  if (count < 0) return raise(w, MPI_ERR_COUNT, func, "%s %d is negative", arg, count);
  return MPI_SUCCESS;
}

int check_dtype(Window* w, MPI_Datatype d, const char* arg, const char* func, const Type** out) {
  return reraise(w, check_type(d, func, arg, w->xcomm, out), func);
}

// The origin checks windows whose sizes it knows; dynamic windows are checked at the target.
int check_range(Window* w, const Target& t, const char* func) {
  if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || t.count == 0 || t.type->size == 0) return MPI_SUCCESS;
  int64_t lo = 0, hi = 0;
  std::vector<WireBlock> b;
  for (const Block& x : t.type->blocks) b.push_back(WireBlock{x.offset, x.bytes});
  footprint(b.data(), static_cast<int32_t>(b.size()), t.count, t.type->extent, &lo, &hi);
  const RankInfo& ri = w->ranks[static_cast<size_t>(t.rank)];
  const int64_t off = static_cast<int64_t>(t.disp) * ri.disp_unit;
  if (off + lo < 0 || off + hi > ri.size)
    return raise(w, MPI_ERR_RMA_RANGE, func,
                 "access outside window %s at rank %d: target_disp %lld (disp_unit %d) covers bytes [%lld, %lld) "
                 "of a %lld-byte window",
                 win_name(w), t.rank, static_cast<long long>(t.disp), ri.disp_unit, static_cast<long long>(off + lo),
                 static_cast<long long>(off + hi), static_cast<long long>(ri.size));
  return MPI_SUCCESS;
}

int check_acc_op(Window* w, MPI_Op op, const Type* origin, const Type* target, const char* func, bool allow_no_op) {
  if (op == MPI_NO_OP) {
    if (!allow_no_op)
      return raise(w, MPI_ERR_OP, func, "MPI_NO_OP is only for MPI_Get_accumulate, MPI_Fetch_and_op and their R forms");
    return MPI_SUCCESS;
  }
  if (op <= XMSG_OP_NULL || op >= XMSG_OP_LAST)
    return raise(w, MPI_ERR_OP, func, "op %d is not a predefined operation (accumulates take MPI_REPLACE, MPI_NO_OP "
                 "or a predefined reduction; user operations are not allowed)", op);
  const Type* types[2] = {origin, target};
  for (const Type* t : types) {
    if (!t) continue;
    if (t->basic == 0 || !is_xmsg_type(t->basic))
      return raise(w, MPI_ERR_TYPE, func, "accumulate datatypes must be predefined or built from one predefined type");
  }
  if (origin && target && origin->basic != target->basic)
    return raise(w, MPI_ERR_TYPE, func, "origin and target datatypes are built from different predefined types");
  if (op != MPI_REPLACE) {
    const Type* b = type_of(target ? target->basic : origin->basic);
    char x[64] = {0}, y[64] = {0};
    if (b && b->extent <= 64 && xmsg_reduce_local(x, y, 1, target ? target->basic : origin->basic, op) != XMSG_SUCCESS)
      return raise(w, MPI_ERR_OP, func, "op %d is not defined for this datatype", op);
  }
  return MPI_SUCCESS;
}

// ---- the operations ---------------------------------------------------------------------------
struct RmaRequest final : Request {
  std::shared_ptr<GetOp> op;
  int test(bool* done, MPI_Status* status) override {
    *done = !op || poll_get(*op);
    if (*done) empty_status(status);
    return MPI_SUCCESS;
  }
  bool peek(MPI_Status* status) override {
    bool d = !op || poll_get(*op);
    if (d) empty_status(status);
    return d;
  }
};

int make_request(Window* w, std::shared_ptr<GetOp> op, MPI_Request* request) {
  auto* r = new RmaRequest();
  r->comm = w->comm;
  r->op = std::move(op);
  *request = handle_of(r);
  return MPI_SUCCESS;
}

// ---- the direct path (windows in one mapped segment) -----------------------------------------
char* direct_addr(Window* w, int rank, MPI_Aint disp) {
  const RankInfo& ri = w->ranks[static_cast<size_t>(rank)];
  return static_cast<char*>(w->segment) + w->seg_offset[static_cast<size_t>(rank)] + disp * ri.disp_unit;
}

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

void direct_put(Window* w, const void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp,
                int64_t tcount, const Type& tt, int64_t bytes) {
  char* at = direct_addr(w, rank, disp);
  if (tt.contiguous) {
    pack(origin, ocount, ot, at + tt.true_lb);
    return;
  }
  Staging tmp = staging_buffer(bytes);
  pack(origin, ocount, ot, tmp.get());
  unpack(tmp.get(), bytes, at, tcount, tt);
}

void direct_get(Window* w, void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp, int64_t tcount,
                const Type& tt, int64_t bytes) {
  const char* at = direct_addr(w, rank, disp);
  if (tt.contiguous) {
    unpack(at + tt.true_lb, bytes, origin, ocount, ot);
    return;
  }
  Staging tmp = staging_buffer(bytes);
  pack(at, tcount, tt, tmp.get());
  unpack(tmp.get(), bytes, origin, ocount, ot);
}

void direct_accumulate(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                       const Type* rt, int rank, MPI_Aint disp, int64_t tcount, const Type& tt, int64_t bytes,
                       MPI_Op op) {
  char* at = direct_addr(w, rank, disp);
  Staging in;
  const char* src = nullptr;
  if (op != MPI_NO_OP) {
    if (ot->contiguous) {
      src = static_cast<const char*>(origin) + ot->true_lb;
    } else {
      in = staging_buffer(bytes);
      pack(origin, ocount, *ot, in.get());
      src = in.get();
    }
  }
  AccGuard guard(w->acc_lock);
  if (tt.contiguous) {
    char* cur = at + tt.true_lb;
    if (rt) unpack(cur, bytes, result, rcount, *rt);
    if (src) combine(src, cur, bytes, tt.basic, op);
    return;
  }
  Staging cur = staging_buffer(bytes);
  pack(at, tcount, tt, cur.get());
  if (rt) unpack(cur.get(), bytes, result, rcount, *rt);
  if (src) {
    combine(src, cur.get(), bytes, tt.basic, op);
    unpack(cur.get(), bytes, at, tcount, tt);
  }
}

int do_put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, const char* func,
           bool copy = false) {
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  const Type *ot = nullptr, *tt = nullptr;
  bool skip = false;
  if (int e = check_count(w, origin_count, "origin_count", func)) return e;
  if (int e = check_count(w, target_count, "target_count", func)) return e;
  if (int e = check_dtype(w, origin_datatype, "origin_datatype", func, &ot)) return e;
  if (int e = check_dtype(w, target_datatype, "target_datatype", func, &tt)) return e;
  if (int e = check_target(w, target_rank, target_disp, func, &skip)) return e;
  if (skip) return MPI_SUCCESS;
  const int64_t bytes = origin_count * ot->size;
  if (bytes != target_count * tt->size)
    return raise(w, MPI_ERR_TYPE, func, "origin (%lld bytes) and target (%lld bytes) type signatures differ",
                 static_cast<long long>(bytes), static_cast<long long>(target_count * tt->size));
  Target t{target_rank, target_disp, target_count, tt};
  if (int e = check_range(w, t, func)) return e;
  if (w->direct) {
    direct_put(w, origin_addr, origin_count, *ot, target_rank, target_disp, target_count, *tt, bytes);
    return MPI_SUCCESS;
  }
  Hdr h{};
  h.kind = kPut;
  h.data_bytes = bytes;
  h.split = bytes >= kSplitBytes;
  char* data = nullptr;
  int64_t total = 0;
  auto buf = build(h, t, h.split ? 0 : bytes, &data, &total);
  if (!h.split) {
    pack(origin_addr, origin_count, *ot, data);
    return post(w, target_rank, std::move(buf), total, func);
  }
  if (int e = post(w, target_rank, std::move(buf), total, func)) return e;
  // The data itself: from the origin buffer when contiguous (MPI lets the program reuse it
  // only after the epoch or a flush_local, which wait for this send).
  Outgoing o;
  o.target = target_rank;
  const void* from = static_cast<const char*>(origin_addr) + ot->true_lb;
  if (!ot->contiguous || copy) {
    o.buf.reset(new char[static_cast<size_t>(bytes)]);
    pack(origin_addr, origin_count, *ot, o.buf.get());
    from = o.buf.get();
  }
  if (int e = xmsg_isend(from, bytes, XMSG_BYTE, target_rank, kReqTag, w->xcomm, &o.req)) return reraise(w, e, func);
  w->sends.push_back(std::move(o));
  return MPI_SUCCESS;
}

int do_get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
           int target_count, MPI_Datatype target_datatype, MPI_Win win, const char* func,
           std::shared_ptr<GetOp>* op) {
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  const Type *ot = nullptr, *tt = nullptr;
  bool skip = false;
  if (int e = check_count(w, origin_count, "origin_count", func)) return e;
  if (int e = check_count(w, target_count, "target_count", func)) return e;
  if (int e = check_dtype(w, origin_datatype, "origin_datatype", func, &ot)) return e;
  if (int e = check_dtype(w, target_datatype, "target_datatype", func, &tt)) return e;
  if (int e = check_target(w, target_rank, target_disp, func, &skip)) return e;
  if (skip) return MPI_SUCCESS;
  const int64_t bytes = origin_count * ot->size;
  if (bytes != target_count * tt->size)
    return raise(w, MPI_ERR_TYPE, func, "origin (%lld bytes) and target (%lld bytes) type signatures differ",
                 static_cast<long long>(bytes), static_cast<long long>(target_count * tt->size));
  Target t{target_rank, target_disp, target_count, tt};
  if (int e = check_range(w, t, func)) return e;
  if (w->direct) {
    direct_get(w, origin_addr, origin_count, *ot, target_rank, target_disp, target_count, *tt, bytes);
    return MPI_SUCCESS;
  }
  Hdr h{};
  h.kind = kGet;
  h.reply_tag = take_tag(w);
  h.data_bytes = bytes;
  std::shared_ptr<GetOp> g;
  if (int e = expect(w, target_rank, h.reply_tag, origin_addr, origin_count, ot, bytes, &g, func)) return e;
  if (op) *op = g;
  char* data = nullptr;
  int64_t total = 0;
  auto buf = build(h, t, 0, &data, &total);
  return post(w, target_rank, std::move(buf), total, func);
}

int do_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                  int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                  int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, bool fetch,
                  const char* func, std::shared_ptr<GetOp>* out) {
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  const Type *ot = nullptr, *tt = nullptr, *rt = nullptr;
  bool skip = false;
  const bool no_op = op == MPI_NO_OP;
  if (!no_op || !fetch) {
    if (int e = check_count(w, origin_count, "origin_count", func)) return e;
    if (int e = check_dtype(w, origin_datatype, "origin_datatype", func, &ot)) return e;
  }
  if (fetch) {
    if (int e = check_count(w, result_count, "result_count", func)) return e;
    if (int e = check_dtype(w, result_datatype, "result_datatype", func, &rt)) return e;
  }
  if (int e = check_count(w, target_count, "target_count", func)) return e;
  if (int e = check_dtype(w, target_datatype, "target_datatype", func, &tt)) return e;
  if (int e = check_acc_op(w, op, ot, tt, func, fetch)) return e;
  if (rt && (rt->basic == 0 || rt->basic != tt->basic))
    return raise(w, MPI_ERR_TYPE, func, "result and target datatypes are built from different predefined types");
  if (int e = check_target(w, target_rank, target_disp, func, &skip)) return e;
  if (skip) return MPI_SUCCESS;
  const int64_t bytes = target_count * tt->size;
  if (ot && origin_count * ot->size != bytes)
    return raise(w, MPI_ERR_TYPE, func, "origin (%lld bytes) and target (%lld bytes) type signatures differ",
                 static_cast<long long>(origin_count * ot->size), static_cast<long long>(bytes));
  if (rt && result_count * rt->size != bytes)
    return raise(w, MPI_ERR_TYPE, func, "result (%lld bytes) and target (%lld bytes) type signatures differ",
                 static_cast<long long>(result_count * rt->size), static_cast<long long>(bytes));
  Target t{target_rank, target_disp, target_count, tt};
  if (int e = check_range(w, t, func)) return e;
  if (w->direct) {
    direct_accumulate(w, origin_addr, origin_count, ot, result_addr, result_count, rt, target_rank, target_disp,
                      target_count, *tt, bytes, op);
    return MPI_SUCCESS;
  }
  Hdr h{};
  h.kind = fetch ? kGetAcc : kAcc;
  h.op = op;
  h.basic = tt->basic;
  h.data_bytes = bytes;
  if (fetch) {
    h.reply_tag = take_tag(w);
    std::shared_ptr<GetOp> g;
    if (int e = expect(w, target_rank, h.reply_tag, result_addr, result_count, rt, bytes, &g, func)) return e;
    if (out) *out = g;
  }
  const int64_t payload = no_op ? 0 : bytes;
  char* data = nullptr;
  int64_t total = 0;
  auto buf = build(h, t, payload, &data, &total);
  if (!no_op) pack(origin_addr, origin_count, *ot, data);
  return post(w, target_rank, std::move(buf), total, func);
}

// ---- windows ----------------------------------------------------------------------------------
// MPI_Finalize runs the layer's progress list until it is empty, and deletes MPI_COMM_SELF's
// attributes first (MPI-3.1 8.7): this attribute's delete callback takes the services of
// windows the program never freed off the list, so finalize does not wait on them forever.
int drop_services(MPI_Comm, int, void*, void*) {
  for (auto& w : windows())
    if (w) unregister_progress(&w->service);
  return MPI_SUCCESS;
}

void watch_finalize() {
  static bool done = false;
  if (done) return;
  int keyval = MPI_KEYVAL_INVALID;
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop_services, &keyval, nullptr) == MPI_SUCCESS &&
      PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr) == MPI_SUCCESS)
    done = true;
}

int register_window(std::unique_ptr<Window> w, MPI_Win* win) {
  watch_finalize();
  auto& t = windows();
  size_t slot = 0;
  for (size_t i = 1; i < t.size(); ++i)
    if (!t[i]) {
      slot = i;
      break;
    }
  if (slot == 0) {
    slot = t.size();
    t.emplace_back();
  }
  w->handle = static_cast<int>(slot);
  w->service.w = w.get();
  w->service.comm = w->comm;
  register_progress(&w->service);
  *win = static_cast<MPI_Win>(slot);
  t[slot] = std::move(w);
  return MPI_SUCCESS;
}

void store_info(Window* w, MPI_Info info) {
  if (info == MPI_INFO_NULL) return;
  int n = 0;
  if (PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS) return;
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS) continue;
    if (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag) == MPI_SUCCESS && flag) w->info[key] = value;
  }
}

// Collective part every flavour shares: the private communicator and every rank's size and
// displacement unit. On failure nothing is left allocated.
int make_window(MPI_Comm comm, MPI_Aint size, int disp_unit, MPI_Info info, int flavor, const char* func,
                std::unique_ptr<Window>* out) {
  int csize = 0;
  if (int e = xmsg_comm_size(comm, &csize)) return handle(e, func, comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm);
  if (is_inter(comm))
    return fail(MPI_ERR_COMM, func, comm, "comm is an intercommunicator (windows need an intracommunicator)");
  if (size < 0) return fail(MPI_ERR_SIZE, func, comm, "size %lld is negative", static_cast<long long>(size));
  if (disp_unit <= 0) return fail(MPI_ERR_DISP, func, comm, "disp_unit %d is not positive", disp_unit);
  auto w = std::make_unique<Window>();
  w->comm = comm;
  w->flavor = flavor;
  w->win_size = size;
  w->disp_unit = disp_unit;
  store_info(w.get(), info);
  if (int e = xmsg_comm_dup(comm, &w->xcomm)) return handle(e, func, comm);
  state_of(w->xcomm)->errhandler = MPI_ERRORS_RETURN;
  xmsg_comm_rank(w->xcomm, &w->rank);
  w->size = csize;
  w->ranks.resize(static_cast<size_t>(csize));
  RankInfo mine{static_cast<int64_t>(size), disp_unit, 0};
  if (int e = xmsg_allgather(&mine, sizeof mine, XMSG_BYTE, w->ranks.data(), sizeof mine, XMSG_BYTE, w->xcomm)) {
    xmsg_comm_free(&w->xcomm);
    return handle(e, func, comm);
  }
  w->dirty.assign(static_cast<size_t>(csize), 0);
  w->in_access.assign(static_cast<size_t>(csize), 0);
  w->pending_error.assign(static_cast<size_t>(csize), Ack{});
  *out = std::move(w);
  return MPI_SUCCESS;
}

// One segment for the whole communicator, mapped by every rank (rank 0 creates it, the others
// open it, rank 0 unlinks the name once all have it mapped, so nothing outlives the job).
int map_shared(Window* w, const char* func) {
  // The control block (the accumulate lock) comes first, on a cache line of its own; the
  // ranks' memory follows contiguously in rank order.
  constexpr int64_t kControl = 64;
  int64_t total = kControl;
  w->seg_offset.resize(static_cast<size_t>(w->size));
  for (int r = 0; r < w->size; ++r) {
    w->seg_offset[static_cast<size_t>(r)] = total;
    total += w->ranks[static_cast<size_t>(r)].size;
  }
  w->segment_bytes = static_cast<size_t>(total);
  uint32_t context = 0;
  int creator = 0;
  xmsgi_comm_context(w->xcomm, &context);
  xmsgi_comm_world_rank(w->xcomm, 0, &creator);
  const std::string name = "/xmsg-" + std::string(xmsgi_job_id()) + "-rma-" + std::to_string(context) + "-" +
                           std::to_string(creator);
  int ok = 1;
  int fd = -1;
  if (w->rank == 0) {
    shm_unlink(name.c_str());
    fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(total)) != 0) ok = 0;
  }
  xmsg_bcast(&ok, 1, XMSG_INT, 0, w->xcomm);
  if (ok && w->rank != 0) {
    fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) ok = 0;
  }
  if (ok) {
    void* p = mmap(nullptr, static_cast<size_t>(total), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) ok = 0;
    else w->segment = p;
  }
  if (fd >= 0) close(fd);
  int all = 0;
  xmsg_allreduce(&ok, &all, 1, XMSG_INT, XMSG_MIN, w->xcomm);
  if (w->rank == 0) shm_unlink(name.c_str());
  if (!all) {
    if (w->segment) munmap(w->segment, static_cast<size_t>(total));
    w->segment = nullptr;
    return fail(MPI_ERR_NO_MEM, func, w->comm, "cannot create the %lld-byte shared segment %s: %s",
                static_cast<long long>(total), name.c_str(), std::strerror(errno));
  }
  // Not constructed here: a rank done with creation may already hold it while another is
  // still returning from the allreduce above. ftruncate zeroed it, which is "free".
  w->acc_lock = reinterpret_cast<std::atomic<uint32_t>*>(w->segment);
  w->direct = true;
  return MPI_SUCCESS;
}

bool on_one_node(MPI_Comm comm) {
  int csize = 0;
  if (xmsg_comm_size(comm, &csize) != XMSG_SUCCESS) return false;
  std::vector<int> nodes(static_cast<size_t>(csize));
  if (xmsgi_comm_node_ids(comm, nodes.data()) != XMSG_SUCCESS) return false;
  for (int n : nodes)
    if (n != nodes[0]) return false;
  return true;
}

void release_memory(Window* w) {
  if (w->segment) munmap(w->segment, w->segment_bytes);
  w->segment = nullptr;
  std::free(w->owned);
  w->owned = nullptr;
}

int check_assert(Window* w, int assert_, int allowed, const char* func) {
  if (assert_ & ~allowed)
    return raise(w, MPI_ERR_ASSERT, func, "assert %d has bits this call does not take (allowed: %d) on window %s",
                 assert_, allowed, win_name(w));
  return MPI_SUCCESS;
}

// Window ranks of a group's members; MPI_ERR_GROUP when one is not in the window.
int group_ranks(Window* w, MPI_Group group, const char* func, std::vector<int>* out) {
  const std::vector<int>* members = group_members(group);
  if (!members) return raise(w, MPI_ERR_GROUP, func, "group %d is not a valid group", group);
  std::vector<int> world;
  world_ranks_of(w->xcomm, &world);
  out->clear();
  for (int m : *members) {
    auto it = std::find(world.begin(), world.end(), m);
    if (it == world.end())
      return raise(w, MPI_ERR_GROUP, func, "world rank %d of the group is not in window %s", m, win_name(w));
    out->push_back(static_cast<int>(it - world.begin()));
  }
  return MPI_SUCCESS;
}


}  // namespace
}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const char* func = "MPI_Win_create";
  if (!win) return fail(MPI_ERR_ARG, func, comm, "win is NULL");
  std::unique_ptr<Window> w;
  if (int e = make_window(comm, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE, func, &w)) return e;
  w->base = base;
  return register_window(std::move(w), win);
}
XMSG_MPI_ALIAS(Win_create)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  const char* func = "MPI_Win_allocate";
  if (!win) return fail(MPI_ERR_ARG, func, comm, "win is NULL");
  if (!baseptr) return fail(MPI_ERR_ARG, func, comm, "baseptr is NULL");
  std::unique_ptr<Window> w;
  if (int e = make_window(comm, size, disp_unit, info, MPI_WIN_FLAVOR_ALLOCATE, func, &w)) return e;
  // Every rank on one node (the same answer everywhere): the memory comes from one shared
  // segment, so operations are loads and stores. Otherwise private memory, served by messages.
  if (on_one_node(comm)) {
    if (int e = map_shared(w.get(), func)) {
      xmsg_comm_free(&w->xcomm);
      return e;
    }
    w->base = w->win_size > 0 ? static_cast<char*>(w->segment) + w->seg_offset[static_cast<size_t>(w->rank)] : nullptr;
    *static_cast<void**>(baseptr) = w->base;
    return register_window(std::move(w), win);
  }
  if (size > 0) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, static_cast<size_t>(size)) != 0) {
      xmsg_comm_free(&w->xcomm);
      return fail(MPI_ERR_NO_MEM, func, comm, "cannot allocate %lld bytes", static_cast<long long>(size));
    }
    std::memset(p, 0, static_cast<size_t>(size));
    w->owned = p;
  }
  w->base = w->owned;
  *static_cast<void**>(baseptr) = w->base;
  return register_window(std::move(w), win);
}
XMSG_MPI_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                             MPI_Win* win) {
  const char* func = "MPI_Win_allocate_shared";
  if (!win) return fail(MPI_ERR_ARG, func, comm, "win is NULL");
  if (!baseptr) return fail(MPI_ERR_ARG, func, comm, "baseptr is NULL");
  int csize = 0;
  if (int e = xmsg_comm_size(comm, &csize)) return handle(e, func);
  std::vector<int> nodes(static_cast<size_t>(csize));
  if (int e = xmsgi_comm_node_ids(comm, nodes.data())) return handle(e, func, comm);
  for (int r = 1; r < csize; ++r)
    if (nodes[static_cast<size_t>(r)] != nodes[0])
      return fail(MPI_ERR_RMA_SHARED, func, comm,
                  "the ranks of comm are not all on one node (rank %d is on node %d, rank 0 on node %d): use a "
                  "communicator from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)",
                  r, nodes[static_cast<size_t>(r)], nodes[0]);
  std::unique_ptr<Window> w;
  if (int e = make_window(comm, size, disp_unit, info, MPI_WIN_FLAVOR_SHARED, func, &w)) return e;
  if (int e = map_shared(w.get(), func)) {
    xmsg_comm_free(&w->xcomm);
    return e;
  }
  w->base = w->win_size > 0 ? static_cast<char*>(w->segment) + w->seg_offset[static_cast<size_t>(w->rank)] : nullptr;
  *static_cast<void**>(baseptr) = w->base;
  return register_window(std::move(w), win);
}
XMSG_MPI_ALIAS(Win_allocate_shared)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  const char* func = "MPI_Win_shared_query";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (w->flavor != MPI_WIN_FLAVOR_SHARED)
    return raise(w, MPI_ERR_RMA_FLAVOR, func, "window %s was not made by MPI_Win_allocate_shared", win_name(w));
  if (!size || !disp_unit || !baseptr) return raise(w, MPI_ERR_ARG, func, "size, disp_unit or baseptr is NULL");
  if (rank == MPI_PROC_NULL) {
    rank = 0;
    for (int r = 0; r < w->size; ++r)
      if (w->ranks[static_cast<size_t>(r)].size > 0) {
        rank = r;
        break;
      }
  } else if (rank < 0 || rank >= w->size) {
    return raise(w, MPI_ERR_RANK, func, "rank %d is not a rank of window %s (size %d)", rank, win_name(w), w->size);
  }
  const RankInfo& ri = w->ranks[static_cast<size_t>(rank)];
  *size = static_cast<MPI_Aint>(ri.size);
  *disp_unit = ri.disp_unit;
  *static_cast<void**>(baseptr) =
      w->segment ? static_cast<char*>(w->segment) + w->seg_offset[static_cast<size_t>(rank)] : nullptr;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_shared_query)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const char* func = "MPI_Win_create_dynamic";
  if (!win) return fail(MPI_ERR_ARG, func, comm, "win is NULL");
  std::unique_ptr<Window> w;
  if (int e = make_window(comm, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, func, &w)) return e;
  w->base = MPI_BOTTOM;
  return register_window(std::move(w), win);
}
XMSG_MPI_ALIAS(Win_create_dynamic)

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  const char* func = "MPI_Win_attach";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return raise(w, MPI_ERR_RMA_FLAVOR, func, "window %s was not made by MPI_Win_create_dynamic", win_name(w));
  if (size < 0) return raise(w, MPI_ERR_SIZE, func, "size %lld is negative", static_cast<long long>(size));
  if (!base && size > 0) return raise(w, MPI_ERR_RMA_ATTACH, func, "base is NULL");
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  for (const Region& r : w->attached)
    if (b < r.base + r.size && r.base < b + static_cast<uintptr_t>(size))
      return raise(w, MPI_ERR_RMA_ATTACH, func, "[%p, +%lld) overlaps memory already attached to window %s", base,
                   static_cast<long long>(size), win_name(w));
  w->attached.push_back(Region{b, static_cast<uintptr_t>(size)});
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void* base) {
  const char* func = "MPI_Win_detach";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return raise(w, MPI_ERR_RMA_FLAVOR, func, "window %s was not made by MPI_Win_create_dynamic", win_name(w));
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  auto it = std::find_if(w->attached.begin(), w->attached.end(), [b](const Region& r) { return r.base == b; });
  if (it == w->attached.end())
    return raise(w, MPI_ERR_RMA_ATTACH, func, "%p was not attached to window %s", base, win_name(w));
  w->attached.erase(it);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_detach)

int PMPI_Win_free(MPI_Win* win) {
  const char* func = "MPI_Win_free";
  if (!win) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "win is NULL");
  Window* w = nullptr;
  if (int e = check_win(*win, func, &w)) return e;
  if (!w->locks.empty() || w->lock_all || w->started || w->posted)
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s still has an open %s epoch", win_name(w),
                 w->started ? "access (MPI_Win_start)" : w->posted ? "exposure (MPI_Win_post)" : "lock");
  complete_local(w, -1);
  // Nobody may still send to us once every rank arrived: each completed its epochs first.
  int e = xmsg_barrier(w->xcomm);
  spin_until([&] {
    serve(w);
    return w->replies.empty() && w->in_req == XMSG_REQUEST_NULL;
  });
  unregister_progress(&w->service);
  delete_attributes(AttrKind::kWin, *win, &w->attrs);
  xmsg_comm_free(&w->xcomm);
  release_memory(w);
  windows()[static_cast<size_t>(*win)].reset();
  *win = MPI_WIN_NULL;
  return handle(e, func);
}
XMSG_MPI_ALIAS(Win_free)

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  const char* func = "MPI_Win_get_group";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!group) return raise(w, MPI_ERR_ARG, func, "group is NULL");
  std::vector<int> world;
  if (int e = world_ranks_of(w->xcomm, &world)) return reraise(w, e, func);
  return new_group(std::move(world), group);
}
XMSG_MPI_ALIAS(Win_get_group)

// ---- synchronisation ---------------------------------------------------------------------------
int PMPI_Win_fence(int assert_, MPI_Win win) {
  const char* func = "MPI_Win_fence";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (int e = check_assert(w, assert_, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
                           func))
    return e;
  if (w->started || w->posted || !w->locks.empty() || w->lock_all)
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s is in a PSCW or lock epoch", win_name(w));
  int e = MPI_SUCCESS;
  process_fence();
  if (!(assert_ & MPI_MODE_NOPRECEDE)) e = sync_targets(w, dirty_targets(w), kFlush, func);
  complete_local(w, -1);
  // The barrier waits serve the other ranks' flushes (the idle hook runs the service).
  if (int b = xmsg_barrier(w->xcomm)) return reraise(w, b, func);
  w->fence_open = !(assert_ & MPI_MODE_NOSUCCEED);
  return e;
}
XMSG_MPI_ALIAS(Win_fence)

int PMPI_Win_start(MPI_Group group, int assert_, MPI_Win win) {
  const char* func = "MPI_Win_start";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (int e = check_assert(w, assert_, MPI_MODE_NOCHECK, func)) return e;
  if (w->started)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s already has an access epoch (MPI_Win_start)", win_name(w));
  if (w->lock_all || !w->locks.empty())
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s is in a lock epoch", win_name(w));
  std::vector<int> ranks;
  if (int e = group_ranks(w, group, func, &ranks)) return e;
  if (!(assert_ & MPI_MODE_NOCHECK)) {
    std::vector<xmsg_request_t> reqs(ranks.size(), XMSG_REQUEST_NULL);
    std::vector<int32_t> token(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i)
      if (int e = xmsg_irecv(&token[i], sizeof(int32_t), XMSG_BYTE, ranks[i], kPostTag, w->xcomm, &reqs[i]))
        return reraise(w, e, func);
    spin_until([&] {
      bool all = true;
      for (auto& r : reqs) {
        if (r == XMSG_REQUEST_NULL) continue;
        int flag = 0;
        xmsg_status_t st{};
        if (xmsg_test(&r, &flag, &st) != XMSG_SUCCESS) flag = 1;
        if (flag) r = XMSG_REQUEST_NULL;
        else all = false;
      }
      return all;
    });
  }
  w->access = ranks;
  for (int r : ranks) w->in_access[static_cast<size_t>(r)] = 1;
  w->started = true;
  w->fence_open = false;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win) {
  const char* func = "MPI_Win_complete";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->started)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s has no access epoch (call MPI_Win_start first)", win_name(w));
  int e = MPI_SUCCESS;
  process_fence();
  for (int t : w->access) {
    Hdr h{};
    h.kind = kComplete;
    Target tg{t, 0, 0, nullptr};
    char* data = nullptr;
    int64_t total = 0;
    auto buf = build(h, tg, 0, &data, &total);
    if ((e = post(w, t, std::move(buf), total, func))) break;
    w->dirty[static_cast<size_t>(t)] = 0;
  }
  complete_local(w, -1);
  for (int t : w->access) w->in_access[static_cast<size_t>(t)] = 0;
  w->access.clear();
  w->started = false;
  return e;
}
XMSG_MPI_ALIAS(Win_complete)

int PMPI_Win_post(MPI_Group group, int assert_, MPI_Win win) {
  const char* func = "MPI_Win_post";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (int e = check_assert(w, assert_, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, func)) return e;
  if (w->posted)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s already has an exposure epoch (MPI_Win_post)", win_name(w));
  std::vector<int> ranks;
  if (int e = group_ranks(w, group, func, &ranks)) return e;
  if (!(assert_ & MPI_MODE_NOCHECK)) {
    for (int r : ranks) {
      Outgoing o;
      o.target = r;
      o.buf.reset(new char[sizeof(int32_t)]());
      if (int e = xmsg_isend(o.buf.get(), sizeof(int32_t), XMSG_BYTE, r, kPostTag, w->xcomm, &o.req))
        return reraise(w, e, func);
      w->sends.push_back(std::move(o));
    }
  }
  w->posted = true;
  w->expected_completes = static_cast<int>(ranks.size());
  w->fence_open = false;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_post)

int PMPI_Win_wait(MPI_Win win) {
  const char* func = "MPI_Win_wait";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->posted)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s has no exposure epoch (call MPI_Win_post first)", win_name(w));
  spin_until([&] {
    serve(w);
    return w->completes >= w->expected_completes;
  });
  w->completes -= w->expected_completes;
  w->expected_completes = 0;
  w->posted = false;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int* flag) {
  const char* func = "MPI_Win_test";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!flag) return raise(w, MPI_ERR_ARG, func, "flag is NULL");
  if (!w->posted)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s has no exposure epoch (call MPI_Win_post first)", win_name(w));
  progress_all();
  xmsgi_progress();
  serve(w);
  *flag = w->completes >= w->expected_completes;
  if (*flag) {
    w->completes -= w->expected_completes;
    w->expected_completes = 0;
    w->posted = false;
  }
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_test)

}  // extern "C"

namespace xmsg::mpi {
namespace {
// Asks target `rank` for a lock and waits until it is granted (the target's service answers
// when no conflicting holder is left).
int acquire(Window* w, int rank, int lock_type, const char* func) {
  int32_t granted = 0;
  xmsg_request_t req = XMSG_REQUEST_NULL;
  Hdr h{};
  h.kind = kLock;
  h.lock_type = lock_type;
  h.reply_tag = take_tag(w);
  if (int e = xmsg_irecv(&granted, sizeof granted, XMSG_BYTE, rank, h.reply_tag, w->xcomm, &req))
    return reraise(w, e, func);
  Target t{rank, 0, 0, nullptr};
  char* data = nullptr;
  int64_t total = 0;
  auto buf = build(h, t, 0, &data, &total);
  if (int e = post(w, rank, std::move(buf), total, func)) return e;
  w->dirty[static_cast<size_t>(rank)] = 0;
  spin_until([&] {
    int flag = 0;
    xmsg_status_t st{};
    if (xmsg_test(&req, &flag, &st) != XMSG_SUCCESS) flag = 1;
    return flag != 0;
  });
  return MPI_SUCCESS;
}
}  // namespace
}  // namespace xmsg::mpi

extern "C" {

int PMPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win) {
  const char* func = "MPI_Win_lock";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
    return raise(w, MPI_ERR_LOCKTYPE, func, "lock_type %d is not MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED", lock_type);
  if (int e = check_assert(w, assert_, MPI_MODE_NOCHECK, func)) return e;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->size)
    return raise(w, MPI_ERR_RANK, func, "rank %d is not a rank of window %s (size %d)", rank, win_name(w), w->size);
  if (w->locks.count(rank) || w->lock_all)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "rank %d of window %s is already locked by this process", rank, win_name(w));
  if (w->started) return raise(w, MPI_ERR_RMA_SYNC, func, "window %s is in a PSCW access epoch", win_name(w));
  const bool nocheck = (assert_ & MPI_MODE_NOCHECK) != 0;
  if (!nocheck)
    if (int e = acquire(w, rank, lock_type, func)) return e;
  w->locks[rank] = nocheck;
  w->lock_types[rank] = lock_type;
  w->fence_open = false;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_lock)

int PMPI_Win_lock_all(int assert_, MPI_Win win) {
  const char* func = "MPI_Win_lock_all";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (int e = check_assert(w, assert_, MPI_MODE_NOCHECK, func)) return e;
  if (w->lock_all || !w->locks.empty())
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s already has a lock epoch", win_name(w));
  if (w->started) return raise(w, MPI_ERR_RMA_SYNC, func, "window %s is in a PSCW access epoch", win_name(w));
  w->lock_all_nocheck = (assert_ & MPI_MODE_NOCHECK) != 0;
  if (!w->lock_all_nocheck)
    for (int r = 0; r < w->size; ++r)
      if (int e = acquire(w, r, MPI_LOCK_SHARED, func)) return e;
  w->lock_all = true;
  w->fence_open = false;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock(int rank, MPI_Win win) {
  const char* func = "MPI_Win_unlock";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->size)
    return raise(w, MPI_ERR_RANK, func, "rank %d is not a rank of window %s (size %d)", rank, win_name(w), w->size);
  auto it = w->locks.find(rank);
  if (it == w->locks.end())
    return raise(w, MPI_ERR_RMA_SYNC, func, "rank %d of window %s is not locked by this process (no MPI_Win_lock)",
                 rank, win_name(w));
  const bool nocheck = it->second;
  w->locks.erase(it);
  w->lock_types.erase(rank);
  return sync_targets(w, {rank}, nocheck ? kFlush : kUnlock, func);
}
XMSG_MPI_ALIAS(Win_unlock)

int PMPI_Win_unlock_all(MPI_Win win) {
  const char* func = "MPI_Win_unlock_all";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->lock_all)
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s has no MPI_Win_lock_all epoch", win_name(w));
  w->lock_all = false;
  std::vector<int> all;
  if (w->lock_all_nocheck) {
    all = dirty_targets(w);
  } else {
    for (int r = 0; r < w->size; ++r) all.push_back(r);
  }
  return sync_targets(w, all, w->lock_all_nocheck ? kFlush : kUnlock, func);
}
XMSG_MPI_ALIAS(Win_unlock_all)

}  // extern "C"

namespace xmsg::mpi {
namespace {
int check_passive(Window* w, int rank, const char* func) {
  if (rank < 0 || rank >= w->size)
    return raise(w, MPI_ERR_RANK, func, "rank %d is not a rank of window %s (size %d)", rank, win_name(w), w->size);
  if (!w->lock_all && !w->locks.count(rank))
    return raise(w, MPI_ERR_RMA_SYNC, func, "rank %d of window %s is not locked (flush needs a passive-target epoch)",
                 rank, win_name(w));
  return MPI_SUCCESS;
}
}  // namespace
}  // namespace xmsg::mpi

extern "C" {

int PMPI_Win_flush(int rank, MPI_Win win) {
  const char* func = "MPI_Win_flush";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (int e = check_passive(w, rank, func)) return e;
  if (!w->dirty[static_cast<size_t>(rank)]) return MPI_SUCCESS;
  return sync_targets(w, {rank}, kFlush, func);
}
XMSG_MPI_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win) {
  const char* func = "MPI_Win_flush_all";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->lock_all && w->locks.empty())
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s has no passive-target epoch", win_name(w));
  return sync_targets(w, dirty_targets(w), kFlush, func);
}
XMSG_MPI_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win) {
  const char* func = "MPI_Win_flush_local";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (int e = check_passive(w, rank, func)) return e;
  complete_local(w, rank);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win) {
  const char* func = "MPI_Win_flush_local_all";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->lock_all && w->locks.empty())
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s has no passive-target epoch", win_name(w));
  complete_local(w, -1);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win) {
  Window* w = nullptr;
  if (int e = check_win(win, "MPI_Win_sync", &w)) return e;
  process_fence();
  progress_all();
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_sync)

// ---- names, info, attributes, error handlers ---------------------------------------------------
int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  const char* func = "MPI_Win_set_name";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!win_name) return raise(w, MPI_ERR_ARG, func, "win_name is NULL");
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  const char* func = "MPI_Win_get_name";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!win_name || !resultlen) return raise(w, MPI_ERR_ARG, func, "win_name or resultlen is NULL");
  std::memcpy(win_name, w->name.c_str(), w->name.size() + 1);
  *resultlen = static_cast<int>(w->name.size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_name)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  const char* func = "MPI_Win_set_info";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  store_info(w, info);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  const char* func = "MPI_Win_get_info";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!info_used) return raise(w, MPI_ERR_ARG, func, "info_used is NULL");
  if (int e = PMPI_Info_create(info_used)) return reraise(w, e, func);
  std::map<std::string, std::string> all = {{"no_locks", "false"},
                                            {"accumulate_ordering", "rar,raw,war,waw"},
                                            {"accumulate_ops", "same_op_no_op"},
                                            {"same_size", "false"},
                                            {"same_disp_unit", "false"}};
  if (w->flavor == MPI_WIN_FLAVOR_SHARED) all["alloc_shared_noncontig"] = "false";
  for (auto& [k, v] : w->info) all[k] = v;
  for (auto& [k, v] : all) PMPI_Info_set(*info_used, k.c_str(), v.c_str());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_info)

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  const char* func = "MPI_Win_set_attr";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (win_keyval >= MPI_WIN_BASE && win_keyval <= MPI_WIN_MODEL)
    return raise(w, MPI_ERR_KEYVAL, func, "keyval %d is predefined and cannot be set", win_keyval);
  auto it = w->attrs.values.find(win_keyval);
  if (it != w->attrs.values.end()) {
    // The old value's delete callback runs as MPI requires before it is replaced.
    AttrMap old;
    old.values[win_keyval] = it->second;
    w->attrs.values.erase(it);
    if (int e = delete_attributes(AttrKind::kWin, win, &old)) return reraise(w, e, func);
  }
  w->attrs.values[win_keyval] = attribute_val;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  const char* func = "MPI_Win_get_attr";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!attribute_val || !flag) return raise(w, MPI_ERR_ARG, func, "attribute_val or flag is NULL");
  void** out = static_cast<void**>(attribute_val);
  *flag = 1;
  switch (win_keyval) {
    case MPI_WIN_BASE: *out = w->base; return MPI_SUCCESS;
    case MPI_WIN_SIZE: w->attr_size = w->win_size; *out = &w->attr_size; return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT: w->attr_disp_unit = w->disp_unit; *out = &w->attr_disp_unit; return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR: w->attr_flavor = w->flavor; *out = &w->attr_flavor; return MPI_SUCCESS;
    case MPI_WIN_MODEL: w->attr_model = w->model; *out = &w->attr_model; return MPI_SUCCESS;
    default: break;
  }
  auto it = w->attrs.values.find(win_keyval);
  *flag = it != w->attrs.values.end();
  if (*flag) *out = it->second;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  const char* func = "MPI_Win_delete_attr";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  auto it = w->attrs.values.find(win_keyval);
  if (it == w->attrs.values.end())
    return raise(w, MPI_ERR_KEYVAL, func, "keyval %d has no attribute on window %s", win_keyval, win_name(w));
  AttrMap old;
  old.values[win_keyval] = it->second;
  w->attrs.values.erase(it);
  return reraise(w, delete_attributes(AttrKind::kWin, win, &old), func);
}
XMSG_MPI_ALIAS(Win_delete_attr)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  const char* func = "MPI_Win_set_errhandler";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (errhandler == MPI_ERRHANDLER_NULL)
    return raise(w, MPI_ERR_ARG, func, "errhandler is MPI_ERRHANDLER_NULL");
  w->errhandler = errhandler;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  const char* func = "MPI_Win_get_errhandler";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!errhandler) return raise(w, MPI_ERR_ARG, func, "errhandler is NULL");
  *errhandler = w->errhandler;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  const char* func = "MPI_Win_call_errhandler";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  char message[128];
  std::snprintf(message, sizeof message, "%s: error code %d raised by the program", func, errorcode);
  dispatch(w, errorcode, message);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_call_errhandler)

// ---- communication -----------------------------------------------------------------------------
int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                win, "MPI_Put");
}
XMSG_MPI_ALIAS(Put)

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                win, "MPI_Get", nullptr);
}
XMSG_MPI_ALIAS(Get)

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return do_accumulate(origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL, target_rank,
                       target_disp, target_count, target_datatype, op, win, false, "MPI_Accumulate", nullptr);
}
XMSG_MPI_ALIAS(Accumulate)

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return do_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                       target_rank, target_disp, target_count, target_datatype, op, win, true, "MPI_Get_accumulate",
                       nullptr);
}
XMSG_MPI_ALIAS(Get_accumulate)

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  return do_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op,
                       win, true, "MPI_Fetch_and_op", nullptr);
}
XMSG_MPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Win win) {
  const char* func = "MPI_Compare_and_swap";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  const Type* t = nullptr;
  if (int e = check_dtype(w, datatype, "datatype", func, &t)) return e;
  if (!t->predefined || !t->contiguous || t->basic == 0)
    return raise(w, MPI_ERR_TYPE, func, "datatype must be one predefined integer, logical or byte type");
  bool skip = false;
  if (int e = check_target(w, target_rank, target_disp, func, &skip)) return e;
  if (skip) return MPI_SUCCESS;
  Target tg{target_rank, target_disp, 1, t};
  if (int e = check_range(w, tg, func)) return e;
  const int64_t n = t->size;
  if (w->direct) {
    char* at = direct_addr(w, target_rank, target_disp);
    alignas(16) char old[64];  // predefined elements are at most 16 bytes
    {
      AccGuard guard(w->acc_lock);
      std::memcpy(old, at, static_cast<size_t>(n));
      if (std::memcmp(old, compare_addr, static_cast<size_t>(n)) == 0)
        std::memcpy(at, origin_addr, static_cast<size_t>(n));
    }
    std::memcpy(result_addr, old, static_cast<size_t>(n));
    return MPI_SUCCESS;
  }
  Hdr h{};
  h.kind = kCas;
  h.reply_tag = take_tag(w);
  h.data_bytes = n;
  std::shared_ptr<GetOp> g;
  if (int e = expect(w, target_rank, h.reply_tag, result_addr, 1, t, n, &g, func)) return e;
  char* data = nullptr;
  int64_t total = 0;
  Target none{target_rank, target_disp, 0, nullptr};
  auto buf = build(h, none, 2 * n, &data, &total);
  std::memcpy(data, origin_addr, static_cast<size_t>(n));
  std::memcpy(data + n, compare_addr, static_cast<size_t>(n));
  return post(w, target_rank, std::move(buf), total, func);
}
XMSG_MPI_ALIAS(Compare_and_swap)

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  const char* func = "MPI_Rput";
  if (!request) return fail(MPI_ERR_REQUEST, func, MPI_COMM_WORLD, "request is NULL");
  // Copied into messages of its own, so the origin buffer is free at once and the request
  // can be complete from the start.
  if (int e = do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, func, true))
    return e;
  return make_request(window_of(win), nullptr, request);
}
XMSG_MPI_ALIAS(Rput)

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  const char* func = "MPI_Rget";
  if (!request) return fail(MPI_ERR_REQUEST, func, MPI_COMM_WORLD, "request is NULL");
  std::shared_ptr<GetOp> g;
  if (int e = do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, func, &g))
    return e;
  return make_request(window_of(win), g, request);
}
XMSG_MPI_ALIAS(Rget)

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request* request) {
  const char* func = "MPI_Raccumulate";
  if (!request) return fail(MPI_ERR_REQUEST, func, MPI_COMM_WORLD, "request is NULL");
  if (int e = do_accumulate(origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL, target_rank,
                            target_disp, target_count, target_datatype, op, win, false, func, nullptr))
    return e;
  return make_request(window_of(win), nullptr, request);
}
XMSG_MPI_ALIAS(Raccumulate)

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request* request) {
  const char* func = "MPI_Rget_accumulate";
  if (!request) return fail(MPI_ERR_REQUEST, func, MPI_COMM_WORLD, "request is NULL");
  std::shared_ptr<GetOp> g;
  if (int e = do_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                            target_rank, target_disp, target_count, target_datatype, op, win, true, func, &g))
    return e;
  return make_request(window_of(win), g, request);
}
XMSG_MPI_ALIAS(Rget_accumulate)

}  // extern "C"
