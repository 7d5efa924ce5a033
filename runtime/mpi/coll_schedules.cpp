// Collective algorithms as schedules. Chosen for few rounds and no extra synchronisation:
// binomial trees for bcast and reduce (reduce roots its tree at rank 0 when the op does not
// commute, so operands combine in rank order), recursive doubling for allreduce with a
// commutative op (reduce + bcast otherwise), dissemination for barrier, linear exchanges for
// the gather/scatter/alltoall family, a chain for scan. The
// blocking forms of the common collectives keep using the runtime's tuned algorithms; these
// run what the runtime cannot.
#include "coll_schedules.hpp"

#include <climits>
#include <cstring>
#include <tuple>

namespace xmsg::mpi {
namespace {

// A copy of the type that lives as long as the schedule: the program may free the handle
// while a non-blocking collective is pending (MPI-3.1 4.1.9).
const Type* held(Schedule& s, MPI_Datatype d) { return s.keep(std::make_unique<Type>(*type_of(d))); }

char* at(void* base, int64_t elements, const Type& t) {
  return static_cast<char*>(base) + elements * static_cast<int64_t>(t.extent);
}
const char* at(const void* base, int64_t elements, const Type& t) {
  return static_cast<const char*>(base) + elements * static_cast<int64_t>(t.extent);
}

// Contiguous bytes of `count` elements to send: the buffer itself when its data is
// contiguous (unless a copy is needed because the same memory receives), else packed now.
const char* packed(Schedule& s, const void* buf, int64_t count, const Type& t, bool copy = false) {
  if (count == 0) return nullptr;
  if (t.contiguous && !copy) return static_cast<const char*>(buf) + t.true_lb;
  char* p = s.scratch(count * t.size);
  pack(buf, count, t, p);
  return p;
}

// Where `count` elements arriving for `buf` land; unpacked in the last round when needed.
struct Landings {
  std::vector<std::tuple<const char*, void*, int64_t, const Type*>> list;
  char* place(Schedule& s, void* buf, int64_t count, const Type& t) {
    if (count == 0) return nullptr;
    if (t.contiguous) return static_cast<char*>(buf) + t.true_lb;
    char* p = s.scratch(count * t.size);
    list.emplace_back(p, buf, count, &t);
    return p;
  }
  // Packed data already here (a local block, a reduction result) goes to `buf` at the end too.
  void copy_out(const char* from, void* buf, int64_t count, const Type& t) { list.emplace_back(from, buf, count, &t); }
  void finish(Schedule& s) {
    if (list.empty()) return;
    s.next_round();
    auto items = list;
    s.local([items] {
      for (const auto& [from, to, count, t] : items) unpack(from, count * t->size, to, count, *t);
    });
  }
};

// A rank's own block of packed data into its receive buffer, in the first round right after the
// messages are posted: the copy runs while the peers' transfers do, not after them, and
// straight from the send buffer when that is contiguous (no scratch copy).
void own_block_after_posts(Schedule& s, const char* from, void* to, int64_t count, const Type* t) {
  if (count == 0) return;
  s.local_after_posts([from, to, count, t] { unpack(from, count * t->size, to, count, *t); });
}

std::map<MPI_Op, MPI_User_function*>& user_functions() {
  static std::map<MPI_Op, MPI_User_function*> table;
  return table;
}

void call_user(MPI_User_function* fn, const void* in, void* inout, int64_t count, MPI_Datatype type) {
  auto* a = static_cast<char*>(const_cast<void*>(in));
  auto* b = static_cast<char*>(inout);
  const Type* t = type_of(type);
  while (count > 0) {
    int len = count > INT_MAX ? INT_MAX : static_cast<int>(count);
    MPI_Datatype d = type;
    fn(a, b, &len, &d);
    a += static_cast<int64_t>(len) * t->extent;
    b += static_cast<int64_t>(len) * t->extent;
    count -= len;
  }
}

// inout = in (op) inout on packed data of `count` elements of `t` (handle `type`).
void reduce_packed(const char* in, char* inout, int64_t count, const Type& t, MPI_Datatype type, MPI_Op op) {
  if (count == 0) return;
  if (is_xmsg_type(type)) {
    xmsg_reduce_local(in, inout, count, type, op);
    return;
  }
  if (MPI_User_function* fn = user_function_of(op)) {
    // The user function walks the datatype's layout: unpack both operands, apply, pack back.
    const int64_t span = count * static_cast<int64_t>(t.extent) + static_cast<int64_t>(t.true_extent) +
                         2 * (t.true_lb < 0 ? -t.true_lb : t.true_lb) + 16;
    std::vector<char> a(static_cast<size_t>(span)), b(static_cast<size_t>(span));
    const int64_t base = t.true_lb < 0 ? -t.true_lb : 0;
    unpack(in, count * t.size, a.data() + base, count, t);
    unpack(inout, count * t.size, b.data() + base, count, t);
    call_user(fn, a.data() + base, b.data() + base, count, type);
    pack(b.data() + base, count, t, inout);
    return;
  }
  xmsg_reduce_local(in, inout, count * t.basic_count, t.basic, op);
}

bool commutative(MPI_Op op) {
  int c = 1;
  xmsg_op_commutative(op, &c);
  return c != 0;
}

// In a binomial tree over virtual ranks (the root is 0), vr's parent is vr without its lowest
// set bit and its children are vr + mask for every mask below that bit.
int lowest_bit(int vr) { return vr & -vr; }

// Tree bcast of `bytes` at `data` from `root` (data is the receive buffer on the others).
void tree_bcast(Schedule& s, char* data, int64_t bytes, int root) {
  const int n = s.size(), r = s.rank(), vr = (r - root + n) % n;
  if (vr != 0) s.recv(data, bytes, (vr - lowest_bit(vr) + root) % n);
  s.next_round();
  const int limit = vr == 0 ? n : lowest_bit(vr);
  for (int mask = 1; mask < limit; mask <<= 1)
    if (vr + mask < n) s.send(data, bytes, (vr + mask + root) % n);
}

// Binomial reduce of packed `acc` (this rank's operand, overwritten) to `root`; the result is
// in the returned buffer at the root.
char* tree_reduce(Schedule& s, char* acc, int64_t count, const Type* t, MPI_Datatype type, MPI_Op op, int root) {
  const int n = s.size(), r = s.rank();
  const bool in_order = !commutative(op);
  const int tree_root = in_order ? 0 : root;
  const int vr = (r - tree_root + n) % n;
  const int64_t bytes = count * t->size;
  for (int mask = 1; mask < n; mask <<= 1) {
    if (vr & mask) {
      s.send(acc, bytes, (vr - mask + tree_root) % n);
      break;
    }
    if (vr + mask < n) {
      char* tmp = s.scratch(bytes);
      s.recv(tmp, bytes, (vr + mask + tree_root) % n);
      s.next_round();
      // acc covers the lower ranks: acc = acc (op) tmp. In that order only when the op does
      // not commute (computed into tmp and copied back); otherwise straight into acc.
      s.local([acc, tmp, count, t, type, op, bytes, in_order] {
        if (!in_order) {
          reduce_packed(tmp, acc, count, *t, type, op);
          return;
        }
        reduce_packed(acc, tmp, count, *t, type, op);
        if (bytes > 0) std::memcpy(acc, tmp, static_cast<size_t>(bytes));
      });
    }
  }
  if (tree_root != root) {
    s.next_round();
    if (r == tree_root) s.send(acc, bytes, root);
    if (r == root) s.recv(acc, bytes, tree_root);
  }
  return acc;
}

// Allreduce of packed `acc` (this rank's operand; the result on return) for a commutative op
// by recursive doubling: log2(p) exchanges in which both partners send and both reduce, where
// reduce + bcast moves the whole vector twice in sequence through the root (twice the time at
// 2 ranks). With n = p + rem ranks (p a power of two), the first 2*rem ranks pair up: the even
// one hands its operand to the odd one first and gets the result back last.
void exchange_allreduce(Schedule& s, char* acc, int64_t count, const Type* t, MPI_Datatype type, MPI_Op op) {
  const int n = s.size(), r = s.rank();
  const int64_t bytes = count * t->size;
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int rem = n - p;
  char* tmp = s.scratch(bytes);
  auto reduce_into_acc = [acc, tmp, count, t, type, op] { reduce_packed(tmp, acc, count, *t, type, op); };
  int vr = r - rem;  // rank among the p that exchange; -1: sits out
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      s.send(acc, bytes, r + 1);
      s.next_round();
      s.recv(acc, bytes, r + 1);
      return;
    }
    s.recv(tmp, bytes, r - 1);
    s.next_round();
    s.local(reduce_into_acc);
    vr = r / 2;
  }
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner_vr = vr ^ mask;
    const int partner = partner_vr < rem ? partner_vr * 2 + 1 : partner_vr + rem;
    s.send(acc, bytes, partner);
    s.recv(tmp, bytes, partner);
    s.next_round();
    s.local(reduce_into_acc);
  }
  if (r < 2 * rem) s.send(acc, bytes, r - 1);
}

}  // namespace

MPI_User_function* user_function_of(MPI_Op op) {
  auto it = user_functions().find(op);
  return it == user_functions().end() ? nullptr : it->second;
}

void register_user_function(MPI_Op op, MPI_User_function* fn) {
  if (fn) user_functions()[op] = fn;
  else user_functions().erase(op);
}

int check_op(MPI_Op op, const Type& type, const char* func, MPI_Comm comm) {
  if (op == MPI_OP_NULL) return fail(MPI_ERR_OP, func, comm, "op is MPI_OP_NULL");
  if (user_function_of(op)) return MPI_SUCCESS;
  int commute = 0;
  if (xmsg_op_commutative(op, &commute) != MPI_SUCCESS)
    return fail(MPI_ERR_OP, func, comm, "op %d is not a valid op (never created or already freed)", op);
  xmsg_datatype_t basic = type.predefined && type.basic == 0 ? 0 : type.basic;
  if (basic == 0)
    return fail(MPI_ERR_OP, func, comm, "a predefined op needs a datatype made of one basic type (%s is mixed)",
                type.name.empty() ? "this derived datatype" : type.name.c_str());
  // Ask the runtime whether the op is defined for the basic type.
  char a[64] = {0}, b[64] = {0};
  if (xmsg_reduce_local(a, b, 1, basic, op) != MPI_SUCCESS) return handle(XMSG_ERR_OP, func, comm);
  return MPI_SUCCESS;
}

void reduce_layout(const void* in, void* inout, int64_t count, MPI_Datatype type, MPI_Op op) {
  if (count == 0) return;
  if (is_xmsg_type(type)) {
    xmsg_reduce_local(in, inout, count, type, op);
    return;
  }
  const Type* t = type_of(type);
  if (MPI_User_function* fn = user_function_of(op)) {
    call_user(fn, in, inout, count, type);
    return;
  }
  if (t->contiguous) {
    xmsg_reduce_local(static_cast<const char*>(in) + t->true_lb, static_cast<char*>(inout) + t->true_lb,
                      count * t->basic_count, t->basic, op);
    return;
  }
  std::vector<char> a(static_cast<size_t>(count * t->size)), b(static_cast<size_t>(count * t->size));
  pack(in, count, *t, a.data());
  pack(inout, count, *t, b.data());
  xmsg_reduce_local(a.data(), b.data(), count * t->basic_count, t->basic, op);
  unpack(b.data(), count * t->size, inout, count, *t);
}

int check_count(int count, const char* func, const char* arg, MPI_Comm comm) {
  return count < 0 ? fail(MPI_ERR_COUNT, func, comm, "%s %d is negative", arg, count) : MPI_SUCCESS;
}

int check_root(int root, int size, const char* func, MPI_Comm comm) {
  return root < 0 || root >= size ? fail(MPI_ERR_ROOT, func, comm, "root %d out of range [0, %d)", root, size)
                                  : MPI_SUCCESS;
}

int check_counts(const int* counts, int n, const char* func, const char* arg, MPI_Comm comm) {
  if (n > 0 && !counts) return fail(MPI_ERR_ARG, func, comm, "%s is NULL", arg);
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0) return fail(MPI_ERR_COUNT, func, comm, "%s[%d] = %d is negative", arg, i, counts[i]);
  return MPI_SUCCESS;
}

int build_barrier(Schedule& s) {
  const int n = s.size(), r = s.rank();
  for (int k = 1; k < n; k <<= 1) {
    s.recv(nullptr, 0, (r - k + n) % n);
    s.send(nullptr, 0, (r + k) % n);
    s.next_round();
  }
  return MPI_SUCCESS;
}

int build_bcast(Schedule& s, void* buf, int count, MPI_Datatype type, int root) {
  const Type* t = held(s, type);
  const int64_t bytes = static_cast<int64_t>(count) * t->size;
  if (bytes == 0 || s.size() == 1) return MPI_SUCCESS;
  Landings land;
  char* data = s.rank() == root ? const_cast<char*>(packed(s, buf, count, *t)) : land.place(s, buf, count, *t);
  tree_bcast(s, data, bytes, root);
  land.finish(s);
  return MPI_SUCCESS;
}

int build_gather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype, int root) {
  const int n = s.size(), r = s.rank();
  Landings land;
  if (r != root) {
    const Type* st = held(s, sendtype);
    s.send(packed(s, sendbuf, sendcount, *st), static_cast<int64_t>(sendcount) * st->size, root);
    return MPI_SUCCESS;
  }
  const Type* rt = held(s, recvtype);
  for (int i = 0; i < n; ++i) {
    const int64_t c = recvcounts ? recvcounts[i] : recvcount;
    const int64_t d = displs ? displs[i] : static_cast<int64_t>(i) * recvcount;
    if (i == r) {
      if (sendbuf == MPI_IN_PLACE) continue;
      const Type* st = held(s, sendtype);
      const char* mine = packed(s, sendbuf, sendcount, *st, true);
      land.copy_out(mine, at(recvbuf, d, *rt), c, *rt);
      continue;
    }
    s.recv(land.place(s, at(recvbuf, d, *rt), c, *rt), c * rt->size, i);
  }
  land.finish(s);
  return MPI_SUCCESS;
}

int build_scatter(Schedule& s, const void* sendbuf, const int* sendcounts, const int* displs, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const int n = s.size(), r = s.rank();
  Landings land;
  if (r != root) {
    const Type* rt = held(s, recvtype);
    s.recv(land.place(s, recvbuf, recvcount, *rt), static_cast<int64_t>(recvcount) * rt->size, root);
    land.finish(s);
    return MPI_SUCCESS;
  }
  const Type* st = held(s, sendtype);
  for (int i = 0; i < n; ++i) {
    const int64_t c = sendcounts ? sendcounts[i] : sendcount;
    const int64_t d = displs ? displs[i] : static_cast<int64_t>(i) * sendcount;
    if (i == r) {
      if (recvbuf == MPI_IN_PLACE) continue;
      const Type* rt = held(s, recvtype);
      land.copy_out(packed(s, at(sendbuf, d, *st), c, *st, true), recvbuf, recvcount, *rt);
      continue;
    }
    s.send(packed(s, at(sendbuf, d, *st), c, *st), c * st->size, i);
  }
  land.finish(s);
  return MPI_SUCCESS;
}

int build_allgather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype) {
  const int n = s.size(), r = s.rank();
  const Type* rt = held(s, recvtype);
  auto count_of = [&](int i) -> int64_t { return recvcounts ? recvcounts[i] : recvcount; };
  auto displ_of = [&](int i) -> int64_t { return displs ? displs[i] : static_cast<int64_t>(i) * recvcount; };
  const char* mine;
  int64_t mine_bytes;
  Landings land;
  if (sendbuf == MPI_IN_PLACE) {
    mine = packed(s, at(recvbuf, displ_of(r), *rt), count_of(r), *rt, true);
    mine_bytes = count_of(r) * rt->size;
  } else {
    // The send buffer is the program's until the call completes (MPI forbids changing it), so
    // it goes out as it is; the own block is copied while the peers' transfers run.
    const Type* st = held(s, sendtype);
    mine = packed(s, sendbuf, sendcount, *st);
    mine_bytes = static_cast<int64_t>(sendcount) * st->size;
    own_block_after_posts(s, mine, at(recvbuf, displ_of(r), *rt), count_of(r), rt);
  }
  for (int k = 1; k < n; ++k) {
    const int from = (r - k + n) % n, to = (r + k) % n;
    s.recv(land.place(s, at(recvbuf, displ_of(from), *rt), count_of(from), *rt), count_of(from) * rt->size, from);
    s.send(mine, mine_bytes, to);
  }
  land.finish(s);
  return MPI_SUCCESS;
}

int build_alltoallw(Schedule& s, const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                    const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                    const MPI_Datatype* recvtypes) {
  const int n = s.size(), r = s.rank();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place) {
    sendbuf = recvbuf;
    sendcounts = recvcounts;
    sdispls = rdispls;
    sendtypes = recvtypes;
  }
  Landings land;
  std::vector<const char*> out(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    const int to = (r + k) % n;
    const Type* st = held(s, sendtypes[to]);
    out[static_cast<size_t>(to)] =
        packed(s, static_cast<const char*>(sendbuf) + sdispls[to], sendcounts[to], *st, in_place);
  }
  for (int k = 0; k < n; ++k) {
    const int from = (r - k + n) % n, to = (r + k) % n;
    const Type* rt = held(s, recvtypes[from]);
    char* dst = static_cast<char*>(recvbuf) + rdispls[from];
    const Type* st = held(s, sendtypes[to]);
    if (from == r) {
      if (!in_place) own_block_after_posts(s, out[static_cast<size_t>(r)], dst, recvcounts[r], rt);
      continue;
    }
    s.recv(land.place(s, dst, recvcounts[from], *rt), static_cast<int64_t>(recvcounts[from]) * rt->size, from);
    s.send(out[static_cast<size_t>(to)], static_cast<int64_t>(sendcounts[to]) * st->size, to);
  }
  land.finish(s);
  return MPI_SUCCESS;
}

int build_reduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root) {
  const Type* t = held(s, type);
  const int r = s.rank();
  const void* input = (sendbuf == MPI_IN_PLACE && r == root) ? recvbuf : sendbuf;
  char* acc = const_cast<char*>(packed(s, input, count, *t, true));
  if (count == 0) return MPI_SUCCESS;
  char* result = tree_reduce(s, acc, count, t, type, op, root);
  if (r == root) {
    Landings land;
    land.copy_out(result, recvbuf, count, *t);
    land.finish(s);
  }
  return MPI_SUCCESS;
}

int build_allreduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op) {
  const Type* t = held(s, type);
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  char* acc = const_cast<char*>(packed(s, input, count, *t, true));
  if (count == 0) return MPI_SUCCESS;
  if (commutative(op)) {
    exchange_allreduce(s, acc, count, t, type, op);
  } else {
    tree_reduce(s, acc, count, t, type, op, 0);
    s.next_round();
    tree_bcast(s, acc, static_cast<int64_t>(count) * t->size, 0);
  }
  Landings land;
  land.copy_out(acc, recvbuf, count, *t);
  land.finish(s);
  return MPI_SUCCESS;
}

int build_reduce_scatter(Schedule& s, const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type,
                         MPI_Op op) {
  const Type* t = held(s, type);
  const int n = s.size(), r = s.rank();
  std::vector<int64_t> offset(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) offset[static_cast<size_t>(i) + 1] = offset[static_cast<size_t>(i)] + recvcounts[i];
  const int64_t total = offset[static_cast<size_t>(n)];
  if (total == 0) return MPI_SUCCESS;
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  char* acc = const_cast<char*>(packed(s, input, total, *t, true));
  tree_reduce(s, acc, total, t, type, op, 0);
  s.next_round();
  Landings land;
  if (r == 0) {
    for (int i = 1; i < n; ++i)
      s.send(acc + offset[static_cast<size_t>(i)] * t->size, recvcounts[i] * t->size, i);
    land.copy_out(acc, recvbuf, recvcounts[0], *t);
  } else {
    s.recv(land.place(s, recvbuf, recvcounts[r], *t), recvcounts[r] * t->size, 0);
  }
  land.finish(s);
  return MPI_SUCCESS;
}

int build_scan(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               bool exclusive) {
  const Type* t = held(s, type);
  const int n = s.size(), r = s.rank();
  if (count == 0) return MPI_SUCCESS;
  const int64_t bytes = static_cast<int64_t>(count) * t->size;
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  char* acc = const_cast<char*>(packed(s, input, count, *t, true));  // becomes the prefix through r
  Landings land;
  if (r > 0) {
    char* prefix = s.scratch(bytes);  // ranks 0 .. r-1
    s.recv(prefix, bytes, r - 1);
    s.next_round();
    s.local([prefix, acc, count, t, type, op] { reduce_packed(prefix, acc, count, *t, type, op); });
    if (exclusive) land.copy_out(prefix, recvbuf, count, *t);
  }
  if (r + 1 < n) s.send(acc, bytes, r + 1);
  if (!exclusive) land.copy_out(acc, recvbuf, count, *t);
  land.finish(s);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi

// ---- intercommunicators (MPI-3.1 5.2.2): data moves between the two groups ----------------------
// Each builder talks to the remote group directly (union ranks remote_offset + j); rooted
// collectives follow MPI's convention: the root passes MPI_ROOT, the rest of its group
// MPI_PROC_NULL, the other group the root's rank in the remote group.
namespace xmsg::mpi {
namespace {

struct Sides {
  int local_rank, local_size, remote_size, remote_offset;
  explicit Sides(const Schedule& s) {
    const CommState* st = state_of(s.comm());
    local_rank = s.rank() - st->local_offset;
    local_size = st->local_size;
    remote_size = st->remote_size;
    remote_offset = st->remote_offset;
  }
  int remote(int j) const { return remote_offset + j; }
};

// Receives one packed operand from every remote rank and reduces them in remote rank order
// into a buffer of this schedule (ready after the returned round).
char* reduce_remote_contributions(Schedule& s, const Sides& g, int64_t count, const Type* t, MPI_Datatype type,
                                  MPI_Op op) {
  const int64_t bytes = count * t->size;
  std::vector<char*> parts;
  for (int j = 0; j < g.remote_size; ++j) {
    parts.push_back(s.scratch(bytes));
    s.recv(parts.back(), bytes, g.remote(j));
  }
  s.next_round();
  char* acc = parts[0];
  s.local([parts, count, t, type, op, bytes] {
    for (size_t j = 1; j < parts.size(); ++j) {
      reduce_packed(parts[0], parts[j], count, *t, type, op);  // parts[j] = acc (op) part j
      if (bytes > 0) std::memcpy(parts[0], parts[j], static_cast<size_t>(bytes));
    }
  });
  return acc;
}

}  // namespace

int inter_check_root(int root, MPI_Comm comm, const char* func) {
  const CommState* st = state_of(comm);
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < st->remote_size)) return MPI_SUCCESS;
  return fail(MPI_ERR_ROOT, func, comm,
              "root %d is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote group [0, %d)", root,
              st->remote_size);
}

int build_inter_barrier(Schedule& s) {
  Sides g(s);
  for (int j = 0; j < g.remote_size; ++j) {
    s.recv(nullptr, 0, g.remote(j));
    s.send(nullptr, 0, g.remote(j));
  }
  return MPI_SUCCESS;
}

int build_inter_bcast(Schedule& s, void* buf, int count, MPI_Datatype type, int root) {
  Sides g(s);
  if (root == MPI_PROC_NULL || count == 0) return MPI_SUCCESS;
  const Type* t = held(s, type);
  const int64_t bytes = static_cast<int64_t>(count) * t->size;
  if (root == MPI_ROOT) {
    const char* data = packed(s, buf, count, *t);
    for (int j = 0; j < g.remote_size; ++j) s.send(data, bytes, g.remote(j));
    return MPI_SUCCESS;
  }
  Landings land;
  s.recv(land.place(s, buf, count, *t), bytes, g.remote(root));
  land.finish(s);
  return MPI_SUCCESS;
}

int build_inter_reduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       int root) {
  Sides g(s);
  if (root == MPI_PROC_NULL || count == 0) return MPI_SUCCESS;
  const Type* t = held(s, type);
  if (root != MPI_ROOT) {
    s.send(packed(s, sendbuf, count, *t), static_cast<int64_t>(count) * t->size, g.remote(root));
    return MPI_SUCCESS;
  }
  char* acc = reduce_remote_contributions(s, g, count, t, type, op);
  Landings land;
  land.copy_out(acc, recvbuf, count, *t);
  land.finish(s);
  return MPI_SUCCESS;
}

int build_inter_allreduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op) {
  Sides g(s);
  if (count == 0) return MPI_SUCCESS;
  const Type* t = held(s, type);
  const char* mine = packed(s, sendbuf, count, *t, true);
  for (int j = 0; j < g.remote_size; ++j) s.send(mine, static_cast<int64_t>(count) * t->size, g.remote(j));
  char* acc = reduce_remote_contributions(s, g, count, t, type, op);
  Landings land;
  land.copy_out(acc, recvbuf, count, *t);
  land.finish(s);
  return MPI_SUCCESS;
}

int build_inter_gather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype, int root) {
  Sides g(s);
  if (root == MPI_PROC_NULL) return MPI_SUCCESS;
  if (root != MPI_ROOT) {
    const Type* st = held(s, sendtype);
    s.send(packed(s, sendbuf, sendcount, *st), static_cast<int64_t>(sendcount) * st->size, g.remote(root));
    return MPI_SUCCESS;
  }
  const Type* rt = held(s, recvtype);
  Landings land;
  for (int j = 0; j < g.remote_size; ++j) {
    const int64_t c = recvcounts ? recvcounts[j] : recvcount;
    const int64_t d = displs ? displs[j] : static_cast<int64_t>(j) * recvcount;
    s.recv(land.place(s, at(recvbuf, d, *rt), c, *rt), c * rt->size, g.remote(j));
  }
  land.finish(s);
  return MPI_SUCCESS;
}

int build_inter_scatter(Schedule& s, const void* sendbuf, const int* sendcounts, const int* displs, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  Sides g(s);
  if (root == MPI_PROC_NULL) return MPI_SUCCESS;
  if (root != MPI_ROOT) {
    const Type* rt = held(s, recvtype);
    Landings land;
    s.recv(land.place(s, recvbuf, recvcount, *rt), static_cast<int64_t>(recvcount) * rt->size, g.remote(root));
    land.finish(s);
    return MPI_SUCCESS;
  }
  const Type* st = held(s, sendtype);
  for (int j = 0; j < g.remote_size; ++j) {
    const int64_t c = sendcounts ? sendcounts[j] : sendcount;
    const int64_t d = displs ? displs[j] : static_cast<int64_t>(j) * sendcount;
    s.send(packed(s, at(sendbuf, d, *st), c, *st), c * st->size, g.remote(j));
  }
  return MPI_SUCCESS;
}

int build_inter_allgather(Schedule& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int* recvcounts, const int* displs, int recvcount, MPI_Datatype recvtype) {
  Sides g(s);
  const Type* st = held(s, sendtype);
  const Type* rt = held(s, recvtype);
  const char* mine = packed(s, sendbuf, sendcount, *st);
  Landings land;
  for (int j = 0; j < g.remote_size; ++j) {
    const int64_t c = recvcounts ? recvcounts[j] : recvcount;
    const int64_t d = displs ? displs[j] : static_cast<int64_t>(j) * recvcount;
    s.recv(land.place(s, at(recvbuf, d, *rt), c, *rt), c * rt->size, g.remote(j));
    s.send(mine, static_cast<int64_t>(sendcount) * st->size, g.remote(j));
  }
  land.finish(s);
  return MPI_SUCCESS;
}

int build_inter_alltoallw(Schedule& s, const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                          const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                          const MPI_Datatype* recvtypes) {
  Sides g(s);
  Landings land;
  for (int j = 0; j < g.remote_size; ++j) {
    const Type* st = held(s, sendtypes[j]);
    const Type* rt = held(s, recvtypes[j]);
    s.recv(land.place(s, static_cast<char*>(recvbuf) + rdispls[j], recvcounts[j], *rt),
           static_cast<int64_t>(recvcounts[j]) * rt->size, g.remote(j));
    s.send(packed(s, static_cast<const char*>(sendbuf) + sdispls[j], sendcounts[j], *st),
           static_cast<int64_t>(sendcounts[j]) * st->size, g.remote(j));
  }
  land.finish(s);
  return MPI_SUCCESS;
}

// The remote group's vectors (sum of the local recvcounts each) are reduced, and each local
// rank keeps its block of the result.
int build_inter_reduce_scatter(Schedule& s, const void* sendbuf, void* recvbuf, const int* recvcounts,
                               MPI_Datatype type, MPI_Op op) {
  Sides g(s);
  const Type* t = held(s, type);
  int64_t total = 0, offset = 0;
  for (int i = 0; i < g.local_size; ++i) {
    if (i == g.local_rank) offset = total;
    total += recvcounts[i];
  }
  if (total == 0) return MPI_SUCCESS;
  // The remote group's vectors have the remote group's total, which MPI requires to be equal.
  const char* mine = packed(s, sendbuf, total, *t, true);
  for (int j = 0; j < g.remote_size; ++j) s.send(mine, total * t->size, g.remote(j));
  char* acc = reduce_remote_contributions(s, g, total, t, type, op);
  Landings land;
  land.copy_out(acc + offset * t->size, recvbuf, recvcounts[g.local_rank], *t);
  land.finish(s);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi
