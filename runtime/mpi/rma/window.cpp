// Windows: the handle table, creation of every flavor (create, allocate, allocate_shared with
// its shared segment, dynamic), MPI_Win_shared_query, attach/detach, MPI_Win_free and
// MPI_Win_get_group. Everything that makes a window exist or go away lives here.
#include "rma.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace xmsg::mpi::rma {
namespace {

std::vector<std::unique_ptr<Window>>& windows() {
  static std::vector<std::unique_ptr<Window>> table(1);  // 0 is MPI_WIN_NULL
  return table;
}

}  // namespace

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

namespace {

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
  w->needs_ack.assign(static_cast<size_t>(csize), 0);
  w->held.assign(static_cast<size_t>(csize), {});
  w->locks.resize(csize);
  w->in_access.assign(static_cast<size_t>(csize), 0);
  w->pending_error.assign(static_cast<size_t>(csize), Ack{});
  *out = std::move(w);
  return MPI_SUCCESS;
}

// One segment for the whole communicator, mapped by every rank: rank 0 creates it (nameless
// unless XMSG_SHM_NAMELESS=off, xmsgi_shared_create) and sends how to join it, the others join, and
// rank 0 lets go of the name or descriptor once all have it mapped, so nothing outlives the
// job. `with_memory` false: the control block alone (the single-copy path's locks).
int map_shared(Window* w, const char* func, bool with_memory = true) {
  // The control block comes first: the accumulate lock on a cache line of its own, then one
  // passive-target lock word per rank, a cache line each, then the PSCW counters (small
  // windows). The ranks' memory follows contiguously in rank order.
  const int64_t control = 64 + kLockWordStride * w->size + pscw_bytes(w->size);
  int64_t total = control;
  w->seg_offset.resize(static_cast<size_t>(w->size));
  for (int r = 0; r < w->size; ++r) {
    w->seg_offset[static_cast<size_t>(r)] = total;
    if (with_memory) total += w->ranks[static_cast<size_t>(r)].size;
  }
  w->segment_bytes = static_cast<size_t>(total);
  uint32_t context = 0;
  int creator = 0;
  xmsgi_comm_context(w->xcomm, &context);
  xmsgi_comm_world_rank(w->xcomm, 0, &creator);
  const std::string name = "/xmsg-" + std::string(xmsgi_job_id()) + "-rma-" + std::to_string(context) + "-" +
                           std::to_string(creator);
  struct {
    int64_t ok;
    xmsgi_shared_ticket ticket;
  } invitation{0, {}};
  char why[512] = "";
  if (w->rank == 0)
    invitation.ok = xmsgi_shared_create(name.c_str(), static_cast<uint64_t>(total), &w->shared, &invitation.ticket,
                                        why, sizeof why) == XMSG_SUCCESS;
  xmsg_bcast(&invitation, sizeof invitation, XMSG_BYTE, 0, w->xcomm);
  int ok = static_cast<int>(invitation.ok);
  // The others come for the descriptor as soon as they have the invitation.
  if (ok && w->rank == 0) ok = xmsgi_shared_share(w->shared, w->size - 1, why, sizeof why) == XMSG_SUCCESS;
  if (ok && w->rank != 0)
    ok = xmsgi_shared_join(name.c_str(), static_cast<uint64_t>(total), &invitation.ticket, &w->shared, why,
                           sizeof why) == XMSG_SUCCESS;
  int all = 0;
  xmsg_allreduce(&ok, &all, 1, XMSG_INT, XMSG_MIN, w->xcomm);
  if (w->rank == 0) xmsgi_shared_done_sharing(w->shared);
  if (!all) {
    xmsgi_shared_free(w->shared);
    w->shared = nullptr;
    return fail(MPI_ERR_NO_MEM, func, w->comm, "cannot share the %lld-byte window segment %s%s%s",
                static_cast<long long>(total), name.c_str(), why[0] ? ": " : " (a peer could not)", why);
  }
  w->segment = xmsgi_shared_data(w->shared);
  // Not constructed here: a rank done with creation may already hold it while another is
  // still returning from the allreduce above. Creation zeroed it, which is "free".
  w->acc_lock = reinterpret_cast<std::atomic<uint32_t>*>(w->segment);
  w->lock_words = reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(w->segment) + 64);
  pscw_place(w, static_cast<char*>(w->segment) + 64 + kLockWordStride * w->size);
  w->direct = with_memory;
  return MPI_SUCCESS;
}

// MPI_Win_create on one node: the single-copy path when every rank allows it (XMSG_SHM_CMA) and
// every rank can read every other's window memory (one byte from each, process_vm_readv: the
// kernel's ptrace rules, e.g. Yama's ptrace_scope, may refuse); otherwise messages. All ranks
// take the same path (an allreduce of the verdicts).
void set_up_cma(Window* w, const char* func) {
  CmaPeer mine{reinterpret_cast<uint64_t>(w->base), static_cast<int64_t>(getpid())};
  w->cma_peers.resize(static_cast<size_t>(w->size));
  int ok = xmsgi_single_copy_allowed();
  if (xmsg_allgather(&mine, sizeof mine, XMSG_BYTE, w->cma_peers.data(), sizeof mine, XMSG_BYTE, w->xcomm)) ok = 0;
  for (int r = 0; ok && r < w->size; ++r) {
    if (r == w->rank || w->ranks[static_cast<size_t>(r)].size <= 0) continue;
    char byte = 0;
    iovec local{&byte, 1};
    iovec remote{reinterpret_cast<void*>(w->cma_peers[static_cast<size_t>(r)].base), 1};
    if (process_vm_readv(static_cast<pid_t>(w->cma_peers[static_cast<size_t>(r)].pid), &local, 1, &remote, 1, 0) != 1)
      ok = 0;
  }
  int all = 0;
  if (xmsg_allreduce(&ok, &all, 1, XMSG_INT, XMSG_MIN, w->xcomm)) all = 0;
  if (all && map_shared(w, func, false) == MPI_SUCCESS) {
    w->cma = true;
    return;
  }
  w->cma_peers.clear();
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
  xmsgi_shared_free(w->shared);
  w->shared = nullptr;
  w->segment = nullptr;
  std::free(w->owned);
  w->owned = nullptr;
}

}  // namespace
}  // namespace xmsg::mpi::rma

using namespace xmsg::mpi;
using namespace xmsg::mpi::rma;

extern "C" {

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_create";
  if (!win) return fail(MPI_ERR_ARG, func, comm, "win is NULL");
  std::unique_ptr<Window> w;
  if (int e = make_window(comm, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE, func, &w)) return e;
  w->base = base;
  if (w->size > 1 && on_one_node(comm)) set_up_cma(w.get(), func);
  else set_up_remote(w.get());
  return register_window(std::move(w), win);
}
XMSG_MPI_ALIAS(Win_create)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  XMSG_MPI_ENTRY;
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
  set_up_remote(w.get());
  return register_window(std::move(w), win);
}
XMSG_MPI_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                             MPI_Win* win) {
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_create_dynamic";
  if (!win) return fail(MPI_ERR_ARG, func, comm, "win is NULL");
  std::unique_ptr<Window> w;
  if (int e = make_window(comm, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, func, &w)) return e;
  w->base = MPI_BOTTOM;
  return register_window(std::move(w), win);
}
XMSG_MPI_ALIAS(Win_create_dynamic)

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
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
  release_remote(w);
  xmsg_comm_free(&w->xcomm);
  release_memory(w);
  windows()[static_cast<size_t>(*win)].reset();
  *win = MPI_WIN_NULL;
  return handle(e, func);
}
XMSG_MPI_ALIAS(Win_free)

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_get_group";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!group) return raise(w, MPI_ERR_ARG, func, "group is NULL");
  std::vector<int> world;
  if (int e = world_ranks_of(w->xcomm, &world)) return reraise(w, e, func);
  return new_group(std::move(world), group);
}
XMSG_MPI_ALIAS(Win_get_group)

}  // extern "C"
