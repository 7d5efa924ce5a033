// The origin side: waiting for an origin's own sends and replies, building request messages
// and sending them, the flush/unlock round trip to targets (sync_targets), and the checks
// every communication call makes before anything goes out.
#include "rma.hpp"

#include <cstring>

namespace xmsg::mpi::rma {

// ---- waiting ---------------------------------------------------------------------------------
// (spin_until, in rma.hpp)
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
  (void)send_held(w, target);  // a failure to send shows in the window's service error
  remote_wait(w, target);
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

namespace {

void reap(Window* w) {
  if (w->sends.size() < 64 && w->gets.size() < 64) return;
  for (auto& g : w->gets) poll_get(*g);
  for (auto& o : w->sends) poll_send(o);
  std::erase_if(w->gets, [](const std::shared_ptr<GetOp>& g) { return g->done; });
  std::erase_if(w->sends, [](const Outgoing& o) { return o.req == XMSG_REQUEST_NULL; });
}

}  // namespace

int take_tag(Window* w) {
  int t = w->next_tag++;
  if (w->next_tag > kLastReplyTag) w->next_tag = kFirstReplyTag;
  return t;
}

// ---- origin side: building and sending requests -----------------------------------------------
// (Target, in rma.hpp)
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

namespace {

void hold(std::vector<char>& held, const char* request, int64_t bytes) {
  if (held.empty()) held.resize(sizeof(Hdr));  // the batch's own header, written when it goes
  const size_t at = held.size();
  // Each request starts 8-byte aligned, as a message of its own would (the target reads its
  // blocks and data in place).
  held.resize(at + sizeof(int64_t) + ((static_cast<size_t>(bytes) + 7) & ~size_t{7}));
  std::memcpy(held.data() + at, &bytes, sizeof(int64_t));
  std::memcpy(held.data() + at + sizeof(int64_t), request, static_cast<size_t>(bytes));
}

int send_message(Window* w, int target, std::unique_ptr<char[]> buf, int64_t total) {
  Outgoing o;
  o.target = target;
  o.buf = std::move(buf);
  if (int e = xmsg_isend(o.buf.get(), total, XMSG_BYTE, target, kReqTag, w->xcomm, &o.req)) return e;
  w->sends.push_back(std::move(o));
  return XMSG_SUCCESS;
}

int send_batch(Window* w, int target) {
  std::vector<char>& held = w->held[static_cast<size_t>(target)];
  if (held.empty()) return XMSG_SUCCESS;
  Hdr h{};
  h.kind = kBatch;
  h.data_bytes = static_cast<int64_t>(held.size() - sizeof(Hdr));
  std::memcpy(held.data(), &h, sizeof h);
  const auto total = static_cast<int64_t>(held.size());
  std::unique_ptr<char[]> buf(new char[held.size()]);
  std::memcpy(buf.get(), held.data(), held.size());
  held.clear();
  return send_message(w, target, std::move(buf), total);
}

}  // namespace

int send_held(Window* w, int target) {
  int first = XMSG_SUCCESS;
  for (int t = target < 0 ? 0 : target; t < (target < 0 ? w->size : target + 1); ++t)
    if (int e = send_batch(w, t); e && !first) first = e;
  if (first) w->service_error = MPI_ERR_OTHER;
  return first;
}

int post(Window* w, int target, std::unique_ptr<char[]> buf, int64_t total, const char* func, bool answered,
         bool holdable) {
  std::vector<char>& held = w->held[static_cast<size_t>(target)];
  Hdr h;
  std::memcpy(&h, buf.get(), sizeof h);
  int e = XMSG_SUCCESS;
  if (holdable && total <= kBatchPiece) {
    hold(held, buf.get(), total);
    if (static_cast<int64_t>(held.size()) >= kBatchBytes) e = send_batch(w, target);
  } else if (!held.empty() && !h.split && total <= kBatchPiece) {
    hold(held, buf.get(), total);  // goes now, with what was held before it
    e = send_batch(w, target);
  } else {
    e = send_batch(w, target);
    if (!e) e = send_message(w, target, std::move(buf), total);
  }
  if (e) return reraise(w, e, func);
  w->dirty[static_cast<size_t>(target)] = 1;
  // A dynamic window's target checks the range itself (and reports at the flush); with a
  // one-sided transport to the target, later puts and gets bypass its message order.
  if (!answered || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || remote_reach(w, target))
    w->needs_ack[static_cast<size_t>(target)] = 1;
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
int accumulate_request(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                       const Type* rt, const Target& t, int64_t bytes, MPI_Op op, bool fetch, const char* func,
                       std::shared_ptr<GetOp>* fetched) {
  const bool no_op = op == MPI_NO_OP;
  Hdr h{};
  h.kind = fetch ? kGetAcc : kAcc;
  h.op = op;
  h.basic = t.type->basic;
  h.data_bytes = bytes;
  if (fetch) {
    h.reply_tag = take_tag(w);
    if (int e = expect(w, t.rank, h.reply_tag, result, rcount, rt, bytes, fetched, func)) return e;
  }
  const int64_t payload = no_op ? 0 : bytes;
  char* data = nullptr;
  int64_t total = 0;
  auto buf = build(h, t, payload, &data, &total);
  if (!no_op) pack(origin, ocount, *ot, data);
  return post(w, t.rank, std::move(buf), total, func, /*answered=*/fetch, /*holdable=*/!fetch);
}

int sync_targets(Window* w, const std::vector<int>& targets, int32_t kind, const char* func) {
  struct Pending {
    int target;
    Ack ack;
    xmsg_request_t req;
  };
  // Direct-path stores are complete once issued; the fence orders them before the answer.
  // Remote writes are complete once acknowledged: before the flush or unlock goes out.
  process_fence();
  for (int t : targets) remote_wait(w, t);
  // A flush asks only the targets with operations whose completion it cannot see; the others'
  // results are waited for below (complete_local). An unlock always goes out.
  std::vector<int> asked;
  for (int t : targets)
    if (kind != kFlush || w->needs_ack[static_cast<size_t>(t)]) asked.push_back(t);
  std::vector<Pending> p(asked.size());
  for (size_t i = 0; i < asked.size(); ++i) {
    p[i].target = asked[i];
    p[i].ack = Ack{};
    const int tag = take_tag(w);
    if (int e = xmsg_irecv(&p[i].ack, sizeof(Ack), XMSG_BYTE, asked[i], tag, w->xcomm, &p[i].req))
      return reraise(w, e, func);
    Hdr h{};
    h.kind = kind;
    h.reply_tag = tag;
    Target t{asked[i], 0, 0, nullptr};
    char* data = nullptr;
    int64_t total = 0;
    auto buf = build(h, t, 0, &data, &total);
    if (int e = post(w, asked[i], std::move(buf), total, func)) return e;
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
    w->dirty[static_cast<size_t>(t)] = w->needs_ack[static_cast<size_t>(t)] = 0;
  }
  for (int t : targets)
    if (int e = remote_failure(w, t, func)) return e;
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
  footprint(t.type->blocks.data(), static_cast<int32_t>(t.type->blocks.size()), t.count, t.type->extent, &lo, &hi);
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

}  // namespace xmsg::mpi::rma
