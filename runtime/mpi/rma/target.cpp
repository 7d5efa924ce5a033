// The target side: the Service each window registers with the MPI layer's progress list,
// which receives request messages in arrival order and applies them to this rank's window
// memory (puts, gets, accumulates, compare-and-swap, locks, flushes, PSCW completions).
#include "rma.hpp"

#include <algorithm>
#include <cstring>

namespace xmsg::mpi::rma {
namespace {

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

}  // namespace

namespace {

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

}  // namespace

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

namespace {

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
    case kBatch:
      for (int64_t at = sizeof h; at + static_cast<int64_t>(sizeof(int64_t)) <= bytes;) {
        int64_t n = 0;
        std::memcpy(&n, msg + at, sizeof n);
        at += static_cast<int64_t>(sizeof n);
        if (n < 0 || at + n > bytes) break;
        Hdr inner;
        if (n >= static_cast<int64_t>(sizeof inner)) std::memcpy(&inner, msg + at, sizeof inner);
        if (n >= static_cast<int64_t>(sizeof inner) && inner.kind != kBatch && !(inner.kind == kPut && inner.split))
          process(w, origin, msg + at, n);
        at += (n + 7) & ~int64_t{7};
      }
      break;
    default:
      break;
  }
}

}  // namespace

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

bool Service::wants_background() const { return !(w && (w->direct || w->cma)); }

int Service::test(bool* done, MPI_Status*) {
  *done = false;
  serve(w);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi::rma
