// MPI-3.1 chapter 5, blocking collectives, and reduction ops. On an intracommunicator the
// common collectives run the runtime's own algorithms (tuned per node and size): a datatype
// the C API does not know is staged locally (packed into, or unpacked from, contiguous bytes)
// around the same runtime call, so every rank runs the same algorithm whatever types it passed
// (MPI lets ranks use different types of the same signature). Collectives the runtime has no
// call for, and every collective on an intercommunicator, run as schedules.
#include "coll_schedules.hpp"

#include <climits>
#include <cstring>

namespace xmsg::mpi {
void register_user_function(MPI_Op op, MPI_User_function* fn);

namespace {

// Intercommunicator collectives run their non-blocking form to completion.
int finish(int code, MPI_Request* request) {
  if (code != MPI_SUCCESS) return code;
  return PMPI_Wait(request, MPI_STATUS_IGNORE);
}
#define XMSG_INTER(call)                        \
  if (is_inter(comm)) {                         \
    MPI_Request inter_request = MPI_REQUEST_NULL; \
    return finish(call, &inter_request);        \
  }

// MPI_Alltoallv's answer when alltoallv_predefined leaves the call to the general path.
constexpr int kNotTaken = -1;  // MPI error codes are >= 0

// MPI_Alltoallv of predefined types on an intracommunicator, not in place, with valid tables:
// straight to the runtime, the tables widened to int64_t in one pass that also checks them.
// Anything else, every error included, is kNotTaken and the general path checks and reports
// it. (Checking the communicator, both types and both count tables apart, then widening,
// was a fifth of a 2-rank alltoallv of a few bytes: 0.29 against alltoall's 0.20 us.)
int alltoallv_predefined(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm) {
  if (sendbuf == MPI_IN_PLACE || !is_xmsg_type(sendtype) || !is_xmsg_type(recvtype)) return kNotTaken;
  if (!sendcounts || !sdispls || !recvcounts || !rdispls) return kNotTaken;
  int size = 0;
  if (xmsg_comm_size(comm, &size) != XMSG_SUCCESS) return kNotTaken;
  // Four tables, on the stack for small communicators (a heap allocation each was a sixth of
  // the same call).
  constexpr int kOnStack = 16;
  int64_t small[4 * kOnStack];
  std::vector<int64_t> large(size > kOnStack ? 4 * static_cast<size_t>(size) : 0);
  int64_t* sc = size > kOnStack ? large.data() : small;
  int64_t *sd = sc + size, *rc = sd + size, *rd = rc + size;
  for (int i = 0; i < size; ++i) {
    if (sendcounts[i] < 0 || recvcounts[i] < 0) return kNotTaken;
    sc[i] = sendcounts[i];
    sd[i] = sdispls[i];
    rc[i] = recvcounts[i];
    rd[i] = rdispls[i];
  }
  return handle(xmsg_alltoallv(sendbuf, sc, sd, sendtype, recvbuf, rc, rd, recvtype, comm), "MPI_Alltoallv", comm);
}

// When the views were built without a copy, the C API gets the caller's own pointer and count.
int64_t bytes_of(int64_t count, const Type* t) { return count * t->size; }

// A predefined op on a derived type of one basic type reduces the packed basic elements, in
// pieces of at most kReducePieceBytes: staging the size of a piece instead of two copies of the
// whole vector. Every rank passes the same count and datatype (MPI requires it of reductions),
// so all cut alike; a rank whose count differs would run a different number of pieces, so a
// vector of more than one piece first checks the counts agree (one 16-byte allreduce, against
// at least a megabyte reduced) and every rank returns MPI_ERR_TRUNCATE if not.
constexpr int64_t kReducePieceBytes = int64_t{1} << 20;

// Returns an xmsg error for handle().
template <class Reduce>
int reduce_in_pieces(const void* input, void* output, int count, const Type* t, MPI_Comm comm, const char* func,
                     Reduce&& reduce) {
  const int64_t total = bytes_of(count, t);
  const int64_t basic = t->basic_count > 0 ? t->size / t->basic_count : 1;
  const int64_t piece = std::max<int64_t>(basic, kReducePieceBytes / basic * basic);
  if (total > piece) {
    const int64_t mine[2] = {total, -total};
    int64_t all[2] = {0, 0};
    if (int e = xmsg_allreduce(mine, all, 2, XMSG_INT64_T, XMSG_MAX, comm)) return e;
    if (all[0] != total || -all[1] != total)
      return xmsgi_error(XMSG_ERR_TRUNCATE,
                         "%s: the ranks passed different counts: %lld to %lld bytes of packed elements, this rank %lld",
                         func, static_cast<long long>(-all[1]), static_cast<long long>(all[0]),
                         static_cast<long long>(total));
  }
  const int64_t first = std::min(total, piece);
  Staging in = staging_buffer(first + 1), out = staging_buffer(first + 1);
  for (int64_t offset = 0;; offset += piece) {
    const int64_t len = std::min(piece, total - offset);
    pack_range(input, *t, offset, len, in.get());
    if (int e = reduce(in.get(), out.get(), len / basic)) return e;
    if (output) unpack_range(out.get(), *t, offset, len, output);
    if (offset + len >= total) return MPI_SUCCESS;
  }
}

// Contiguous staging of n blocks given by (counts, displs) in elements of t: the packed form
// holds the blocks back to back.
struct Blocks {
  std::vector<int64_t> counts, displs;  // bytes, compact
  int64_t total = 0;
  void init(const int* c, int n, const Type* t) {
    counts.resize(static_cast<size_t>(n));
    displs.resize(static_cast<size_t>(n));
    total = 0;
    for (int i = 0; i < n; ++i) {
      counts[static_cast<size_t>(i)] = static_cast<int64_t>(c[i]) * t->size;
      displs[static_cast<size_t>(i)] = total;
      total += counts[static_cast<size_t>(i)];
    }
  }
};

void pack_blocks(const void* buf, const int* counts, const int* displs, int n, const Type* t, const Blocks& b,
                 char* out, int skip = -1) {
  for (int i = 0; i < n; ++i)
    if (i != skip)
      pack(static_cast<const char*>(buf) + static_cast<int64_t>(displs[i]) * t->extent, counts[i], *t,
           out + b.displs[static_cast<size_t>(i)]);
}

// The layout a view describes when its data is not contiguous (built with allow_packed), else
// nullptr: the runtime's collectives then pack and unpack each piece where it travels.
const xmsgi_layout* layout_of(const SendView& v) { return v.packed ? &v.layout : nullptr; }
const xmsgi_layout* layout_of(const RecvView& v) { return v.packed ? &v.layout : nullptr; }

// A rank's send and receive sides of a collective must describe the same bytes per block.
int check_block(int64_t send_bytes, int64_t recv_bytes, const char* func, MPI_Comm comm) {
  if (send_bytes == recv_bytes) return MPI_SUCCESS;
  return fail(MPI_ERR_COUNT, func, comm,
              "sendcount * size of sendtype (%lld bytes) != recvcount * size of recvtype (%lld bytes)",
              static_cast<long long>(send_bytes), static_cast<long long>(recv_bytes));
}

// A v-collective's blocks on datatype `t` as ranges of its packed stream (element e of the
// stream lies at buf + e * extent, so block i starts at byte displs[i] * size): what the runtime
// takes to pack and unpack each block where it travels. False where a displacement is negative
// (the stream starts at the buffer): such blocks are staged as before.
struct StreamBlocks {
  std::vector<int64_t> counts, displs;  // bytes of the stream
  int64_t elements = 0;                 // the stream's extent, in elements
  bool init(const int* c, const int* d, int n, const Type* t) {
    counts.resize(static_cast<size_t>(n));
    displs.resize(static_cast<size_t>(n));
    elements = 0;
    for (int i = 0; i < n; ++i) {
      if (d[i] < 0 && c[i] > 0) return false;
      counts[static_cast<size_t>(i)] = static_cast<int64_t>(c[i]) * t->size;
      displs[static_cast<size_t>(i)] = c[i] > 0 ? static_cast<int64_t>(d[i]) * t->size : 0;
      if (c[i] > 0) elements = std::max<int64_t>(elements, static_cast<int64_t>(d[i]) + c[i]);
    }
    return true;
  }
};

void unpack_blocks(const char* in, const int* counts, const int* displs, int n, const Type* t, const Blocks& b,
                   void* buf, int skip = -1) {
  for (int i = 0; i < n; ++i)
    if (i != skip)
      unpack(in + b.displs[static_cast<size_t>(i)], b.counts[static_cast<size_t>(i)],
             static_cast<char*>(buf) + static_cast<int64_t>(displs[i]) * t->extent, counts[i], *t);
}

}  // namespace
}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Ibarrier(comm, &inter_request))
  if (!is_inter(comm)) return handle(xmsg_barrier(comm), "MPI_Barrier", comm);
  int rank = 0, size = 0;
  if (int e = check_intra(comm, "MPI_Barrier", &rank, &size)) return e;
  auto s = std::make_unique<Schedule>(comm);
  build_barrier(*s);
  return handle(run_schedule(std::move(s)), "MPI_Barrier", comm);
}
XMSG_MPI_ALIAS(Barrier)

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Ibcast(buffer, count, datatype, root, comm, &inter_request))
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_bcast(buffer, count, datatype, root, comm), "MPI_Bcast", comm);
  int rank = 0, size = 0;
  if (int e = check_intra(comm, "MPI_Bcast", &rank, &size)) return e;
  const Type* t = nullptr;
  if (int e = check_type(datatype, "MPI_Bcast", "datatype", comm, &t)) return e;
  if (int e = check_count(count, "MPI_Bcast", "count", comm)) return e;
  if (int e = check_root(root, size, "MPI_Bcast", comm)) return e;
  RecvView view;
  if (int e = view.init(buffer, count, datatype, "MPI_Bcast", comm, true)) return e;
  return handle(xmsgi_bcast_laid(view.data, layout_of(view), view.bytes, root, comm), "MPI_Bcast", comm);
}
XMSG_MPI_ALIAS(Bcast)

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, &inter_request))
  const bool user_op = user_function_of(op) != nullptr;
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_reduce(sendbuf, recvbuf, count, datatype, op, root, comm), "MPI_Reduce", comm);
  int rank = 0, size = 0;
  if (int e = check_intra(comm, "MPI_Reduce", &rank, &size)) return e;
  const Type* t = nullptr;
  if (int e = check_type(datatype, "MPI_Reduce", "datatype", comm, &t)) return e;
  if (int e = check_count(count, "MPI_Reduce", "count", comm)) return e;
  if (int e = check_root(root, size, "MPI_Reduce", comm)) return e;
  if (int e = check_op(op, *t, "MPI_Reduce", comm)) return e;
  if (user_op) {
    auto s = std::make_unique<Schedule>(comm);
    build_reduce(*s, sendbuf, recvbuf, count, datatype, op, root);
    return handle(run_schedule(std::move(s)), "MPI_Reduce", comm);
  }
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const int code = reduce_in_pieces(input, rank == root ? recvbuf : nullptr, count, t, comm, "MPI_Reduce",
                                    [&](const char* in, char* out, int64_t n) {
                                      return xmsg_reduce(in, rank == root ? out : nullptr, n, t->basic, op, root, comm);
                                    });
  return handle(code, "MPI_Reduce", comm);
}
XMSG_MPI_ALIAS(Reduce)

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &inter_request))
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_allreduce(sendbuf, recvbuf, count, datatype, op, comm), "MPI_Allreduce", comm);
  int rank = 0, size = 0;
  if (int e = check_intra(comm, "MPI_Allreduce", &rank, &size)) return e;
  const Type* t = nullptr;
  if (int e = check_type(datatype, "MPI_Allreduce", "datatype", comm, &t)) return e;
  if (int e = check_count(count, "MPI_Allreduce", "count", comm)) return e;
  if (int e = check_op(op, *t, "MPI_Allreduce", comm)) return e;
  if (user_function_of(op)) {
    auto s = std::make_unique<Schedule>(comm);
    build_allreduce(*s, sendbuf, recvbuf, count, datatype, op);
    return handle(run_schedule(std::move(s)), "MPI_Allreduce", comm);
  }
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const int code = reduce_in_pieces(input, recvbuf, count, t, comm, "MPI_Allreduce",
                                    [&](const char* in, char* out, int64_t n) {
                                      return xmsg_allreduce(in, out, n, t->basic, op, comm);
                                    });
  return handle(code, "MPI_Allreduce", comm);
}
XMSG_MPI_ALIAS(Allreduce)

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &inter_request))
  int rank = 0, size = 0;
  if (is_xmsg_type(sendtype) && is_xmsg_type(recvtype))
    return handle(xmsg_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), "MPI_Gather",
                  comm);
  if (int e = check_intra(comm, "MPI_Gather", &rank, &size)) return e;
  if (int e = check_root(root, size, "MPI_Gather", comm)) return e;
  const bool in_place = rank == root && sendbuf == MPI_IN_PLACE;
  if (!in_place && sendbuf == MPI_IN_PLACE)
    return fail(MPI_ERR_BUFFER, "MPI_Gather", comm, "sendbuf is MPI_IN_PLACE on rank %d, which is not the root", rank);
  SendView send;
  if (!in_place)
    if (int e = send.init(sendbuf, sendcount, sendtype, "MPI_Gather", comm, true)) return e;
  if (rank != root)
    return handle(xmsgi_gather_laid(send.data, layout_of(send), nullptr, nullptr, send.bytes, root, comm), "MPI_Gather",
                  comm);
  RecvView recv;
  if (int e = check_count(recvcount, "MPI_Gather", "recvcount", comm)) return e;
  if (int e = recv.init(recvbuf, static_cast<int64_t>(recvcount) * size, recvtype, "MPI_Gather", comm, true)) return e;
  const int64_t block = recv.bytes / size;
  if (!in_place)
    if (int e = check_block(send.bytes, block, "MPI_Gather", comm)) return e;
  return handle(xmsgi_gather_laid(in_place ? MPI_IN_PLACE : send.data, layout_of(send), recv.data, layout_of(recv),
                                  block, root, comm),
                "MPI_Gather", comm);
}
XMSG_MPI_ALIAS(Gather)

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, &inter_request))
  int rank = 0, size = 0;
  if (int e = check_intra(comm, "MPI_Gatherv", &rank, &size)) return e;
  if (int e = check_root(root, size, "MPI_Gatherv", comm)) return e;
  const bool in_place = rank == root && sendbuf == MPI_IN_PLACE;
  if (!in_place && sendbuf == MPI_IN_PLACE)
    return fail(MPI_ERR_BUFFER, "MPI_Gatherv", comm, "sendbuf is MPI_IN_PLACE on rank %d, which is not the root",
                rank);
  SendView send;
  if (!in_place)
    if (int e = send.init(sendbuf, sendcount, sendtype, "MPI_Gatherv", comm, true)) return e;
  if (rank != root)
    return handle(xmsgi_gatherv_laid(send.data, layout_of(send), send.bytes, nullptr, nullptr, nullptr, nullptr, root,
                                     comm),
                  "MPI_Gatherv", comm);
  const Type* rt = nullptr;
  if (int e = check_type(recvtype, "MPI_Gatherv", "recvtype", comm, &rt)) return e;
  if (int e = check_counts(recvcounts, size, "MPI_Gatherv", "recvcounts", comm)) return e;
  if (!displs) return fail(MPI_ERR_ARG, "MPI_Gatherv", comm, "displs is NULL");
  const void* mine = in_place ? MPI_IN_PLACE : send.data;
  if (is_xmsg_type(recvtype) && !send.packed) {
    std::vector<int64_t> c(recvcounts, recvcounts + size), d(displs, displs + size);
    return handle(xmsg_gatherv(mine, send.count, send.xtype, recvbuf, c.data(), d.data(), recvtype, root, comm),
                  "MPI_Gatherv", comm);
  }
  StreamBlocks b;
  RecvView recv;
  if (b.init(recvcounts, displs, size, rt)) {
    if (int e = recv.init(recvbuf, b.elements, recvtype, "MPI_Gatherv", comm, true)) return e;
    return handle(xmsgi_gatherv_laid(mine, layout_of(send), send.bytes, recv.data, layout_of(recv), b.counts.data(),
                                     b.displs.data(), root, comm),
                  "MPI_Gatherv", comm);
  }
  Blocks staged;
  staged.init(recvcounts, size, rt);
  std::vector<char> tmp(static_cast<size_t>(staged.total + 1));
  if (in_place)
    pack(static_cast<char*>(recvbuf) + static_cast<int64_t>(displs[rank]) * rt->extent, recvcounts[rank], *rt,
         tmp.data() + staged.displs[static_cast<size_t>(rank)]);
  int code = xmsgi_gatherv_laid(mine, layout_of(send), send.bytes, tmp.data(), nullptr, staged.counts.data(),
                                staged.displs.data(), root, comm);
  if (code == MPI_SUCCESS)
    unpack_blocks(tmp.data(), recvcounts, displs, size, rt, staged, recvbuf, in_place ? rank : -1);
  return handle(code, "MPI_Gatherv", comm);
}
XMSG_MPI_ALIAS(Gatherv)

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &inter_request))
  int rank = 0, size = 0;
  if (is_xmsg_type(sendtype) && is_xmsg_type(recvtype))
    return handle(xmsg_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                  "MPI_Scatter", comm);
  if (int e = check_intra(comm, "MPI_Scatter", &rank, &size)) return e;
  if (int e = check_root(root, size, "MPI_Scatter", comm)) return e;
  const bool in_place = rank == root && recvbuf == MPI_IN_PLACE;
  if (!in_place && recvbuf == MPI_IN_PLACE)
    return fail(MPI_ERR_BUFFER, "MPI_Scatter", comm, "recvbuf is MPI_IN_PLACE on rank %d, which is not the root",
                rank);
  RecvView recv;
  if (!in_place)
    if (int e = recv.init(recvbuf, recvcount, recvtype, "MPI_Scatter", comm, true)) return e;
  if (rank != root)
    return handle(xmsgi_scatter_laid(nullptr, nullptr, recv.data, layout_of(recv), recv.bytes, root, comm),
                  "MPI_Scatter", comm);
  if (int e = check_count(sendcount, "MPI_Scatter", "sendcount", comm)) return e;
  SendView send;
  if (int e = send.init(sendbuf, static_cast<int64_t>(sendcount) * size, sendtype, "MPI_Scatter", comm, true)) return e;
  const int64_t block = send.bytes / size;
  if (!in_place)
    if (int e = check_block(block, recv.bytes, "MPI_Scatter", comm)) return e;
  return handle(xmsgi_scatter_laid(send.data, layout_of(send), in_place ? MPI_IN_PLACE : recv.data, layout_of(recv),
                                   block, root, comm),
                "MPI_Scatter", comm);
}
XMSG_MPI_ALIAS(Scatter)

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, &inter_request))
  int rank = 0, size = 0;
  if (int e = check_intra(comm, "MPI_Scatterv", &rank, &size)) return e;
  if (int e = check_root(root, size, "MPI_Scatterv", comm)) return e;
  const bool in_place = rank == root && recvbuf == MPI_IN_PLACE;
  if (!in_place && recvbuf == MPI_IN_PLACE)
    return fail(MPI_ERR_BUFFER, "MPI_Scatterv", comm, "recvbuf is MPI_IN_PLACE on rank %d, which is not the root",
                rank);
  RecvView recv;
  if (!in_place)
    if (int e = recv.init(recvbuf, recvcount, recvtype, "MPI_Scatterv", comm, true)) return e;
  void* mine = in_place ? MPI_IN_PLACE : recv.data;
  if (rank != root)
    return handle(xmsgi_scatterv_laid(nullptr, nullptr, nullptr, nullptr, mine, layout_of(recv), recv.bytes, root,
                                      comm),
                  "MPI_Scatterv", comm);
  const Type* st = nullptr;
  if (int e = check_type(sendtype, "MPI_Scatterv", "sendtype", comm, &st)) return e;
  if (int e = check_counts(sendcounts, size, "MPI_Scatterv", "sendcounts", comm)) return e;
  if (!displs) return fail(MPI_ERR_ARG, "MPI_Scatterv", comm, "displs is NULL");
  StreamBlocks b;
  if (b.init(sendcounts, displs, size, st)) {
    SendView send;
    if (int e = send.init(sendbuf, b.elements, sendtype, "MPI_Scatterv", comm, true)) return e;
    return handle(xmsgi_scatterv_laid(send.data, layout_of(send), b.counts.data(), b.displs.data(), mine,
                                      layout_of(recv), recv.bytes, root, comm),
                  "MPI_Scatterv", comm);
  }
  Blocks staged;
  staged.init(sendcounts, size, st);
  std::vector<char> tmp(static_cast<size_t>(staged.total + 1));
  pack_blocks(sendbuf, sendcounts, displs, size, st, staged, tmp.data());
  return handle(xmsgi_scatterv_laid(tmp.data(), nullptr, staged.counts.data(), staged.displs.data(), mine,
                                    layout_of(recv), recv.bytes, root, comm),
                "MPI_Scatterv", comm);
}
XMSG_MPI_ALIAS(Scatterv)

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &inter_request))
  int rank = 0, size = 0;
  if ((is_xmsg_type(sendtype) || sendbuf == MPI_IN_PLACE) && is_xmsg_type(recvtype))
    return handle(xmsg_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), "MPI_Allgather",
                  comm);
  if (int e = check_intra(comm, "MPI_Allgather", &rank, &size)) return e;
  if (int e = check_count(recvcount, "MPI_Allgather", "recvcount", comm)) return e;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  SendView send;
  if (!in_place)
    if (int e = send.init(sendbuf, sendcount, sendtype, "MPI_Allgather", comm, true)) return e;
  RecvView recv;
  if (int e = recv.init(recvbuf, static_cast<int64_t>(recvcount) * size, recvtype, "MPI_Allgather", comm, true))
    return e;
  const int64_t block = recv.bytes / size;
  if (!in_place)
    if (int e = check_block(send.bytes, block, "MPI_Allgather", comm)) return e;
  return handle(xmsgi_allgather_laid(in_place ? MPI_IN_PLACE : send.data, layout_of(send), recv.data, layout_of(recv),
                                     block, comm),
                "MPI_Allgather", comm);
}
XMSG_MPI_ALIAS(Allgather)

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &inter_request))
  int rank = 0, size = 0;
  if (int e = check_intra(comm, "MPI_Allgatherv", &rank, &size)) return e;
  const Type* rt = nullptr;
  if (int e = check_type(recvtype, "MPI_Allgatherv", "recvtype", comm, &rt)) return e;
  if (int e = check_counts(recvcounts, size, "MPI_Allgatherv", "recvcounts", comm)) return e;
  if (!displs) return fail(MPI_ERR_ARG, "MPI_Allgatherv", comm, "displs is NULL");
  const bool in_place = sendbuf == MPI_IN_PLACE;
  SendView send;
  if (!in_place)
    if (int e = send.init(sendbuf, sendcount, sendtype, "MPI_Allgatherv", comm, true)) return e;
  const void* mine = in_place ? MPI_IN_PLACE : send.data;
  if (is_xmsg_type(recvtype) && !send.packed) {
    std::vector<int64_t> c(recvcounts, recvcounts + size), d(displs, displs + size);
    return handle(xmsg_allgatherv(mine, send.count, send.xtype, recvbuf, c.data(), d.data(), recvtype, comm),
                  "MPI_Allgatherv", comm);
  }
  StreamBlocks b;
  if (b.init(recvcounts, displs, size, rt)) {
    RecvView recv;
    if (int e = recv.init(recvbuf, b.elements, recvtype, "MPI_Allgatherv", comm, true)) return e;
    return handle(xmsgi_allgatherv_laid(mine, layout_of(send), send.bytes, recv.data, layout_of(recv), b.counts.data(),
                                        b.displs.data(), comm),
                  "MPI_Allgatherv", comm);
  }
  Blocks staged;
  staged.init(recvcounts, size, rt);
  std::vector<char> tmp(static_cast<size_t>(staged.total + 1));
  if (in_place)
    pack(static_cast<char*>(recvbuf) + static_cast<int64_t>(displs[rank]) * rt->extent, recvcounts[rank], *rt,
         tmp.data() + staged.displs[static_cast<size_t>(rank)]);
  int code = xmsgi_allgatherv_laid(mine, layout_of(send), send.bytes, tmp.data(), nullptr, staged.counts.data(),
                                   staged.displs.data(), comm);
  if (code == MPI_SUCCESS)
    unpack_blocks(tmp.data(), recvcounts, displs, size, rt, staged, recvbuf, in_place ? rank : -1);
  return handle(code, "MPI_Allgatherv", comm);
}
XMSG_MPI_ALIAS(Allgatherv)

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &inter_request))
  int rank = 0, size = 0;
  if ((is_xmsg_type(sendtype) || sendbuf == MPI_IN_PLACE) && is_xmsg_type(recvtype))
    return handle(xmsg_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), "MPI_Alltoall",
                  comm);
  if (int e = check_intra(comm, "MPI_Alltoall", &rank, &size)) return e;
  if (int e = check_count(recvcount, "MPI_Alltoall", "recvcount", comm)) return e;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  RecvView recv;
  if (int e = recv.init(recvbuf, static_cast<int64_t>(recvcount) * size, recvtype, "MPI_Alltoall", comm, true))
    return e;
  SendView send;
  if (in_place) {
    // The outgoing blocks are the incoming buffer's current contents: pack them first.
    if (int e = send.init(recvbuf, static_cast<int64_t>(recvcount) * size, recvtype, "MPI_Alltoall", comm)) return e;
    if (!send.owned) {
      send.owned = staging_buffer(send.bytes + 1);
      std::memcpy(send.owned.get(), send.data, static_cast<size_t>(send.bytes));
      send.data = send.owned.get();
    }
  } else {
    if (int e = check_count(sendcount, "MPI_Alltoall", "sendcount", comm)) return e;
    if (int e = send.init(sendbuf, static_cast<int64_t>(sendcount) * size, sendtype, "MPI_Alltoall", comm, true))
      return e;
  }
  const int64_t block = recv.bytes / size;
  if (int e = check_block(send.bytes / size, block, "MPI_Alltoall", comm)) return e;
  return handle(xmsgi_alltoall_laid(send.data, layout_of(send), recv.data, layout_of(recv), block, comm),
                "MPI_Alltoall", comm);
}
XMSG_MPI_ALIAS(Alltoall)

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  XMSG_INTER(PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, &inter_request))
  int rank = 0, size = 0;
  if (int e = alltoallv_predefined(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                   comm);
      e != kNotTaken)
    return e;
  if (int e = check_intra(comm, "MPI_Alltoallv", &rank, &size)) return e;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place) {
    sendbuf = nullptr;
    sendcounts = recvcounts;
    sdispls = rdispls;
    sendtype = recvtype;
  }
  const Type *st = nullptr, *rt = nullptr;
  if (int e = check_type(sendtype, "MPI_Alltoallv", "sendtype", comm, &st)) return e;
  if (int e = check_type(recvtype, "MPI_Alltoallv", "recvtype", comm, &rt)) return e;
  if (int e = check_counts(sendcounts, size, "MPI_Alltoallv", "sendcounts", comm)) return e;
  if (int e = check_counts(recvcounts, size, "MPI_Alltoallv", "recvcounts", comm)) return e;
  if (!sdispls || !rdispls) return fail(MPI_ERR_ARG, "MPI_Alltoallv", comm, "%s is NULL", sdispls ? "rdispls" : "sdispls");
  StreamBlocks ss, rs;
  if (!in_place && ss.init(sendcounts, sdispls, size, st) && rs.init(recvcounts, rdispls, size, rt)) {
    SendView send;
    RecvView recv;
    if (int e = send.init(sendbuf, ss.elements, sendtype, "MPI_Alltoallv", comm, true)) return e;
    if (int e = recv.init(recvbuf, rs.elements, recvtype, "MPI_Alltoallv", comm, true)) return e;
    return handle(xmsgi_alltoallv_laid(send.data, layout_of(send), ss.counts.data(), ss.displs.data(), recv.data,
                                       layout_of(recv), rs.counts.data(), rs.displs.data(), comm),
                  "MPI_Alltoallv", comm);
  }
  Blocks sb, rb;
  sb.init(sendcounts, size, st);
  rb.init(recvcounts, size, rt);
  std::vector<char> out(static_cast<size_t>(sb.total + 1)), in(static_cast<size_t>(rb.total + 1));
  pack_blocks(in_place ? recvbuf : sendbuf, sendcounts, sdispls, size, st, sb, out.data());
  int code = xmsg_alltoallv(out.data(), sb.counts.data(), sb.displs.data(), XMSG_BYTE, in.data(), rb.counts.data(),
                            rb.displs.data(), XMSG_BYTE, comm);
  if (code == MPI_SUCCESS) unpack_blocks(in.data(), recvcounts, rdispls, size, rt, rb, recvbuf);
  return handle(code, "MPI_Alltoallv", comm);
}
XMSG_MPI_ALIAS(Alltoallv)

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  MPI_Request request = MPI_REQUEST_NULL;
  if (int e = PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                              &request))
    return e;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}
XMSG_MPI_ALIAS(Alltoallw)

// Predefined types go to the runtime's reduce_scatter (pipelined on one node); derived types
// and intercommunicators to the schedule in coll_schedules.cpp.
static int reduce_scatter_in_runtime(const void* sendbuf, void* recvbuf, const int* recvcounts, int block,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const char* func) {
  int rank = 0, size = 0;
  if (int e = check_intra(comm, func, &rank, &size)) return e;
  std::vector<int64_t> counts(static_cast<size_t>(size), block);
  if (recvcounts) counts.assign(recvcounts, recvcounts + size);
  return handle(xmsg_reduce_scatter(sendbuf, recvbuf, counts.data(), datatype, op, comm), func, comm);
}

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm) && recvcount >= 0)
    return reduce_scatter_in_runtime(sendbuf, recvbuf, nullptr, recvcount, datatype, op, comm,
                                     "MPI_Reduce_scatter_block");
  MPI_Request request = MPI_REQUEST_NULL;
  if (int e = PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, &request)) return e;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}
XMSG_MPI_ALIAS(Reduce_scatter_block)

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm) && recvcounts)
    return reduce_scatter_in_runtime(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, "MPI_Reduce_scatter");
  MPI_Request request = MPI_REQUEST_NULL;
  if (int e = PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, &request)) return e;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}
XMSG_MPI_ALIAS(Reduce_scatter)

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  MPI_Request request = MPI_REQUEST_NULL;
  if (int e = PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, &request)) return e;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}
XMSG_MPI_ALIAS(Scan)

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  MPI_Request request = MPI_REQUEST_NULL;
  if (int e = PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, &request)) return e;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}
XMSG_MPI_ALIAS(Exscan)

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  XMSG_MPI_ENTRY;
  const Type* t = nullptr;
  if (int e = check_type(datatype, "MPI_Reduce_local", "datatype", MPI_COMM_WORLD, &t)) return e;
  if (int e = check_count(count, "MPI_Reduce_local", "count", MPI_COMM_WORLD)) return e;
  if (int e = check_op(op, *t, "MPI_Reduce_local", MPI_COMM_WORLD)) return e;
  if (count > 0 && (!inbuf || !inoutbuf))
    return fail(MPI_ERR_BUFFER, "MPI_Reduce_local", MPI_COMM_WORLD, "%s is NULL", inbuf ? "inoutbuf" : "inbuf");
  reduce_layout(inbuf, inoutbuf, count, datatype, op);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Reduce_local)

// ---- ops --------------------------------------------------------------------------------------
namespace {
// MPI's user functions take int lengths and the MPI datatype; the runtime calls this adapter
// for predefined types, handing longer vectors over in slices.
void call_mpi_user_function(const void* in, void* inout, int64_t count, xmsg_datatype_t datatype, void* user_data) {
  auto* fn = reinterpret_cast<MPI_User_function*>(user_data);
  size_t elem = 0;
  xmsg_type_size(datatype, &elem);
  auto* a = static_cast<char*>(const_cast<void*>(in));
  auto* b = static_cast<char*>(inout);
  while (count > 0) {
    int len = count > INT_MAX ? INT_MAX : static_cast<int>(count);
    MPI_Datatype type = datatype;
    fn(a, b, &len, &type);
    a += static_cast<size_t>(len) * elem;
    b += static_cast<size_t>(len) * elem;
    count -= len;
  }
}
}  // namespace
}  // extern "C"

namespace xmsg::mpi {
MPI_Op private_op(MPI_Op op) {
  MPI_User_function* fn = user_function_of(op);
  int commute = 0;
  if (!fn || xmsg_op_commutative(op, &commute) != MPI_SUCCESS) return op;
  MPI_Op mine = MPI_OP_NULL;
  if (xmsg_op_create(&call_mpi_user_function, commute, reinterpret_cast<void*>(fn), &mine) != MPI_SUCCESS) return op;
  register_user_function(mine, fn);
  return mine;
}

void free_private_op(MPI_Op op) {
  if (!user_function_of(op)) return;
  register_user_function(op, nullptr);
  xmsg_op_free(&op);
}
}  // namespace xmsg::mpi

extern "C" {

int PMPI_Op_create(MPI_User_function* function, int commute, MPI_Op* op) {
  XMSG_MPI_ENTRY;
  if (!function) return fail(MPI_ERR_ARG, "MPI_Op_create", MPI_COMM_WORLD, "function is NULL");
  if (!op) return fail(MPI_ERR_ARG, "MPI_Op_create", MPI_COMM_WORLD, "op is NULL");
  int code = xmsg_op_create(&call_mpi_user_function, commute, reinterpret_cast<void*>(function), op);
  if (code != MPI_SUCCESS) return handle(code, "MPI_Op_create");
  register_user_function(*op, function);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Op_create)

int PMPI_Op_free(MPI_Op* op) {
  XMSG_MPI_ENTRY;
  MPI_Op old = op ? *op : MPI_OP_NULL;
  int code = xmsg_op_free(op);
  if (code == MPI_SUCCESS) register_user_function(old, nullptr);
  return handle(code, "MPI_Op_free");
}
XMSG_MPI_ALIAS(Op_free)

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  XMSG_MPI_ENTRY;
  return handle(xmsg_op_commutative(op, commute), "MPI_Op_commutative");
}
XMSG_MPI_ALIAS(Op_commutative)

}  // extern "C"
