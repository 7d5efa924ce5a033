// MPI-3.1 chapter 7: process topologies. Cartesian, graph and distributed-graph communicators
// (their creation, queries and mappings) and the neighborhood collectives, blocking and not.
//
// A topology is CommState::topo of the communicator (MPI_Comm_dup copies it, see comm.cpp).
// Creation never reorders: a rank keeps its rank (reorder is a hint MPI lets us ignore), and
// ranks beyond the grid or graph get MPI_COMM_NULL.
//
// Neighbour order (MPI-3.1 7.6): cartesian: for each dimension the -1 then the +1 neighbour
// (MPI_PROC_NULL slots keep their place; nothing is sent or received there); graph: the order
// of MPI_Graph_neighbors; distributed graph: sources (receive blocks) and destinations (send
// blocks) as given or assembled. Which send block lands in which receive block when a rank
// appears more than once in a list (a periodic dimension of size 1 or 2, a multigraph):
//   cartesian: block s of the sender lands in block s^1 of the receiver, in every dimension,
//     degenerate or not (MPI-4.0 erratum to 3.1, mpi-forum/mpi-issues#153): sends are posted
//     in slot order and the receives of each dimension's pair swapped (+1 slot first), so
//     that messages between one pair of ranks match in order;
//   graphs: the k-th edge to a rank matches the k-th edge from it (both posted in list order).
// Every collective is a Schedule: round 0 packs the send blocks of non-contiguous datatypes
// (local steps) and posts every send and receive; round 1, only when some receive block is
// non-contiguous, unpacks them.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "mpi_impl.hpp"

namespace xmsg::mpi {
namespace {

// ---- helpers --------------------------------------------------------------------------------

// buf + offset without pointer arithmetic on a null pointer (MPI_BOTTOM with absolute
// displacements is legal).
inline char* at(const void* buf, int64_t offset) {
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(buf) + static_cast<uintptr_t>(offset));
}

inline int mod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return static_cast<int>(r < 0 ? r + n : r);
}

const char* kind_name(int kind) {
  switch (kind) {
    case MPI_CART: return "a cartesian";
    case MPI_GRAPH: return "a graph";
    case MPI_DIST_GRAPH: return "a distributed graph";
    default: return "no";
  }
}

// A live communicator handle (intra or inter); fills rank and size when non-null.
int check_comm(MPI_Comm comm, const char* func, int* rank, int* size) {
  if (comm == MPI_COMM_NULL) return fail(MPI_ERR_COMM, func, MPI_COMM_WORLD, "comm is MPI_COMM_NULL");
  int r = 0, s = 0;
  if (comm < 0 || xmsg_comm_rank(comm, &r) != XMSG_SUCCESS || xmsg_comm_size(comm, &s) != XMSG_SUCCESS)
    return fail(MPI_ERR_COMM, func, MPI_COMM_WORLD, "comm %d is not a valid communicator", comm);
  if (rank) *rank = r;
  if (size) *size = s;
  return MPI_SUCCESS;
}

// The topology of `comm`, which must be of kind `want` (0: any kind).
int get_topo(MPI_Comm comm, const char* func, int want, const Topology** topo, int* rank = nullptr,
             int* size = nullptr) {
  int r = 0, s = 0;
  if (int rc = check_comm(comm, func, &r, &s)) return rc;
  CommState* st = state_of(comm);
  if (!st) return fail(MPI_ERR_COMM, func, MPI_COMM_WORLD, "comm %d is not a valid communicator", comm);
  const Topology& t = st->topo;
  if (t.kind != MPI_CART && t.kind != MPI_GRAPH && t.kind != MPI_DIST_GRAPH)
    return fail(MPI_ERR_TOPOLOGY, func, comm, "comm %d has no process topology%s", comm,
                want == MPI_CART         ? " (a cartesian one is needed)"
                : want == MPI_GRAPH      ? " (a graph one is needed)"
                : want == MPI_DIST_GRAPH ? " (a distributed graph one is needed)"
                                         : "");
  if (want != 0 && t.kind != want)
    return fail(MPI_ERR_TOPOLOGY, func, comm, "comm %d has %s topology, not %s one", comm, kind_name(t.kind),
                kind_name(want));
  *topo = &t;
  if (rank) *rank = r;
  if (size) *size = s;
  return MPI_SUCCESS;
}

// ---- cartesian ------------------------------------------------------------------------------

void cart_coords(const Topology& t, int rank, int* coords) {
  for (size_t i = t.dims.size(); i-- > 0;) {
    coords[i] = rank % t.dims[i];
    rank /= t.dims[i];
  }
}

int cart_rank_of(const Topology& t, const int* coords) {
  int64_t r = 0;
  for (size_t i = 0; i < t.dims.size(); ++i) r = r * t.dims[i] + coords[i];
  return static_cast<int>(r);
}

// Neighbours of `rank` at displacement `disp` in dimension `dim`.
void cart_shift(const Topology& t, int rank, int dim, int disp, int* source, int* dest) {
  std::vector<int> c(t.dims.size());
  cart_coords(t, rank, c.data());
  const int n = t.dims[dim];
  const int here = c[dim];
  auto neighbour = [&](int64_t pos) {
    if (t.periods[dim]) {
      pos = mod(pos, n);
    } else if (pos < 0 || pos >= n) {
      return MPI_PROC_NULL;
    }
    c[dim] = static_cast<int>(pos);
    int r = cart_rank_of(t, c.data());
    c[dim] = here;
    return r;
  };
  *source = neighbour(static_cast<int64_t>(here) - disp);
  *dest = neighbour(static_cast<int64_t>(here) + disp);
}

// Validates (ndims, dims, periods) of MPI_Cart_create / MPI_Cart_map; *grid = product of dims.
int check_cart_args(const char* func, MPI_Comm comm, int size, int ndims, const int dims[], const int periods[],
                    int64_t* grid) {
  if (ndims < 0) return fail(MPI_ERR_DIMS, func, comm, "ndims %d is negative", ndims);
  if (ndims > 0 && !dims) return fail(MPI_ERR_ARG, func, comm, "dims is NULL with ndims %d", ndims);
  if (ndims > 0 && !periods) return fail(MPI_ERR_ARG, func, comm, "periods is NULL with ndims %d", ndims);
  int64_t n = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return fail(MPI_ERR_DIMS, func, comm, "dims[%d] = %d is not positive", i, dims[i]);
    n *= dims[i];
    if (n > size)
      return fail(MPI_ERR_TOPOLOGY, func, comm,
                  "the grid (dims[0..%d] multiply to more than %d) is larger than comm (size %d)", i, size, size);
  }
  *grid = n;
  return MPI_SUCCESS;
}

// ---- MPI_Dims_create's factorisation ----------------------------------------------------------

// Splits m into k factors as close to each other as possible (see consider()), in
// non-increasing order: an exhaustive search over divisors, pruned by the best spread so far.
class Balanced {
 public:
  Balanced(int64_t m, int k) : m_(m), k_(k) {
    for (int64_t d = 1; d * d <= m; ++d) {
      if (m % d == 0) {
        divisors_.push_back(d);
        if (d != m / d) divisors_.push_back(m / d);
      }
    }
    std::sort(divisors_.begin(), divisors_.end(), std::greater<int64_t>());
  }

  std::vector<int64_t> solve() {
    greedy();
    // More factors than prime factors: some are 1 whatever the split, so the spread is
    // max - 1 and only the first omega factors need searching (the rest are 1).
    int omega = 0;
    for (int64_t r = m_, p = 2; r > 1; p = p * p > r ? r : p + 1)
      while (r % p == 0) r /= p, ++omega;
    if (k_ > omega) pad_ = k_ - omega;
    if (k_ - pad_ == 0) return best_;  // m == 1
    std::vector<int64_t> cur;
    search(m_, k_ - pad_, m_, &cur);
    return best_;
  }

 private:
  // Start: the prime factors, largest first, each onto the currently smallest factor.
  void greedy() {
    std::vector<int64_t> primes;
    int64_t r = m_;
    for (int64_t p = 2; p * p <= r; ++p)
      while (r % p == 0) primes.push_back(p), r /= p;
    if (r > 1) primes.push_back(r);
    std::sort(primes.begin(), primes.end(), std::greater<int64_t>());
    std::vector<int64_t> f(k_, 1);
    for (int64_t p : primes) *std::min_element(f.begin(), f.end()) *= p;
    std::sort(f.begin(), f.end(), std::greater<int64_t>());
    consider(f);
  }

  // Better: a smaller spread (max - min), then a smaller sum (97x2x2x1 over 97x4x1x1), then
  // the lexicographically smaller list.
  void consider(std::vector<int64_t> f) {
    f.resize(static_cast<size_t>(k_), 1);  // the padding ones (see solve())
    const int64_t spread = f.front() - f.back();
    int64_t sum = 0;
    for (int64_t x : f) sum += x;
    if (best_.empty() || spread < best_spread_ ||
        (spread == best_spread_ && (sum < best_sum_ || (sum == best_sum_ && f < best_)))) {
      best_ = std::move(f);
      best_spread_ = spread;
      best_sum_ = sum;
    }
  }

  // floor(x^(1/e)), e >= 1.
  static int64_t iroot(int64_t x, int e) {
    if (e == 1 || x < 2) return x;
    int64_t r = static_cast<int64_t>(std::pow(static_cast<double>(x), 1.0 / e));
    while (r > 1 && !below_or_equal(r, e, x)) --r;
    while (below_or_equal(r + 1, e, x)) ++r;
    return r;
  }
  // r^e <= x.
  static bool below_or_equal(int64_t r, int e, int64_t x) {
    int64_t p = 1;
    for (int i = 0; i < e; ++i) {
      if (p > x / r) return false;
      p *= r;
    }
    return p <= x;
  }

  // True when d^k >= m.
  static bool power_reaches(int64_t d, int k, int64_t m) {
    int64_t p = 1;
    for (int i = 0; i < k; ++i) {
      p *= d;
      if (p >= m) return true;
    }
    return p >= m;
  }

  // The next factors of `rem`, `k` of them, each at most `maxf`, non-increasing.
  void search(int64_t rem, int k, int64_t maxf, std::vector<int64_t>* cur) {
    if (k == 1) {
      if (rem <= maxf) {
        cur->push_back(rem);
        consider(*cur);
        cur->pop_back();
      }
      return;
    }
    for (int64_t d : divisors_) {
      if (d > maxf || rem % d != 0) continue;
      if (!power_reaches(d, k, rem)) break;  // d must be the largest of the k remaining factors
      // Every later factor is <= d, so the spread is at least max - d; the smallest of the
      // k - 1 after d is at most the (k-1)-th root of rem / d.
      const int64_t max = cur->empty() ? d : cur->front();
      if (max - d > best_spread_) break;
      if (max - (pad_ > 0 ? 1 : iroot(rem / d, k - 1)) > best_spread_) continue;
      cur->push_back(d);
      search(rem / d, k - 1, d, cur);
      cur->pop_back();
    }
  }

  int64_t m_;
  int k_;
  std::vector<int64_t> divisors_;
  std::vector<int64_t> best_;
  int64_t best_spread_ = 0;
  int64_t best_sum_ = 0;
  int pad_ = 0;
};

// ---- graphs -----------------------------------------------------------------------------------

int check_graph_args(const char* func, MPI_Comm comm, int size, int nnodes, const int index[], const int edges[]) {
  if (nnodes < 0) return fail(MPI_ERR_ARG, func, comm, "nnodes %d is negative", nnodes);
  if (nnodes > size)
    return fail(MPI_ERR_TOPOLOGY, func, comm, "nnodes %d is larger than comm (size %d)", nnodes, size);
  if (nnodes == 0) return MPI_SUCCESS;
  if (!index) return fail(MPI_ERR_ARG, func, comm, "index is NULL with nnodes %d", nnodes);
  int prev = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < prev)
      return fail(MPI_ERR_ARG, func, comm, "index[%d] = %d is less than %s (%d)", i, index[i],
                  i == 0 ? "0" : "the entry before it", prev);
    prev = index[i];
  }
  const int nedges = index[nnodes - 1];
  if (nedges > 0 && !edges) return fail(MPI_ERR_ARG, func, comm, "edges is NULL with %d edges", nedges);
  for (int i = 0; i < nedges; ++i)
    if (edges[i] < 0 || edges[i] >= nnodes)
      return fail(MPI_ERR_ARG, func, comm, "edges[%d] = %d out of range [0, %d)", i, edges[i], nnodes);
  return MPI_SUCCESS;
}

void graph_neighbours(const Topology& t, int rank, std::vector<int>* out) {
  const int begin = rank == 0 ? 0 : t.index[rank - 1];
  const int end = t.index[rank];
  out->assign(t.edges.begin() + begin, t.edges.begin() + end);
}

// ---- distributed graphs -------------------------------------------------------------------------

inline bool no_weights(const int* w) { return w == nullptr || w == MPI_WEIGHTS_EMPTY || w == MPI_UNWEIGHTED; }

int check_ranks(const char* func, MPI_Comm comm, const char* arg, const int* ranks, int n, int size) {
  if (n > 0 && !ranks) return fail(MPI_ERR_ARG, func, comm, "%s is NULL with %d entries", arg, n);
  for (int i = 0; i < n; ++i)
    if (ranks[i] < 0 || ranks[i] >= size)
      return fail(MPI_ERR_RANK, func, comm, "%s[%d] = %d out of range [0, %d)", arg, i, ranks[i], size);
  return MPI_SUCCESS;
}

int check_weights(const char* func, MPI_Comm comm, const char* arg, const int* w, int n) {
  if (n == 0) return MPI_SUCCESS;
  if (no_weights(w))
    return fail(MPI_ERR_ARG, func, comm, "%s is %s with %d weighted edges", arg,
                w == nullptr ? "NULL" : "MPI_WEIGHTS_EMPTY", n);
  for (int i = 0; i < n; ++i)
    if (w[i] < 0) return fail(MPI_ERR_ARG, func, comm, "%s[%d] = %d is negative", arg, i, w[i]);
  return MPI_SUCCESS;
}

// The communicator of a distributed graph: every rank of comm_old, ranks kept.
int make_dist_graph(const char* func, MPI_Comm comm_old, int rank, Topology topo, MPI_Comm* out) {
  MPI_Comm newcomm = MPI_COMM_NULL;
  if (int rc = xmsg_comm_split(comm_old, 0, rank, &newcomm)) return handle(rc, func, comm_old);
  inherit_state(comm_old, newcomm);
  topo.kind = MPI_DIST_GRAPH;
  state_of(newcomm)->topo = std::move(topo);
  *out = newcomm;
  return MPI_SUCCESS;
}

// ---- neighborhood collectives -------------------------------------------------------------------

struct Neighbours {
  std::vector<int> in, out;  // receive slots, send slots (MPI_PROC_NULL allowed)
  bool cart = false;
};

// Validates the communicator of a neighborhood collective and lists its neighbours.
int neighbours_of(MPI_Comm comm, const char* func, Neighbours* nb) {
  int rank = 0, size = 0;
  if (int rc = check_intra(comm, func, &rank, &size)) return rc;
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, func, 0, &t)) return rc;
  switch (t->kind) {
    case MPI_CART:
      nb->cart = true;
      for (size_t d = 0; d < t->dims.size(); ++d) {
        int src = MPI_PROC_NULL, dst = MPI_PROC_NULL;
        cart_shift(*t, rank, static_cast<int>(d), 1, &src, &dst);
        nb->in.push_back(src);
        nb->in.push_back(dst);
      }
      nb->out = nb->in;
      break;
    case MPI_GRAPH:
      graph_neighbours(*t, rank, &nb->in);
      nb->out = nb->in;
      break;
    default:
      nb->in = t->sources;
      nb->out = t->destinations;
      break;
  }
  return MPI_SUCCESS;
}

// Order in which the receives are posted: see the file comment.
inline size_t recv_slot(const Neighbours& nb, size_t i) { return nb.cart ? (i ^ 1u) : i; }

// Builds the schedule of one neighborhood collective.
class NeighbourSchedule {
 public:
  explicit NeighbourSchedule(Schedule& s) : s_(&s) {}

  // Round 0: sends `count` elements of `type` at `buf` to `peer` (packed first when the
  // datatype is not contiguous). `packed` reuses an earlier packing of the same block.
  void send(const void* buf, int64_t count, MPI_Datatype dt, const Type* type, int peer,
            const char** packed = nullptr) {
    if (peer == MPI_PROC_NULL) return;
    const int64_t bytes = count * type->size;
    if (bytes == 0 || type->contiguous) {
      s_->send(bytes == 0 ? buf : at(buf, type->true_lb), bytes, peer);
      return;
    }
    if (packed && *packed) {
      s_->send(*packed, bytes, peer);
      return;
    }
    char* tmp = s_->scratch(bytes);
    const Type* t = stable(dt, type);
    s_->local([buf, count, t, tmp] { pack(buf, count, *t, tmp); });
    s_->send(tmp, bytes, peer);
    if (packed) *packed = tmp;
  }

  // Round 0: receives `count` elements of `type` at `buf` from `peer` (into scratch, unpacked
  // in round 1, when the datatype is not contiguous).
  void recv(void* buf, int64_t count, MPI_Datatype dt, const Type* type, int peer) {
    if (peer == MPI_PROC_NULL) return;
    const int64_t bytes = count * type->size;
    if (bytes == 0 || type->contiguous) {
      s_->recv(bytes == 0 ? buf : at(buf, type->true_lb), bytes, peer);
      return;
    }
    char* tmp = s_->scratch(bytes);
    const Type* t = stable(dt, type);
    s_->recv(tmp, bytes, peer);
    unpacks_.push_back([tmp, bytes, buf, count, t] { unpack(tmp, bytes, buf, count, *t); });
  }

  // Adds the unpacking round (when a receive type is not contiguous).
  int done() {
    if (!unpacks_.empty()) {
      s_->next_round();
      for (auto& step : unpacks_) s_->local(std::move(step));
    }
    return MPI_SUCCESS;
  }

 private:
  // A copy of a derived datatype that lives as long as the schedule (MPI lets a program free a
  // datatype while a non-blocking operation still uses it).
  const Type* stable(MPI_Datatype dt, const Type* type) {
    auto it = copies_.find(dt);
    if (it != copies_.end()) return it->second;
    const Type* copy = s_->keep(std::make_unique<Type>(*type));
    copies_.emplace(dt, copy);
    return copy;
  }

  Schedule* s_;
  std::map<MPI_Datatype, const Type*> copies_;
  std::vector<std::function<void()>> unpacks_;
};

// The three forms of a neighborhood collective: MPI_Neighbor_X, MPI_Ineighbor_X and MPI-4.0's
// MPI_Neighbor_X_init (a persistent request that builds a fresh schedule at every MPI_Start).
enum class Form { kBlocking, kNonblocking, kPersistent };

int launch(MPI_Comm comm, Form form, std::function<int(Schedule&)> build, MPI_Request* request) {
  if (form == Form::kPersistent) return persistent_collective(comm, std::move(build), request);
  auto s = std::make_unique<Schedule>(comm);
  if (int e = build(*s)) return e;
  if (form == Form::kNonblocking) return start_schedule(std::move(s), request);
  return run_schedule(std::move(s));
}

// The datatypes a schedule builder uses: a persistent request builds at every start, after the
// program may have freed its handles, so it holds copies, alive as long as the builder that
// captures the HeldTypes (`types = held`); the other forms build at once from the program's.
class HeldTypes {
 public:
  explicit HeldTypes(Form form) : copy_(form == Form::kPersistent) {}
  const Type* hold(const Type* t) {
    if (!copy_) return t;
    copies_.push_back(std::make_shared<const Type>(*t));
    return copies_.back().get();
  }

 private:
  bool copy_;
  std::vector<std::shared_ptr<const Type>> copies_;
};

// Common checks of every neighborhood collective. `request` is null for the blocking forms.
int check_common(const char* func, MPI_Comm comm, const void* sendbuf, const void* recvbuf, MPI_Request* request,
                 bool nonblocking, Neighbours* nb) {
  if (nonblocking) {
    if (!request) return fail(MPI_ERR_ARG, func, comm, "request is NULL");
    *request = MPI_REQUEST_NULL;
  }
  if (int rc = neighbours_of(comm, func, nb)) return rc;
  if (sendbuf == MPI_IN_PLACE)
    return fail(MPI_ERR_BUFFER, func, comm, "sendbuf is MPI_IN_PLACE (not allowed in neighborhood collectives)");
  if (recvbuf == MPI_IN_PLACE)
    return fail(MPI_ERR_BUFFER, func, comm, "recvbuf is MPI_IN_PLACE (not allowed in neighborhood collectives)");
  return MPI_SUCCESS;
}

int check_count(const char* func, MPI_Comm comm, const char* arg, int count) {
  if (count < 0) return fail(MPI_ERR_COUNT, func, comm, "%s %d is negative", arg, count);
  return MPI_SUCCESS;
}

int check_counts(const char* func, MPI_Comm comm, const char* arg, const int* counts, size_t n) {
  if (n > 0 && !counts) return fail(MPI_ERR_ARG, func, comm, "%s is NULL", arg);
  for (size_t i = 0; i < n; ++i)
    if (counts[i] < 0)
      return fail(MPI_ERR_COUNT, func, comm, "%s[%zu] = %d is negative", arg, i, counts[i]);
  return MPI_SUCCESS;
}

template <class T>
int check_array(const char* func, MPI_Comm comm, const char* arg, const T* a, size_t n) {
  if (n > 0 && !a) return fail(MPI_ERR_ARG, func, comm, "%s is NULL", arg);
  return MPI_SUCCESS;
}

int neighbor_allgather(const char* func, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, Form form) {
  Neighbours nb;
  if (int rc = check_common(func, comm, sendbuf, recvbuf, request, form != Form::kBlocking, &nb)) return rc;
  if (int rc = check_count(func, comm, "sendcount", sendcount)) return rc;
  if (int rc = check_count(func, comm, "recvcount", recvcount)) return rc;
  const Type *st = nullptr, *rt = nullptr;
  if (int rc = check_type(sendtype, func, "sendtype", comm, &st)) return rc;
  if (int rc = check_type(recvtype, func, "recvtype", comm, &rt)) return rc;

  HeldTypes held(form);
  st = held.hold(st);
  rt = held.hold(rt);
  return launch(comm, form, [=, types = held](Schedule& sched) {
    NeighbourSchedule s(sched);
    const char* packed = nullptr;
    for (int peer : nb.out) s.send(sendbuf, sendcount, sendtype, st, peer, &packed);
    for (size_t i = 0; i < nb.in.size(); ++i) {
      const size_t k = recv_slot(nb, i);
      s.recv(at(recvbuf, static_cast<int64_t>(k) * recvcount * rt->extent), recvcount, recvtype, rt, nb.in[k]);
    }
    return s.done();
  }, request);
}

int neighbor_allgatherv(const char* func, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Request* request, Form form) {
  Neighbours nb;
  if (int rc = check_common(func, comm, sendbuf, recvbuf, request, form != Form::kBlocking, &nb)) return rc;
  if (int rc = check_count(func, comm, "sendcount", sendcount)) return rc;
  if (int rc = check_counts(func, comm, "recvcounts", recvcounts, nb.in.size())) return rc;
  if (int rc = check_array(func, comm, "displs", displs, nb.in.size())) return rc;
  const Type *st = nullptr, *rt = nullptr;
  if (int rc = check_type(sendtype, func, "sendtype", comm, &st)) return rc;
  if (int rc = check_type(recvtype, func, "recvtype", comm, &rt)) return rc;

  HeldTypes held(form);
  st = held.hold(st);
  rt = held.hold(rt);
  std::vector<int> rc(recvcounts, recvcounts + nb.in.size()), rd(displs, displs + nb.in.size());
  return launch(comm, form, [=, types = held](Schedule& sched) {
    NeighbourSchedule s(sched);
    const char* packed = nullptr;
    for (int peer : nb.out) s.send(sendbuf, sendcount, sendtype, st, peer, &packed);
    for (size_t i = 0; i < nb.in.size(); ++i) {
      const size_t k = recv_slot(nb, i);
      s.recv(at(recvbuf, static_cast<int64_t>(rd[k]) * rt->extent), rc[k], recvtype, rt, nb.in[k]);
    }
    return s.done();
  }, request);
}

int neighbor_alltoall(const char* func, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, Form form) {
  Neighbours nb;
  if (int rc = check_common(func, comm, sendbuf, recvbuf, request, form != Form::kBlocking, &nb)) return rc;
  if (int rc = check_count(func, comm, "sendcount", sendcount)) return rc;
  if (int rc = check_count(func, comm, "recvcount", recvcount)) return rc;
  const Type *st = nullptr, *rt = nullptr;
  if (int rc = check_type(sendtype, func, "sendtype", comm, &st)) return rc;
  if (int rc = check_type(recvtype, func, "recvtype", comm, &rt)) return rc;

  HeldTypes held(form);
  st = held.hold(st);
  rt = held.hold(rt);
  return launch(comm, form, [=, types = held](Schedule& sched) {
    NeighbourSchedule s(sched);
    for (size_t j = 0; j < nb.out.size(); ++j)
      s.send(at(sendbuf, static_cast<int64_t>(j) * sendcount * st->extent), sendcount, sendtype, st, nb.out[j]);
    for (size_t i = 0; i < nb.in.size(); ++i) {
      const size_t k = recv_slot(nb, i);
      s.recv(at(recvbuf, static_cast<int64_t>(k) * recvcount * rt->extent), recvcount, recvtype, rt, nb.in[k]);
    }
    return s.done();
  }, request);
}

int neighbor_alltoallv(const char* func, const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, Form form) {
  Neighbours nb;
  if (int rc = check_common(func, comm, sendbuf, recvbuf, request, form != Form::kBlocking, &nb)) return rc;
  if (int rc = check_counts(func, comm, "sendcounts", sendcounts, nb.out.size())) return rc;
  if (int rc = check_array(func, comm, "sdispls", sdispls, nb.out.size())) return rc;
  if (int rc = check_counts(func, comm, "recvcounts", recvcounts, nb.in.size())) return rc;
  if (int rc = check_array(func, comm, "rdispls", rdispls, nb.in.size())) return rc;
  const Type *st = nullptr, *rt = nullptr;
  if (int rc = check_type(sendtype, func, "sendtype", comm, &st)) return rc;
  if (int rc = check_type(recvtype, func, "recvtype", comm, &rt)) return rc;

  HeldTypes held(form);
  st = held.hold(st);
  rt = held.hold(rt);
  std::vector<int> sc(sendcounts, sendcounts + nb.out.size()), sd(sdispls, sdispls + nb.out.size());
  std::vector<int> rc(recvcounts, recvcounts + nb.in.size()), rd(rdispls, rdispls + nb.in.size());
  return launch(comm, form, [=, types = held](Schedule& sched) {
    NeighbourSchedule s(sched);
    for (size_t j = 0; j < nb.out.size(); ++j)
      s.send(at(sendbuf, static_cast<int64_t>(sd[j]) * st->extent), sc[j], sendtype, st, nb.out[j]);
    for (size_t i = 0; i < nb.in.size(); ++i) {
      const size_t k = recv_slot(nb, i);
      s.recv(at(recvbuf, static_cast<int64_t>(rd[k]) * rt->extent), rc[k], recvtype, rt, nb.in[k]);
    }
    return s.done();
  }, request);
}

int neighbor_alltoallw(const char* func, const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request,
                       Form form) {
  Neighbours nb;
  if (int rc = check_common(func, comm, sendbuf, recvbuf, request, form != Form::kBlocking, &nb)) return rc;
  if (int rc = check_counts(func, comm, "sendcounts", sendcounts, nb.out.size())) return rc;
  if (int rc = check_array(func, comm, "sdispls", sdispls, nb.out.size())) return rc;
  if (int rc = check_array(func, comm, "sendtypes", sendtypes, nb.out.size())) return rc;
  if (int rc = check_counts(func, comm, "recvcounts", recvcounts, nb.in.size())) return rc;
  if (int rc = check_array(func, comm, "rdispls", rdispls, nb.in.size())) return rc;
  if (int rc = check_array(func, comm, "recvtypes", recvtypes, nb.in.size())) return rc;
  std::vector<const Type*> st(nb.out.size()), rt(nb.in.size());
  char arg[32];
  for (size_t j = 0; j < nb.out.size(); ++j) {
    std::snprintf(arg, sizeof arg, "sendtypes[%zu]", j);
    if (int rc = check_type(sendtypes[j], func, arg, comm, &st[j])) return rc;
  }
  for (size_t k = 0; k < nb.in.size(); ++k) {
    std::snprintf(arg, sizeof arg, "recvtypes[%zu]", k);
    if (int rc = check_type(recvtypes[k], func, arg, comm, &rt[k])) return rc;
  }

  HeldTypes held(form);
  for (auto& t : st) t = held.hold(t);
  for (auto& t : rt) t = held.hold(t);
  std::vector<int> sc(sendcounts, sendcounts + nb.out.size()), rc(recvcounts, recvcounts + nb.in.size());
  std::vector<MPI_Aint> sd(sdispls, sdispls + nb.out.size()), rd(rdispls, rdispls + nb.in.size());
  std::vector<MPI_Datatype> sh(sendtypes, sendtypes + nb.out.size()), rh(recvtypes, recvtypes + nb.in.size());
  return launch(comm, form, [=, types = held](Schedule& sched) {
    NeighbourSchedule s(sched);
    for (size_t j = 0; j < nb.out.size(); ++j) s.send(at(sendbuf, sd[j]), sc[j], sh[j], st[j], nb.out[j]);
    for (size_t i = 0; i < nb.in.size(); ++i) {
      const size_t k = recv_slot(nb, i);
      s.recv(at(recvbuf, rd[k]), rc[k], rh[k], rt[k], nb.in[k]);
    }
    return s.done();
  }, request);
}

}  // namespace
}  // namespace xmsg::mpi

using namespace xmsg::mpi;

// ---- MPI_Dims_create ----------------------------------------------------------------------------

extern "C" int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Dims_create";
  if (ndims < 0) return fail(MPI_ERR_DIMS, f, MPI_COMM_WORLD, "ndims %d is negative", ndims);
  if (nnodes <= 0) return fail(MPI_ERR_ARG, f, MPI_COMM_WORLD, "nnodes %d is not positive", nnodes);
  if (ndims > 0 && !dims) return fail(MPI_ERR_ARG, f, MPI_COMM_WORLD, "dims is NULL with ndims %d", ndims);
  int64_t fixed = 1;
  int free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return fail(MPI_ERR_DIMS, f, MPI_COMM_WORLD, "dims[%d] = %d is negative", i, dims[i]);
    if (dims[i] == 0) {
      ++free_dims;
    } else if (fixed <= nnodes) {
      fixed *= dims[i];
    }
  }
  if (fixed > nnodes || nnodes % fixed != 0)
    return fail(MPI_ERR_DIMS, f, MPI_COMM_WORLD,
                "nnodes %d is not a multiple of the product of the non-zero entries of dims", nnodes);
  const int64_t rest = nnodes / fixed;
  if (free_dims == 0) {
    if (rest != 1)
      return fail(MPI_ERR_DIMS, f, MPI_COMM_WORLD,
                  "the entries of dims multiply to %lld, not nnodes %d, and none is 0",
                  static_cast<long long>(fixed), nnodes);
    return MPI_SUCCESS;
  }
  std::vector<int64_t> factors = Balanced(rest, free_dims).solve();
  size_t next = 0;
  for (int i = 0; i < ndims; ++i)
    if (dims[i] == 0) dims[i] = static_cast<int>(factors[next++]);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Dims_create)

// ---- cartesian topologies -----------------------------------------------------------------------

extern "C" int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                MPI_Comm* comm_cart) {
  XMSG_MPI_ENTRY;
  (void)reorder;  // ranks are kept
  const char* f = "MPI_Cart_create";
  int rank = 0, size = 0;
  if (int rc = check_intra(comm_old, f, &rank, &size)) return rc;
  if (!comm_cart) return fail(MPI_ERR_ARG, f, comm_old, "comm_cart is NULL");
  int64_t grid = 0;
  if (int rc = check_cart_args(f, comm_old, size, ndims, dims, periods, &grid)) return rc;
  const bool in_grid = rank < grid;
  MPI_Comm newcomm = MPI_COMM_NULL;
  if (int rc = xmsg_comm_split(comm_old, in_grid ? 0 : XMSG_UNDEFINED, rank, &newcomm)) return handle(rc, f, comm_old);
  if (!in_grid || newcomm == MPI_COMM_NULL) {
    *comm_cart = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  inherit_state(comm_old, newcomm);
  Topology t;
  t.kind = MPI_CART;
  t.dims.assign(dims, dims + ndims);
  t.periods.resize(ndims);
  for (int i = 0; i < ndims; ++i) t.periods[i] = periods[i] ? 1 : 0;
  state_of(newcomm)->topo = std::move(t);
  *comm_cart = newcomm;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cart_create)

extern "C" int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Cartdim_get";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_CART, &t)) return rc;
  if (!ndims) return fail(MPI_ERR_ARG, f, comm, "ndims is NULL");
  *ndims = static_cast<int>(t->dims.size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cartdim_get)

extern "C" int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Cart_get";
  const Topology* t = nullptr;
  int rank = 0;
  if (int rc = get_topo(comm, f, MPI_CART, &t, &rank)) return rc;
  const int n = static_cast<int>(t->dims.size());
  if (maxdims < n)
    return fail(MPI_ERR_ARG, f, comm, "maxdims %d is less than the number of dimensions (%d)", maxdims, n);
  if (n > 0 && (!dims || !periods || !coords))
    return fail(MPI_ERR_ARG, f, comm, "%s is NULL", !dims ? "dims" : !periods ? "periods" : "coords");
  for (int i = 0; i < n; ++i) {
    dims[i] = t->dims[i];
    periods[i] = t->periods[i];
  }
  if (n > 0) cart_coords(*t, rank, coords);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cart_get)

extern "C" int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Cart_rank";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_CART, &t)) return rc;
  if (!rank) return fail(MPI_ERR_ARG, f, comm, "rank is NULL");
  const size_t n = t->dims.size();
  if (n > 0 && !coords) return fail(MPI_ERR_ARG, f, comm, "coords is NULL");
  std::vector<int> c(n);
  for (size_t i = 0; i < n; ++i) {
    c[i] = coords[i];
    if (t->periods[i]) {
      c[i] = mod(c[i], t->dims[i]);
    } else if (c[i] < 0 || c[i] >= t->dims[i]) {
      return fail(MPI_ERR_RANK, f, comm, "coords[%zu] = %d out of range [0, %d) in a non-periodic dimension", i,
                  coords[i], t->dims[i]);
    }
  }
  *rank = cart_rank_of(*t, c.data());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cart_rank)

extern "C" int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Cart_coords";
  const Topology* t = nullptr;
  int size = 0;
  if (int rc = get_topo(comm, f, MPI_CART, &t, nullptr, &size)) return rc;
  if (rank < 0 || rank >= size) return fail(MPI_ERR_RANK, f, comm, "rank %d out of range [0, %d)", rank, size);
  const int n = static_cast<int>(t->dims.size());
  if (maxdims < n)
    return fail(MPI_ERR_ARG, f, comm, "maxdims %d is less than the number of dimensions (%d)", maxdims, n);
  if (n > 0 && !coords) return fail(MPI_ERR_ARG, f, comm, "coords is NULL");
  if (n > 0) cart_coords(*t, rank, coords);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cart_coords)

extern "C" int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Cart_shift";
  const Topology* t = nullptr;
  int rank = 0;
  if (int rc = get_topo(comm, f, MPI_CART, &t, &rank)) return rc;
  const int n = static_cast<int>(t->dims.size());
  if (direction < 0 || direction >= n)
    return fail(MPI_ERR_ARG, f, comm, "direction %d out of range [0, %d)", direction, n);
  if (!rank_source || !rank_dest)
    return fail(MPI_ERR_ARG, f, comm, "%s is NULL", !rank_source ? "rank_source" : "rank_dest");
  cart_shift(*t, rank, direction, disp, rank_source, rank_dest);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cart_shift)

extern "C" int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Cart_sub";
  const Topology* t = nullptr;
  int rank = 0;
  if (int rc = get_topo(comm, f, MPI_CART, &t, &rank)) return rc;
  if (!newcomm) return fail(MPI_ERR_ARG, f, comm, "newcomm is NULL");
  const size_t n = t->dims.size();
  if (n > 0 && !remain_dims) return fail(MPI_ERR_ARG, f, comm, "remain_dims is NULL");
  std::vector<int> c(n);
  cart_coords(*t, rank, c.data());
  // Ranks with the same coordinates in the dropped dimensions share a subgrid; rank order
  // (row-major over the grid) is row-major order within it.
  int64_t color = 0;
  Topology sub;
  sub.kind = MPI_CART;
  for (size_t i = 0; i < n; ++i) {
    if (remain_dims[i]) {
      sub.dims.push_back(t->dims[i]);
      sub.periods.push_back(t->periods[i]);
    } else {
      color = color * t->dims[i] + c[i];
    }
  }
  MPI_Comm nc = MPI_COMM_NULL;
  if (int rc = xmsg_comm_split(comm, static_cast<int>(color), rank, &nc)) return handle(rc, f, comm);
  inherit_state(comm, nc);
  state_of(nc)->topo = std::move(sub);
  *newcomm = nc;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cart_sub)

extern "C" int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Cart_map";
  int rank = 0, size = 0;
  if (int rc = check_intra(comm, f, &rank, &size)) return rc;
  if (!newrank) return fail(MPI_ERR_ARG, f, comm, "newrank is NULL");
  int64_t grid = 0;
  if (int rc = check_cart_args(f, comm, size, ndims, dims, periods, &grid)) return rc;
  *newrank = rank < grid ? rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Cart_map)

// ---- graph topologies ---------------------------------------------------------------------------

extern "C" int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                 MPI_Comm* comm_graph) {
  XMSG_MPI_ENTRY;
  (void)reorder;
  const char* f = "MPI_Graph_create";
  int rank = 0, size = 0;
  if (int rc = check_intra(comm_old, f, &rank, &size)) return rc;
  if (!comm_graph) return fail(MPI_ERR_ARG, f, comm_old, "comm_graph is NULL");
  if (int rc = check_graph_args(f, comm_old, size, nnodes, index, edges)) return rc;
  if (nnodes == 0) {  // the empty graph: MPI_COMM_NULL everywhere
    *comm_graph = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  const bool in_graph = rank < nnodes;
  MPI_Comm newcomm = MPI_COMM_NULL;
  if (int rc = xmsg_comm_split(comm_old, in_graph ? 0 : XMSG_UNDEFINED, rank, &newcomm))
    return handle(rc, f, comm_old);
  if (!in_graph || newcomm == MPI_COMM_NULL) {
    *comm_graph = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  inherit_state(comm_old, newcomm);
  Topology t;
  t.kind = MPI_GRAPH;
  t.index.assign(index, index + nnodes);
  t.edges.assign(edges, edges + index[nnodes - 1]);
  state_of(newcomm)->topo = std::move(t);
  *comm_graph = newcomm;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Graph_create)

extern "C" int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Graphdims_get";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_GRAPH, &t)) return rc;
  if (!nnodes || !nedges) return fail(MPI_ERR_ARG, f, comm, "%s is NULL", !nnodes ? "nnodes" : "nedges");
  *nnodes = static_cast<int>(t->index.size());
  *nedges = static_cast<int>(t->edges.size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Graphdims_get)

extern "C" int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Graph_get";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_GRAPH, &t)) return rc;
  if (maxindex < 0) return fail(MPI_ERR_ARG, f, comm, "maxindex %d is negative", maxindex);
  if (maxedges < 0) return fail(MPI_ERR_ARG, f, comm, "maxedges %d is negative", maxedges);
  const size_t ni = std::min(static_cast<size_t>(maxindex), t->index.size());
  const size_t ne = std::min(static_cast<size_t>(maxedges), t->edges.size());
  if (ni > 0 && !index) return fail(MPI_ERR_ARG, f, comm, "index is NULL");
  if (ne > 0 && !edges) return fail(MPI_ERR_ARG, f, comm, "edges is NULL");
  std::copy(t->index.begin(), t->index.begin() + ni, index);
  std::copy(t->edges.begin(), t->edges.begin() + ne, edges);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Graph_get)

extern "C" int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Graph_neighbors_count";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_GRAPH, &t)) return rc;
  const int n = static_cast<int>(t->index.size());
  if (rank < 0 || rank >= n) return fail(MPI_ERR_RANK, f, comm, "rank %d out of range [0, %d)", rank, n);
  if (!nneighbors) return fail(MPI_ERR_ARG, f, comm, "nneighbors is NULL");
  *nneighbors = t->index[rank] - (rank == 0 ? 0 : t->index[rank - 1]);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Graph_neighbors_count)

extern "C" int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Graph_neighbors";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_GRAPH, &t)) return rc;
  const int n = static_cast<int>(t->index.size());
  if (rank < 0 || rank >= n) return fail(MPI_ERR_RANK, f, comm, "rank %d out of range [0, %d)", rank, n);
  if (maxneighbors < 0) return fail(MPI_ERR_ARG, f, comm, "maxneighbors %d is negative", maxneighbors);
  std::vector<int> nb;
  graph_neighbours(*t, rank, &nb);
  const size_t count = std::min(static_cast<size_t>(maxneighbors), nb.size());
  if (count > 0 && !neighbors) return fail(MPI_ERR_ARG, f, comm, "neighbors is NULL");
  std::copy(nb.begin(), nb.begin() + count, neighbors);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Graph_neighbors)

extern "C" int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Graph_map";
  int rank = 0, size = 0;
  if (int rc = check_intra(comm, f, &rank, &size)) return rc;
  if (!newrank) return fail(MPI_ERR_ARG, f, comm, "newrank is NULL");
  if (int rc = check_graph_args(f, comm, size, nnodes, index, edges)) return rc;
  *newrank = rank < nnodes ? rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Graph_map)

// ---- distributed graph topologies ---------------------------------------------------------------

extern "C" int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                               const int sourceweights[], int outdegree, const int destinations[],
                                               const int destweights[], MPI_Info info, int reorder,
                                               MPI_Comm* comm_dist_graph) {
  XMSG_MPI_ENTRY;
  (void)info;
  (void)reorder;
  const char* f = "MPI_Dist_graph_create_adjacent";
  int rank = 0, size = 0;
  if (int rc = check_intra(comm_old, f, &rank, &size)) return rc;
  if (!comm_dist_graph) return fail(MPI_ERR_ARG, f, comm_old, "comm_dist_graph is NULL");
  if (indegree < 0) return fail(MPI_ERR_ARG, f, comm_old, "indegree %d is negative", indegree);
  if (outdegree < 0) return fail(MPI_ERR_ARG, f, comm_old, "outdegree %d is negative", outdegree);
  if (int rc = check_ranks(f, comm_old, "sources", sources, indegree, size)) return rc;
  if (int rc = check_ranks(f, comm_old, "destinations", destinations, outdegree, size)) return rc;
  // MPI_UNWEIGHTED on either side makes the graph unweighted (the standard asks for both).
  const bool weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
  if (weighted) {
    if (int rc = check_weights(f, comm_old, "sourceweights", sourceweights, indegree)) return rc;
    if (int rc = check_weights(f, comm_old, "destweights", destweights, outdegree)) return rc;
  }
  Topology t;
  t.weighted = weighted;
  t.sources.assign(sources, sources + indegree);
  t.destinations.assign(destinations, destinations + outdegree);
  if (weighted) {
    if (indegree > 0) t.source_weights.assign(sourceweights, sourceweights + indegree);
    if (outdegree > 0) t.dest_weights.assign(destweights, destweights + outdegree);
  }
  return make_dist_graph(f, comm_old, rank, std::move(t), comm_dist_graph);
}
XMSG_MPI_ALIAS(Dist_graph_create_adjacent)

extern "C" int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                      const int destinations[], const int weights[], MPI_Info info, int reorder,
                                      MPI_Comm* comm_dist_graph) {
  XMSG_MPI_ENTRY;
  (void)info;
  (void)reorder;
  const char* f = "MPI_Dist_graph_create";
  int rank = 0, size = 0;
  if (int rc = check_intra(comm_old, f, &rank, &size)) return rc;
  if (!comm_dist_graph) return fail(MPI_ERR_ARG, f, comm_old, "comm_dist_graph is NULL");
  if (n < 0) return fail(MPI_ERR_ARG, f, comm_old, "n %d is negative", n);
  if (int rc = check_ranks(f, comm_old, "sources", sources, n, size)) return rc;
  if (n > 0 && !degrees) return fail(MPI_ERR_ARG, f, comm_old, "degrees is NULL with n %d", n);
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (degrees[i] < 0) return fail(MPI_ERR_ARG, f, comm_old, "degrees[%d] = %d is negative", i, degrees[i]);
    total += degrees[i];
  }
  if (total > INT_MAX) return fail(MPI_ERR_ARG, f, comm_old, "the degrees add up to more than %d edges", INT_MAX);
  const int nedges = static_cast<int>(total);
  if (int rc = check_ranks(f, comm_old, "destinations", destinations, nedges, size)) return rc;
  const bool weighted = weights != MPI_UNWEIGHTED;
  if (weighted)
    if (int rc = check_weights(f, comm_old, "weights", weights, nedges)) return rc;

  // Each edge s -> d (weight w) tells s of an out-neighbour and d of an in-neighbour:
  // records (kind, other rank, weight), kind 0 = out-edge of the receiver, 1 = in-edge.
  std::vector<std::vector<int>> to(size);
  int e = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < degrees[i]; ++j, ++e) {
      const int s = sources[i], d = destinations[e], w = weighted ? weights[e] : 1;
      to[s].insert(to[s].end(), {0, d, w});
      to[d].insert(to[d].end(), {1, s, w});
    }
  }
  std::vector<int64_t> sendcounts(size), sdispls(size), recvcounts(size), rdispls(size);
  int64_t sendtotal = 0;
  for (int p = 0; p < size; ++p) {
    sendcounts[p] = static_cast<int64_t>(to[p].size());
    sdispls[p] = sendtotal;
    sendtotal += sendcounts[p];
  }
  if (int rc = xmsg_alltoall(sendcounts.data(), 1, XMSG_INT64_T, recvcounts.data(), 1, XMSG_INT64_T, comm_old))
    return handle(rc, f, comm_old);
  int64_t recvtotal = 0;
  for (int p = 0; p < size; ++p) {
    rdispls[p] = recvtotal;
    recvtotal += recvcounts[p];
  }
  std::vector<int> sendbuf(static_cast<size_t>(sendtotal) + 1), recvbuf(static_cast<size_t>(recvtotal) + 1);
  for (int p = 0; p < size; ++p) std::copy(to[p].begin(), to[p].end(), sendbuf.begin() + sdispls[p]);
  if (int rc = xmsg_alltoallv(sendbuf.data(), sendcounts.data(), sdispls.data(), XMSG_INT, recvbuf.data(),
                              recvcounts.data(), rdispls.data(), XMSG_INT, comm_old))
    return handle(rc, f, comm_old);

  // In the order the records came: by the rank that named the edge, then as it listed them.
  Topology t;
  t.weighted = weighted;
  for (int64_t i = 0; i + 3 <= recvtotal; i += 3) {
    const int kind = recvbuf[i], other = recvbuf[i + 1], w = recvbuf[i + 2];
    if (kind == 0) {
      t.destinations.push_back(other);
      if (weighted) t.dest_weights.push_back(w);
    } else {
      t.sources.push_back(other);
      if (weighted) t.source_weights.push_back(w);
    }
  }
  return make_dist_graph(f, comm_old, rank, std::move(t), comm_dist_graph);
}
XMSG_MPI_ALIAS(Dist_graph_create)

extern "C" int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Dist_graph_neighbors_count";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_DIST_GRAPH, &t)) return rc;
  if (!indegree || !outdegree || !weighted)
    return fail(MPI_ERR_ARG, f, comm, "%s is NULL", !indegree ? "indegree" : !outdegree ? "outdegree" : "weighted");
  *indegree = static_cast<int>(t->sources.size());
  *outdegree = static_cast<int>(t->destinations.size());
  *weighted = t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Dist_graph_neighbors_count)

extern "C" int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                         int maxoutdegree, int destinations[], int destweights[]) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Dist_graph_neighbors";
  const Topology* t = nullptr;
  if (int rc = get_topo(comm, f, MPI_DIST_GRAPH, &t)) return rc;
  if (maxindegree < 0) return fail(MPI_ERR_ARG, f, comm, "maxindegree %d is negative", maxindegree);
  if (maxoutdegree < 0) return fail(MPI_ERR_ARG, f, comm, "maxoutdegree %d is negative", maxoutdegree);
  const size_t ni = std::min(static_cast<size_t>(maxindegree), t->sources.size());
  const size_t no = std::min(static_cast<size_t>(maxoutdegree), t->destinations.size());
  if (ni > 0 && !sources) return fail(MPI_ERR_ARG, f, comm, "sources is NULL");
  if (no > 0 && !destinations) return fail(MPI_ERR_ARG, f, comm, "destinations is NULL");
  std::copy(t->sources.begin(), t->sources.begin() + ni, sources);
  std::copy(t->destinations.begin(), t->destinations.begin() + no, destinations);
  if (t->weighted) {
    if (!no_weights(sourceweights)) std::copy(t->source_weights.begin(), t->source_weights.begin() + ni, sourceweights);
    if (!no_weights(destweights)) std::copy(t->dest_weights.begin(), t->dest_weights.begin() + no, destweights);
  }
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Dist_graph_neighbors)

extern "C" int PMPI_Topo_test(MPI_Comm comm, int* status) {
  XMSG_MPI_ENTRY;
  const char* f = "MPI_Topo_test";
  if (int rc = check_comm(comm, f, nullptr, nullptr)) return rc;
  if (!status) return fail(MPI_ERR_ARG, f, comm, "status is NULL");
  CommState* st = state_of(comm);
  const int kind = st ? st->topo.kind : MPI_UNDEFINED;
  *status = (kind == MPI_CART || kind == MPI_GRAPH || kind == MPI_DIST_GRAPH) ? kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Topo_test)

// ---- neighborhood collectives -------------------------------------------------------------------

extern "C" int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  return neighbor_allgather("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, nullptr, Form::kBlocking);
}
XMSG_MPI_ALIAS(Neighbor_allgather)

extern "C" int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return neighbor_allgather("MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, request, Form::kNonblocking);
}
XMSG_MPI_ALIAS(Ineighbor_allgather)

extern "C" int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                        MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  return neighbor_allgatherv("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, comm, nullptr, Form::kBlocking);
}
XMSG_MPI_ALIAS(Neighbor_allgatherv)

extern "C" int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return neighbor_allgatherv("MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, comm, request, Form::kNonblocking);
}
XMSG_MPI_ALIAS(Ineighbor_allgatherv)

extern "C" int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  return neighbor_alltoall("MPI_Neighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           nullptr, Form::kBlocking);
}
XMSG_MPI_ALIAS(Neighbor_alltoall)

extern "C" int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return neighbor_alltoall("MPI_Ineighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm, request, Form::kNonblocking);
}
XMSG_MPI_ALIAS(Ineighbor_alltoall)

extern "C" int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  return neighbor_alltoallv("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm, nullptr, Form::kBlocking);
}
XMSG_MPI_ALIAS(Neighbor_alltoallv)

extern "C" int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                        MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return neighbor_alltoallv("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm, request, Form::kNonblocking);
}
XMSG_MPI_ALIAS(Ineighbor_alltoallv)

extern "C" int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  return neighbor_alltoallw("MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                            rdispls, recvtypes, comm, nullptr, Form::kBlocking);
}
XMSG_MPI_ALIAS(Neighbor_alltoallw)

extern "C" int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                        MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return neighbor_alltoallw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                            rdispls, recvtypes, comm, request, Form::kNonblocking);
}
XMSG_MPI_ALIAS(Ineighbor_alltoallw)

// MPI-4.0 persistent neighborhood collectives (the info argument carries no hint xmsg reads).
extern "C" int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return neighbor_allgather("MPI_Neighbor_allgather_init", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm, request, Form::kPersistent);
}
XMSG_MPI_ALIAS(Neighbor_allgather_init)

extern "C" int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                             void* recvbuf, const int recvcounts[], const int displs[],
                                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                             MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return neighbor_allgatherv("MPI_Neighbor_allgatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                             displs, recvtype, comm, request, Form::kPersistent);
}
XMSG_MPI_ALIAS(Neighbor_allgatherv_init)

extern "C" int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                           MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return neighbor_alltoall("MPI_Neighbor_alltoall_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm, request, Form::kPersistent);
}
XMSG_MPI_ALIAS(Neighbor_alltoall_init)

extern "C" int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return neighbor_alltoallv("MPI_Neighbor_alltoallv_init", sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                            recvcounts, rdispls, recvtype, comm, request, Form::kPersistent);
}
XMSG_MPI_ALIAS(Neighbor_alltoallv_init)

extern "C" int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                            MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return neighbor_alltoallw("MPI_Neighbor_alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                            recvcounts, rdispls, recvtypes, comm, request, Form::kPersistent);
}
XMSG_MPI_ALIAS(Neighbor_alltoallw_init)
