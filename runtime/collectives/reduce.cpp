// Reduce over a binomial tree. A node receives the partial result of each child subtree and
// folds it in; a subtree always covers a contiguous range of tree ranks, so combining
// "mine (op) child's" keeps the operand order. For commutative ops the tree is rooted at the
// root; for non-commutative ones it is rooted at rank 0 (tree ranks = real ranks, so the order
// is rank order, as MPI requires) and rank 0 hands the result to the root.
// Linear (when ranks outnumber cores): every rank sends to the root in one round and the root
// folds the vectors in rank order itself.
#include <utility>

#include "coll.hpp"

namespace xmsg::coll {

int reduce_binomial(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op,
                    int root) {
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  const int n = c.size;
  const int tree_root = op.commutative ? root : 0;
  const int vr = (c.rank - tree_root + n) % n;

  Scratch acc_store, incoming_store(bytes);
  std::byte* acc;
  if (c.rank == root && c.rank == tree_root) {
    acc = static_cast<std::byte*>(recvbuf);
  } else {
    acc_store.resize(bytes);
    acc = acc_store.get();
  }
  copy_bytes(acc, sendbuf, bytes);
  std::byte* incoming = incoming_store.get();

  for (int mask = 1; mask < n; mask <<= 1) {
    if (vr & mask) {
      Step step(c);
      step.send(acc, bytes, (vr - mask + tree_root) % n, kTagReduce);
      if (int e = step.wait()) return e;
      break;
    }
    if (vr + mask >= n) continue;
    Step step(c);
    step.recv(incoming, bytes, (vr + mask + tree_root) % n, kTagReduce);
    if (int e = step.wait()) return e;
    if (op.commutative) {
      op.apply(incoming, acc, count);
    } else {
      op.apply(acc, incoming, count);  // incoming = mine (op) child's
      std::swap(acc, incoming);
    }
  }

  if (tree_root != root) {
    Step step(c);
    if (c.rank == tree_root) step.send(acc, bytes, root, kTagReduce + 1);
    if (c.rank == root) step.recv(recvbuf, bytes, tree_root, kTagReduce + 1);
    return step.wait();
  }
  if (c.rank == root) copy_bytes(recvbuf, acc, bytes);
  return XMSG_SUCCESS;
}

int reduce_linear(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op, int root) {
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  if (c.rank != root) {
    Step step(c);
    step.send(sendbuf, bytes, root, kTagReduce + 2);
    return step.wait();
  }
  const int n = c.size;
  Scratch store(bytes * n);  // slot r holds rank r's vector (the root's slot only if needed)
  auto slot = [&](int r) { return store.get() + r * bytes; };
  {
    Step step(c);
    for (int r = 0; r < n; ++r)
      if (r != root) step.recv(slot(r), bytes, r, kTagReduce + 2);
    if (int e = step.wait()) return e;
  }
  // acc = x[n-1]; then acc = x[r] (op) acc for r = n-2 .. 0 keeps the rank order.
  std::byte* acc = slot(n - 1);
  if (root == n - 1) copy_bytes(acc, sendbuf, bytes);
  for (int r = n - 2; r >= 0; --r) op.apply(r == root ? sendbuf : slot(r), acc, count);
  copy_bytes(recvbuf, acc, bytes);
  return XMSG_SUCCESS;
}

}  // namespace xmsg::coll
