// Fortran bindings of point-to-point communication and request completion. A Fortran request
// is an index into the request table (support.cpp); completion frees the entry and sets the
// handle to MPI_REQUEST_NULL, as C does with the pointer. Waitany/Testany/Waitsome report
// 1-based indices. Conventions: fortran.hpp.
#include "fortran.hpp"

#include <vector>

using namespace xmsg::mpi::fortran;

namespace {

inline size_t count_of(const MPI_Fint* n) { return *n > 0 ? static_cast<size_t>(*n) : 0; }

// Fortran request handles -> C; false (and the error in *ierr) when one names no request.
bool requests_in(const char* func, const MPI_Fint* count, const MPI_Fint* f, std::vector<MPI_Request>* c,
                 MPI_Fint* ierr) {
  c->assign(count_of(count), MPI_REQUEST_NULL);
  for (size_t i = 0; i < c->size(); ++i) {
    bool ok = false;
    (*c)[i] = request_f2c(f[i], &ok);
    if (!ok) {
      *ierr = bad_request(func, f[i]);
      return false;
    }
  }
  return true;
}

void requests_out(MPI_Fint* f, const std::vector<MPI_Request>& c) {
  for (size_t i = 0; i < c.size(); ++i) request_update(&f[i], c[i]);
}

// An array of statuses, or none for MPI_STATUSES_IGNORE.
struct StatusesOut {
  MPI_Fint* f;
  std::vector<MPI_Status> c;
  StatusesOut(MPI_Fint* f_, size_t n) : f(statuses_ignored(f_) ? nullptr : f_), c(f ? n : 0) {}
  MPI_Status* ptr() { return f ? c.data() : MPI_STATUSES_IGNORE; }
  void copy_out(size_t n) {
    if (!f) return;
    for (size_t i = 0; i < n && i < c.size(); ++i) std::memcpy(f + i * kStatusInts, &c[i], sizeof(MPI_Status));
  }
};

// MPI_Waitsome and MPI_Testsome: the same conversions around the C call; indices 1-based.
void complete_some(const char* func, int (*c_some)(int, MPI_Request[], int*, int[], MPI_Status[]),
                   const MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,
                   MPI_Fint* statuses, MPI_Fint* ierr) {
  std::vector<MPI_Request> c;
  if (!requests_in(func, incount, requests, &c, ierr)) return;
  StatusesOut st(statuses, c.size());
  int n = 0;
  *ierr = c_some(*incount, c.data(), &n, indices, st.ptr());
  *outcount = n;
  if (n != MPI_UNDEFINED) {
    st.copy_out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) ++indices[i];
  }
  requests_out(requests, c);
}

}  // namespace

#define XMSG_FORTRAN_SEND(lower, Cname)                                                                          \
  XMSG_FORTRAN(void, lower,                                                                                     \
               (const void* buf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* dest,          \
                const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* ierr)) {                                    \
    *ierr = Cname(buffer(buf), *count, *datatype, *dest, *tag, *comm);                                           \
  }
XMSG_FORTRAN_SEND(send, MPI_Send)
XMSG_FORTRAN_SEND(ssend, MPI_Ssend)
XMSG_FORTRAN_SEND(rsend, MPI_Rsend)
XMSG_FORTRAN_SEND(bsend, MPI_Bsend)

// Non-blocking and persistent starts: (buf, count, datatype, peer, tag, comm, request, ierr).
#define XMSG_FORTRAN_ISTART(lower, Cname)                                                                        \
  XMSG_FORTRAN(void, lower,                                                                                     \
               (const void* buf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* peer,          \
                const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr)) {                 \
    MPI_Request c = MPI_REQUEST_NULL;                                                                            \
    *ierr = Cname(buffer(buf), *count, *datatype, *peer, *tag, *comm, &c);                                       \
    *request = request_c2f(c);                                                                                   \
  }
XMSG_FORTRAN_ISTART(isend, MPI_Isend)
XMSG_FORTRAN_ISTART(issend, MPI_Issend)
XMSG_FORTRAN_ISTART(irsend, MPI_Irsend)
XMSG_FORTRAN_ISTART(ibsend, MPI_Ibsend)
XMSG_FORTRAN_ISTART(irecv, MPI_Irecv)
XMSG_FORTRAN_ISTART(send_init, MPI_Send_init)
XMSG_FORTRAN_ISTART(ssend_init, MPI_Ssend_init)
XMSG_FORTRAN_ISTART(recv_init, MPI_Recv_init)

XMSG_FORTRAN(void, recv,
             (void* buf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* source, const MPI_Fint* tag,
              const MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr)) {
  StatusOut st(status);
  *ierr = MPI_Recv(buffer(buf), *count, *datatype, *source, *tag, *comm, st.c());
}

XMSG_FORTRAN(void, sendrecv,
             (const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, const MPI_Fint* dest,
              const MPI_Fint* sendtag, void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
              const MPI_Fint* source, const MPI_Fint* recvtag, const MPI_Fint* comm, MPI_Fint* status,
              MPI_Fint* ierr)) {
  StatusOut st(status);
  *ierr = MPI_Sendrecv(buffer(sendbuf), *sendcount, *sendtype, *dest, *sendtag, buffer(recvbuf), *recvcount,
                       *recvtype, *source, *recvtag, *comm, st.c());
}

XMSG_FORTRAN(void, sendrecv_replace,
             (void* buf, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* dest, const MPI_Fint* sendtag,
              const MPI_Fint* source, const MPI_Fint* recvtag, const MPI_Fint* comm, MPI_Fint* status,
              MPI_Fint* ierr)) {
  StatusOut st(status);
  *ierr = MPI_Sendrecv_replace(buffer(buf), *count, *datatype, *dest, *sendtag, *source, *recvtag, *comm, st.c());
}

XMSG_FORTRAN(void, probe,
             (const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr)) {
  StatusOut st(status);
  *ierr = MPI_Probe(*source, *tag, *comm, st.c());
}

XMSG_FORTRAN(void, iprobe,
             (const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* flag, MPI_Fint* status,
              MPI_Fint* ierr)) {
  StatusOut st(status);
  int f = 0;
  *ierr = MPI_Iprobe(*source, *tag, *comm, &f, st.c());
  *flag = logical_out(f);
}

XMSG_FORTRAN(void, get_count, (const MPI_Fint* status, const MPI_Fint* datatype, MPI_Fint* count, MPI_Fint* ierr)) {
  MPI_Status s = status_in(status);
  *ierr = MPI_Get_count(&s, *datatype, count);
}

XMSG_FORTRAN(void, get_elements, (const MPI_Fint* status, const MPI_Fint* datatype, MPI_Fint* count, MPI_Fint* ierr)) {
  MPI_Status s = status_in(status);
  *ierr = MPI_Get_elements(&s, *datatype, count);
}

XMSG_FORTRAN(void, test_cancelled, (const MPI_Fint* status, MPI_Fint* flag, MPI_Fint* ierr)) {
  MPI_Status s = status_in(status);
  int f = 0;
  *ierr = MPI_Test_cancelled(&s, &f);
  *flag = logical_out(f);
}

// ---- completion ----------------------------------------------------------------------------
XMSG_FORTRAN(void, wait, (MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierr)) {
  bool ok = false;
  MPI_Request c = request_f2c(*request, &ok);
  if (!ok) {
    *ierr = bad_request("MPI_Wait", *request);
    return;
  }
  StatusOut st(status);
  *ierr = MPI_Wait(&c, st.c());
  request_update(request, c);
}

XMSG_FORTRAN(void, test, (MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr)) {
  bool ok = false;
  MPI_Request c = request_f2c(*request, &ok);
  if (!ok) {
    *ierr = bad_request("MPI_Test", *request);
    return;
  }
  StatusOut st(status);
  int f = 0;
  *ierr = MPI_Test(&c, &f, st.c());
  *flag = logical_out(f);
  request_update(request, c);
}

XMSG_FORTRAN(void, waitall, (const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses, MPI_Fint* ierr)) {
  std::vector<MPI_Request> c;
  if (!requests_in("MPI_Waitall", count, requests, &c, ierr)) return;
  StatusesOut st(statuses, c.size());
  *ierr = MPI_Waitall(*count, c.data(), st.ptr());
  st.copy_out(c.size());
  requests_out(requests, c);
}

XMSG_FORTRAN(void, testall,
             (const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag, MPI_Fint* statuses, MPI_Fint* ierr)) {
  std::vector<MPI_Request> c;
  if (!requests_in("MPI_Testall", count, requests, &c, ierr)) return;
  StatusesOut st(statuses, c.size());
  int f = 0;
  *ierr = MPI_Testall(*count, c.data(), &f, st.ptr());
  *flag = logical_out(f);
  if (f) st.copy_out(c.size());
  requests_out(requests, c);
}

XMSG_FORTRAN(void, waitany,
             (const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* status, MPI_Fint* ierr)) {
  std::vector<MPI_Request> c;
  if (!requests_in("MPI_Waitany", count, requests, &c, ierr)) return;
  StatusOut st(status);
  int i = MPI_UNDEFINED;
  *ierr = MPI_Waitany(*count, c.data(), &i, st.c());
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  requests_out(requests, c);
}

XMSG_FORTRAN(void, testany,
             (const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* flag, MPI_Fint* status,
              MPI_Fint* ierr)) {
  std::vector<MPI_Request> c;
  if (!requests_in("MPI_Testany", count, requests, &c, ierr)) return;
  StatusOut st(status);
  int i = MPI_UNDEFINED, f = 0;
  *ierr = MPI_Testany(*count, c.data(), &i, &f, st.c());
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  *flag = logical_out(f);
  requests_out(requests, c);
}

XMSG_FORTRAN(void, waitsome,
             (const MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices, MPI_Fint* statuses,
              MPI_Fint* ierr)) {
  complete_some("MPI_Waitsome", MPI_Waitsome, incount, requests, outcount, indices, statuses, ierr);
}

XMSG_FORTRAN(void, testsome,
             (const MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices, MPI_Fint* statuses,
              MPI_Fint* ierr)) {
  complete_some("MPI_Testsome", MPI_Testsome, incount, requests, outcount, indices, statuses, ierr);
}

XMSG_FORTRAN(void, start, (MPI_Fint* request, MPI_Fint* ierr)) {
  bool ok = false;
  MPI_Request c = request_f2c(*request, &ok);
  if (!ok) {
    *ierr = bad_request("MPI_Start", *request);
    return;
  }
  *ierr = MPI_Start(&c);
  request_update(request, c);
}

XMSG_FORTRAN(void, startall, (const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierr)) {
  std::vector<MPI_Request> c;
  if (!requests_in("MPI_Startall", count, requests, &c, ierr)) return;
  *ierr = MPI_Startall(*count, c.data());
  requests_out(requests, c);
}

XMSG_FORTRAN(void, request_free, (MPI_Fint* request, MPI_Fint* ierr)) {
  bool ok = false;
  MPI_Request c = request_f2c(*request, &ok);
  if (!ok) {
    *ierr = bad_request("MPI_Request_free", *request);
    return;
  }
  *ierr = MPI_Request_free(&c);
  request_update(request, c);
}

XMSG_FORTRAN(void, cancel, (MPI_Fint* request, MPI_Fint* ierr)) {
  bool ok = false;
  MPI_Request c = request_f2c(*request, &ok);
  if (!ok) {
    *ierr = bad_request("MPI_Cancel", *request);
    return;
  }
  *ierr = MPI_Cancel(&c);
  request_update(request, c);
}

XMSG_FORTRAN(void, request_get_status, (const MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr)) {
  bool ok = false;
  MPI_Request c = request_f2c(*request, &ok);
  if (!ok) {
    *ierr = bad_request("MPI_Request_get_status", *request);
    return;
  }
  StatusOut st(status);
  int f = 0;
  *ierr = MPI_Request_get_status(c, &f, st.c());
  *flag = logical_out(f);
}

// ---- matched probe and receive (MPI_Message is an int handle in both languages) ------------
XMSG_FORTRAN(void, mprobe,
             (const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* message, MPI_Fint* status,
              MPI_Fint* ierr)) {
  StatusOut st(status);
  *ierr = MPI_Mprobe(*source, *tag, *comm, message, st.c());
}
XMSG_FORTRAN(void, improbe,
             (const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* flag, MPI_Fint* message,
              MPI_Fint* status, MPI_Fint* ierr)) {
  StatusOut st(status);
  int f = 0;
  *ierr = MPI_Improbe(*source, *tag, *comm, &f, message, st.c());
  *flag = logical_out(f);
}
XMSG_FORTRAN(void, mrecv,
             (void* buf, const MPI_Fint* count, const MPI_Fint* datatype, MPI_Fint* message, MPI_Fint* status,
              MPI_Fint* ierr)) {
  StatusOut st(status);
  *ierr = MPI_Mrecv(buffer(buf), *count, *datatype, message, st.c());
}
XMSG_FORTRAN(void, imrecv,
             (void* buf, const MPI_Fint* count, const MPI_Fint* datatype, MPI_Fint* message, MPI_Fint* request,
              MPI_Fint* ierr)) {
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Imrecv(buffer(buf), *count, *datatype, message, &c);
  *request = request_c2f(c);
}
