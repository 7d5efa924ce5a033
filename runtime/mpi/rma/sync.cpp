// Synchronisation: the active-target models (MPI_Win_fence, PSCW: post/start/complete/wait/
// test) and the passive-target one (lock/lock_all/unlock/unlock_all, flush and flush_local,
// MPI_Win_sync). Epoch state lives in the Window; remote completion is sync_targets (origin.cpp).
#include "rma.hpp"

#include <algorithm>

namespace xmsg::mpi::rma {
namespace {

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

// Asks target `rank` for a lock and waits until it is granted (the target's service answers
// when no conflicting holder is left).
int acquire(Window* w, int rank, int lock_type, const char* func) {
  if (w->lock_words) {
    direct_lock(w, rank, lock_type);
    return MPI_SUCCESS;
  }
  if (w->device_locks) return device_lock(w, rank, lock_type, func);
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
  w->dirty[static_cast<size_t>(rank)] = w->needs_ack[static_cast<size_t>(rank)] = 0;
  spin_until([&] {
    int flag = 0;
    xmsg_status_t st{};
    if (xmsg_test(&req, &flag, &st) != XMSG_SUCCESS) flag = 1;
    return flag != 0;
  });
  return MPI_SUCCESS;
}

int check_passive(Window* w, int rank, const char* func) {
  if (rank < 0 || rank >= w->size)
    return raise(w, MPI_ERR_RANK, func, "rank %d is not a rank of window %s (size %d)", rank, win_name(w), w->size);
  if (!w->lock_all && !w->locks.count(rank))
    return raise(w, MPI_ERR_RMA_SYNC, func, "rank %d of window %s is not locked (flush needs a passive-target epoch)",
                 rank, win_name(w));
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace xmsg::mpi::rma

using namespace xmsg::mpi;
using namespace xmsg::mpi::rma;

extern "C" {

// ---- synchronisation ---------------------------------------------------------------------------
int PMPI_Win_fence(int assert_, MPI_Win win) {
  XMSG_MPI_ENTRY;
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
  if (e == MPI_SUCCESS) e = remote_failure(w, -1, func);
  // The barrier waits serve the other ranks' flushes (the idle hook runs the service).
  if (int b = xmsg_barrier(w->xcomm)) return reraise(w, b, func);
  w->fence_open = !(assert_ & MPI_MODE_NOSUCCEED);
  return e;
}
XMSG_MPI_ALIAS(Win_fence)

int PMPI_Win_start(MPI_Group group, int assert_, MPI_Win win) {
  XMSG_MPI_ENTRY;
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
  if (w->pscw_posts) {
    pscw_start(w, ranks, !(assert_ & MPI_MODE_NOCHECK));
  } else if (!(assert_ & MPI_MODE_NOCHECK)) {
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
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_complete";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->started)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s has no access epoch (call MPI_Win_start first)", win_name(w));
  int e = MPI_SUCCESS;
  process_fence();
  remote_wait(w, -1);  // the targets may read what we wrote once they hear of the completion
  if (w->pscw_posts) {
    pscw_complete(w, w->access);
  } else {
    for (int t : w->access) {
      Hdr h{};
      h.kind = kComplete;
      Target tg{t, 0, 0, nullptr};
      char* data = nullptr;
      int64_t total = 0;
      auto buf = build(h, tg, 0, &data, &total);
      if ((e = post(w, t, std::move(buf), total, func))) break;
      w->dirty[static_cast<size_t>(t)] = w->needs_ack[static_cast<size_t>(t)] = 0;
    }
  }
  complete_local(w, -1);
  if (e == MPI_SUCCESS) e = remote_failure(w, -1, func);
  for (int t : w->access) w->in_access[static_cast<size_t>(t)] = 0;
  w->access.clear();
  w->started = false;
  return e;
}
XMSG_MPI_ALIAS(Win_complete)

int PMPI_Win_post(MPI_Group group, int assert_, MPI_Win win) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_post";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (int e = check_assert(w, assert_, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, func)) return e;
  if (w->posted)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s already has an exposure epoch (MPI_Win_post)", win_name(w));
  std::vector<int> ranks;
  if (int e = group_ranks(w, group, func, &ranks)) return e;
  if (w->pscw_posts) {
    pscw_post(w, ranks);
  } else if (!(assert_ & MPI_MODE_NOCHECK)) {
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
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_wait";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->posted)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s has no exposure epoch (call MPI_Win_post first)", win_name(w));
  if (w->pscw_posts) {
    spin_until([&] { return pscw_exposure_done(w); });
    w->posted = false;
    return MPI_SUCCESS;
  }
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
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_test";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!flag) return raise(w, MPI_ERR_ARG, func, "flag is NULL");
  if (!w->posted)
    return raise(w, MPI_ERR_RMA_SYNC, func,
                 "window %s has no exposure epoch (call MPI_Win_post first)", win_name(w));
  progress_all();
  xmsgi_progress();
  if (w->pscw_posts) {
    process_fence();
    *flag = pscw_exposure_done(w);
    if (*flag) w->posted = false;
    return MPI_SUCCESS;
  }
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

int PMPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win) {
  XMSG_MPI_ENTRY;
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
  w->locks.hold(rank, lock_type, nocheck);
  w->fence_open = false;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_lock)

int PMPI_Win_lock_all(int assert_, MPI_Win win) {
  XMSG_MPI_ENTRY;
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
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_unlock";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->size)
    return raise(w, MPI_ERR_RANK, func, "rank %d is not a rank of window %s (size %d)", rank, win_name(w), w->size);
  if (!w->locks.count(rank))
    return raise(w, MPI_ERR_RMA_SYNC, func, "rank %d of window %s is not locked by this process (no MPI_Win_lock)",
                 rank, win_name(w));
  int lock_type = MPI_LOCK_SHARED;
  bool nocheck = false;
  w->locks.release(rank, &lock_type, &nocheck);
  if (w->lock_words) {
    // Every operation of the epoch is complete already: order its stores, then let go.
    process_fence();
    if (!nocheck) direct_unlock(w, rank, lock_type);
    return MPI_SUCCESS;
  }
  if (w->device_locks) {
    // The epoch's operations complete at the target first (a flush where messages carried
    // some), then the lock word lets go.
    // The word lets go even when the epoch failed: others must not wait for it forever.
    int e = sync_targets(w, {rank}, kFlush, func);
    if (e == MPI_SUCCESS) e = remote_failure(w, rank, func);
    const int released = nocheck ? MPI_SUCCESS : device_unlock(w, rank, lock_type, func);
    return e != MPI_SUCCESS ? e : released;
  }
  return sync_targets(w, {rank}, nocheck ? kFlush : kUnlock, func);
}
XMSG_MPI_ALIAS(Win_unlock)

int PMPI_Win_unlock_all(MPI_Win win) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_unlock_all";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->lock_all)
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s has no MPI_Win_lock_all epoch", win_name(w));
  w->lock_all = false;
  if (w->lock_words) {
    process_fence();
    if (!w->lock_all_nocheck)
      for (int r = 0; r < w->size; ++r) direct_unlock(w, r, MPI_LOCK_SHARED);
    return MPI_SUCCESS;
  }
  std::vector<int> all;
  remote_wait(w, -1);
  if (int e = remote_failure(w, -1, func)) return e;
  if (w->device_locks) {
    int e = sync_targets(w, dirty_targets(w), kFlush, func);
    if (!w->lock_all_nocheck)
      for (int r = 0; r < w->size; ++r) {
        const int released = device_unlock(w, r, MPI_LOCK_SHARED, func);
        if (e == MPI_SUCCESS) e = released;
      }
    return e;
  }
  if (w->lock_all_nocheck) {
    all = dirty_targets(w);
  } else {
    for (int r = 0; r < w->size; ++r) all.push_back(r);
  }
  return sync_targets(w, all, w->lock_all_nocheck ? kFlush : kUnlock, func);
}
XMSG_MPI_ALIAS(Win_unlock_all)

int PMPI_Win_flush(int rank, MPI_Win win) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_flush";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (int e = check_passive(w, rank, func)) return e;
  if (!w->dirty[static_cast<size_t>(rank)]) {  // nothing but remote writes and reads (if any) to wait for
    remote_wait(w, rank);
    return remote_failure(w, rank, func);
  }
  return sync_targets(w, {rank}, kFlush, func);
}
XMSG_MPI_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_flush_all";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->lock_all && w->locks.empty())
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s has no passive-target epoch", win_name(w));
  remote_wait(w, -1);
  if (int e = remote_failure(w, -1, func)) return e;
  return sync_targets(w, dirty_targets(w), kFlush, func);
}
XMSG_MPI_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_flush_local";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (int e = check_passive(w, rank, func)) return e;
  complete_local(w, rank);
  return remote_failure(w, rank, func);
}
XMSG_MPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_flush_local_all";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!w->lock_all && w->locks.empty())
    return raise(w, MPI_ERR_RMA_SYNC, func, "window %s has no passive-target epoch", win_name(w));
  complete_local(w, -1);
  return remote_failure(w, -1, func);
}
XMSG_MPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win) {
  XMSG_MPI_ENTRY;
  Window* w = nullptr;
  if (int e = check_win(win, "MPI_Win_sync", &w)) return e;
  process_fence();
  progress_all();
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_sync)

}  // extern "C"
