// The communication calls: MPI_Put, MPI_Get, MPI_Accumulate, MPI_Get_accumulate,
// MPI_Fetch_and_op, MPI_Compare_and_swap and the request-based R forms. Each checks its
// arguments and the epoch, then takes the direct path (direct.cpp) or sends a request (origin.cpp).
#include "rma.hpp"

#include <cstring>

namespace xmsg::mpi::rma {
namespace {

// ---- the common case on the direct path -------------------------------------------------------
// One predefined type on both sides with equal counts, a target inside its window in an open
// epoch: the bytes are copied at once, without the general checks' datatype-table lookups (they
// were most of a one-byte MPI_Put's cost: osu_put_bw at 1 B, 36 ns an operation). Anything
// else, errors included, takes the general path, which reports them.
char* direct_fast_target(Window* w, MPI_Datatype origin_datatype, int origin_count, int target_rank,
                         MPI_Aint target_disp, MPI_Datatype target_datatype, int target_count, size_t* bytes) {
  if (!w->direct || origin_datatype != target_datatype || origin_count != target_count || origin_count < 0 ||
      !is_xmsg_type(origin_datatype) || target_rank < 0 || target_rank >= w->size || target_disp < 0 ||
      !in_epoch(w, target_rank))
    return nullptr;
  const RankInfo& ri = w->ranks[static_cast<size_t>(target_rank)];
  const int64_t off = static_cast<int64_t>(target_disp) * ri.disp_unit;
  const int64_t n = static_cast<int64_t>(origin_count) * static_cast<int64_t>(xmsgi_type_size(origin_datatype));
  if (n <= 0 || off + n > ri.size) return nullptr;
  *bytes = static_cast<size_t>(n);
  return direct_addr(w, target_rank, target_disp);
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

// The checks a put and a get share: window, counts, datatypes, target, matching signatures and
// the range at the target. *skip: the target is MPI_PROC_NULL (nothing to do).
int check_transfer(MPI_Win win, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_datatype, const char* func, Window** w, const Type** ot,
                   const Type** tt, Target* t, int64_t* bytes, bool* skip) {
  if (int e = check_win(win, func, w)) return e;
  if (int e = check_count(*w, origin_count, "origin_count", func)) return e;
  if (int e = check_count(*w, target_count, "target_count", func)) return e;
  if (int e = check_dtype(*w, origin_datatype, "origin_datatype", func, ot)) return e;
  if (int e = check_dtype(*w, target_datatype, "target_datatype", func, tt)) return e;
  if (int e = check_target(*w, target_rank, target_disp, func, skip)) return e;
  if (*skip) return MPI_SUCCESS;
  *bytes = origin_count * (*ot)->size;
  if (*bytes != target_count * (*tt)->size)
    return raise(*w, MPI_ERR_TYPE, func, "origin (%lld bytes) and target (%lld bytes) type signatures differ",
                 static_cast<long long>(*bytes), static_cast<long long>(target_count * (*tt)->size));
  *t = Target{target_rank, target_disp, target_count, *tt};
  return check_range(*w, *t, func);
}

int do_put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, const char* func,
           bool copy = false) {
  Window* w = window_of(win);
  size_t n = 0;
  if (w && origin_addr)
    if (char* at = direct_fast_target(w, origin_datatype, origin_count, target_rank, target_disp, target_datatype,
                                      target_count, &n)) {
      std::memcpy(at, origin_addr, n);
      return MPI_SUCCESS;
    }
  const Type *ot = nullptr, *tt = nullptr;
  Target t{};
  int64_t bytes = 0;
  bool skip = false;
  if (int e = check_transfer(win, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                             func, &w, &ot, &tt, &t, &bytes, &skip))
    return e;
  if (skip) return MPI_SUCCESS;
  if (w->direct) {
    direct_put(w, origin_addr, origin_count, *ot, target_rank, target_disp, target_count, *tt, bytes);
    return MPI_SUCCESS;
  }
  if (w->cma)
    return cma_put(w, origin_addr, origin_count, *ot, target_rank, target_disp, target_count, *tt, bytes, func);
  if (remote_reach(w, target_rank)) {
    bool taken = false;
    const int e = remote_put(w, origin_addr, origin_count, *ot, t, bytes, copy, func, &taken);
    if (taken || e) return e;
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
    return post(w, target_rank, std::move(buf), total, func, /*answered=*/false, /*holdable=*/true);
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
  Window* w = window_of(win);
  size_t n = 0;
  if (w && origin_addr)
    if (const char* at = direct_fast_target(w, origin_datatype, origin_count, target_rank, target_disp, target_datatype,
                                            target_count, &n)) {
      std::memcpy(origin_addr, at, n);
      return MPI_SUCCESS;
    }
  const Type *ot = nullptr, *tt = nullptr;
  Target t{};
  int64_t bytes = 0;
  bool skip = false;
  if (int e = check_transfer(win, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                             func, &w, &ot, &tt, &t, &bytes, &skip))
    return e;
  if (skip) return MPI_SUCCESS;
  if (w->direct) {
    direct_get(w, origin_addr, origin_count, *ot, target_rank, target_disp, target_count, *tt, bytes);
    return MPI_SUCCESS;
  }
  if (w->cma)
    return cma_get(w, origin_addr, origin_count, *ot, target_rank, target_disp, target_count, *tt, bytes, func);
  // MPI_Rget's request completes with its reply message: it keeps the message path.
  if (!op && remote_reach(w, target_rank)) {
    bool taken = false;
    const int e = remote_get(w, origin_addr, *ot, t, func, &taken);
    if (taken || e) return e;
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
  return post(w, target_rank, std::move(buf), total, func, /*answered=*/true);
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
  if (takes_device_atomics(w, *tt)) {
    bool taken = false;
    const int e = device_accumulate(w, origin_addr, origin_count, ot, result_addr, result_count, rt, t, bytes, op,
                                    func, &taken);
    if (taken || e) return e;
  }
  if (w->direct) {
    direct_accumulate(w, origin_addr, origin_count, ot, result_addr, result_count, rt, target_rank, target_disp,
                      target_count, *tt, bytes, op);
    return MPI_SUCCESS;
  }
  if (w->cma)
    return cma_accumulate(w, origin_addr, origin_count, ot, result_addr, result_count, rt, target_rank, target_disp,
                          target_count, *tt, bytes, op, func);
  std::shared_ptr<GetOp> g;
  const int e =
      accumulate_request(w, origin_addr, origin_count, ot, result_addr, result_count, rt, t, bytes, op, fetch, func, &g);
  if (out) *out = g;
  return e;
}

}  // namespace
}  // namespace xmsg::mpi::rma

using namespace xmsg::mpi;
using namespace xmsg::mpi::rma;

extern "C" {

// ---- communication -----------------------------------------------------------------------------
int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  XMSG_MPI_ENTRY;
  return do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                win, "MPI_Put");
}
XMSG_MPI_ALIAS(Put)

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  XMSG_MPI_ENTRY;
  return do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                win, "MPI_Get", nullptr);
}
XMSG_MPI_ALIAS(Get)

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  XMSG_MPI_ENTRY;
  return do_accumulate(origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL, target_rank,
                       target_disp, target_count, target_datatype, op, win, false, "MPI_Accumulate", nullptr);
}
XMSG_MPI_ALIAS(Accumulate)

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  XMSG_MPI_ENTRY;
  return do_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                       target_rank, target_disp, target_count, target_datatype, op, win, true, "MPI_Get_accumulate",
                       nullptr);
}
XMSG_MPI_ALIAS(Get_accumulate)

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  XMSG_MPI_ENTRY;
  return do_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op,
                       win, true, "MPI_Fetch_and_op", nullptr);
}
XMSG_MPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Win win) {
  XMSG_MPI_ENTRY;
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
  if (takes_device_atomics(w, *t)) {
    bool taken = false;
    const int e = device_compare_and_swap(w, origin_addr, compare_addr, result_addr, tg, func, &taken);
    if (taken || e) return e;
  }
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
  if (w->cma) return cma_compare_and_swap(w, origin_addr, compare_addr, result_addr, n, target_rank, target_disp, func);
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
  return post(w, target_rank, std::move(buf), total, func, /*answered=*/true);
}
XMSG_MPI_ALIAS(Compare_and_swap)

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
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
