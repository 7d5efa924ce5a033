// The remote path: windows across nodes whose ranks a transport reaches one-sidedly. The
// runtime exposes each rank's window memory (xmsgi_remote_expose: an RDMA registration with
// remote read and write over verbs, nothing but the address over shm's CMA); an origin's put is
// one remote write per contiguous run of the target datatype, a get one remote read, and the
// target's CPU takes no part. Locks and the synchronisation messages stay on the message path,
// and so do accumulates, fetch-and-op and compare-and-swap, except on 64-bit integers where
// every rank has device atomics (device_atomics.cpp): accumulates must be atomic against each
// other whichever origin issued them, and the target's service applying them all in arrival
// order is what makes them so.
//
// Completion: an RDMA WRITE completes at the origin once the target acknowledged it (its data is
// in the target's memory); CMA within the call. So a flush, unlock, fence or complete waits
// for the transfers (remote_wait) before its own message goes out, and nothing else is needed
// for remote completion.
#include "rma.hpp"

#include <cstring>

namespace xmsg::mpi::rma {
namespace {

// Above this many runs a call leaves the remote path: each run is a transfer of its own (a work
// request, a completion, for small ones a send slot), while one request message lets the target
// scatter or gather them all (rma.c's strided 20000-element get took 20000 READs of 8 bytes).
constexpr int64_t kMaxRemoteRuns = 64;

int64_t count_runs(const Type& type, int64_t count) {
  int64_t runs = 0;
  for_each_run(type, count, [&](int64_t, int64_t, int64_t) { return ++runs > kMaxRemoteRuns ? 1 : 0; });
  return runs;
}

}  // namespace

bool expose_to_all(Window* w, void* buf, uint64_t bytes, xmsgi_remote_keys* mine, std::vector<xmsgi_remote_keys>* all,
                   bool* exposed) {
  bool ok = xmsgi_remote_expose(buf, bytes, mine) == XMSG_SUCCESS;
  *exposed = ok;
  all->resize(static_cast<size_t>(w->size));
  if (xmsg_allgather(mine, sizeof *mine, XMSG_BYTE, all->data(), sizeof *mine, XMSG_BYTE, w->xcomm)) ok = false;
  return ok;
}

void set_up_remote(Window* w) {
  if (!xmsgi_remote_enabled() || w->size < 2) return;
  int ok = expose_to_all(w, w->base, static_cast<uint64_t>(w->win_size), &w->my_keys, &w->remote_keys,
                         &w->remote_exposed)
               ? 1
               : 0;
  int all = 0;
  if (xmsg_allreduce(&ok, &all, 1, XMSG_INT, XMSG_MIN, w->xcomm)) all = 0;
  if (!all) {
    release_remote(w);
    return;
  }
  w->remote_via.assign(static_cast<size_t>(w->size), nullptr);
  for (int r = 0; r < w->size; ++r) {
    if (r == w->rank) continue;
    w->remote_via[static_cast<size_t>(r)] = xmsgi_remote_transport(w->xcomm, r, &w->remote_keys[static_cast<size_t>(r)]);
    if (w->remote_via[static_cast<size_t>(r)]) w->remote = true;
  }
  w->remote_done.reset(new xmsgi_remote_done[static_cast<size_t>(w->size)]);
  set_up_device_atomics(w);
}

void release_remote(Window* w) {
  release_device_locks(w);
  if (w->remote_exposed) xmsgi_remote_release(&w->my_keys);
  w->remote_exposed = false;
  w->remote = false;
  w->device_atomics = false;
  w->remote_keys.clear();
  w->remote_via.clear();
}

namespace {

// One remote write from or read into `stream` (the origin's data, contiguous) per run of the
// target datatype.
int transfer_runs(Window* w, const Target& t, bool write, char* stream_base, const char* func) {
  const int64_t base = base_offset(w, t);
  xmsgi_remote_done* done = &w->remote_done[static_cast<size_t>(t.rank)];
  const xmsgi_remote_keys* keys = &w->remote_keys[static_cast<size_t>(t.rank)];
  const int e = for_each_run(*t.type, t.count, [&](int64_t at, int64_t stream, int64_t n) {
    const uint64_t where = static_cast<uint64_t>(base + at), bytes = static_cast<uint64_t>(n);
    return write ? xmsgi_remote_write(w->xcomm, t.rank, keys, where, stream_base + stream, bytes, done)
                 : xmsgi_remote_read(w->xcomm, t.rank, keys, where, stream_base + stream, bytes, done);
  });
  return e ? reraise(w, e, func) : MPI_SUCCESS;
}

}  // namespace

int remote_put(Window* w, const void* origin, int64_t ocount, const Type& ot, const Target& t, int64_t bytes,
               bool copy, const char* func, bool* taken) {
  *taken = count_runs(*t.type, t.count) <= kMaxRemoteRuns;
  if (!*taken) return MPI_SUCCESS;
  const char* src = static_cast<const char*>(origin) + ot.true_lb;
  if (!ot.contiguous || copy) {
    std::unique_ptr<char[]> packed(new char[static_cast<size_t>(bytes)]);
    pack(origin, ocount, ot, packed.get());
    src = packed.get();
    w->remote_staging.emplace_back(t.rank, std::move(packed));
  }
  return transfer_runs(w, t, true, const_cast<char*>(src), func);
}

int remote_get(Window* w, void* origin, const Type& ot, const Target& t, const char* func, bool* taken) {
  *taken = ot.contiguous && count_runs(*t.type, t.count) <= kMaxRemoteRuns;
  if (!*taken) return MPI_SUCCESS;
  return transfer_runs(w, t, false, static_cast<char*>(origin) + ot.true_lb, func);
}

void remote_wait(Window* w, int target) {
  if (!w->remote) return;
  auto idle = [&](int r) { return w->remote_done[static_cast<size_t>(r)].pending == 0; };
  spin_until([&] {
    if (target >= 0) return idle(target);
    for (int r = 0; r < w->size; ++r)
      if (!idle(r)) return false;
    return true;
  });
  std::erase_if(w->remote_staging, [&](const auto& s) { return target < 0 || s.first == target; });
}

int remote_failure(Window* w, int target, const char* func) {
  if (!w->remote) return MPI_SUCCESS;
  for (int r = target < 0 ? 0 : target; r < (target < 0 ? w->size : target + 1); ++r) {
    xmsgi_remote_done& d = w->remote_done[static_cast<size_t>(r)];
    if (d.error == 0) continue;
    d.error = 0;
    return raise(w, MPI_ERR_OTHER, func, "a put or get to rank %d of window %s over %s failed: %s", r, win_name(w),
                 w->remote_via[static_cast<size_t>(r)], d.reason);
  }
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi::rma
