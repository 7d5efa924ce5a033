/* xmsg's MPI subset: the MPI C API over xmsg.h, for codes and benchmarks written against MPI.
 * Build with xmsgcc / xmsgcxx (or add this directory to the include path and link
 * -lxmsg_mpi -lxmsg). Usable from C and C++.
 *
 * Handles are xmsg's: MPI_Comm, MPI_Datatype and MPI_Op are the xmsg handle integers and
 * MPI_Request is an xmsg_request_t, so the two APIs can be mixed in one program. Errors follow
 * MPI: by default (MPI_ERRORS_ARE_FATAL) a failing call prints "<MPI function>: <what was
 * wrong>" and aborts the job; after MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN) calls
 * return the error class instead. Thread support is MPI_THREAD_SINGLE.
 */
#ifndef XMSG_MPI_H
#define XMSG_MPI_H

#include <xmsg/xmsg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define XMSG_MPI 1

typedef xmsg_comm_t MPI_Comm;
typedef xmsg_datatype_t MPI_Datatype;
typedef xmsg_op_t MPI_Op;
typedef xmsg_request_t MPI_Request;
typedef int MPI_Errhandler;
typedef int64_t MPI_Aint;
typedef int64_t MPI_Count;

typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int xmsg_cancelled;
  int64_t xmsg_bytes;
} MPI_Status;

/* ---- error classes (the xmsg codes, plus MPI's own) ---------------------------------- */
#define MPI_SUCCESS XMSG_SUCCESS
#define MPI_ERR_ARG XMSG_ERR_ARG
#define MPI_ERR_RANK XMSG_ERR_RANK
#define MPI_ERR_COUNT XMSG_ERR_COUNT
#define MPI_ERR_BUFFER XMSG_ERR_BUFFER
#define MPI_ERR_TAG XMSG_ERR_TAG
#define MPI_ERR_COMM XMSG_ERR_COMM
#define MPI_ERR_TYPE XMSG_ERR_TYPE
#define MPI_ERR_OP XMSG_ERR_OP
#define MPI_ERR_ROOT XMSG_ERR_ROOT
#define MPI_ERR_REQUEST XMSG_ERR_REQUEST
#define MPI_ERR_TRUNCATE XMSG_ERR_TRUNCATE
#define MPI_ERR_PROC_FAILED XMSG_ERR_PEER_FAILED
#define MPI_ERR_NO_MEM XMSG_ERR_NO_MEMORY
#define MPI_ERR_OTHER XMSG_ERR_TRANSPORT
#define MPI_ERR_PENDING XMSG_ERR_PENDING
#define MPI_ERR_INTERN XMSG_ERR_INTERNAL
#define MPI_ERR_IN_STATUS (XMSG_ERR_LAST + 0)
#define MPI_ERR_UNKNOWN (XMSG_ERR_LAST + 1)
#define MPI_ERR_LASTCODE (XMSG_ERR_LAST + 2)

/* ---- constants ---------------------------------------------------------------------- */
#define MPI_COMM_NULL XMSG_COMM_NULL
#define MPI_COMM_WORLD XMSG_COMM_WORLD
#define MPI_COMM_SELF XMSG_COMM_SELF
#define MPI_REQUEST_NULL XMSG_REQUEST_NULL
#define MPI_ANY_SOURCE XMSG_ANY_SOURCE
#define MPI_ANY_TAG XMSG_ANY_TAG
#define MPI_PROC_NULL XMSG_PROC_NULL
#define MPI_UNDEFINED XMSG_UNDEFINED
#define MPI_TAG_UB XMSG_TAG_UB
#define MPI_IN_PLACE XMSG_IN_PLACE
#define MPI_STATUS_IGNORE ((MPI_Status*)0)
#define MPI_STATUSES_IGNORE ((MPI_Status*)0)
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

#define MPI_ERRHANDLER_NULL 0
#define MPI_ERRORS_ARE_FATAL 1
#define MPI_ERRORS_RETURN 2

/* ---- datatypes ---------------------------------------------------------------------- */
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_BYTE XMSG_BYTE
#define MPI_PACKED XMSG_BYTE
#define MPI_CHAR XMSG_CHAR
#define MPI_SIGNED_CHAR XMSG_SIGNED_CHAR
#define MPI_UNSIGNED_CHAR XMSG_UNSIGNED_CHAR
#define MPI_SHORT XMSG_SHORT
#define MPI_UNSIGNED_SHORT XMSG_UNSIGNED_SHORT
#define MPI_INT XMSG_INT
#define MPI_UNSIGNED XMSG_UNSIGNED
#define MPI_LONG XMSG_LONG
#define MPI_UNSIGNED_LONG XMSG_UNSIGNED_LONG
#define MPI_LONG_LONG XMSG_LONG_LONG
#define MPI_LONG_LONG_INT XMSG_LONG_LONG
#define MPI_UNSIGNED_LONG_LONG XMSG_UNSIGNED_LONG_LONG
#define MPI_INT8_T XMSG_INT8_T
#define MPI_INT16_T XMSG_INT16_T
#define MPI_INT32_T XMSG_INT32_T
#define MPI_INT64_T XMSG_INT64_T
#define MPI_UINT8_T XMSG_UINT8_T
#define MPI_UINT16_T XMSG_UINT16_T
#define MPI_UINT32_T XMSG_UINT32_T
#define MPI_UINT64_T XMSG_UINT64_T
#define MPI_FLOAT XMSG_FLOAT
#define MPI_DOUBLE XMSG_DOUBLE
#define MPI_LONG_DOUBLE XMSG_LONG_DOUBLE
#define MPI_C_BOOL XMSG_C_BOOL
#define MPI_FLOAT_INT XMSG_FLOAT_INT
#define MPI_DOUBLE_INT XMSG_DOUBLE_INT
#define MPI_LONG_INT XMSG_LONG_INT
#define MPI_2INT XMSG_2INT
#define MPI_SHORT_INT XMSG_SHORT_INT
#define MPI_LONG_DOUBLE_INT XMSG_LONG_DOUBLE_INT

/* ---- ops ---------------------------------------------------------------------------- */
#define MPI_OP_NULL XMSG_OP_NULL
#define MPI_SUM XMSG_SUM
#define MPI_PROD XMSG_PROD
#define MPI_MIN XMSG_MIN
#define MPI_MAX XMSG_MAX
#define MPI_LAND XMSG_LAND
#define MPI_LOR XMSG_LOR
#define MPI_LXOR XMSG_LXOR
#define MPI_BAND XMSG_BAND
#define MPI_BOR XMSG_BOR
#define MPI_BXOR XMSG_BXOR
#define MPI_MINLOC XMSG_MINLOC
#define MPI_MAXLOC XMSG_MAXLOC
#define MPI_REPLACE XMSG_REPLACE

typedef void MPI_User_function(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);

/* ---- environment -------------------------------------------------------------------- */
int MPI_Init(int* argc, char*** argv);
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MPI_Query_thread(int* provided);
int MPI_Initialized(int* flag);
int MPI_Finalize(void);
int MPI_Finalized(int* flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Get_processor_name(char* name, int* resultlen);
int MPI_Get_version(int* version, int* subversion);
int MPI_Error_string(int errorcode, char* string, int* resultlen);
int MPI_Error_class(int errorcode, int* errorclass);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler);

/* ---- communicators and datatypes ---------------------------------------------------- */
int MPI_Comm_rank(MPI_Comm comm, int* rank);
int MPI_Comm_size(MPI_Comm comm, int* size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int MPI_Comm_free(MPI_Comm* comm);
int MPI_Type_size(MPI_Datatype datatype, int* size);

/* ---- point-to-point ----------------------------------------------------------------- */
int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status);
int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request);
int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status);
int MPI_Wait(MPI_Request* request, MPI_Status* status);
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status);
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status);
int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int MPI_Cancel(MPI_Request* request);
int MPI_Request_free(MPI_Request* request);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count);

/* ---- collectives -------------------------------------------------------------------- */
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm);
int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Op_create(MPI_User_function* function, int commute, MPI_Op* op);
int MPI_Op_free(MPI_Op* op);

#ifdef __cplusplus
}
#endif

#endif /* XMSG_MPI_H */
