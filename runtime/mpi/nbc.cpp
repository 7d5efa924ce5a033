// MPI-3.1 5.12, non-blocking collectives, and MPI-4.0 5.13, persistent collectives: each one
// validates its arguments like its blocking form and runs a schedule (coll_schedules.cpp).
// A non-blocking collective moves on whenever its rank is inside any MPI call or blocked in
// the runtime (the idle hook), and, while it computes outside MPI, when the progress thread
// runs a pass (progress_thread.cpp).
#include "coll_schedules.hpp"

namespace xmsg::mpi {
namespace {

int comm_args(MPI_Comm comm, MPI_Request* request, const char* func, int* rank, int* size) {
  if (int e = check_intra(comm, func, rank, size)) return e;
  if (!request) return fail(MPI_ERR_ARG, func, comm, "request is NULL");
  return MPI_SUCCESS;
}

// The datatypes and ops a collective uses after its call returned. A persistent collective
// builds at every MPI_Start, after the program may have freed its handles (MPI_Type_free and
// MPI_Op_free leave operations using them intact), so its builder uses private handles of the
// same types, freed with the request. A non-blocking one builds at once (its schedule keeps
// copies of the types) but combines with the op in later steps, so both forms keep a private
// handle of a user op (a freed one made every later step combine with no op at all).
class KeptTypes {
 public:
  explicit KeptTypes(bool persistent) : types_(persistent) {}
  MPI_Datatype operator()(MPI_Datatype t) {
    if (!types_) return t;
    for (const auto& [theirs, mine] : kept().handles)
      if (theirs == t) return mine;
    const MPI_Datatype mine = private_type(t);
    if (mine != t) kept().handles.emplace_back(t, mine);
    return mine;
  }
  MPI_Op op(MPI_Op o) {
    const MPI_Op mine = private_op(o);
    if (mine != o) kept().ops.push_back(mine);
    return mine;
  }
  void all(std::vector<MPI_Datatype>& v) {
    for (MPI_Datatype& t : v) t = (*this)(t);
  }
  std::shared_ptr<const void> owner() const { return kept_; }

 private:
  struct Private {
    std::vector<std::pair<MPI_Datatype, MPI_Datatype>> handles;  // the program's, ours
    std::vector<MPI_Op> ops;
    ~Private() {
      for (const auto& kept : handles) free_private_type(kept.second);
      for (MPI_Op o : ops) free_private_op(o);
    }
  };
  Private& kept() {
    if (!kept_) kept_ = std::make_shared<Private>();
    return *kept_;
  }
  bool types_;
  std::shared_ptr<Private> kept_;  // made at the first handle kept
};

// Runs `build` now (non-blocking form) or at every MPI_Start (persistent form, info given);
// `kept` lives as long as the schedule or the persistent request.
int launch(MPI_Comm comm, bool persistent, std::function<int(Schedule&)> build, MPI_Request* request,
           std::shared_ptr<const void> kept = nullptr) {
  if (persistent)
    return persistent_collective(comm, [build = std::move(build), kept](Schedule& s) { return build(s); }, request);
  auto s = std::make_unique<Schedule>(comm);
  if (kept) s->hold(std::move(kept));
  if (int e = build(*s)) return e;
  return start_schedule(std::move(s), request);
}

std::vector<int> copy_of(const int* a, int n) { return a ? std::vector<int>(a, a + n) : std::vector<int>(); }

// Intercommunicators: *remote is the size of the remote group, *local_size of this rank's.
int inter_args(MPI_Comm comm, MPI_Request* request, const char* func, int* remote, int* local_size) {
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, func, comm);
  if (!request) return fail(MPI_ERR_ARG, func, comm, "request is NULL");
  *remote = state_of(comm)->remote_size;
  *local_size = state_of(comm)->local_size;
  return MPI_SUCCESS;
}

int barrier(MPI_Comm comm, MPI_Request* request, bool persistent, const char* func) {
  int rank = 0, size = 0;
  if (is_inter(comm)) {
    if (int e = inter_args(comm, request, func, &rank, &size)) return e;
    return launch(comm, persistent, [](Schedule& s) { return build_inter_barrier(s); }, request);
  }
  if (int e = comm_args(comm, request, func, &rank, &size)) return e;
  return launch(comm, persistent, [](Schedule& s) { return build_barrier(s); }, request);
}

int bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request, bool persistent,
          const char* func) {
  int rank = 0, size = 0;
  const Type* t;
  if (is_inter(comm)) {
    if (int e = inter_args(comm, request, func, &rank, &size)) return e;
    if (int e = inter_check_root(root, comm, func)) return e;
    if (root != MPI_PROC_NULL) {
      if (int e = check_type(type, func, "datatype", comm, &t)) return e;
      if (int e = check_count(count, func, "count", comm)) return e;
    }
    KeptTypes keep(persistent);
    type = keep(type);
    return launch(comm, persistent, [=](Schedule& s) { return build_inter_bcast(s, buf, count, type, root); },
                  request, keep.owner());
  }
  if (int e = comm_args(comm, request, func, &rank, &size)) return e;
  if (int e = check_type(type, func, "datatype", comm, &t)) return e;
  if (int e = check_count(count, func, "count", comm)) return e;
  if (int e = check_root(root, size, func, comm)) return e;
  KeptTypes keep(persistent);
  type = keep(type);
  return launch(comm, persistent, [=](Schedule& s) { return build_bcast(s, buf, count, type, root); }, request,
                keep.owner());
}

int gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts, const int* displs,
           int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request, bool persistent,
           const char* func) {
  int rank = 0, size = 0;
  const Type* t;
  if (is_inter(comm)) {
    int remote = 0, local = 0;
    if (int e = inter_args(comm, request, func, &remote, &local)) return e;
    if (int e = inter_check_root(root, comm, func)) return e;
    std::vector<int> c, d;
    if (root == MPI_ROOT) {
      if (int e = check_type(rtype, func, "recvtype", comm, &t)) return e;
      if (rcounts) {
        if (int e = check_counts(rcounts, remote, func, "recvcounts", comm)) return e;
        if (!displs) return fail(MPI_ERR_ARG, func, comm, "displs is NULL");
        c = copy_of(rcounts, remote);
        d = copy_of(displs, remote);
      }
    } else if (root != MPI_PROC_NULL) {
      if (int e = check_type(stype, func, "sendtype", comm, &t)) return e;
      if (int e = check_count(scount, func, "sendcount", comm)) return e;
    }
    const bool v = !c.empty();
    KeptTypes keep(persistent);
    stype = keep(stype);
    rtype = keep(rtype);
    return launch(comm, persistent, [=](Schedule& s) {
      return build_inter_gather(s, sbuf, scount, stype, rbuf, v ? c.data() : nullptr, v ? d.data() : nullptr, rcount,
                                rtype, root);
    }, request, keep.owner());
  }
  if (int e = comm_args(comm, request, func, &rank, &size)) return e;
  if (int e = check_root(root, size, func, comm)) return e;
  const bool in_place = rank == root && sbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int e = check_type(stype, func, "sendtype", comm, &t)) return e;
    if (int e = check_count(scount, func, "sendcount", comm)) return e;
  }
  std::vector<int> c, d;
  if (rank == root) {
    if (int e = check_type(rtype, func, "recvtype", comm, &t)) return e;
    if (rcounts) {
      if (int e = check_counts(rcounts, size, func, "recvcounts", comm)) return e;
      if (!displs) return fail(MPI_ERR_ARG, func, comm, "displs is NULL");
      c = copy_of(rcounts, size);
      d = copy_of(displs, size);
    } else if (int e = check_count(rcount, func, "recvcount", comm)) {
      return e;
    }
  }
  const bool v = rcounts != nullptr;
  KeptTypes keep(persistent);
  stype = keep(stype);
  rtype = keep(rtype);
  return launch(comm, persistent, [=](Schedule& s) {
    return build_gather(s, sbuf, scount, stype, rbuf, v ? c.data() : nullptr, v ? d.data() : nullptr, rcount, rtype,
                        root);
  }, request, keep.owner());
}

int scatter(const void* sbuf, const int* scounts, const int* displs, int scount, MPI_Datatype stype, void* rbuf,
            int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request, bool persistent,
            const char* func) {
  int rank = 0, size = 0;
  const Type* t;
  if (is_inter(comm)) {
    int remote = 0, local = 0;
    if (int e = inter_args(comm, request, func, &remote, &local)) return e;
    if (int e = inter_check_root(root, comm, func)) return e;
    std::vector<int> c, d;
    if (root == MPI_ROOT) {
      if (int e = check_type(stype, func, "sendtype", comm, &t)) return e;
      if (scounts) {
        if (int e = check_counts(scounts, remote, func, "sendcounts", comm)) return e;
        if (!displs) return fail(MPI_ERR_ARG, func, comm, "displs is NULL");
        c = copy_of(scounts, remote);
        d = copy_of(displs, remote);
      }
    } else if (root != MPI_PROC_NULL) {
      if (int e = check_type(rtype, func, "recvtype", comm, &t)) return e;
      if (int e = check_count(rcount, func, "recvcount", comm)) return e;
    }
    const bool v = !c.empty();
    KeptTypes keep(persistent);
    stype = keep(stype);
    rtype = keep(rtype);
    return launch(comm, persistent, [=](Schedule& s) {
      return build_inter_scatter(s, sbuf, v ? c.data() : nullptr, v ? d.data() : nullptr, scount, stype, rbuf, rcount,
                                 rtype, root);
    }, request, keep.owner());
  }
  if (int e = comm_args(comm, request, func, &rank, &size)) return e;
  if (int e = check_root(root, size, func, comm)) return e;
  const bool in_place = rank == root && rbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int e = check_type(rtype, func, "recvtype", comm, &t)) return e;
    if (int e = check_count(rcount, func, "recvcount", comm)) return e;
  }
  std::vector<int> c, d;
  if (rank == root) {
    if (int e = check_type(stype, func, "sendtype", comm, &t)) return e;
    if (scounts) {
      if (int e = check_counts(scounts, size, func, "sendcounts", comm)) return e;
      if (!displs) return fail(MPI_ERR_ARG, func, comm, "displs is NULL");
      c = copy_of(scounts, size);
      d = copy_of(displs, size);
    } else if (int e = check_count(scount, func, "sendcount", comm)) {
      return e;
    }
  }
  const bool v = scounts != nullptr;
  KeptTypes keep(persistent);
  stype = keep(stype);
  rtype = keep(rtype);
  return launch(comm, persistent, [=](Schedule& s) {
    return build_scatter(s, sbuf, v ? c.data() : nullptr, v ? d.data() : nullptr, scount, stype, rbuf, rcount, rtype,
                         root);
  }, request, keep.owner());
}

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts, const int* displs,
              int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request, bool persistent,
              const char* func) {
  int rank = 0, size = 0;
  const Type* t;
  if (is_inter(comm)) {
    int remote = 0, local = 0;
    if (int e = inter_args(comm, request, func, &remote, &local)) return e;
    if (int e = check_type(stype, func, "sendtype", comm, &t)) return e;
    if (int e = check_type(rtype, func, "recvtype", comm, &t)) return e;
    if (int e = check_count(scount, func, "sendcount", comm)) return e;
    std::vector<int> c, d;
    if (rcounts) {
      if (int e = check_counts(rcounts, remote, func, "recvcounts", comm)) return e;
      if (!displs) return fail(MPI_ERR_ARG, func, comm, "displs is NULL");
      c = copy_of(rcounts, remote);
      d = copy_of(displs, remote);
    }
    const bool v = rcounts != nullptr;
    KeptTypes keep(persistent);
    stype = keep(stype);
    rtype = keep(rtype);
    return launch(comm, persistent, [=](Schedule& s) {
      return build_inter_allgather(s, sbuf, scount, stype, rbuf, v ? c.data() : nullptr, v ? d.data() : nullptr,
                                   rcount, rtype);
    }, request, keep.owner());
  }
  if (int e = comm_args(comm, request, func, &rank, &size)) return e;
  if (sbuf != MPI_IN_PLACE) {
    if (int e = check_type(stype, func, "sendtype", comm, &t)) return e;
    if (int e = check_count(scount, func, "sendcount", comm)) return e;
  }
  if (int e = check_type(rtype, func, "recvtype", comm, &t)) return e;
  std::vector<int> c, d;
  if (rcounts) {
    if (int e = check_counts(rcounts, size, func, "recvcounts", comm)) return e;
    if (!displs) return fail(MPI_ERR_ARG, func, comm, "displs is NULL");
    c = copy_of(rcounts, size);
    d = copy_of(displs, size);
  } else if (int e = check_count(rcount, func, "recvcount", comm)) {
    return e;
  }
  const bool v = rcounts != nullptr;
  KeptTypes keep(persistent);
  stype = keep(stype);
  rtype = keep(rtype);
  return launch(comm, persistent, [=](Schedule& s) {
    return build_allgather(s, sbuf, scount, stype, rbuf, v ? c.data() : nullptr, v ? d.data() : nullptr, rcount,
                           rtype);
  }, request, keep.owner());
}

// alltoall / alltoallv / alltoallw as per-peer (count, byte displacement, type) triples.
int alltoallw(const void* sbuf, std::vector<int> sc, std::vector<MPI_Aint> sd, std::vector<MPI_Datatype> st,
              void* rbuf, std::vector<int> rc, std::vector<MPI_Aint> rd, std::vector<MPI_Datatype> rt, MPI_Comm comm,
              MPI_Request* request, bool persistent, const char* func) {
  const int n = static_cast<int>(rc.size());
  const Type* t;
  for (int i = 0; i < n; ++i) {
    if (sbuf != MPI_IN_PLACE) {
      if (int e = check_type(st[static_cast<size_t>(i)], func, "sendtype", comm, &t)) return e;
      if (sc[static_cast<size_t>(i)] < 0)
        return fail(MPI_ERR_COUNT, func, comm, "sendcounts[%d] = %d is negative", i, sc[static_cast<size_t>(i)]);
    }
    if (int e = check_type(rt[static_cast<size_t>(i)], func, "recvtype", comm, &t)) return e;
    if (rc[static_cast<size_t>(i)] < 0)
      return fail(MPI_ERR_COUNT, func, comm, "recvcounts[%d] = %d is negative", i, rc[static_cast<size_t>(i)]);
  }
  const bool inter = is_inter(comm);
  KeptTypes keep(persistent);
  keep.all(st);
  keep.all(rt);
  return launch(comm, persistent, [=](Schedule& s) {
    return inter ? build_inter_alltoallw(s, sbuf, sc.data(), sd.data(), st.data(), rbuf, rc.data(), rd.data(), rt.data())
                 : build_alltoallw(s, sbuf, sc.data(), sd.data(), st.data(), rbuf, rc.data(), rd.data(), rt.data());
  }, request, keep.owner());
}

int alltoall_common(const void* sbuf, const int* scounts, const int* sdispls, int scount, MPI_Datatype stype,
                    void* rbuf, const int* rcounts, const int* rdispls, int rcount, MPI_Datatype rtype,
                    MPI_Comm comm, MPI_Request* request, bool persistent, const char* func) {
  int rank = 0, size = 0;
  if (is_inter(comm)) {
    int local = 0;
    if (int e = inter_args(comm, request, func, &size, &local)) return e;
    if (sbuf == MPI_IN_PLACE) return fail(MPI_ERR_ARG, func, comm, "MPI_IN_PLACE is not allowed on an intercommunicator");
  } else if (int e = comm_args(comm, request, func, &rank, &size)) {
    return e;
  }
  const Type *st = nullptr, *rt = nullptr;
  if (int e = check_type(rtype, func, "recvtype", comm, &rt)) return e;
  if (sbuf != MPI_IN_PLACE)
    if (int e = check_type(stype, func, "sendtype", comm, &st)) return e;
  const bool v = rcounts != nullptr;
  if (v) {
    if (int e = check_counts(rcounts, size, func, "recvcounts", comm)) return e;
    if (!rdispls) return fail(MPI_ERR_ARG, func, comm, "rdispls is NULL");
    if (sbuf != MPI_IN_PLACE) {
      if (int e = check_counts(scounts, size, func, "sendcounts", comm)) return e;
      if (!sdispls) return fail(MPI_ERR_ARG, func, comm, "sdispls is NULL");
    }
  }
  std::vector<int> sc(static_cast<size_t>(size)), rc(static_cast<size_t>(size));
  std::vector<MPI_Aint> sd(static_cast<size_t>(size)), rd(static_cast<size_t>(size));
  std::vector<MPI_Datatype> stv(static_cast<size_t>(size), stype), rtv(static_cast<size_t>(size), rtype);
  for (int i = 0; i < size; ++i) {
    const auto k = static_cast<size_t>(i);
    rc[k] = v ? rcounts[i] : rcount;
    rd[k] = static_cast<MPI_Aint>(v ? rdispls[i] : static_cast<int64_t>(i) * rcount) * rt->extent;
    if (sbuf != MPI_IN_PLACE) {
      sc[k] = v ? scounts[i] : scount;
      sd[k] = static_cast<MPI_Aint>(v ? sdispls[i] : static_cast<int64_t>(i) * scount) * st->extent;
    }
  }
  return alltoallw(sbuf, sc, sd, stv, rbuf, rc, rd, rtv, comm, request, persistent, func);
}

int alltoallw_int(const void* sbuf, const int* scounts, const int* sdispls, const MPI_Datatype* stypes, void* rbuf,
                  const int* rcounts, const int* rdispls, const MPI_Datatype* rtypes, MPI_Comm comm,
                  MPI_Request* request, bool persistent, const char* func) {
  int rank = 0, size = 0;
  if (is_inter(comm)) {
    int local = 0;
    if (int e = inter_args(comm, request, func, &size, &local)) return e;
  } else if (int e = comm_args(comm, request, func, &rank, &size)) {
    return e;
  }
  if (!rcounts || !rdispls || !rtypes)
    return fail(MPI_ERR_ARG, func, comm, "%s is NULL", !rcounts ? "recvcounts" : !rdispls ? "rdispls" : "recvtypes");
  if (sbuf != MPI_IN_PLACE && (!scounts || !sdispls || !stypes))
    return fail(MPI_ERR_ARG, func, comm, "%s is NULL", !scounts ? "sendcounts" : !sdispls ? "sdispls" : "sendtypes");
  const auto n = static_cast<size_t>(size);
  std::vector<int> sc(n), rc(rcounts, rcounts + size);
  std::vector<MPI_Aint> sd(n), rd(rdispls, rdispls + size);
  std::vector<MPI_Datatype> st(n), rt(rtypes, rtypes + size);
  if (sbuf != MPI_IN_PLACE) {
    sc.assign(scounts, scounts + size);
    sd.assign(sdispls, sdispls + size);
    st.assign(stypes, stypes + size);
  }
  return alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, request, persistent, func);
}

int reduce_args(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                MPI_Request* request, const char* func, int* rank, int* size) {
  (void)sbuf;
  (void)rbuf;
  if (is_inter(comm)) {
    if (int e = inter_args(comm, request, func, size, rank)) return e;
  } else if (int e = comm_args(comm, request, func, rank, size)) {
    return e;
  }
  const Type* t;
  if (int e = check_type(type, func, "datatype", comm, &t)) return e;
  if (int e = check_count(count, func, "count", comm)) return e;
  return check_op(op, *t, func, comm);
}

int reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
           MPI_Request* request, bool persistent, const char* func) {
  int rank = 0, size = 0;
  if (int e = reduce_args(sbuf, rbuf, count, type, op, comm, request, func, &rank, &size)) return e;
  if (is_inter(comm)) {
    if (int e = inter_check_root(root, comm, func)) return e;
    KeptTypes keep(persistent);
    type = keep(type);
    op = keep.op(op);
    return launch(comm, persistent,
                  [=](Schedule& s) { return build_inter_reduce(s, sbuf, rbuf, count, type, op, root); }, request,
                  keep.owner());
  }
  if (int e = check_root(root, size, func, comm)) return e;
  KeptTypes keep(persistent);
  type = keep(type);
  op = keep.op(op);
  return launch(comm, persistent, [=](Schedule& s) { return build_reduce(s, sbuf, rbuf, count, type, op, root); },
                request, keep.owner());
}

int allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request, bool persistent, const char* func) {
  int rank = 0, size = 0;
  if (int e = reduce_args(sbuf, rbuf, count, type, op, comm, request, func, &rank, &size)) return e;
  KeptTypes keep(persistent);
  type = keep(type);
  op = keep.op(op);
  if (is_inter(comm))
    return launch(comm, persistent, [=](Schedule& s) { return build_inter_allreduce(s, sbuf, rbuf, count, type, op); },
                  request, keep.owner());
  return launch(comm, persistent, [=](Schedule& s) { return build_allreduce(s, sbuf, rbuf, count, type, op); },
                request, keep.owner());
}

int reduce_scatter(const void* sbuf, void* rbuf, const int* rcounts, int block, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request, bool persistent, const char* func) {
  int rank = 0, size = 0;
  if (int e = reduce_args(sbuf, rbuf, 0, type, op, comm, request, func, &rank, &size)) return e;
  const bool inter = is_inter(comm);
  if (inter) size = state_of(comm)->local_size;  // recvcounts are per local rank
  std::vector<int> c(static_cast<size_t>(size), block);
  if (rcounts) {
    if (int e = check_counts(rcounts, size, func, "recvcounts", comm)) return e;
    c.assign(rcounts, rcounts + size);
  } else if (int e = check_count(block, func, "recvcount", comm)) {
    return e;
  }
  KeptTypes keep(persistent);
  type = keep(type);
  op = keep.op(op);
  return launch(comm, persistent, [=](Schedule& s) {
    return inter ? build_inter_reduce_scatter(s, sbuf, rbuf, c.data(), type, op)
                 : build_reduce_scatter(s, sbuf, rbuf, c.data(), type, op);
  }, request, keep.owner());
}

int scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request,
         bool persistent, bool exclusive, const char* func) {
  int rank = 0, size = 0;
  if (is_inter(comm)) return fail(MPI_ERR_COMM, func, comm, "scan and exscan are not defined on intercommunicators");
  if (int e = reduce_args(sbuf, rbuf, count, type, op, comm, request, func, &rank, &size)) return e;
  KeptTypes keep(persistent);
  type = keep(type);
  op = keep.op(op);
  return launch(comm, persistent,
                [=](Schedule& s) { return build_scan(s, sbuf, rbuf, count, type, op, exclusive); }, request,
                keep.owner());
}

}  // namespace
}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

// ---- non-blocking ------------------------------------------------------------------------------
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) { XMSG_MPI_ENTRY; return barrier(comm, request, false, "MPI_Ibarrier"); }
XMSG_MPI_ALIAS(Ibarrier)

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return bcast(buffer, count, datatype, root, comm, request, false, "MPI_Ibcast");
}
XMSG_MPI_ALIAS(Ibcast)

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return gather(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype, root, comm, request,
                false, "MPI_Igather");
}
XMSG_MPI_ALIAS(Igather)

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  int rank = 0;
  xmsg_comm_rank(comm, &rank);
  static const int none = 0;
  return gather(sendbuf, sendcount, sendtype, recvbuf, (is_inter(comm) ? root == MPI_ROOT : rank == root) ? recvcounts : &none, displs, 0, recvtype, root,
                comm, request, false, "MPI_Igatherv");
}
XMSG_MPI_ALIAS(Igatherv)

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return scatter(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                 false, "MPI_Iscatter");
}
XMSG_MPI_ALIAS(Iscatter)

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
  XMSG_MPI_ENTRY;
  int rank = 0;
  xmsg_comm_rank(comm, &rank);
  static const int none = 0;
  return scatter(sendbuf, (is_inter(comm) ? root == MPI_ROOT : rank == root) ? sendcounts : &none, displs, 0, sendtype, recvbuf, recvcount, recvtype, root,
                 comm, request, false, "MPI_Iscatterv");
}
XMSG_MPI_ALIAS(Iscatterv)

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return allgather(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype, comm, request, false,
                   "MPI_Iallgather");
}
XMSG_MPI_ALIAS(Iallgather)

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!recvcounts) return fail(MPI_ERR_ARG, "MPI_Iallgatherv", comm, "recvcounts is NULL");
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, comm, request, false,
                   "MPI_Iallgatherv");
}
XMSG_MPI_ALIAS(Iallgatherv)

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return alltoall_common(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount,
                         recvtype, comm, request, false, "MPI_Ialltoall");
}
XMSG_MPI_ALIAS(Ialltoall)

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!recvcounts) return fail(MPI_ERR_ARG, "MPI_Ialltoallv", comm, "recvcounts is NULL");
  return alltoall_common(sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf, recvcounts, rdispls, 0, recvtype, comm,
                         request, false, "MPI_Ialltoallv");
}
XMSG_MPI_ALIAS(Ialltoallv)

int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return alltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                       request, false, "MPI_Ialltoallw");
}
XMSG_MPI_ALIAS(Ialltoallw)

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, false, "MPI_Ireduce");
}
XMSG_MPI_ALIAS(Ireduce)

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, false, "MPI_Iallreduce");
}
XMSG_MPI_ALIAS(Iallreduce)

int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!recvcounts) return fail(MPI_ERR_ARG, "MPI_Ireduce_scatter", comm, "recvcounts is NULL");
  return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, request, false, "MPI_Ireduce_scatter");
}
XMSG_MPI_ALIAS(Ireduce_scatter)

int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return reduce_scatter(sendbuf, recvbuf, nullptr, recvcount, datatype, op, comm, request, false,
                        "MPI_Ireduce_scatter_block");
}
XMSG_MPI_ALIAS(Ireduce_scatter_block)

int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return scan(sendbuf, recvbuf, count, datatype, op, comm, request, false, false, "MPI_Iscan");
}
XMSG_MPI_ALIAS(Iscan)

int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return scan(sendbuf, recvbuf, count, datatype, op, comm, request, false, true, "MPI_Iexscan");
}
XMSG_MPI_ALIAS(Iexscan)

// ---- persistent (MPI-4.0) ----------------------------------------------------------------------
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return barrier(comm, request, true, "MPI_Barrier_init");
}
XMSG_MPI_ALIAS(Barrier_init)

int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return bcast(buffer, count, datatype, root, comm, request, true, "MPI_Bcast_init");
}
XMSG_MPI_ALIAS(Bcast_init)

int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return gather(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype, root, comm, request,
                true, "MPI_Gather_init");
}
XMSG_MPI_ALIAS(Gather_init)

int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  int rank = 0;
  xmsg_comm_rank(comm, &rank);
  static const int none = 0;
  return gather(sendbuf, sendcount, sendtype, recvbuf, (is_inter(comm) ? root == MPI_ROOT : rank == root) ? recvcounts : &none, displs, 0, recvtype, root,
                comm, request, true, "MPI_Gatherv_init");
}
XMSG_MPI_ALIAS(Gatherv_init)

int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return scatter(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                 true, "MPI_Scatter_init");
}
XMSG_MPI_ALIAS(Scatter_init)

int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  int rank = 0;
  xmsg_comm_rank(comm, &rank);
  static const int none = 0;
  return scatter(sendbuf, (is_inter(comm) ? root == MPI_ROOT : rank == root) ? sendcounts : &none, displs, 0, sendtype, recvbuf, recvcount, recvtype, root,
                 comm, request, true, "MPI_Scatterv_init");
}
XMSG_MPI_ALIAS(Scatterv_init)

int PMPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return allgather(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype, comm, request, true,
                   "MPI_Allgather_init");
}
XMSG_MPI_ALIAS(Allgather_init)

int PMPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  if (!recvcounts) return fail(MPI_ERR_ARG, "MPI_Allgatherv_init", comm, "recvcounts is NULL");
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, comm, request, true,
                   "MPI_Allgatherv_init");
}
XMSG_MPI_ALIAS(Allgatherv_init)

int PMPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return alltoall_common(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount,
                         recvtype, comm, request, true, "MPI_Alltoall_init");
}
XMSG_MPI_ALIAS(Alltoall_init)

int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  if (!recvcounts) return fail(MPI_ERR_ARG, "MPI_Alltoallv_init", comm, "recvcounts is NULL");
  return alltoall_common(sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf, recvcounts, rdispls, 0, recvtype, comm,
                         request, true, "MPI_Alltoallv_init");
}
XMSG_MPI_ALIAS(Alltoallv_init)

int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return alltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                       request, true, "MPI_Alltoallw_init");
}
XMSG_MPI_ALIAS(Alltoallw_init)

int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, true, "MPI_Reduce_init");
}
XMSG_MPI_ALIAS(Reduce_init)

int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, true, "MPI_Allreduce_init");
}
XMSG_MPI_ALIAS(Allreduce_init)

int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  if (!recvcounts) return fail(MPI_ERR_ARG, "MPI_Reduce_scatter_init", comm, "recvcounts is NULL");
  return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, request, true,
                        "MPI_Reduce_scatter_init");
}
XMSG_MPI_ALIAS(Reduce_scatter_init)

int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return reduce_scatter(sendbuf, recvbuf, nullptr, recvcount, datatype, op, comm, request, true,
                        "MPI_Reduce_scatter_block_init");
}
XMSG_MPI_ALIAS(Reduce_scatter_block_init)

int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return scan(sendbuf, recvbuf, count, datatype, op, comm, request, true, false, "MPI_Scan_init");
}
XMSG_MPI_ALIAS(Scan_init)

int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  (void)info;
  return scan(sendbuf, recvbuf, count, datatype, op, comm, request, true, true, "MPI_Exscan_init");
}
XMSG_MPI_ALIAS(Exscan_init)

}  // extern "C"
