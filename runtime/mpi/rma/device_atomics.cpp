// Accumulate-class operations as the device's atomics: verbs' 64-bit fetch-and-add and
// compare-and-swap, done by the HCA without the target's CPU.
//
// All or none, per window: an atomic done by an HCA is atomic only against that HCA's other
// atomics, never against the read-modify-write the target's service does on its CPU. So the
// choice is collective (set_up_device_atomics: every rank reaches every rank with device
// atomics, itself by loopback), and on such a window every accumulate-class operation on 64-bit
// integer elements goes through the device, whoever issues it and to whom, the owner's own
// included. Other element types keep the target's service: MPI asks atomicity only among
// operations on the same predefined type and location.
//
// The passive-target locks of such a window are the device's too: a lock word per rank, in
// memory of its own exposed to every rank, taken with compare-and-swap and released with
// fetch-and-add, so lock, put, get, atomics and unlock need nothing from the target's CPU. The
// word is the direct path's (direct.cpp): bit 63 held exclusive, bit 62 an exclusive request
// waits (no new shared holder enters), the rest the count of shared holders.
//
// SUM and NO_OP are one fetch-and-add per element (of 0 for NO_OP). Every other op reads
// (fetch-and-add 0), computes and compare-and-swaps until nobody changed the location in
// between; MPI_Compare_and_swap is one compare-and-swap. A call waits for its atomics: its
// fetched values are there when it returns, one origin's operations on a location stay in order,
// and a flush has nothing of them to wait for.
#include "rma.hpp"

#include <cstdlib>
#include <cstring>

namespace xmsg::mpi::rma {
namespace {

constexpr int64_t kElement = 8;

bool is_int64(xmsg_datatype_t basic) {
  switch (basic) {
    case XMSG_INT64_T:
    case XMSG_UINT64_T:
    case XMSG_LONG_LONG:
    case XMSG_UNSIGNED_LONG_LONG:
      return true;
    case XMSG_LONG:
    case XMSG_UNSIGNED_LONG:
      return sizeof(long) == kElement;
    default:
      return false;
  }
}

// The target's window address as it exposed it (every slot names the same memory).
uint64_t target_base(const Window* w, int rank) { return w->remote_keys[static_cast<size_t>(rank)].slot[0].address; }

bool is_aligned(const Window* w, int rank, uint64_t offset) { return (target_base(w, rank) + offset) % kElement == 0; }

// Fetch-and-adds in flight on one call at most: beyond the transport's send slots each would
// register its 8-byte result buffer.
constexpr int64_t kMaxInFlight = 32;

constexpr uint64_t kExclusive = uint64_t{1} << 63;
constexpr uint64_t kExclusiveWaits = uint64_t{1} << 62;

// One call's atomics on one target's window memory (or, `lock`, its lock word), waited for
// together.
struct Atomics {
  Window* w;
  int target;
  bool lock = false;
  xmsgi_remote_done done{};

  const xmsgi_remote_keys* keys() const {
    return lock ? &w->lock_keys[static_cast<size_t>(target)] : &w->remote_keys[static_cast<size_t>(target)];
  }
  int fetch_add(uint64_t offset, uint64_t add, uint64_t* old) {
    return xmsgi_remote_atomic(w->xcomm, target, keys(), offset, 0, add, 0, old, &done);
  }
  int compare_swap(uint64_t offset, uint64_t swap, uint64_t compare, uint64_t* old) {
    return xmsgi_remote_atomic(w->xcomm, target, keys(), offset, 1, swap, compare, old, &done);
  }
  // Waits until at most `n` atomics are in flight.
  void wait_below(int64_t n) {
    spin_until([&] { return done.pending <= n; });
  }
  // Waits for every atomic posted; `posted` is the first posting error (XMSG code) or 0.
  int finish(int posted, const char* func) {
    wait_below(0);
    if (posted) return reraise(w, posted, func);
    if (done.error)
      return raise(w, MPI_ERR_OTHER, func, "an atomic on rank %d of window %s over the device failed: %s", target,
                   win_name(w), done.reason);
    return MPI_SUCCESS;
  }
};

// The offsets (in the target's exposure) of the 64-bit elements `t` covers, in stream order,
// and how many of them are 8-byte aligned in the target's memory (the device takes only those).
size_t element_offsets(const Window* w, const Target& t, std::vector<uint64_t>* at) {
  const int64_t base = base_offset(w, t);
  size_t aligned = 0;
  for_each_run(*t.type, t.count, [&](int64_t off, int64_t, int64_t bytes) {
    for (int64_t k = 0; k < bytes; k += kElement) {
      const uint64_t offset = static_cast<uint64_t>(base + off + k);
      if (is_aligned(w, t.rank, offset)) ++aligned;
      at->push_back(offset);
    }
    return 0;
  });
  return aligned;
}

// One element the device cannot take (not 8-byte aligned), as a request to the target's
// service: every origin's operations on that element go there, so they stay atomic among
// themselves. `old`: where its fetched value lands (null: nothing fetched); the caller waits.
int element_by_message(Window* w, const Target& t, uint64_t offset, const uint64_t* in, uint64_t* old, MPI_Op op,
                       const char* func, std::shared_ptr<GetOp>* fetched) {
  const Type* basic = type_of(t.type->basic);
  Type element = *basic;  // one element at `offset`, as the target's datatype
  element.predefined = false;
  element.contiguous = false;
  element.blocks = {Block{static_cast<MPI_Aint>(static_cast<int64_t>(offset) - base_offset(w, t)), kElement}};
  element.true_lb = element.blocks[0].offset;
  const Target one{t.rank, t.disp, 1, &element};
  return accumulate_request(w, in, 1, basic, old, 1, basic, one, kElement, op, old != nullptr, func, fetched);
}

// Whether every rank reaches the memory `keys` describe (per rank) with device atomics.
bool reach_all_atomically(const Window* w, const std::vector<xmsgi_remote_keys>& keys) {
  for (int r = 0; r < w->size; ++r)
    if (!xmsgi_remote_atomics(w->xcomm, r, &keys[static_cast<size_t>(r)])) return false;
  return true;
}

}  // namespace

void set_up_device_atomics(Window* w) {
  int ok = w->remote_exposed && reach_all_atomically(w, w->remote_keys) ? 1 : 0;
  int all = 0;
  if (xmsg_allreduce(&ok, &all, 1, XMSG_INT, XMSG_MIN, w->xcomm)) all = 0;
  w->device_atomics = all != 0;
  if (!w->device_atomics) return;
  // The lock words: one exposure more per rank, made and agreed on by all (or none).
  void* word = nullptr;
  const bool allocated = posix_memalign(&word, 64, 64) == 0;
  if (allocated) {
    std::memset(word, 0, 64);
    w->lock_word_memory = static_cast<uint64_t*>(word);
  }
  bool exposed = false;
  ok = expose_to_all(w, word, allocated ? 64 : 0, &w->my_lock_keys, &w->lock_keys, &exposed) && allocated &&
               reach_all_atomically(w, w->lock_keys)
           ? 1
           : 0;
  // The routes only atomics use (this rank itself, ranks whose puts and gets another transport
  // carries) are made and tried now, while every rank progresses: a device that cannot reach
  // them keeps the whole window on the target's service instead of failing its first lock.
  xmsgi_remote_done tried{};
  std::vector<uint64_t> seen(static_cast<size_t>(w->size), 0);
  for (int r = 0; ok && r < w->size; ++r) {
    const char* via = xmsgi_remote_atomics(w->xcomm, r, &w->lock_keys[static_cast<size_t>(r)]);
    const char* puts = r == w->rank ? nullptr : w->remote_via[static_cast<size_t>(r)];
    if (puts && via && std::strcmp(puts, via) == 0) continue;
    if (xmsgi_remote_atomic(w->xcomm, r, &w->lock_keys[static_cast<size_t>(r)], 0, 0, 0, 0,
                            &seen[static_cast<size_t>(r)], &tried))
      ok = 0;
  }
  spin_until([&] { return tried.pending == 0; });
  if (tried.error) ok = 0;
  if (xmsg_allreduce(&ok, &all, 1, XMSG_INT, XMSG_MIN, w->xcomm)) all = 0;
  w->device_locks = all != 0;
  if (!w->device_locks) {  // all or none: without the locks the atomics stay the target's too
    release_device_locks(w);
    w->device_atomics = false;
  }
}

void release_device_locks(Window* w) {
  if (w->lock_word_memory && w->my_lock_keys.slot[0].transport[0] != '\0') xmsgi_remote_release(&w->my_lock_keys);
  w->my_lock_keys = {};
  std::free(w->lock_word_memory);
  w->lock_word_memory = nullptr;
  w->lock_keys.clear();
  w->device_locks = false;
}

int device_lock(Window* w, int rank, int lock_type, const char* func) {
  Atomics a{w, rank, true};
  uint64_t expected = 0, got = 0;
  for (;;) {
    const uint64_t want = lock_type == MPI_LOCK_EXCLUSIVE ? kExclusive : expected + 1;
    if (int e = a.finish(a.compare_swap(0, want, expected, &got), func)) return e;
    if (got == expected) return MPI_SUCCESS;
    if (lock_type == MPI_LOCK_EXCLUSIVE) {
      if ((got & ~kExclusiveWaits) == 0) {  // free (a waiting mark alone): take it as it is
        expected = got;
        continue;
      }
      // Held: mark that an exclusive request waits, then expect the word with only that mark.
      uint64_t seen = 0;
      if (!(got & kExclusiveWaits))
        if (int e = a.finish(a.compare_swap(0, got | kExclusiveWaits, got, &seen), func)) return e;
      expected = kExclusiveWaits;
    } else {
      // Shared: enter when nobody holds or waits for it exclusive; the next try expects the
      // holders' count it saw.
      expected = got & ~(kExclusive | kExclusiveWaits);
    }
    // Let the holders (this rank's own requests, its progress) move before the next try.
    xmsgi_progress();
  }
}

int device_unlock(Window* w, int rank, int lock_type, const char* func) {
  Atomics a{w, rank, true};
  uint64_t old = 0;
  // Exclusive: adding bit 63 to a word that has it clears it (the carry leaves the word).
  return a.finish(a.fetch_add(0, lock_type == MPI_LOCK_EXCLUSIVE ? kExclusive : ~uint64_t{0}, &old), func);
}

bool takes_device_atomics(const Window* w, const Type& target_type) {
  return w->device_atomics && is_int64(target_type.basic);
}

int device_accumulate(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                      const Type* rt, const Target& t, int64_t bytes, MPI_Op op, const char* func, bool* taken) {
  std::vector<uint64_t> at;
  at.reserve(static_cast<size_t>(bytes / kElement));
  const size_t aligned = element_offsets(w, t, &at);
  *taken = aligned > 0;  // none aligned: the whole call is the target's, as a request
  if (!*taken) return MPI_SUCCESS;
  const size_t n = at.size();
  std::vector<uint64_t> in(n, 0), old(n, 0);
  if (op != MPI_NO_OP && ot) pack(origin, ocount, *ot, in.data());
  const bool fetch = result && rt;
  // Elements the device cannot take go to the target's service, one request each.
  std::vector<std::shared_ptr<GetOp>> by_message;
  if (aligned < n)
    for (size_t i = 0; i < n; ++i) {
      if (is_aligned(w, t.rank, at[i])) continue;
      std::shared_ptr<GetOp> g;
      if (int e = element_by_message(w, t, at[i], &in[i], fetch ? &old[i] : nullptr, op, func, &g)) return e;
      if (g) by_message.push_back(std::move(g));
    }
  Atomics a{w, t.rank};
  int posted = 0;
  if (op == MPI_SUM || op == MPI_NO_OP) {
    for (size_t i = 0; i < n && !posted; ++i) {
      if (!is_aligned(w, t.rank, at[i])) continue;
      a.wait_below(kMaxInFlight - 1);
      posted = a.fetch_add(at[i], op == MPI_SUM ? in[i] : 0, &old[i]);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (!is_aligned(w, t.rank, at[i])) continue;
      uint64_t seen = 0;
      if ((posted = a.fetch_add(at[i], 0, &seen))) break;
      if (int e = a.finish(0, func)) return e;
      for (;;) {
        uint64_t next = seen;
        combine(reinterpret_cast<const char*>(&in[i]), reinterpret_cast<char*>(&next), kElement, t.type->basic, op);
        old[i] = seen;
        if (next == seen) break;  // nothing to change: the read was the operation
        if ((posted = a.compare_swap(at[i], next, seen, &seen))) break;
        if (int e = a.finish(0, func)) return e;
        if (seen == old[i]) break;
      }
      if (posted) break;
    }
  }
  if (int e = a.finish(posted, func)) return e;
  spin_until([&] {
    for (auto& g : by_message)
      if (!poll_get(*g)) return false;
    return true;
  });
  if (fetch) unpack(old.data(), bytes, result, rcount, *rt);
  return MPI_SUCCESS;
}

int device_compare_and_swap(Window* w, const void* origin, const void* compare, void* result, const Target& t,
                            const char* func, bool* taken) {
  std::vector<uint64_t> at;
  *taken = element_offsets(w, t, &at) == 1 && at.size() == 1;
  if (!*taken) return MPI_SUCCESS;
  uint64_t swap = 0, expected = 0, old = 0;
  std::memcpy(&swap, origin, sizeof swap);
  std::memcpy(&expected, compare, sizeof expected);
  Atomics a{w, t.rank};
  if (int e = a.finish(a.compare_swap(at[0], swap, expected, &old), func)) return e;
  std::memcpy(result, &old, sizeof old);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi::rma
