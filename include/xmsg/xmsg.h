/* xmsg: MPI-style peer-to-peer messaging for HPC codes. The C API.
 *
 * Every function returns an xmsg_error code (XMSG_SUCCESS == 0). On failure,
 * xmsg_last_error_message() says what was wrong, naming the argument ("xmsg_send: dest 7 out of
 * range [0, 4)"); xmsg_error_string(code) is the fixed text of a code.
 *
 * Semantics follow MPI: messages match on (communicator, source, tag), XMSG_ANY_SOURCE and
 * XMSG_ANY_TAG are wildcards, and messages from one sender on one communicator match in the
 * order they were sent. Buffers are contiguous arrays of `count` elements of `datatype`.
 * The library is single-threaded: call it from one thread at a time.
 */
#ifndef XMSG_XMSG_H
#define XMSG_XMSG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---------------------------------------------------------------------------- */
enum xmsg_error {
  XMSG_SUCCESS = 0,
  XMSG_ERR_ARG,             /* an invalid argument not covered below */
  XMSG_ERR_RANK,            /* rank out of range for the communicator */
  XMSG_ERR_COUNT,           /* negative count */
  XMSG_ERR_BUFFER,          /* NULL buffer with count > 0 */
  XMSG_ERR_TAG,             /* negative tag on a send, or above XMSG_TAG_UB */
  XMSG_ERR_COMM,            /* invalid or freed communicator */
  XMSG_ERR_TYPE,            /* invalid datatype */
  XMSG_ERR_OP,              /* invalid reduction op, or op not defined for the datatype */
  XMSG_ERR_ROOT,            /* invalid root of a collective */
  XMSG_ERR_REQUEST,         /* invalid request */
  XMSG_ERR_TRUNCATE,        /* message longer than the receive buffer; the part that fit is delivered */
  XMSG_ERR_PEER_FAILED,     /* the peer process died or its connection broke */
  XMSG_ERR_NOT_INITIALIZED, /* called before xmsg_init or after xmsg_finalize */
  XMSG_ERR_NO_MEMORY,
  XMSG_ERR_TRANSPORT,       /* a transport failed (message says which and why) */
  XMSG_ERR_PENDING,         /* in waitall/testall: this request did not complete because another failed */
  XMSG_ERR_INTERNAL,
  XMSG_ERR_LAST
};

const char* xmsg_error_string(int code);
/* Detailed message of the last failed call on this thread ("" when none). */
const char* xmsg_last_error_message(void);

/* ---- handles and constants ------------------------------------------------------------- */
typedef int xmsg_comm_t;      /* communicator handle */
typedef int xmsg_datatype_t;  /* predefined datatype */
typedef int xmsg_op_t;        /* reduction operation */
typedef struct xmsg_request_s* xmsg_request_t;

#define XMSG_COMM_NULL ((xmsg_comm_t)-1)
#define XMSG_COMM_WORLD ((xmsg_comm_t)0)
#define XMSG_COMM_SELF ((xmsg_comm_t)1)
#define XMSG_REQUEST_NULL ((xmsg_request_t)0)

#define XMSG_ANY_SOURCE (-1)
#define XMSG_PROC_NULL (-2)
#define XMSG_ANY_TAG (-1)
#define XMSG_TAG_UB 0x3fffffff
#define XMSG_UNDEFINED (-32766) /* color for xmsg_comm_split: not part of any new communicator */
#define XMSG_IN_PLACE ((void*)1)

typedef struct xmsg_status {
  int source;     /* rank of the sender in the communicator */
  int tag;
  int error;      /* xmsg_error of this request */
  int cancelled;  /* 1 when a cancelled receive */
  int64_t bytes;  /* bytes received */
} xmsg_status_t;
#define XMSG_STATUS_IGNORE ((xmsg_status_t*)0)
#define XMSG_STATUSES_IGNORE ((xmsg_status_t*)0)

/* Predefined datatypes. The pair types (value, int) serve MINLOC/MAXLOC; the complex types are
   C's float/double/long double _Complex (two parts: real, imaginary). */
enum xmsg_datatype {
  XMSG_BYTE = 1, XMSG_CHAR, XMSG_SIGNED_CHAR, XMSG_UNSIGNED_CHAR,
  XMSG_SHORT, XMSG_UNSIGNED_SHORT, XMSG_INT, XMSG_UNSIGNED, XMSG_LONG, XMSG_UNSIGNED_LONG,
  XMSG_LONG_LONG, XMSG_UNSIGNED_LONG_LONG,
  XMSG_INT8_T, XMSG_INT16_T, XMSG_INT32_T, XMSG_INT64_T,
  XMSG_UINT8_T, XMSG_UINT16_T, XMSG_UINT32_T, XMSG_UINT64_T,
  XMSG_FLOAT, XMSG_DOUBLE, XMSG_LONG_DOUBLE, XMSG_C_BOOL,
  XMSG_FLOAT_INT, XMSG_DOUBLE_INT, XMSG_LONG_INT, XMSG_2INT, XMSG_SHORT_INT, XMSG_LONG_DOUBLE_INT,
  XMSG_FLOAT_COMPLEX, XMSG_DOUBLE_COMPLEX, XMSG_LONG_DOUBLE_COMPLEX,
  XMSG_DATATYPE_LAST
};
/* Size in bytes of one element of `datatype`. */
int xmsg_type_size(xmsg_datatype_t datatype, size_t* size);

/* Predefined reduction operations; user operations get handles >= XMSG_OP_LAST. */
enum xmsg_op {
  XMSG_OP_NULL = 0, XMSG_SUM, XMSG_PROD, XMSG_MIN, XMSG_MAX, XMSG_LAND, XMSG_LOR, XMSG_LXOR,
  XMSG_BAND, XMSG_BOR, XMSG_BXOR, XMSG_MINLOC, XMSG_MAXLOC, XMSG_REPLACE, XMSG_OP_LAST
};
/* inout[i] = in[i] (op) inout[i] for i < count. */
typedef void xmsg_user_function(const void* in, void* inout, int64_t count, xmsg_datatype_t datatype,
                                void* user_data);
int xmsg_op_create(xmsg_user_function* function, int commute, void* user_data, xmsg_op_t* op);
int xmsg_op_free(xmsg_op_t* op);
/* *commute = 1 when `op` (built-in or created) is commutative. */
int xmsg_op_commutative(xmsg_op_t op, int* commute);
/* Local: inout[i] = in[i] (op) inout[i] for i < count, as the reductions apply `op`. */
int xmsg_reduce_local(const void* in, void* inout, int64_t count, xmsg_datatype_t datatype, xmsg_op_t op);

/* ---- job ------------------------------------------------------------------------------- */
int xmsg_init(int* argc, char*** argv);
int xmsg_finalize(void);
int xmsg_initialized(int* flag);
int xmsg_finalized(int* flag);
/* Ends every rank of the job with `code`; the launcher prints `message`. Does not return. */
int xmsg_abort(xmsg_comm_t comm, int code, const char* message);
double xmsg_wtime(void);

int xmsg_comm_rank(xmsg_comm_t comm, int* rank);
int xmsg_comm_size(xmsg_comm_t comm, int* size);
int xmsg_comm_dup(xmsg_comm_t comm, xmsg_comm_t* newcomm);
/* Collective: ranks with the same color form a new communicator, ordered by (key, old rank). */
int xmsg_comm_split(xmsg_comm_t comm, int color, int key, xmsg_comm_t* newcomm);
/* Collective only over the n ranks of `comm` listed in ranks[] (ranks not listed do not call it):
 * in that order they become ranks 0..n-1 of the new communicator. Every listed rank passes the
 * same n, ranks[] and tag; the tag (in [0, XMSG_TAG_UB]) tells concurrent calls between
 * overlapping sets of ranks apart and never matches point-to-point traffic. */
int xmsg_comm_create_group(xmsg_comm_t comm, int n, const int ranks[], int tag, xmsg_comm_t* newcomm);
/* xmsg_comm_create_group over XMSG_COMM_WORLD: world_ranks[] are ranks of the world. */
int xmsg_comm_create_from_world(int n, const int world_ranks[], int tag, xmsg_comm_t* newcomm);
int xmsg_comm_free(xmsg_comm_t* comm);

/* ---- point-to-point -------------------------------------------------------------------- */
int xmsg_send(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag, xmsg_comm_t comm);
int xmsg_recv(void* buf, int64_t count, xmsg_datatype_t datatype, int source, int tag, xmsg_comm_t comm,
              xmsg_status_t* status);
int xmsg_isend(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag, xmsg_comm_t comm,
               xmsg_request_t* request);
int xmsg_irecv(void* buf, int64_t count, xmsg_datatype_t datatype, int source, int tag, xmsg_comm_t comm,
               xmsg_request_t* request);
/* Synchronous sends: complete only once the receiver has matched the message (MPI_Ssend). */
int xmsg_ssend(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag, xmsg_comm_t comm);
int xmsg_issend(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag, xmsg_comm_t comm,
                xmsg_request_t* request);
int xmsg_sendrecv(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, int dest, int sendtag,
                  void* recvbuf, int64_t recvcount, xmsg_datatype_t recvtype, int source, int recvtag,
                  xmsg_comm_t comm, xmsg_status_t* status);

/* Completion. A completed request is freed and set to XMSG_REQUEST_NULL. */
int xmsg_wait(xmsg_request_t* request, xmsg_status_t* status);
int xmsg_test(xmsg_request_t* request, int* flag, xmsg_status_t* status);
int xmsg_waitall(int count, xmsg_request_t requests[], xmsg_status_t statuses[]);
int xmsg_waitany(int count, xmsg_request_t requests[], int* index, xmsg_status_t* status);
int xmsg_testall(int count, xmsg_request_t requests[], int* flag, xmsg_status_t statuses[]);
/* Cancels a posted receive that has not matched; wait on it afterwards (status.cancelled). */
int xmsg_cancel(xmsg_request_t* request);
int xmsg_request_free(xmsg_request_t* request);

int xmsg_probe(int source, int tag, xmsg_comm_t comm, xmsg_status_t* status);
int xmsg_iprobe(int source, int tag, xmsg_comm_t comm, int* flag, xmsg_status_t* status);
/* Number of `datatype` elements in a received message. */
int xmsg_get_count(const xmsg_status_t* status, xmsg_datatype_t datatype, int64_t* count);

/* ---- collectives (every rank of `comm` calls them in the same order) -------------------- */
int xmsg_barrier(xmsg_comm_t comm);
int xmsg_bcast(void* buf, int64_t count, xmsg_datatype_t datatype, int root, xmsg_comm_t comm);
int xmsg_reduce(const void* sendbuf, void* recvbuf, int64_t count, xmsg_datatype_t datatype, xmsg_op_t op,
                int root, xmsg_comm_t comm);
int xmsg_allreduce(const void* sendbuf, void* recvbuf, int64_t count, xmsg_datatype_t datatype, xmsg_op_t op,
                   xmsg_comm_t comm);
/* Reduces the vector of sum(recvcounts) elements; rank j gets elements recvcounts[0] + ... +
 * recvcounts[j-1] onwards, recvcounts[j] of them, in recvbuf. sendbuf XMSG_IN_PLACE: the
 * vector is in recvbuf. */
int xmsg_reduce_scatter(const void* sendbuf, void* recvbuf, const int64_t recvcounts[], xmsg_datatype_t datatype,
                        xmsg_op_t op, xmsg_comm_t comm);
int xmsg_gather(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                int64_t recvcount, xmsg_datatype_t recvtype, int root, xmsg_comm_t comm);
int xmsg_gatherv(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                 const int64_t recvcounts[], const int64_t displs[], xmsg_datatype_t recvtype, int root,
                 xmsg_comm_t comm);
int xmsg_scatter(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                 int64_t recvcount, xmsg_datatype_t recvtype, int root, xmsg_comm_t comm);
int xmsg_scatterv(const void* sendbuf, const int64_t sendcounts[], const int64_t displs[],
                  xmsg_datatype_t sendtype, void* recvbuf, int64_t recvcount, xmsg_datatype_t recvtype,
                  int root, xmsg_comm_t comm);
int xmsg_allgather(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                   int64_t recvcount, xmsg_datatype_t recvtype, xmsg_comm_t comm);
int xmsg_allgatherv(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                    const int64_t recvcounts[], const int64_t displs[], xmsg_datatype_t recvtype,
                    xmsg_comm_t comm);
int xmsg_alltoall(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, void* recvbuf,
                  int64_t recvcount, xmsg_datatype_t recvtype, xmsg_comm_t comm);
int xmsg_alltoallv(const void* sendbuf, const int64_t sendcounts[], const int64_t sdispls[],
                   xmsg_datatype_t sendtype, void* recvbuf, const int64_t recvcounts[],
                   const int64_t rdispls[], xmsg_datatype_t recvtype, xmsg_comm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* XMSG_XMSG_H */
