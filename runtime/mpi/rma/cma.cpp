// The single-copy path: windows made by MPI_Win_create whose ranks all share a node, when every
// rank may read and write every other's memory with process_vm_readv / process_vm_writev
// (probed at creation, agreed by all: set_up_cma in window.cpp). The origin moves the data
// itself: one system call for a contiguous target range, the target datatype's blocks as
// iovec lists of up to IOV_MAX otherwise. Accumulates read, combine and write back under the
// accumulate lock of the window's control segment; locks are its lock words (direct_lock). The
// target takes no part, as on the direct path; an operation on the origin's own window is a
// plain copy.
#include "rma.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace xmsg::mpi::rma {
namespace {

// The target ranges `count` elements of `tt` cover at address `at` of the target, in type-map
// order (the packed stream's order), adjacent blocks merged.
void remote_ranges(uintptr_t at, int64_t count, const Type& tt, std::vector<iovec>* out) {
  out->clear();
  if (tt.contiguous) {
    out->push_back(iovec{reinterpret_cast<void*>(at + static_cast<uintptr_t>(tt.true_lb)),
                         static_cast<size_t>(count * tt.size)});
    return;
  }
  for (int64_t e = 0; e < count; ++e)
    for (const Block& b : tt.blocks) {
      if (b.bytes <= 0) continue;
      const uintptr_t a = at + static_cast<uintptr_t>(e * tt.extent + b.offset);
      if (!out->empty() && reinterpret_cast<uintptr_t>(out->back().iov_base) + out->back().iov_len == a)
        out->back().iov_len += static_cast<size_t>(b.bytes);
      else
        out->push_back(iovec{reinterpret_cast<void*>(a), static_cast<size_t>(b.bytes)});
    }
}

// Moves the bytes of `remote` (in order) to or from the contiguous `local`, IOV_MAX ranges a
// call; a partial transfer (the kernel stops at a range boundary, or inside one) goes on from
// where it stopped. False with errno set when a call fails.
bool transfer(pid_t pid, char* local, std::vector<iovec> remote, bool write) {
  size_t i = 0;
  while (i < remote.size()) {
    const size_t n = std::min<size_t>(IOV_MAX, remote.size() - i);
    size_t bytes = 0;
    for (size_t k = i; k < i + n; ++k) bytes += remote[k].iov_len;
    iovec l{local, bytes};
    const ssize_t done = write ? process_vm_writev(pid, &l, 1, &remote[i], n, 0)
                               : process_vm_readv(pid, &l, 1, &remote[i], n, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (done == 0 && bytes > 0) {
      errno = EFAULT;
      return false;
    }
    local += done;
    for (size_t left = static_cast<size_t>(done); left > 0;) {  // skip what was moved
      const size_t take = std::min(left, remote[i].iov_len);
      remote[i].iov_base = static_cast<char*>(remote[i].iov_base) + take;
      remote[i].iov_len -= take;
      left -= take;
      if (remote[i].iov_len == 0) ++i;
    }
    while (i < remote.size() && remote[i].iov_len == 0) ++i;
  }
  return true;
}

uintptr_t target_address(const Window* w, int rank, MPI_Aint disp) {
  return static_cast<uintptr_t>(w->cma_peers[static_cast<size_t>(rank)].base) +
         static_cast<uintptr_t>(disp * w->ranks[static_cast<size_t>(rank)].disp_unit);
}

pid_t pid_of(const Window* w, int rank) { return static_cast<pid_t>(w->cma_peers[static_cast<size_t>(rank)].pid); }

int moved_or_error(Window* w, bool ok, int rank, const char* what, const char* func) {
  if (ok) return MPI_SUCCESS;
  return raise(w, MPI_ERR_OTHER, func, "%s rank %d's memory of window %s failed: %s", what, rank, win_name(w),
               std::strerror(errno));
}

}  // namespace

int cma_put(Window* w, const void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp, int64_t tcount,
            const Type& tt, int64_t bytes, const char* func) {
  if (rank == w->rank) {
    put_at(reinterpret_cast<char*>(target_address(w, rank, disp)), origin, ocount, ot, tcount, tt, bytes);
    return MPI_SUCCESS;
  }
  Staging packed;
  char* local = const_cast<char*>(static_cast<const char*>(origin)) + ot.true_lb;
  if (!ot.contiguous) {
    packed = staging_buffer(bytes);
    pack(origin, ocount, ot, packed.get());
    local = packed.get();
  }
  std::vector<iovec> remote;
  remote_ranges(target_address(w, rank, disp), tcount, tt, &remote);
  return moved_or_error(w, transfer(pid_of(w, rank), local, std::move(remote), true), rank, "writing", func);
}

int cma_get(Window* w, void* origin, int64_t ocount, const Type& ot, int rank, MPI_Aint disp, int64_t tcount,
            const Type& tt, int64_t bytes, const char* func) {
  if (rank == w->rank) {
    get_at(reinterpret_cast<const char*>(target_address(w, rank, disp)), origin, ocount, ot, tcount, tt, bytes);
    return MPI_SUCCESS;
  }
  Staging packed;
  char* local = static_cast<char*>(origin) + ot.true_lb;
  if (!ot.contiguous) {
    packed = staging_buffer(bytes);
    local = packed.get();
  }
  std::vector<iovec> remote;
  remote_ranges(target_address(w, rank, disp), tcount, tt, &remote);
  if (!transfer(pid_of(w, rank), local, std::move(remote), false)) return moved_or_error(w, false, rank, "reading", func);
  if (packed) unpack(packed.get(), bytes, origin, ocount, ot);
  return MPI_SUCCESS;
}

int cma_accumulate(Window* w, const void* origin, int64_t ocount, const Type* ot, void* result, int64_t rcount,
                   const Type* rt, int rank, MPI_Aint disp, int64_t tcount, const Type& tt, int64_t bytes, MPI_Op op,
                   const char* func) {
  if (rank == w->rank) {
    accumulate_at(w, reinterpret_cast<char*>(target_address(w, rank, disp)), origin, ocount, ot, result, rcount, rt,
                  tcount, tt, bytes, op);
    return MPI_SUCCESS;
  }
  Staging in;
  if (op != MPI_NO_OP) {
    in = staging_buffer(bytes);
    pack(origin, ocount, *ot, in.get());
  }
  std::vector<iovec> remote;
  remote_ranges(target_address(w, rank, disp), tcount, tt, &remote);
  Staging cur = staging_buffer(bytes);
  const pid_t pid = pid_of(w, rank);
  AccGuard guard(w->acc_lock);
  if (!transfer(pid, cur.get(), remote, false)) return moved_or_error(w, false, rank, "reading", func);
  if (rt) unpack(cur.get(), bytes, result, rcount, *rt);  // the value before the combine
  if (!in) return MPI_SUCCESS;
  combine(in.get(), cur.get(), bytes, tt.basic, op);
  return moved_or_error(w, transfer(pid, cur.get(), std::move(remote), true), rank, "writing", func);
}

int cma_compare_and_swap(Window* w, const void* origin, const void* compare, void* result, int64_t n, int rank,
                         MPI_Aint disp, const char* func) {
  char* self = rank == w->rank ? reinterpret_cast<char*>(target_address(w, rank, disp)) : nullptr;
  std::vector<iovec> remote{iovec{reinterpret_cast<void*>(target_address(w, rank, disp)), static_cast<size_t>(n)}};
  alignas(16) char old[64];  // predefined elements are at most 16 bytes
  {
    AccGuard guard(w->acc_lock);
    if (self) {
      std::memcpy(old, self, static_cast<size_t>(n));
    } else if (!transfer(pid_of(w, rank), old, remote, false)) {
      return moved_or_error(w, false, rank, "reading", func);
    }
    if (std::memcmp(old, compare, static_cast<size_t>(n)) == 0) {
      if (self) std::memcpy(self, origin, static_cast<size_t>(n));
      else if (!transfer(pid_of(w, rank), const_cast<char*>(static_cast<const char*>(origin)), remote, true))
        return moved_or_error(w, false, rank, "writing", func);
    }
  }
  std::memcpy(result, old, static_cast<size_t>(n));
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi::rma
