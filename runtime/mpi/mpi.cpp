// The MPI subset over the xmsg C API. Thin: convert int counts and int arrays to xmsg's
// int64 ones, statuses to MPI_Status, and route every failure through the communicator's
// error handler (MPI_ERRORS_ARE_FATAL by default: print "<MPI function>: <what was wrong>",
// then abort the job).
#include <mpi.h>

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <vector>

namespace {

std::map<MPI_Comm, MPI_Errhandler>& errhandlers() {
  static std::map<MPI_Comm, MPI_Errhandler> handlers;
  return handlers;
}

MPI_Errhandler errhandler_of(MPI_Comm comm) {
  auto& handlers = errhandlers();
  auto it = handlers.find(comm);
  return it == handlers.end() ? MPI_ERRORS_ARE_FATAL : it->second;
}

// xmsg messages start with the xmsg function ("xmsg_send: dest 7 ..."); MPI users called an
// MPI function, so name that one instead.
const char* detail_without_function(const char* message) {
  if (std::strncmp(message, "xmsg_", 5) == 0) {
    const char* colon = std::strstr(message, ": ");
    if (colon) return colon + 2;
  }
  return message;
}

int handle(int code, const char* func, MPI_Comm comm = MPI_COMM_WORLD) {
  if (code == MPI_SUCCESS) return code;
  if (errhandler_of(comm) == MPI_ERRORS_RETURN) return code;
  const char* detail = xmsg_last_error_message();
  char message[768];
  if (detail && *detail)
    std::snprintf(message, sizeof message, "%s: %s", func, detail_without_function(detail));
  else
    std::snprintf(message, sizeof message, "%s: %s", func, xmsg_error_string(code));
  std::fprintf(stderr, "%s (MPI_ERRORS_ARE_FATAL: aborting the job)\n", message);
  std::fflush(stderr);
  xmsg_abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code, message);
  return code;
}

int fail_here(int code, const char* func, MPI_Comm comm, const char* what) {
  if (errhandler_of(comm) == MPI_ERRORS_RETURN) return code;
  char message[768];
  std::snprintf(message, sizeof message, "%s: %s", func, what);
  std::fprintf(stderr, "%s (MPI_ERRORS_ARE_FATAL: aborting the job)\n", message);
  std::fflush(stderr);
  xmsg_abort(MPI_COMM_WORLD, code, message);
  return code;
}

void to_mpi(const xmsg_status_t& in, MPI_Status* out) {
  if (!out) return;
  out->MPI_SOURCE = in.source;
  out->MPI_TAG = in.tag;
  out->MPI_ERROR = in.error;
  out->xmsg_cancelled = in.cancelled;
  out->xmsg_bytes = in.bytes;
}

// An int array of comm-size entries as int64 (empty when the array is absent or the
// communicator is invalid: xmsg then reports the precise error).
std::vector<int64_t> widen(const int* values, MPI_Comm comm) {
  std::vector<int64_t> out;
  int size = 0;
  if (!values || xmsg_comm_size(comm, &size) != XMSG_SUCCESS) return out;
  out.assign(values, values + size);
  return out;
}

const int64_t* data_or_null(const std::vector<int64_t>& v) { return v.empty() ? nullptr : v.data(); }

struct UserOpAdapter {
  MPI_User_function* function;
};

std::map<MPI_Op, UserOpAdapter*>& user_ops() {
  static std::map<MPI_Op, UserOpAdapter*> ops;
  return ops;
}

// MPI's user functions take int lengths; longer vectors are handed over in slices.
void call_mpi_user_function(const void* in, void* inout, int64_t count, xmsg_datatype_t datatype, void* user_data) {
  auto* adapter = static_cast<UserOpAdapter*>(user_data);
  size_t elem = 0;
  xmsg_type_size(datatype, &elem);
  auto* a = static_cast<char*>(const_cast<void*>(in));
  auto* b = static_cast<char*>(inout);
  while (count > 0) {
    int len = count > INT_MAX ? INT_MAX : static_cast<int>(count);
    MPI_Datatype type = datatype;
    adapter->function(a, b, &len, &type);
    a += static_cast<size_t>(len) * elem;
    b += static_cast<size_t>(len) * elem;
    count -= len;
  }
}

}  // namespace

extern "C" {

// ---- environment -------------------------------------------------------------------------
int MPI_Init(int* argc, char*** argv) { return handle(xmsg_init(argc, argv), "MPI_Init"); }

int MPI_Init_thread(int* argc, char*** argv, int /*required*/, int* provided) {
  int code = xmsg_init(argc, argv);
  if (code == MPI_SUCCESS && provided) *provided = MPI_THREAD_SINGLE;
  return handle(code, "MPI_Init_thread");
}

int MPI_Query_thread(int* provided) {
  if (!provided) return fail_here(MPI_ERR_ARG, "MPI_Query_thread", MPI_COMM_WORLD, "provided is NULL");
  *provided = MPI_THREAD_SINGLE;
  return MPI_SUCCESS;
}

int MPI_Initialized(int* flag) { return handle(xmsg_initialized(flag), "MPI_Initialized"); }
int MPI_Finalize(void) { return handle(xmsg_finalize(), "MPI_Finalize"); }
int MPI_Finalized(int* flag) { return handle(xmsg_finalized(flag), "MPI_Finalized"); }

int MPI_Abort(MPI_Comm comm, int errorcode) {
  char message[64];
  std::snprintf(message, sizeof message, "MPI_Abort called with error code %d", errorcode);
  return xmsg_abort(comm, errorcode, message);
}

double MPI_Wtime(void) { return xmsg_wtime(); }

double MPI_Wtick(void) {
  timespec resolution{};
  if (clock_getres(CLOCK_MONOTONIC, &resolution) != 0) return 1e-9;
  return static_cast<double>(resolution.tv_sec) + static_cast<double>(resolution.tv_nsec) * 1e-9;
}

int MPI_Get_processor_name(char* name, int* resultlen) {
  if (!name || !resultlen)
    return fail_here(MPI_ERR_ARG, "MPI_Get_processor_name", MPI_COMM_WORLD, name ? "resultlen is NULL" : "name is NULL");
  if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
  name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}

int MPI_Get_version(int* version, int* subversion) {
  if (version) *version = MPI_VERSION;
  if (subversion) *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (!string || !resultlen)
    return fail_here(MPI_ERR_ARG, "MPI_Error_string", MPI_COMM_WORLD, string ? "resultlen is NULL" : "string is NULL");
  const char* text;
  if (errorcode == MPI_ERR_IN_STATUS) text = "error code in status";
  else if (errorcode == MPI_ERR_UNKNOWN) text = "unknown error";
  else if (errorcode >= 0 && errorcode < XMSG_ERR_LAST) text = xmsg_error_string(errorcode);
  else text = "invalid error code";
  std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
  *resultlen = static_cast<int>(std::strlen(string));
  return MPI_SUCCESS;
}

int MPI_Error_class(int errorcode, int* errorclass) {
  if (!errorclass) return fail_here(MPI_ERR_ARG, "MPI_Error_class", MPI_COMM_WORLD, "errorclass is NULL");
  *errorclass = (errorcode >= 0 && errorcode < MPI_ERR_LASTCODE) ? errorcode : MPI_ERR_UNKNOWN;
  return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, "MPI_Comm_set_errhandler");
  if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN)
    return fail_here(MPI_ERR_ARG, "MPI_Comm_set_errhandler", comm,
                     "errhandler is neither MPI_ERRORS_ARE_FATAL nor MPI_ERRORS_RETURN");
  errhandlers()[comm] = errhandler;
  return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  if (!errhandler) return fail_here(MPI_ERR_ARG, "MPI_Comm_get_errhandler", comm, "errhandler is NULL");
  *errhandler = errhandler_of(comm);
  return MPI_SUCCESS;
}

// ---- communicators and datatypes -----------------------------------------------------------
int MPI_Comm_rank(MPI_Comm comm, int* rank) { return handle(xmsg_comm_rank(comm, rank), "MPI_Comm_rank", comm); }
int MPI_Comm_size(MPI_Comm comm, int* size) { return handle(xmsg_comm_size(comm, size), "MPI_Comm_size", comm); }

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  int code = xmsg_comm_dup(comm, newcomm);
  if (code == MPI_SUCCESS) errhandlers()[*newcomm] = errhandler_of(comm);
  return handle(code, "MPI_Comm_dup", comm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  int code = xmsg_comm_split(comm, color, key, newcomm);
  if (code == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) errhandlers()[*newcomm] = errhandler_of(comm);
  return handle(code, "MPI_Comm_split", comm);
}

int MPI_Comm_free(MPI_Comm* comm) {
  MPI_Comm old = comm ? *comm : MPI_COMM_NULL;
  int code = xmsg_comm_free(comm);
  if (code == MPI_SUCCESS) errhandlers().erase(old);
  return handle(code, "MPI_Comm_free", old);
}

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  if (!size) return fail_here(MPI_ERR_ARG, "MPI_Type_size", MPI_COMM_WORLD, "size is NULL");
  size_t bytes = 0;
  int code = xmsg_type_size(datatype, &bytes);
  if (code == MPI_SUCCESS) *size = static_cast<int>(bytes);
  return handle(code, "MPI_Type_size");
}

// ---- point-to-point ----------------------------------------------------------------------
int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return handle(xmsg_send(buf, count, datatype, dest, tag, comm), "MPI_Send", comm);
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_recv(buf, count, datatype, source, tag, comm, &st);
  to_mpi(st, status);
  return handle(code, "MPI_Recv", comm);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return handle(xmsg_isend(buf, count, datatype, dest, tag, comm, request), "MPI_Isend", comm);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return handle(xmsg_irecv(buf, count, datatype, source, tag, comm, request), "MPI_Irecv", comm);
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, &st);
  to_mpi(st, status);
  return handle(code, "MPI_Sendrecv", comm);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_wait(request, &st);
  to_mpi(st, status);
  return handle(code, "MPI_Wait");
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  std::vector<xmsg_status_t> st;
  if (statuses && count > 0) st.resize(static_cast<size_t>(count));
  int code = xmsg_waitall(count, requests, st.empty() ? XMSG_STATUSES_IGNORE : st.data());
  for (size_t i = 0; i < st.size(); ++i) to_mpi(st[i], &statuses[i]);
  if (code != MPI_SUCCESS && !st.empty() && code != MPI_ERR_COUNT && code != MPI_ERR_ARG) {
    handle(code, "MPI_Waitall");
    return MPI_ERR_IN_STATUS;
  }
  return handle(code, "MPI_Waitall");
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_waitany(count, requests, index, &st);
  if (code == MPI_SUCCESS && index && *index != MPI_UNDEFINED) to_mpi(st, status);
  return handle(code, "MPI_Waitany");
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_test(request, flag, &st);
  if (code == MPI_SUCCESS && flag && *flag) to_mpi(st, status);
  return handle(code, "MPI_Test");
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  std::vector<xmsg_status_t> st;
  if (statuses && count > 0) st.resize(static_cast<size_t>(count));
  int code = xmsg_testall(count, requests, flag, st.empty() ? XMSG_STATUSES_IGNORE : st.data());
  if (flag && *flag)
    for (size_t i = 0; i < st.size(); ++i) to_mpi(st[i], &statuses[i]);
  return handle(code, "MPI_Testall");
}

int MPI_Cancel(MPI_Request* request) { return handle(xmsg_cancel(request), "MPI_Cancel"); }
int MPI_Request_free(MPI_Request* request) { return handle(xmsg_request_free(request), "MPI_Request_free"); }

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_probe(source, tag, comm, &st);
  to_mpi(st, status);
  return handle(code, "MPI_Probe", comm);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_iprobe(source, tag, comm, flag, &st);
  if (code == MPI_SUCCESS && flag && *flag) to_mpi(st, status);
  return handle(code, "MPI_Iprobe", comm);
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  if (!status) return fail_here(MPI_ERR_ARG, "MPI_Get_count", MPI_COMM_WORLD, "status is NULL");
  if (!count) return fail_here(MPI_ERR_ARG, "MPI_Get_count", MPI_COMM_WORLD, "count is NULL");
  size_t elem = 0;
  if (int e = xmsg_type_size(datatype, &elem)) return handle(e, "MPI_Get_count");
  if (elem == 0 || status->xmsg_bytes % static_cast<int64_t>(elem) != 0 ||
      status->xmsg_bytes / static_cast<int64_t>(elem) > INT_MAX)
    *count = MPI_UNDEFINED;
  else
    *count = static_cast<int>(status->xmsg_bytes / static_cast<int64_t>(elem));
  return MPI_SUCCESS;
}

// ---- collectives -------------------------------------------------------------------------
int MPI_Barrier(MPI_Comm comm) { return handle(xmsg_barrier(comm), "MPI_Barrier", comm); }

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return handle(xmsg_bcast(buffer, count, datatype, root, comm), "MPI_Bcast", comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  return handle(xmsg_reduce(sendbuf, recvbuf, count, datatype, op, root, comm), "MPI_Reduce", comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return handle(xmsg_allreduce(sendbuf, recvbuf, count, datatype, op, comm), "MPI_Allreduce", comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return handle(xmsg_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), "MPI_Gather",
                comm);
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto counts = widen(recvcounts, comm), offsets = widen(displs, comm);
  return handle(xmsg_gatherv(sendbuf, sendcount, sendtype, recvbuf, data_or_null(counts), data_or_null(offsets),
                             recvtype, root, comm),
                "MPI_Gatherv", comm);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return handle(xmsg_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), "MPI_Scatter",
                comm);
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto counts = widen(sendcounts, comm), offsets = widen(displs, comm);
  return handle(xmsg_scatterv(sendbuf, data_or_null(counts), data_or_null(offsets), sendtype, recvbuf, recvcount,
                              recvtype, root, comm),
                "MPI_Scatterv", comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return handle(xmsg_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), "MPI_Allgather",
                comm);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  auto counts = widen(recvcounts, comm), offsets = widen(displs, comm);
  return handle(xmsg_allgatherv(sendbuf, sendcount, sendtype, recvbuf, data_or_null(counts), data_or_null(offsets),
                                recvtype, comm),
                "MPI_Allgatherv", comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  return handle(xmsg_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), "MPI_Alltoall",
                comm);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  auto scounts = widen(sendcounts, comm), soffsets = widen(sdispls, comm);
  auto rcounts = widen(recvcounts, comm), roffsets = widen(rdispls, comm);
  return handle(xmsg_alltoallv(sendbuf, data_or_null(scounts), data_or_null(soffsets), sendtype, recvbuf,
                               data_or_null(rcounts), data_or_null(roffsets), recvtype, comm),
                "MPI_Alltoallv", comm);
}

int MPI_Op_create(MPI_User_function* function, int commute, MPI_Op* op) {
  if (!function) return fail_here(MPI_ERR_ARG, "MPI_Op_create", MPI_COMM_WORLD, "function is NULL");
  auto* adapter = new UserOpAdapter{function};
  int code = xmsg_op_create(&call_mpi_user_function, commute, adapter, op);
  if (code != MPI_SUCCESS) {
    delete adapter;
    return handle(code, "MPI_Op_create");
  }
  user_ops()[*op] = adapter;
  return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op* op) {
  MPI_Op old = op ? *op : MPI_OP_NULL;
  int code = xmsg_op_free(op);
  if (code == MPI_SUCCESS) {
    auto it = user_ops().find(old);
    if (it != user_ops().end()) {
      delete it->second;
      user_ops().erase(it);
    }
  }
  return handle(code, "MPI_Op_free");
}

}  // extern "C"
