// Allreduce for any communicator size. With p2 the largest power of two <= n and rem = n - p2,
// the first 2*rem ranks fold pairwise (even rank r hands its vector to r + 1 and sits out), the
// p2 survivors run a power-of-two algorithm, and the folded ranks get the result back.
//   recursive doubling: log2 p2 exchanges of the whole vector (small vectors).
//   Rabenseifner:       reduce-scatter by recursive halving, then allgather by recursive
//                       doubling; each rank moves about 2x the vector (large vectors).
//   linear:             every rank sends its vector to rank 0, which folds them in rank order
//                       and sends the result back: two rounds whatever n, for small vectors
//                       when ranks outnumber cores.
// Survivor i stands for a contiguous range of real ranks and partners always merge adjacent
// ranges (the lower one as left operand), so non-commutative ops see rank order, and both
// partners compute the same bits.
#include <utility>
#include <vector>

#include "coll.hpp"

namespace xmsg::coll {
namespace {

struct Fold {
  int p2 = 1;
  int rem = 0;
  int newrank = -1;  // rank among the survivors, -1 for a rank that sat out
  int real(int survivor) const { return survivor < rem ? 2 * survivor + 1 : survivor + rem; }
};

Fold make_fold(const Comm& c) {
  Fold f;
  while (f.p2 * 2 <= c.size) f.p2 *= 2;
  f.rem = c.size - f.p2;
  if (c.rank < 2 * f.rem) f.newrank = c.rank % 2 ? c.rank / 2 : -1;
  else f.newrank = c.rank - f.rem;
  return f;
}

// Fold-in: odd ranks below 2*rem absorb their even neighbour's vector into `acc`.
int fold_in(const Comm& c, const Fold& f, std::byte* acc, std::byte* scratch, int64_t count, int64_t bytes,
            const ReduceOp& op) {
  if (c.rank >= 2 * f.rem) return XMSG_SUCCESS;
  Step step(c);
  if (f.newrank < 0) {
    step.send(acc, bytes, c.rank + 1, kTagAllreduce);
    return step.wait();
  }
  step.recv(scratch, bytes, c.rank - 1, kTagAllreduce);
  if (int e = step.wait()) return e;
  op.apply(scratch, acc, count);
  return XMSG_SUCCESS;
}

int fold_out(const Comm& c, const Fold& f, void* result, int64_t bytes) {
  if (c.rank >= 2 * f.rem) return XMSG_SUCCESS;
  Step step(c);
  if (f.newrank < 0) step.recv(result, bytes, c.rank + 1, kTagAllreduce + 1);
  else step.send(result, bytes, c.rank - 1, kTagAllreduce + 1);
  return step.wait();
}

}  // namespace

int allreduce_recursive_doubling(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count,
                                 const ReduceOp& op) {
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  copy_bytes(recvbuf, sendbuf, bytes);
  const Fold f = make_fold(c);
  Scratch scratch(bytes);
  std::byte* acc = static_cast<std::byte*>(recvbuf);
  std::byte* other = scratch.get();
  if (int e = fold_in(c, f, acc, other, count, bytes, op)) return e;

  if (f.newrank >= 0) {
    int round = 0;
    for (int mask = 1; mask < f.p2; mask <<= 1, ++round) {
      const int partner = f.newrank ^ mask;
      if (int e = sendrecv(c, acc, bytes, f.real(partner), other, bytes, f.real(partner), kTagAllreduce + 2 + round))
        return e;
      if (partner < f.newrank) {
        op.apply(other, acc, count);
      } else {
        op.apply(acc, other, count);
        std::swap(acc, other);
      }
    }
    copy_bytes(recvbuf, acc, bytes);
  }
  return fold_out(c, f, recvbuf, bytes);
}

int allreduce_linear(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op) {
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  if (c.rank != 0) {
    Step step(c);
    if (sendbuf == recvbuf) {  // in place: the result may only land once the input has left
      step.send(sendbuf, bytes, 0, kTagAllreduce + 100);
      if (int e = step.wait()) return e;
    } else {
      step.send(sendbuf, bytes, 0, kTagAllreduce + 100);
    }
    step.recv(recvbuf, bytes, 0, kTagAllreduce + 101);
    return step.wait();
  }
  Scratch vectors(bytes * (c.size - 1));
  {
    Step step(c);
    for (int r = 1; r < c.size; ++r) step.recv(vectors.get() + (r - 1) * bytes, bytes, r, kTagAllreduce + 100);
    if (int e = step.wait()) return e;
  }
  // Fold right to left so each step is "lower ranks (op) accumulated higher ranks":
  // acc = x[n-1]; acc = x[r] op acc for r = n-2 .. 0.
  std::byte* acc = vectors.get() + (c.size - 2) * bytes;
  for (int r = c.size - 2; r >= 1; --r) op.apply(vectors.get() + (r - 1) * bytes, acc, count);
  op.apply(sendbuf, acc, count);
  copy_bytes(recvbuf, acc, bytes);
  Step step(c);
  for (int r = 1; r < c.size; ++r) step.send(recvbuf, bytes, r, kTagAllreduce + 101);
  return step.wait();
}

int allreduce_rabenseifner(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op) {
  const int64_t es = static_cast<int64_t>(op.elem_size);
  const int64_t bytes = count * es;
  const Fold f = make_fold(c);
  // With no fold, the first exchange sends its half straight from sendbuf and only the half
  // this rank keeps is copied (while that exchange is in flight): half a vector less copying.
  const bool copy_kept_half_only = f.rem == 0 && f.p2 > 1 && sendbuf != recvbuf;
  if (!copy_kept_half_only) copy_bytes(recvbuf, sendbuf, bytes);
  Scratch scratch(bytes);
  std::byte* acc = static_cast<std::byte*>(recvbuf);
  std::byte* incoming = scratch.get();
  if (int e = fold_in(c, f, acc, incoming, count, bytes, op)) return e;

  if (f.newrank >= 0) {
    struct Half {
      int partner;
      int64_t keep_lo, keep_hi, give_lo, give_hi;
    };
    std::vector<Half> halves;
    int64_t lo = 0, hi = count;
    int round = 0;
    // Reduce-scatter: each exchange halves the element range a survivor is responsible for.
    for (int mask = 1; mask < f.p2; mask <<= 1, ++round) {
      const int partner = f.newrank ^ mask;
      const int64_t mid = lo + (hi - lo) / 2;
      Half h = (f.newrank & mask) ? Half{partner, mid, hi, lo, mid} : Half{partner, lo, mid, mid, hi};
      halves.push_back(h);
      const int64_t keep = h.keep_hi - h.keep_lo, give = h.give_hi - h.give_lo;
      const bool from_sendbuf = round == 0 && copy_kept_half_only;
      const std::byte* give_from = from_sendbuf ? static_cast<const std::byte*>(sendbuf) : acc;
      Step step(c);
      if (keep > 0) step.recv(incoming + h.keep_lo * es, keep * es, f.real(partner), kTagAllreduce + 2 + round);
      if (give > 0) step.send(give_from + h.give_lo * es, give * es, f.real(partner), kTagAllreduce + 2 + round);
      if (from_sendbuf) copy_bytes(acc + h.keep_lo * es, at(sendbuf, h.keep_lo * es), keep * es);
      if (int e = step.wait()) return e;
      if (partner < f.newrank || op.commutative) {
        op.apply(incoming + h.keep_lo * es, acc + h.keep_lo * es, keep);
      } else {
        op.apply(acc + h.keep_lo * es, incoming + h.keep_lo * es, keep);
        copy_bytes(acc + h.keep_lo * es, incoming + h.keep_lo * es, keep * es);
      }
      lo = h.keep_lo;
      hi = h.keep_hi;
    }
    // Allgather: undo the halvings, swapping finished ranges with the same partners.
    for (auto it = halves.rbegin(); it != halves.rend(); ++it, ++round) {
      const int64_t keep = it->keep_hi - it->keep_lo, give = it->give_hi - it->give_lo;
      Step step(c);
      if (give > 0) step.recv(acc + it->give_lo * es, give * es, f.real(it->partner), kTagAllreduce + 2 + round);
      if (keep > 0) step.send(acc + it->keep_lo * es, keep * es, f.real(it->partner), kTagAllreduce + 2 + round);
      if (int e = step.wait()) return e;
    }
  }
  return fold_out(c, f, recvbuf, bytes);
}

}  // namespace xmsg::coll
