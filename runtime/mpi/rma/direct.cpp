// The direct path: windows whose memory is one segment mapped by every rank (allocate and
// allocate_shared on one node). The origin loads and stores into the target's memory itself;
// accumulates hold the segment's spin lock (AccGuard, in rma.hpp) for the copy and combine;
// passive-target locks are words in the segment's control block.
#include "rma.hpp"

#include <atomic>

namespace xmsg::mpi::rma {

// ---- the direct path (windows in one mapped segment) -----------------------------------------
char* direct_addr(Window* w, int rank, MPI_Aint disp) {
  const RankInfo& ri = w->ranks[static_cast<size_t>(rank)];
  return static_cast<char*>(w->segment) + w->seg_offset[static_cast<size_t>(rank)] + disp * ri.disp_unit;
}

// (AccGuard, in rma.hpp: compare-and-swap in operations.cpp takes it too)

void put_at(char* at, const void* origin, int64_t ocount, const Type& ot, int64_t tcount, const Type& tt,
            int64_t bytes) {
  if (tt.contiguous) {
    pack(origin, ocount, ot, at + tt.true_lb);
    return;
  }
  Staging tmp = staging_buffer(bytes);
  pack(origin, ocount, ot, tmp.get());
  unpack(tmp.get(), bytes, at, tcount, tt);
}

void get_at(const char* at, void* origin, int64_t ocount, const Type& ot, int64_t tcount, const Type& tt,
            int64_t bytes) {
  if (tt.contiguous) {
    unpack(at + tt.true_lb, bytes, origin, ocount, ot);
    return;
  }
  Staging tmp = staging_buffer(bytes);
  pack(at, tcount, tt, tmp.get());
  unpack(tmp.get(), bytes, origin, ocount, ot);
}

void accumulate_at(Window* w, char* at, const void* origin, int64_t ocount, const Type* ot, void* result,
                   int64_t rcount, const Type* rt, int64_t tcount, const Type& tt, int64_t bytes, MPI_Op op) {
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

void direct_put(Window* w, const void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp,
                int64_t tcount, const Type& tt, int64_t bytes) {
  put_at(direct_addr(w, rank, disp), origin, ocount, ot, tcount, tt, bytes);
}

void direct_get(Window* w, void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp, int64_t tcount,
                const Type& tt, int64_t bytes) {
  get_at(direct_addr(w, rank, disp), origin, ocount, ot, tcount, tt, bytes);
}

void direct_accumulate(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                       const Type* rt, int rank, MPI_Aint disp, int64_t tcount, const Type& tt, int64_t bytes,
                       MPI_Op op) {
  accumulate_at(w, direct_addr(w, rank, disp), origin, ocount, ot, result, rcount, rt, tcount, tt, bytes, op);
}

// ---- passive-target locks (a word per target rank) ----------------------------------------
// Bit 63: held exclusive. Bit 62: an exclusive request waits, so no new shared holder enters
// (shared holders coming and going cannot starve it). The rest: how many hold it shared.
namespace {
constexpr uint64_t kExclusive = uint64_t{1} << 63;
constexpr uint64_t kExclusiveWaits = uint64_t{1} << 62;

std::atomic<uint64_t>& lock_word(Window* w, int rank) {
  return *reinterpret_cast<std::atomic<uint64_t>*>(reinterpret_cast<char*>(w->lock_words) +
                                                   static_cast<int64_t>(rank) * kLockWordStride);
}
}  // namespace

void direct_lock(Window* w, int rank, int lock_type) {
  std::atomic<uint64_t>& word = lock_word(w, rank);
  if (lock_type == MPI_LOCK_EXCLUSIVE) {
    spin_until([&] {
      uint64_t v = word.load(std::memory_order_relaxed);
      if ((v & ~kExclusiveWaits) == 0)
        return word.compare_exchange_strong(v, kExclusive, std::memory_order_acquire, std::memory_order_relaxed);
      if (!(v & kExclusiveWaits)) word.fetch_or(kExclusiveWaits, std::memory_order_relaxed);
      return false;
    });
    return;
  }
  spin_until([&] {
    uint64_t v = word.load(std::memory_order_relaxed);
    return !(v & (kExclusive | kExclusiveWaits)) &&
           word.compare_exchange_strong(v, v + 1, std::memory_order_acquire, std::memory_order_relaxed);
  });
}

void direct_unlock(Window* w, int rank, int lock_type) {
  std::atomic<uint64_t>& word = lock_word(w, rank);
  // Release: the epoch's stores are visible to whoever takes the lock next.
  if (lock_type == MPI_LOCK_EXCLUSIVE) word.fetch_and(~kExclusive, std::memory_order_release);
  else word.fetch_sub(1, std::memory_order_release);
}

// ---- PSCW as counters ----------------------------------------------------------------------
int64_t pscw_bytes(int ranks) {
  if (ranks > kPscwMaxRanks) return 0;
  const int64_t completes = 64 * static_cast<int64_t>(ranks);
  const int64_t posts = (4 * static_cast<int64_t>(ranks) * ranks + 63) / 64 * 64;
  return completes + posts;
}

void pscw_place(Window* w, char* at) {
  if (pscw_bytes(w->size) == 0) return;
  w->pscw_completes = reinterpret_cast<std::atomic<uint64_t>*>(at);
  w->pscw_posts = reinterpret_cast<std::atomic<uint32_t>*>(at + 64 * static_cast<int64_t>(w->size));
  w->pscw_started.assign(static_cast<size_t>(w->size), 0);
}

void pscw_post(Window* w, const std::vector<int>& origins) {
  // Counted even under MPI_MODE_NOCHECK, so a start that checks still finds its post.
  for (int o : origins)
    w->pscw_posts[static_cast<size_t>(w->rank) * static_cast<size_t>(w->size) + static_cast<size_t>(o)].fetch_add(
        1, std::memory_order_release);
  w->pscw_expected += origins.size();
}

void pscw_start(Window* w, const std::vector<int>& targets, bool wait) {
  for (int t : targets) {
    const uint32_t epoch = ++w->pscw_started[static_cast<size_t>(t)];
    if (!wait) continue;
    const std::atomic<uint32_t>& posted =
        w->pscw_posts[static_cast<size_t>(t) * static_cast<size_t>(w->size) + static_cast<size_t>(w->rank)];
    spin_until([&] { return static_cast<int32_t>(posted.load(std::memory_order_acquire) - epoch) >= 0; });
  }
}

void pscw_complete(Window* w, const std::vector<int>& targets) {
  for (int t : targets) w->pscw_completes[static_cast<size_t>(t) * 8].fetch_add(1, std::memory_order_release);
}

bool pscw_exposure_done(const Window* w) {
  return w->pscw_completes[static_cast<size_t>(w->rank) * 8].load(std::memory_order_acquire) >= w->pscw_expected;
}

}  // namespace xmsg::mpi::rma
