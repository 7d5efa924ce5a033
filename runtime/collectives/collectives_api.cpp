// The C entry points of the collectives: argument checks (every error names the argument),
// XMSG_IN_PLACE handling, conversion to bytes, then the algorithm from the selection table.
#include <algorithm>
#include <cinttypes>

#include "algorithm_selection.hpp"
#include "coll.hpp"
#include "xmsg_internal.h"

using namespace xmsg::coll;

namespace {

int check_count(const char* func, const char* arg, int64_t count) {
  if (count < 0) return fail(XMSG_ERR_COUNT, "%s: %s %" PRId64 " is negative", func, arg, count);
  return XMSG_SUCCESS;
}

int check_buffer(const char* func, const char* arg, const void* buf, int64_t count) {
  if (!buf && count > 0)
    return fail(XMSG_ERR_BUFFER, "%s: %s is NULL with %" PRId64 " elements", func, arg, count);
  return XMSG_SUCCESS;
}

int check_not_in_place(const char* func, const char* arg, const void* buf) {
  if (buf == XMSG_IN_PLACE) return fail(XMSG_ERR_BUFFER, "%s: %s cannot be XMSG_IN_PLACE here", func, arg);
  return XMSG_SUCCESS;
}

int check_root(const char* func, int root, const Comm& c) {
  if (root < 0 || root >= c.size)
    return fail(XMSG_ERR_ROOT, "%s: root %d out of range [0, %d)", func, root, c.size);
  return XMSG_SUCCESS;
}

// A counts/displacements array of comm-size entries: present, counts not negative.
int check_array(const char* func, const char* arg, const int64_t* values, const Comm& c, bool counts) {
  if (!values) return fail(XMSG_ERR_ARG, "%s: %s is NULL", func, arg);
  for (int i = 0; i < c.size; ++i) {
    if (values[i] < 0)
      return fail(counts ? XMSG_ERR_COUNT : XMSG_ERR_ARG, "%s: %s[%d] = %" PRId64 " is negative", func, arg, i,
                  values[i]);
  }
  return XMSG_SUCCESS;
}

// Each rank's block in bytes, from element counts and displacements. One-byte elements are
// bytes already: the caller's own tables, not a copy.
struct ByteLayout {
  ByteLayout(int n, const int64_t* c, const int64_t* d, size_t elem) : counts(c), displs(d) {
    if (elem == 1) return;
    store.resize(2 * n * static_cast<int64_t>(sizeof(int64_t)));
    auto* own = reinterpret_cast<int64_t*>(store.get());
    for (int i = 0; i < n; ++i) {
      own[i] = c[i] * static_cast<int64_t>(elem);
      own[n + i] = d[i] * static_cast<int64_t>(elem);
    }
    counts = own;
    displs = own + n;
  }
  Scratch store;
  const int64_t* counts;
  const int64_t* displs;
};

bool any_positive(const int64_t* values, int n) {
  for (int i = 0; i < n; ++i)
    if (values[i] > 0) return true;
  return false;
}

// One side (send or receive) of a rooted or all-to-all collective: count, type, optionally "not
// XMSG_IN_PLACE", then buffer, in that order so the first bad argument is the one reported.
struct Side {
  const char* buf;
  const char* count;
  const char* type;
};
constexpr Side kSendSide{"sendbuf", "sendcount", "sendtype"};
constexpr Side kRecvSide{"recvbuf", "recvcount", "recvtype"};

int check_side(const char* func, const Side& side, const void* buf, int64_t count, xmsg_datatype_t type,
               size_t* elem_size, bool reject_in_place) {
  if (int e = check_count(func, side.count, count)) return e;
  if (int e = check_type(type, func, side.type, elem_size)) return e;
  if (reject_in_place)
    if (int e = check_not_in_place(func, side.buf, buf)) return e;
  return check_buffer(func, side.buf, buf, count);
}

int check_match(const char* func, int64_t send_bytes, int64_t recv_bytes) {
  if (send_bytes != recv_bytes)
    return fail(XMSG_ERR_COUNT, "%s: sendcount * size of sendtype (%" PRId64 " bytes) != recvcount * size of recvtype (%" PRId64 " bytes)",
                func, send_bytes, recv_bytes);
  return XMSG_SUCCESS;
}

}  // namespace

// xmsgi_guard for a collective: its algorithm runs under a SizeDisagreement (coll.hpp), so
// ranks that passed different counts all finish the schedule and return XMSG_ERR_TRUNCATE.
// A rank that passes no data still runs the algorithm (with empty blocks): returning at once
// left a peer that passed data waiting for it forever, and put the ranks' collective numbers
// out of step for every later call. A correct program pays one small collective for it.
template <class Body>
int collective(const char* func, Body&& body) {
  return xmsgi_guard(func, [&]() -> int { return run_noting_disagreement(body); });
}

#define XMSG_TRY(expr)          \
  do {                          \
    if (int e_ = (expr)) return e_; \
  } while (0)

extern "C" {

int xmsg_barrier(xmsg_comm_t comm) {
  return collective("xmsg_barrier", [&]() -> int {
    Comm c;
    XMSG_TRY(check_comm(comm, "xmsg_barrier", &c));
    if (c.size == 1) return XMSG_SUCCESS;
    return run_barrier(c);
  });
}

int xmsg_bcast(void* buf, int64_t count, xmsg_datatype_t datatype, int root, xmsg_comm_t comm) {
  return collective("xmsg_bcast", [&]() -> int {
    const char* f = "xmsg_bcast";
    Comm c;
    size_t es = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_count(f, "count", count));
    XMSG_TRY(check_type(datatype, f, "datatype", &es));
    XMSG_TRY(check_root(f, root, c));
    XMSG_TRY(check_not_in_place(f, "buf", buf));
    XMSG_TRY(check_buffer(f, "buf", buf, count));
    const int64_t bytes = count * static_cast<int64_t>(es);
    if (c.size == 1) return XMSG_SUCCESS;
    return run_bcast(c, buf, bytes, root);
  });
}

int xmsg_reduce(const void* sendbuf, void* recvbuf, int64_t count, xmsg_datatype_t datatype, xmsg_op_t op, int root,
                xmsg_comm_t comm) {
  return collective("xmsg_reduce", [&]() -> int {
    const char* f = "xmsg_reduce";
    Comm c;
    size_t es = 0;
    ReduceOp rop;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_count(f, "count", count));
    XMSG_TRY(check_type(datatype, f, "datatype", &es));
    XMSG_TRY(resolve_op(op, datatype, es, f, &rop));
    XMSG_TRY(check_root(f, root, c));
    const bool is_root = c.rank == root;
    if (!is_root) XMSG_TRY(check_not_in_place(f, "sendbuf (on a rank other than the root)", sendbuf));
    XMSG_TRY(check_buffer(f, "sendbuf", sendbuf, count));
    if (is_root) {
      XMSG_TRY(check_not_in_place(f, "recvbuf", recvbuf));
      XMSG_TRY(check_buffer(f, "recvbuf", recvbuf, count));
    }
    const void* input = sendbuf == XMSG_IN_PLACE ? recvbuf : sendbuf;
    if (c.size == 1) {
      copy_bytes(recvbuf, input, count * static_cast<int64_t>(es));
      return XMSG_SUCCESS;
    }
    return run_reduce(c, input, recvbuf, count, rop, root);
  });
}

int xmsg_allreduce(const void* sendbuf, void* recvbuf, int64_t count, xmsg_datatype_t datatype, xmsg_op_t op,
                   xmsg_comm_t comm) {
  return collective("xmsg_allreduce", [&]() -> int {
    const char* f = "xmsg_allreduce";
    Comm c;
    size_t es = 0;
    ReduceOp rop;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_count(f, "count", count));
    XMSG_TRY(check_type(datatype, f, "datatype", &es));
    XMSG_TRY(resolve_op(op, datatype, es, f, &rop));
    XMSG_TRY(check_buffer(f, "sendbuf", sendbuf, count));
    XMSG_TRY(check_not_in_place(f, "recvbuf", recvbuf));
    XMSG_TRY(check_buffer(f, "recvbuf", recvbuf, count));
    const void* input = sendbuf == XMSG_IN_PLACE ? recvbuf : sendbuf;
    if (c.size == 1) {
      copy_bytes(recvbuf, input, count * static_cast<int64_t>(es));
      return XMSG_SUCCESS;
    }
    return run_allreduce(c, input, recvbuf, count, rop);
  });
}

int xmsg_reduce_scatter(const void* sendbuf, void* recvbuf, const int64_t recvcounts[], xmsg_datatype_t datatype,
                        xmsg_op_t op, xmsg_comm_t comm) {
  return collective("xmsg_reduce_scatter", [&]() -> int {
    const char* f = "xmsg_reduce_scatter";
    Comm c;
    size_t es = 0;
    ReduceOp rop;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_array(f, "recvcounts", recvcounts, c, true));
    XMSG_TRY(check_type(datatype, f, "datatype", &es));
    XMSG_TRY(resolve_op(op, datatype, es, f, &rop));
    int64_t total = 0;
    for (int j = 0; j < c.size; ++j) total += recvcounts[j];
    XMSG_TRY(check_not_in_place(f, "recvbuf", recvbuf));
    const bool in_place = sendbuf == XMSG_IN_PLACE;
    XMSG_TRY(check_buffer(f, in_place ? "recvbuf" : "sendbuf", in_place ? recvbuf : sendbuf, total));
    XMSG_TRY(check_buffer(f, "recvbuf", recvbuf, recvcounts[c.rank]));
    const int64_t bytes_es = static_cast<int64_t>(es);
    if (c.size == 1) {
      if (!in_place) copy_bytes(recvbuf, sendbuf, total * bytes_es);
      return XMSG_SUCCESS;
    }
    // In place the vector would be overwritten by our segment while peers still read it.
    Scratch input_copy;
    if (in_place) {
      input_copy.resize(total * bytes_es);
      copy_bytes(input_copy.get(), recvbuf, total * bytes_es);
      sendbuf = input_copy.get();
    }
    return run_reduce_scatter(c, sendbuf, recvbuf, recvcounts, rop);
  });
}

int xmsg_gather(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf, int64_t recvcount,
                xmsg_datatype_t recvtype, int root, xmsg_comm_t comm) {
  return collective("xmsg_gather", [&]() -> int {
    const char* f = "xmsg_gather";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    const bool is_root = c.rank == root, in_place = is_root && sendbuf == XMSG_IN_PLACE;
    if (!in_place) {
      XMSG_TRY(check_not_in_place(f, "sendbuf (on a rank other than the root)", sendbuf));
      XMSG_TRY(check_side(f, kSendSide, sendbuf, sendcount, sendtype, &ses, false));
    }
    int64_t block = sendcount * static_cast<int64_t>(ses);
    if (is_root) {
      XMSG_TRY(check_side(f, kRecvSide, recvbuf, recvcount, recvtype, &res, true));
      if (!in_place) XMSG_TRY(check_match(f, block, recvcount * static_cast<int64_t>(res)));
      block = recvcount * static_cast<int64_t>(res);
    }
    if (c.size == 1) {
      if (!in_place) copy_bytes(recvbuf, sendbuf, block);
      return XMSG_SUCCESS;
    }
    return run_gather(c, sendbuf, recvbuf, block, root);
  });
}

int xmsg_gatherv(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                 const int64_t recvcounts[], const int64_t displs[], xmsg_datatype_t recvtype, int root,
                 xmsg_comm_t comm) {
  return collective("xmsg_gatherv", [&]() -> int {
    const char* f = "xmsg_gatherv";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    const bool is_root = c.rank == root, in_place = is_root && sendbuf == XMSG_IN_PLACE;
    if (!in_place) {
      XMSG_TRY(check_not_in_place(f, "sendbuf (on a rank other than the root)", sendbuf));
      XMSG_TRY(check_side(f, kSendSide, sendbuf, sendcount, sendtype, &ses, false));
    }
    const int64_t send_bytes = sendcount * static_cast<int64_t>(ses);
    if (!is_root) return gatherv_linear(c, sendbuf, send_bytes, nullptr, nullptr, nullptr, root);
    XMSG_TRY(check_array(f, "recvcounts", recvcounts, c, true));
    XMSG_TRY(check_array(f, "displs", displs, c, false));
    XMSG_TRY(check_type(recvtype, f, "recvtype", &res));
    XMSG_TRY(check_not_in_place(f, "recvbuf", recvbuf));
    if (!recvbuf && any_positive(recvcounts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: recvbuf is NULL with recvcounts not all zero", f);
    ByteLayout layout(c.size, recvcounts, displs, res);
    if (!in_place) XMSG_TRY(check_match(f, send_bytes, layout.counts[root]));
    return gatherv_linear(c, sendbuf, send_bytes, recvbuf, layout.counts, layout.displs, root);
  });
}

int xmsg_scatter(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf, int64_t recvcount,
                 xmsg_datatype_t recvtype, int root, xmsg_comm_t comm) {
  return collective("xmsg_scatter", [&]() -> int {
    const char* f = "xmsg_scatter";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    const bool is_root = c.rank == root, in_place = is_root && recvbuf == XMSG_IN_PLACE;
    if (!in_place) {
      XMSG_TRY(check_not_in_place(f, "recvbuf (on a rank other than the root)", recvbuf));
      XMSG_TRY(check_side(f, kRecvSide, recvbuf, recvcount, recvtype, &res, false));
    }
    int64_t block = recvcount * static_cast<int64_t>(res);
    if (is_root) {
      XMSG_TRY(check_side(f, kSendSide, sendbuf, sendcount, sendtype, &ses, true));
      if (!in_place) XMSG_TRY(check_match(f, sendcount * static_cast<int64_t>(ses), block));
      block = sendcount * static_cast<int64_t>(ses);
    }
    if (c.size == 1) {
      if (!in_place) copy_bytes(recvbuf, sendbuf, block);
      return XMSG_SUCCESS;
    }
    return run_scatter(c, sendbuf, recvbuf, block, root);
  });
}

int xmsg_scatterv(const void* sendbuf, const int64_t sendcounts[], const int64_t displs[], xmsg_datatype_t sendtype,
                  void* recvbuf, int64_t recvcount, xmsg_datatype_t recvtype, int root, xmsg_comm_t comm) {
  return collective("xmsg_scatterv", [&]() -> int {
    const char* f = "xmsg_scatterv";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    const bool is_root = c.rank == root, in_place = is_root && recvbuf == XMSG_IN_PLACE;
    if (!in_place) {
      XMSG_TRY(check_not_in_place(f, "recvbuf (on a rank other than the root)", recvbuf));
      XMSG_TRY(check_side(f, kRecvSide, recvbuf, recvcount, recvtype, &res, false));
    }
    const int64_t recv_bytes = recvcount * static_cast<int64_t>(res);
    if (!is_root) return scatterv_linear(c, nullptr, nullptr, nullptr, recvbuf, recv_bytes, root);
    XMSG_TRY(check_array(f, "sendcounts", sendcounts, c, true));
    XMSG_TRY(check_array(f, "displs", displs, c, false));
    XMSG_TRY(check_type(sendtype, f, "sendtype", &ses));
    XMSG_TRY(check_not_in_place(f, "sendbuf", sendbuf));
    if (!sendbuf && any_positive(sendcounts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: sendbuf is NULL with sendcounts not all zero", f);
    ByteLayout layout(c.size, sendcounts, displs, ses);
    if (!in_place) XMSG_TRY(check_match(f, layout.counts[root], recv_bytes));
    return scatterv_linear(c, sendbuf, layout.counts, layout.displs, recvbuf, recv_bytes, root);
  });
}

int xmsg_allgather(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf, int64_t recvcount,
                   xmsg_datatype_t recvtype, xmsg_comm_t comm) {
  return collective("xmsg_allgather", [&]() -> int {
    const char* f = "xmsg_allgather";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_side(f, kRecvSide, recvbuf, recvcount, recvtype, &res, true));
    const int64_t block = recvcount * static_cast<int64_t>(res);
    const bool in_place = sendbuf == XMSG_IN_PLACE;
    if (!in_place) {
      XMSG_TRY(check_side(f, kSendSide, sendbuf, sendcount, sendtype, &ses, false));
      XMSG_TRY(check_match(f, sendcount * static_cast<int64_t>(ses), block));
    }
    if (c.size == 1) {
      if (!in_place) copy_bytes(at(recvbuf, c.rank * block), sendbuf, block);
      return XMSG_SUCCESS;
    }
    return run_allgather(c, in_place ? nullptr : sendbuf, recvbuf, block);
  });
}

int xmsg_allgatherv(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                    const int64_t recvcounts[], const int64_t displs[], xmsg_datatype_t recvtype, xmsg_comm_t comm) {
  return collective("xmsg_allgatherv", [&]() -> int {
    const char* f = "xmsg_allgatherv";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_array(f, "recvcounts", recvcounts, c, true));
    XMSG_TRY(check_array(f, "displs", displs, c, false));
    XMSG_TRY(check_type(recvtype, f, "recvtype", &res));
    XMSG_TRY(check_not_in_place(f, "recvbuf", recvbuf));
    if (!recvbuf && any_positive(recvcounts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: recvbuf is NULL with recvcounts not all zero", f);
    ByteLayout layout(c.size, recvcounts, displs, res);
    const bool in_place = sendbuf == XMSG_IN_PLACE;
    if (!in_place) {
      XMSG_TRY(check_side(f, kSendSide, sendbuf, sendcount, sendtype, &ses, false));
      XMSG_TRY(check_match(f, sendcount * static_cast<int64_t>(ses), layout.counts[c.rank]));
      copy_bytes(at(recvbuf, layout.displs[c.rank]), sendbuf, layout.counts[c.rank]);
    }
    if (c.size == 1) return XMSG_SUCCESS;
    return allgatherv_ring(c, recvbuf, layout.counts, layout.displs);
  });
}

int xmsg_alltoall(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf, int64_t recvcount,
                  xmsg_datatype_t recvtype, xmsg_comm_t comm) {
  return collective("xmsg_alltoall", [&]() -> int {
    const char* f = "xmsg_alltoall";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_side(f, kRecvSide, recvbuf, recvcount, recvtype, &res, true));
    const int64_t block = recvcount * static_cast<int64_t>(res);
    const bool in_place = sendbuf == XMSG_IN_PLACE;
    if (!in_place) {
      XMSG_TRY(check_side(f, kSendSide, sendbuf, sendcount, sendtype, &ses, false));
      XMSG_TRY(check_match(f, sendcount * static_cast<int64_t>(ses), block));
    }
    Scratch copy;
    if (in_place) {
      copy.resize(block * c.size);
      copy_bytes(copy.get(), recvbuf, block * c.size);
      sendbuf = copy.get();
    }
    if (c.size == 1) {
      copy_bytes(recvbuf, sendbuf, block);
      return XMSG_SUCCESS;
    }
    return run_alltoall(c, sendbuf, recvbuf, block);
  });
}

int xmsg_alltoallv(const void* sendbuf, const int64_t sendcounts[], const int64_t sdispls[], xmsg_datatype_t sendtype,
                   void* recvbuf, const int64_t recvcounts[], const int64_t rdispls[], xmsg_datatype_t recvtype,
                   xmsg_comm_t comm) {
  return collective("xmsg_alltoallv", [&]() -> int {
    const char* f = "xmsg_alltoallv";
    Comm c;
    size_t ses = 0, res = 0;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_array(f, "recvcounts", recvcounts, c, true));
    XMSG_TRY(check_array(f, "rdispls", rdispls, c, false));
    XMSG_TRY(check_type(recvtype, f, "recvtype", &res));
    XMSG_TRY(check_not_in_place(f, "recvbuf", recvbuf));
    if (!recvbuf && any_positive(recvcounts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: recvbuf is NULL with recvcounts not all zero", f);
    ByteLayout recv_layout(c.size, recvcounts, rdispls, res);
    const bool in_place = sendbuf == XMSG_IN_PLACE;
    Scratch copy;
    if (in_place) {
      // The send layout is the receive layout; work from a copy of the receive buffer.
      int64_t extent = 0;
      for (int i = 0; i < c.size; ++i)
        if (recv_layout.counts[i] > 0) extent = std::max(extent, recv_layout.displs[i] + recv_layout.counts[i]);
      copy.resize(extent);
      copy_bytes(copy.get(), recvbuf, extent);
      return run_alltoallv(c, copy.get(), recv_layout.counts, recv_layout.displs, recvbuf, recv_layout.counts,
                           recv_layout.displs);
    }
    XMSG_TRY(check_array(f, "sendcounts", sendcounts, c, true));
    XMSG_TRY(check_array(f, "sdispls", sdispls, c, false));
    XMSG_TRY(check_type(sendtype, f, "sendtype", &ses));
    if (!sendbuf && any_positive(sendcounts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: sendbuf is NULL with sendcounts not all zero", f);
    ByteLayout send_layout(c.size, sendcounts, sdispls, ses);
    if (send_layout.counts[c.rank] != recv_layout.counts[c.rank])
      return fail(XMSG_ERR_COUNT, "%s: sendcounts[%d] and recvcounts[%d] describe different byte counts", f, c.rank,
                  c.rank);
    return run_alltoallv(c, sendbuf, send_layout.counts, send_layout.displs, recvbuf, recv_layout.counts,
                         recv_layout.displs);
  });
}

}  // extern "C"

// ---- the same on buffers laid out by MPI datatypes (xmsg_internal.h) ---------------------

namespace {

Src source_of(const void* buf, const xmsgi_layout* layout) { return layout ? Src::laid(layout) : Src(buf); }
Dst destination_of(void* buf, const xmsgi_layout* layout) { return layout ? Dst::laid(layout) : Dst(buf); }

// A plain buffer's checks; a laid one was checked by the MPI layer when it built the layout.
int check_laid(const char* func, const char* arg, const void* buf, const xmsgi_layout* layout, int64_t bytes,
               bool reject_in_place) {
  if (layout) return XMSG_SUCCESS;
  if (reject_in_place)
    if (int e = check_not_in_place(func, arg, buf)) return e;
  return check_buffer(func, arg, buf, bytes);
}

}  // namespace

int xmsgi_bcast_laid(void* buf, const xmsgi_layout* layout, int64_t bytes, int root, xmsg_comm_t comm) {
  return collective("xmsg_bcast", [&]() -> int {
    const char* f = "xmsg_bcast";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_count(f, "count", bytes));
    XMSG_TRY(check_root(f, root, c));
    XMSG_TRY(check_laid(f, "buf", buf, layout, bytes, true));
    if (c.size == 1) return XMSG_SUCCESS;
    return run_bcast(c, destination_of(buf, layout), bytes, root);
  });
}

int xmsgi_alltoall_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                        const xmsgi_layout* recv_layout, int64_t block, xmsg_comm_t comm) {
  return collective("xmsg_alltoall", [&]() -> int {
    const char* f = "xmsg_alltoall";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_count(f, "recvcount", block));
    XMSG_TRY(check_laid(f, "sendbuf", sendbuf, send_layout, block, true));
    XMSG_TRY(check_laid(f, "recvbuf", recvbuf, recv_layout, block, true));
    const Src send = source_of(sendbuf, send_layout);
    const Dst recv = destination_of(recvbuf, recv_layout);
    if (c.size == 1) {
      copy_bytes(recv, send, block);
      return XMSG_SUCCESS;
    }
    return run_alltoall(c, send, recv, block);
  });
}

int xmsgi_allgather_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                         const xmsgi_layout* recv_layout, int64_t block, xmsg_comm_t comm) {
  return collective("xmsg_allgather", [&]() -> int {
    const char* f = "xmsg_allgather";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_count(f, "recvcount", block));
    XMSG_TRY(check_laid(f, "recvbuf", recvbuf, recv_layout, block, true));
    const bool in_place = !send_layout && sendbuf == XMSG_IN_PLACE;
    if (!in_place) XMSG_TRY(check_laid(f, "sendbuf", sendbuf, send_layout, block, false));
    const Src send = in_place ? Src(nullptr) : source_of(sendbuf, send_layout);
    const Dst recv = destination_of(recvbuf, recv_layout);
    if (c.size == 1) {
      if (!in_place) copy_bytes(recv, send, block);
      return XMSG_SUCCESS;
    }
    return run_allgather(c, send, recv, block);
  });
}

int xmsgi_gather_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                      const xmsgi_layout* recv_layout, int64_t block, int root, xmsg_comm_t comm) {
  return collective("xmsg_gather", [&]() -> int {
    const char* f = "xmsg_gather";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    XMSG_TRY(check_count(f, "sendcount", block));
    const bool is_root = c.rank == root, in_place = is_root && !send_layout && sendbuf == XMSG_IN_PLACE;
    if (!in_place) XMSG_TRY(check_laid(f, "sendbuf", sendbuf, send_layout, block, true));
    if (is_root) XMSG_TRY(check_laid(f, "recvbuf", recvbuf, recv_layout, block, true));
    const Src send = source_of(sendbuf, send_layout);
    const Dst recv = is_root ? destination_of(recvbuf, recv_layout) : Dst(nullptr);
    if (c.size == 1) {
      if (!in_place) copy_bytes(recv, send, block);
      return XMSG_SUCCESS;
    }
    return run_gather(c, send, recv, block, root);
  });
}

int xmsgi_scatter_laid(const void* sendbuf, const xmsgi_layout* send_layout, void* recvbuf,
                       const xmsgi_layout* recv_layout, int64_t block, int root, xmsg_comm_t comm) {
  return collective("xmsg_scatter", [&]() -> int {
    const char* f = "xmsg_scatter";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    XMSG_TRY(check_count(f, "recvcount", block));
    const bool is_root = c.rank == root, in_place = is_root && !recv_layout && recvbuf == XMSG_IN_PLACE;
    if (!in_place) XMSG_TRY(check_laid(f, "recvbuf", recvbuf, recv_layout, block, true));
    if (is_root) XMSG_TRY(check_laid(f, "sendbuf", sendbuf, send_layout, block, true));
    const Src send = is_root ? source_of(sendbuf, send_layout) : Src(nullptr);
    const Dst recv = destination_of(recvbuf, recv_layout);
    if (c.size == 1) {
      if (!in_place) copy_bytes(recv, send, block);
      return XMSG_SUCCESS;
    }
    return run_scatter(c, send, recv, block, root);
  });
}

int xmsgi_gatherv_laid(const void* sendbuf, const xmsgi_layout* send_layout, int64_t sendbytes, void* recvbuf,
                       const xmsgi_layout* recv_layout, const int64_t* counts, const int64_t* displs, int root,
                       xmsg_comm_t comm) {
  return collective("xmsg_gatherv", [&]() -> int {
    const char* f = "xmsg_gatherv";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    XMSG_TRY(check_count(f, "sendcount", sendbytes));
    const bool is_root = c.rank == root, in_place = is_root && !send_layout && sendbuf == XMSG_IN_PLACE;
    if (!in_place) XMSG_TRY(check_laid(f, "sendbuf", sendbuf, send_layout, sendbytes, true));
    const Src send = source_of(sendbuf, send_layout);
    if (!is_root) return gatherv_linear(c, send, sendbytes, nullptr, nullptr, nullptr, root);
    XMSG_TRY(check_array(f, "recvcounts", counts, c, true));
    XMSG_TRY(check_array(f, "displs", displs, c, false));
    if (!recv_layout && !recvbuf && any_positive(counts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: recvbuf is NULL with recvcounts not all zero", f);
    if (!in_place) XMSG_TRY(check_match(f, sendbytes, counts[root]));
    return gatherv_linear(c, send, sendbytes, destination_of(recvbuf, recv_layout), counts, displs, root);
  });
}

int xmsgi_scatterv_laid(const void* sendbuf, const xmsgi_layout* send_layout, const int64_t* counts,
                        const int64_t* displs, void* recvbuf, const xmsgi_layout* recv_layout, int64_t recvbytes,
                        int root, xmsg_comm_t comm) {
  return collective("xmsg_scatterv", [&]() -> int {
    const char* f = "xmsg_scatterv";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_root(f, root, c));
    XMSG_TRY(check_count(f, "recvcount", recvbytes));
    const bool is_root = c.rank == root, in_place = is_root && !recv_layout && recvbuf == XMSG_IN_PLACE;
    if (!in_place) XMSG_TRY(check_laid(f, "recvbuf", recvbuf, recv_layout, recvbytes, true));
    const Dst recv = destination_of(recvbuf, recv_layout);
    if (!is_root) return scatterv_linear(c, nullptr, nullptr, nullptr, recv, recvbytes, root);
    XMSG_TRY(check_array(f, "sendcounts", counts, c, true));
    XMSG_TRY(check_array(f, "displs", displs, c, false));
    if (!send_layout && !sendbuf && any_positive(counts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: sendbuf is NULL with sendcounts not all zero", f);
    if (!in_place) XMSG_TRY(check_match(f, counts[root], recvbytes));
    return scatterv_linear(c, source_of(sendbuf, send_layout), counts, displs, recv, recvbytes, root);
  });
}

int xmsgi_allgatherv_laid(const void* sendbuf, const xmsgi_layout* send_layout, int64_t sendbytes, void* recvbuf,
                          const xmsgi_layout* recv_layout, const int64_t* counts, const int64_t* displs,
                          xmsg_comm_t comm) {
  return collective("xmsg_allgatherv", [&]() -> int {
    const char* f = "xmsg_allgatherv";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_array(f, "recvcounts", counts, c, true));
    XMSG_TRY(check_array(f, "displs", displs, c, false));
    if (!recv_layout && !recvbuf && any_positive(counts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: recvbuf is NULL with recvcounts not all zero", f);
    const Dst recv = destination_of(recvbuf, recv_layout);
    if (send_layout || sendbuf != XMSG_IN_PLACE) {
      XMSG_TRY(check_count(f, "sendcount", sendbytes));
      XMSG_TRY(check_laid(f, "sendbuf", sendbuf, send_layout, sendbytes, false));
      XMSG_TRY(check_match(f, sendbytes, counts[c.rank]));
      copy_bytes(at(recv, displs[c.rank]), source_of(sendbuf, send_layout), counts[c.rank]);
    }
    if (c.size == 1) return XMSG_SUCCESS;
    return allgatherv_ring(c, recv, counts, displs);
  });
}

int xmsgi_alltoallv_laid(const void* sendbuf, const xmsgi_layout* send_layout, const int64_t* sendcounts,
                         const int64_t* sdispls, void* recvbuf, const xmsgi_layout* recv_layout,
                         const int64_t* recvcounts, const int64_t* rdispls, xmsg_comm_t comm) {
  return collective("xmsg_alltoallv", [&]() -> int {
    const char* f = "xmsg_alltoallv";
    Comm c;
    XMSG_TRY(check_comm(comm, f, &c));
    XMSG_TRY(check_array(f, "sendcounts", sendcounts, c, true));
    XMSG_TRY(check_array(f, "sdispls", sdispls, c, false));
    XMSG_TRY(check_array(f, "recvcounts", recvcounts, c, true));
    XMSG_TRY(check_array(f, "rdispls", rdispls, c, false));
    if (!send_layout) XMSG_TRY(check_not_in_place(f, "sendbuf", sendbuf));
    if (!recv_layout) XMSG_TRY(check_not_in_place(f, "recvbuf", recvbuf));
    if (!send_layout && !sendbuf && any_positive(sendcounts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: sendbuf is NULL with sendcounts not all zero", f);
    if (!recv_layout && !recvbuf && any_positive(recvcounts, c.size))
      return fail(XMSG_ERR_BUFFER, "%s: recvbuf is NULL with recvcounts not all zero", f);
    if (sendcounts[c.rank] != recvcounts[c.rank])
      return fail(XMSG_ERR_COUNT, "%s: sendcounts[%d] and recvcounts[%d] describe different byte counts", f, c.rank,
                  c.rank);
    return run_alltoallv(c, source_of(sendbuf, send_layout), sendcounts, sdispls, destination_of(recvbuf, recv_layout),
                         recvcounts, rdispls);
  });
}
