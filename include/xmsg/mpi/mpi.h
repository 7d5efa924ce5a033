/* xmsg's MPI: the MPI-3.1 C API (and the MPI-4.0 persistent collectives) over xmsg.h, for codes
 * and benchmarks written against MPI. Build with xmsgcc / xmsgcxx (or add this directory to the
 * include path and link -lxmsg_mpi -lxmsg). Usable from C and C++.
 *
 * Handles: MPI_Comm and MPI_Op are xmsg's handle integers; predefined datatypes are xmsg's
 * datatypes, derived ones are handles of this library; MPI_Request is an xmsg_request_t for
 * plain point-to-point (so the two APIs mix in one program) and a handle of this library for
 * everything else. Errors follow MPI: by default (MPI_ERRORS_ARE_FATAL) a failing call prints
 * "<MPI function>: <what was wrong>" and aborts the job; with MPI_ERRORS_RETURN, or a handler of
 * the program's own, calls return the error code instead.
 *
 * Thread support: MPI_THREAD_FUNNELED (only the thread that called MPI_Init_thread makes MPI
 * calls). Not provided: dynamic processes (MPI_Comm_spawn, ports), MPI-IO (MPI_File_*).
 *
 * Profiling (PMPI): every MPI_X is a weak alias of PMPI_X, so a tool may define MPI_X itself
 * and call PMPI_X.
 */
#ifndef XMSG_MPI_H
#define XMSG_MPI_H

#include <xmsg/xmsg.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What is implemented is MPI-3.1's point-to-point, datatypes, collectives (blocking and
 * non-blocking), groups, communicators, intercommunicators, attributes, info, topologies and
 * environment chapters; one-sided, dynamic processes and I/O are not. */
#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define XMSG_MPI 1

/* ---- handle types -------------------------------------------------------------------- */
typedef xmsg_comm_t MPI_Comm;
typedef xmsg_datatype_t MPI_Datatype;
typedef xmsg_op_t MPI_Op;
typedef xmsg_request_t MPI_Request;
typedef int MPI_Group;
typedef int MPI_Info;
typedef int MPI_Errhandler;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Message;
typedef intptr_t MPI_Aint;
typedef int64_t MPI_Offset;
typedef int64_t MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int xmsg_cancelled;
  int64_t xmsg_bytes;
} MPI_Status;

/* ---- error classes --------------------------------------------------------------------
 * The xmsg codes keep their values; MPI's other classes follow them. */
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
#define MPI_ERR_GROUP (XMSG_ERR_LAST + 2)
#define MPI_ERR_TOPOLOGY (XMSG_ERR_LAST + 3)
#define MPI_ERR_DIMS (XMSG_ERR_LAST + 4)
#define MPI_ERR_KEYVAL (XMSG_ERR_LAST + 5)
#define MPI_ERR_INFO (XMSG_ERR_LAST + 6)
#define MPI_ERR_INFO_KEY (XMSG_ERR_LAST + 7)
#define MPI_ERR_INFO_VALUE (XMSG_ERR_LAST + 8)
#define MPI_ERR_INFO_NOKEY (XMSG_ERR_LAST + 9)
#define MPI_ERR_UNSUPPORTED_OPERATION (XMSG_ERR_LAST + 10)
#define MPI_ERR_NOT_SAME (XMSG_ERR_LAST + 11)
#define MPI_ERR_WIN (XMSG_ERR_LAST + 12)
#define MPI_ERR_BASE (XMSG_ERR_LAST + 13)
#define MPI_ERR_SIZE (XMSG_ERR_LAST + 14)
#define MPI_ERR_DISP (XMSG_ERR_LAST + 15)
#define MPI_ERR_LOCKTYPE (XMSG_ERR_LAST + 16)
#define MPI_ERR_ASSERT (XMSG_ERR_LAST + 17)
#define MPI_ERR_RMA_CONFLICT (XMSG_ERR_LAST + 18)
#define MPI_ERR_RMA_SYNC (XMSG_ERR_LAST + 19)
#define MPI_ERR_RMA_RANGE (XMSG_ERR_LAST + 20)
#define MPI_ERR_RMA_ATTACH (XMSG_ERR_LAST + 21)
#define MPI_ERR_RMA_SHARED (XMSG_ERR_LAST + 22)
#define MPI_ERR_RMA_FLAVOR (XMSG_ERR_LAST + 23)
#define MPI_ERR_SPAWN (XMSG_ERR_LAST + 24)
#define MPI_ERR_PORT (XMSG_ERR_LAST + 25)
#define MPI_ERR_SERVICE (XMSG_ERR_LAST + 26)
#define MPI_ERR_NAME (XMSG_ERR_LAST + 27)
#define MPI_ERR_FILE (XMSG_ERR_LAST + 28)
#define MPI_ERR_AMODE (XMSG_ERR_LAST + 29)
#define MPI_ERR_UNSUPPORTED_DATAREP (XMSG_ERR_LAST + 30)
#define MPI_ERR_NO_SUCH_FILE (XMSG_ERR_LAST + 31)
#define MPI_ERR_FILE_EXISTS (XMSG_ERR_LAST + 32)
#define MPI_ERR_BAD_FILE (XMSG_ERR_LAST + 33)
#define MPI_ERR_ACCESS (XMSG_ERR_LAST + 34)
#define MPI_ERR_NO_SPACE (XMSG_ERR_LAST + 35)
#define MPI_ERR_QUOTA (XMSG_ERR_LAST + 36)
#define MPI_ERR_READ_ONLY (XMSG_ERR_LAST + 37)
#define MPI_ERR_FILE_IN_USE (XMSG_ERR_LAST + 38)
#define MPI_ERR_DUP_DATAREP (XMSG_ERR_LAST + 39)
#define MPI_ERR_CONVERSION (XMSG_ERR_LAST + 40)
#define MPI_ERR_IO (XMSG_ERR_LAST + 41)
#define MPI_ERR_LASTCODE (XMSG_ERR_LAST + 42)

/* ---- constants ----------------------------------------------------------------------- */
#define MPI_COMM_NULL XMSG_COMM_NULL
#define MPI_COMM_WORLD XMSG_COMM_WORLD
#define MPI_COMM_SELF XMSG_COMM_SELF
#define MPI_REQUEST_NULL XMSG_REQUEST_NULL
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_GROUP_EMPTY ((MPI_Group)1)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_INFO_ENV ((MPI_Info)1)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_FILE_NULL ((MPI_File)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)-1)
#define MPI_ANY_SOURCE XMSG_ANY_SOURCE
#define MPI_ANY_TAG XMSG_ANY_TAG
#define MPI_PROC_NULL XMSG_PROC_NULL
#define MPI_ROOT (-3)
#define MPI_UNDEFINED XMSG_UNDEFINED
#define MPI_IN_PLACE XMSG_IN_PLACE
#define MPI_BOTTOM ((void*)0)
#define MPI_STATUS_IGNORE ((MPI_Status*)0)
#define MPI_STATUSES_IGNORE ((MPI_Status*)0)
#define MPI_ERRCODES_IGNORE ((int*)0)
#define MPI_ARGV_NULL ((char**)0)
#define MPI_ARGVS_NULL ((char***)0)
#define MPI_UNWEIGHTED ((int*)2)
#define MPI_WEIGHTS_EMPTY ((int*)3)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128
#define MPI_BSEND_OVERHEAD 64

/* results of MPI_Comm_compare / MPI_Group_compare */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* topologies */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED 1

/* predefined attribute keys (communicators, MPI_COMM_WORLD's values) */
#define MPI_KEYVAL_INVALID (-1)
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_APPNUM 5
#define MPI_UNIVERSE_SIZE 6
#define MPI_LASTUSEDCODE 7
/* window attribute keys */
#define MPI_WIN_BASE 8
#define MPI_WIN_SIZE 9
#define MPI_WIN_DISP_UNIT 10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL 12

/* datatype decoding */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR 5
#define MPI_COMBINER_INDEXED 6
#define MPI_COMBINER_HINDEXED 7
#define MPI_COMBINER_INDEXED_BLOCK 8
#define MPI_COMBINER_HINDEXED_BLOCK 9
#define MPI_COMBINER_STRUCT 10
#define MPI_COMBINER_SUBARRAY 11
#define MPI_COMBINER_DARRAY 12
#define MPI_COMBINER_F90_REAL 13
#define MPI_COMBINER_F90_COMPLEX 14
#define MPI_COMBINER_F90_INTEGER 15
#define MPI_COMBINER_RESIZED 16
#define MPI_COMBINER_HVECTOR_INTEGER 17
#define MPI_COMBINER_HINDEXED_INTEGER 18
#define MPI_COMBINER_STRUCT_INTEGER 19
#define MPI_ORDER_C 0
#define MPI_ORDER_FORTRAN 1
#define MPI_DISTRIBUTE_BLOCK 0
#define MPI_DISTRIBUTE_CYCLIC 1
#define MPI_DISTRIBUTE_NONE 2
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)
#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

/* one-sided */
#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED 2
#define MPI_MODE_NOCHECK 1
#define MPI_MODE_NOSTORE 2
#define MPI_MODE_NOPUT 4
#define MPI_MODE_NOPRECEDE 8
#define MPI_MODE_NOSUCCEED 16
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2

/* MPI-IO (declared so programs with I/O paths they may never run build: docs/mpi.md) */
#define MPI_MODE_CREATE 1
#define MPI_MODE_RDONLY 2
#define MPI_MODE_WRONLY 4
#define MPI_MODE_RDWR 8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_EXCL 64
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT (-54278278)

/* error handlers */
#define MPI_ERRHANDLER_NULL 0
#define MPI_ERRORS_ARE_FATAL 1
#define MPI_ERRORS_RETURN 2

/* ---- datatypes ----------------------------------------------------------------------- */
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_BYTE XMSG_BYTE
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
/* Predefined by this library (an xmsg datatype underneath each; MPI names and envelopes). */
#define MPI_PACKED ((MPI_Datatype)40)
#define MPI_WCHAR ((MPI_Datatype)41)
#define MPI_AINT ((MPI_Datatype)42)
#define MPI_OFFSET ((MPI_Datatype)43)
#define MPI_COUNT ((MPI_Datatype)44)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)45)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)46)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)47)
#define MPI_CXX_BOOL ((MPI_Datatype)48)
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)49)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)50)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)51)

/* ---- ops ----------------------------------------------------------------------------- */
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
#define MPI_NO_OP ((MPI_Op)-2) /* one-sided accumulate only */

/* ---- callback types ------------------------------------------------------------------ */
typedef void MPI_User_function(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void* extra_state,
                                        void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void* attribute_val, void* extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                                        void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                                          void* extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void* extra_state, void* attribute_val_in,
                                       void* attribute_val_out, int* flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void* attribute_val, void* extra_state);
typedef void MPI_Comm_errhandler_function(MPI_Comm* comm, int* error_code, ...);
typedef void MPI_Win_errhandler_function(MPI_Win* win, int* error_code, ...);
typedef void MPI_File_errhandler_function(MPI_File* file, int* error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef int MPI_Datarep_conversion_function(void* userbuf, MPI_Datatype datatype, int count, void* filebuf,
                                            MPI_Offset position, void* extra_state);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint* extent, void* extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function*)0)
typedef int MPI_Grequest_query_function(void* extra_state, MPI_Status* status);
typedef int MPI_Grequest_free_function(void* extra_state);
typedef int MPI_Grequest_cancel_function(void* extra_state, int complete);
/* MPI-1 names of the communicator attribute callbacks */
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void* extra_state, void* attribute_val_in,
                              void* attribute_val_out, int* flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void* attribute_val, void* extra_state);

/* The predefined attribute callbacks (functions of this library). */
int xmsg_mpi_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int*);
int xmsg_mpi_comm_dup_fn(MPI_Comm, int, void*, void*, void*, int*);
int xmsg_mpi_comm_null_delete_fn(MPI_Comm, int, void*, void*);
int xmsg_mpi_type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int*);
int xmsg_mpi_type_dup_fn(MPI_Datatype, int, void*, void*, void*, int*);
int xmsg_mpi_type_null_delete_fn(MPI_Datatype, int, void*, void*);
int xmsg_mpi_win_null_copy_fn(MPI_Win, int, void*, void*, void*, int*);
int xmsg_mpi_win_dup_fn(MPI_Win, int, void*, void*, void*, int*);
int xmsg_mpi_win_null_delete_fn(MPI_Win, int, void*, void*);
#define MPI_COMM_NULL_COPY_FN xmsg_mpi_comm_null_copy_fn
#define MPI_COMM_DUP_FN xmsg_mpi_comm_dup_fn
#define MPI_COMM_NULL_DELETE_FN xmsg_mpi_comm_null_delete_fn
#define MPI_NULL_COPY_FN xmsg_mpi_comm_null_copy_fn
#define MPI_DUP_FN xmsg_mpi_comm_dup_fn
#define MPI_NULL_DELETE_FN xmsg_mpi_comm_null_delete_fn
#define MPI_TYPE_NULL_COPY_FN xmsg_mpi_type_null_copy_fn
#define MPI_TYPE_DUP_FN xmsg_mpi_type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN xmsg_mpi_type_null_delete_fn
#define MPI_WIN_NULL_COPY_FN xmsg_mpi_win_null_copy_fn
#define MPI_WIN_DUP_FN xmsg_mpi_win_dup_fn
#define MPI_WIN_NULL_DELETE_FN xmsg_mpi_win_null_delete_fn

/* Every function is declared twice: MPI_X (a weak alias) and PMPI_X (the implementation). */
#define XMSG_MPI_API(ret, name, params) ret MPI_##name params; ret PMPI_##name params;

/* ---- environment (chapter 8) --------------------------------------------------------- */
XMSG_MPI_API(int, Init, (int* argc, char*** argv))
XMSG_MPI_API(int, Init_thread, (int* argc, char*** argv, int required, int* provided))
XMSG_MPI_API(int, Query_thread, (int* provided))
XMSG_MPI_API(int, Is_thread_main, (int* flag))
XMSG_MPI_API(int, Initialized, (int* flag))
XMSG_MPI_API(int, Finalize, (void))
XMSG_MPI_API(int, Finalized, (int* flag))
XMSG_MPI_API(int, Abort, (MPI_Comm comm, int errorcode))
XMSG_MPI_API(double, Wtime, (void))
XMSG_MPI_API(double, Wtick, (void))
XMSG_MPI_API(int, Get_processor_name, (char* name, int* resultlen))
XMSG_MPI_API(int, Get_version, (int* version, int* subversion))
XMSG_MPI_API(int, Get_library_version, (char* version, int* resultlen))
XMSG_MPI_API(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr))
XMSG_MPI_API(int, Free_mem, (void* base))
XMSG_MPI_API(int, Pcontrol, (const int level, ...))
XMSG_MPI_API(int, Error_string, (int errorcode, char* string, int* resultlen))
XMSG_MPI_API(int, Error_class, (int errorcode, int* errorclass))
XMSG_MPI_API(int, Add_error_class, (int* errorclass))
XMSG_MPI_API(int, Add_error_code, (int errorclass, int* errorcode))
XMSG_MPI_API(int, Add_error_string, (int errorcode, const char* string))
XMSG_MPI_API(int, Comm_create_errhandler, (MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler))
XMSG_MPI_API(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
XMSG_MPI_API(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler))
XMSG_MPI_API(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
XMSG_MPI_API(int, Errhandler_free, (MPI_Errhandler* errhandler))
XMSG_MPI_API(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
XMSG_MPI_API(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))

/* ---- info objects (chapter 9) -------------------------------------------------------- */
XMSG_MPI_API(int, Info_create, (MPI_Info* info))
XMSG_MPI_API(int, Info_dup, (MPI_Info info, MPI_Info* newinfo))
XMSG_MPI_API(int, Info_free, (MPI_Info* info))
XMSG_MPI_API(int, Info_set, (MPI_Info info, const char* key, const char* value))
XMSG_MPI_API(int, Info_get, (MPI_Info info, const char* key, int valuelen, char* value, int* flag))
XMSG_MPI_API(int, Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag))
XMSG_MPI_API(int, Info_delete, (MPI_Info info, const char* key))
XMSG_MPI_API(int, Info_get_nkeys, (MPI_Info info, int* nkeys))
XMSG_MPI_API(int, Info_get_nthkey, (MPI_Info info, int n, char* key))

/* ---- groups, communicators, attributes (chapter 6) ----------------------------------- */
XMSG_MPI_API(int, Comm_rank, (MPI_Comm comm, int* rank))
XMSG_MPI_API(int, Comm_size, (MPI_Comm comm, int* size))
XMSG_MPI_API(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result))
XMSG_MPI_API(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm))
XMSG_MPI_API(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm))
XMSG_MPI_API(int, Comm_idup, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request))
XMSG_MPI_API(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm))
XMSG_MPI_API(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm))
XMSG_MPI_API(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm))
XMSG_MPI_API(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm))
XMSG_MPI_API(int, Comm_free, (MPI_Comm* comm))
XMSG_MPI_API(int, Comm_disconnect, (MPI_Comm* comm))
XMSG_MPI_API(int, Comm_group, (MPI_Comm comm, MPI_Group* group))
XMSG_MPI_API(int, Comm_test_inter, (MPI_Comm comm, int* flag))
XMSG_MPI_API(int, Comm_remote_size, (MPI_Comm comm, int* size))
XMSG_MPI_API(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group))
XMSG_MPI_API(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                                     int tag, MPI_Comm* newintercomm))
XMSG_MPI_API(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm))
XMSG_MPI_API(int, Comm_set_name, (MPI_Comm comm, const char* comm_name))
XMSG_MPI_API(int, Comm_get_name, (MPI_Comm comm, char* comm_name, int* resultlen))
XMSG_MPI_API(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
XMSG_MPI_API(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used))
XMSG_MPI_API(int, Comm_create_keyval, (MPI_Comm_copy_attr_function* copy_fn, MPI_Comm_delete_attr_function* delete_fn,
                                       int* comm_keyval, void* extra_state))
XMSG_MPI_API(int, Comm_free_keyval, (int* comm_keyval))
XMSG_MPI_API(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val))
XMSG_MPI_API(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag))
XMSG_MPI_API(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
XMSG_MPI_API(int, Keyval_create, (MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                                  void* extra_state))
XMSG_MPI_API(int, Keyval_free, (int* keyval))
XMSG_MPI_API(int, Attr_put, (MPI_Comm comm, int keyval, void* attribute_val))
XMSG_MPI_API(int, Attr_get, (MPI_Comm comm, int keyval, void* attribute_val, int* flag))
XMSG_MPI_API(int, Attr_delete, (MPI_Comm comm, int keyval))
XMSG_MPI_API(int, Group_size, (MPI_Group group, int* size))
XMSG_MPI_API(int, Group_rank, (MPI_Group group, int* rank))
XMSG_MPI_API(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
XMSG_MPI_API(int, Group_compare, (MPI_Group group1, MPI_Group group2, int* result))
XMSG_MPI_API(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
XMSG_MPI_API(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
XMSG_MPI_API(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
XMSG_MPI_API(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
XMSG_MPI_API(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
XMSG_MPI_API(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))
XMSG_MPI_API(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))
XMSG_MPI_API(int, Group_free, (MPI_Group* group))

/* ---- datatypes (chapter 4) ----------------------------------------------------------- */
XMSG_MPI_API(int, Type_size, (MPI_Datatype datatype, int* size))
XMSG_MPI_API(int, Type_size_x, (MPI_Datatype datatype, MPI_Count* size))
XMSG_MPI_API(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent))
XMSG_MPI_API(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent))
XMSG_MPI_API(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent))
XMSG_MPI_API(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent))
XMSG_MPI_API(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                        MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_indexed, (int count, const int array_of_blocklengths[], const int array_of_displacements[],
                                 MPI_Datatype oldtype, MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_hindexed, (int count, const int array_of_blocklengths[],
                                         const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                         MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_indexed_block, (int count, int blocklength, const int array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint array_of_displacements[],
                                               MPI_Datatype oldtype, MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_struct, (int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                                       MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_subarray, (int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                                         const int array_of_starts[], int order, MPI_Datatype oldtype,
                                         MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[],
                                       const int array_of_distribs[], const int array_of_dargs[],
                                       const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                       MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype))
XMSG_MPI_API(int, Type_commit, (MPI_Datatype* datatype))
XMSG_MPI_API(int, Type_free, (MPI_Datatype* datatype))
XMSG_MPI_API(int, Type_get_envelope, (MPI_Datatype datatype, int* num_integers, int* num_addresses,
                                      int* num_datatypes, int* combiner))
XMSG_MPI_API(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                                      int array_of_integers[], MPI_Aint array_of_addresses[],
                                      MPI_Datatype array_of_datatypes[]))
XMSG_MPI_API(int, Type_set_name, (MPI_Datatype datatype, const char* type_name))
XMSG_MPI_API(int, Type_get_name, (MPI_Datatype datatype, char* type_name, int* resultlen))
XMSG_MPI_API(int, Type_match_size, (int typeclass, int size, MPI_Datatype* datatype))
XMSG_MPI_API(int, Type_create_keyval, (MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn,
                                       int* type_keyval, void* extra_state))
XMSG_MPI_API(int, Type_free_keyval, (int* type_keyval))
XMSG_MPI_API(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val))
XMSG_MPI_API(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag))
XMSG_MPI_API(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
XMSG_MPI_API(int, Get_address, (const void* location, MPI_Aint* address))
XMSG_MPI_API(int, Pack, (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
                         int* position, MPI_Comm comm))
XMSG_MPI_API(int, Unpack, (const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                           MPI_Datatype datatype, MPI_Comm comm))
XMSG_MPI_API(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size))
XMSG_MPI_API(int, Pack_external, (const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                                  void* outbuf, MPI_Aint outsize, MPI_Aint* position))
XMSG_MPI_API(int, Unpack_external, (const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position,
                                    void* outbuf, int outcount, MPI_Datatype datatype))
XMSG_MPI_API(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size))
XMSG_MPI_API(int, Get_count, (const MPI_Status* status, MPI_Datatype datatype, int* count))
XMSG_MPI_API(int, Get_elements, (const MPI_Status* status, MPI_Datatype datatype, int* count))
XMSG_MPI_API(int, Get_elements_x, (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count))
XMSG_MPI_API(int, Status_set_elements, (MPI_Status* status, MPI_Datatype datatype, int count))
XMSG_MPI_API(int, Status_set_elements_x, (MPI_Status* status, MPI_Datatype datatype, MPI_Count count))
XMSG_MPI_API(int, Status_set_cancelled, (MPI_Status* status, int flag))
XMSG_MPI_API(int, Test_cancelled, (const MPI_Status* status, int* flag))

/* ---- point-to-point (chapter 3) ------------------------------------------------------ */
XMSG_MPI_API(int, Send, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
XMSG_MPI_API(int, Ssend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
XMSG_MPI_API(int, Bsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
XMSG_MPI_API(int, Rsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
XMSG_MPI_API(int, Recv, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Status* status))
XMSG_MPI_API(int, Isend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request))
XMSG_MPI_API(int, Issend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request* request))
XMSG_MPI_API(int, Ibsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request* request))
XMSG_MPI_API(int, Irsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request* request))
XMSG_MPI_API(int, Irecv, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Request* request))
XMSG_MPI_API(int, Buffer_attach, (void* buffer, int size))
XMSG_MPI_API(int, Buffer_detach, (void* buffer_addr, int* size))
XMSG_MPI_API(int, Sendrecv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                             MPI_Comm comm, MPI_Status* status))
XMSG_MPI_API(int, Sendrecv_replace, (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                     int recvtag, MPI_Comm comm, MPI_Status* status))
XMSG_MPI_API(int, Send_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                              MPI_Request* request))
XMSG_MPI_API(int, Ssend_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Request* request))
XMSG_MPI_API(int, Bsend_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Request* request))
XMSG_MPI_API(int, Rsend_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Request* request))
XMSG_MPI_API(int, Recv_init, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                              MPI_Request* request))
XMSG_MPI_API(int, Start, (MPI_Request* request))
XMSG_MPI_API(int, Startall, (int count, MPI_Request array_of_requests[]))
XMSG_MPI_API(int, Wait, (MPI_Request* request, MPI_Status* status))
XMSG_MPI_API(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]))
XMSG_MPI_API(int, Waitany, (int count, MPI_Request array_of_requests[], int* index, MPI_Status* status))
XMSG_MPI_API(int, Waitsome, (int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                             MPI_Status array_of_statuses[]))
XMSG_MPI_API(int, Test, (MPI_Request* request, int* flag, MPI_Status* status))
XMSG_MPI_API(int, Testall, (int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]))
XMSG_MPI_API(int, Testany, (int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status))
XMSG_MPI_API(int, Testsome, (int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                             MPI_Status array_of_statuses[]))
XMSG_MPI_API(int, Request_get_status, (MPI_Request request, int* flag, MPI_Status* status))
XMSG_MPI_API(int, Cancel, (MPI_Request* request))
XMSG_MPI_API(int, Request_free, (MPI_Request* request))
XMSG_MPI_API(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status))
XMSG_MPI_API(int, Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status))
XMSG_MPI_API(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status))
XMSG_MPI_API(int, Improbe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status))
XMSG_MPI_API(int, Mrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status))
XMSG_MPI_API(int, Imrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request))
XMSG_MPI_API(int, Grequest_start, (MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                                   MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request))
XMSG_MPI_API(int, Grequest_complete, (MPI_Request request))

/* ---- collectives (chapter 5) --------------------------------------------------------- */
XMSG_MPI_API(int, Barrier, (MPI_Comm comm))
XMSG_MPI_API(int, Bcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
XMSG_MPI_API(int, Gather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm))
XMSG_MPI_API(int, Gatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
XMSG_MPI_API(int, Scatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm))
XMSG_MPI_API(int, Scatterv, (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
XMSG_MPI_API(int, Allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm))
XMSG_MPI_API(int, Allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
XMSG_MPI_API(int, Alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm))
XMSG_MPI_API(int, Alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm))
XMSG_MPI_API(int, Alltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
XMSG_MPI_API(int, Reduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm))
XMSG_MPI_API(int, Allreduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm))
XMSG_MPI_API(int, Reduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm))
XMSG_MPI_API(int, Reduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm))
XMSG_MPI_API(int, Scan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm))
XMSG_MPI_API(int, Exscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm))
XMSG_MPI_API(int, Reduce_local, (const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))
XMSG_MPI_API(int, Op_create, (MPI_User_function* function, int commute, MPI_Op* op))
XMSG_MPI_API(int, Op_free, (MPI_Op* op))
XMSG_MPI_API(int, Op_commutative, (MPI_Op op, int* commute))

/* non-blocking collectives */
XMSG_MPI_API(int, Ibarrier, (MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ibcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request* request))
XMSG_MPI_API(int, Igather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Igatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Iscatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Iscatterv, (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request))
XMSG_MPI_API(int, Iallgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Iallgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request* request))
XMSG_MPI_API(int, Ialltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ialltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ialltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                               const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request* request))
XMSG_MPI_API(int, Ireduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Iallreduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ireduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ireduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Iscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Iexscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Request* request))

/* persistent collectives (MPI-4.0): MPI_Start begins one round, MPI_Wait completes it */
XMSG_MPI_API(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Bcast_init, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                               MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Gather_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                MPI_Request* request))
XMSG_MPI_API(int, Gatherv_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Scatter_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request))
XMSG_MPI_API(int, Scatterv_init, (const void* sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  int root, MPI_Comm comm, MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Allgather_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request))
XMSG_MPI_API(int, Allgatherv_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Alltoall_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request))
XMSG_MPI_API(int, Alltoallv_init, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Alltoallw_init, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request))
XMSG_MPI_API(int, Reduce_init, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                int root, MPI_Comm comm, MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Allreduce_init, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Reduce_scatter_init, (const void* sendbuf, void* recvbuf, const int recvcounts[],
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                        MPI_Request* request))
XMSG_MPI_API(int, Reduce_scatter_block_init, (const void* sendbuf, void* recvbuf, int recvcount,
                                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                              MPI_Request* request))
XMSG_MPI_API(int, Scan_init, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Info info, MPI_Request* request))
XMSG_MPI_API(int, Exscan_init, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, MPI_Info info, MPI_Request* request))

/* ---- process topologies (chapter 7) -------------------------------------------------- */
XMSG_MPI_API(int, Dims_create, (int nnodes, int ndims, int dims[]))
XMSG_MPI_API(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                MPI_Comm* comm_cart))
XMSG_MPI_API(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
XMSG_MPI_API(int, Cartdim_get, (MPI_Comm comm, int* ndims))
XMSG_MPI_API(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank))
XMSG_MPI_API(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
XMSG_MPI_API(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest))
XMSG_MPI_API(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm))
XMSG_MPI_API(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank))
XMSG_MPI_API(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                 MPI_Comm* comm_graph))
XMSG_MPI_API(int, Graphdims_get, (MPI_Comm comm, int* nnodes, int* nedges))
XMSG_MPI_API(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
XMSG_MPI_API(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int* nneighbors))
XMSG_MPI_API(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
XMSG_MPI_API(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank))
XMSG_MPI_API(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                      const int destinations[], const int* weights, MPI_Info info, int reorder,
                                      MPI_Comm* comm_dist_graph))
XMSG_MPI_API(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[],
                                               const int* sourceweights, int outdegree, const int destinations[],
                                               const int* destweights, MPI_Info info, int reorder,
                                               MPI_Comm* comm_dist_graph))
XMSG_MPI_API(int, Dist_graph_neighbors_count, (MPI_Comm comm, int* indegree, int* outdegree, int* weighted))
/* Weight arguments are pointers, not arrays: they may be MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY,
 * which compilers would otherwise warn about reading as arrays. */
XMSG_MPI_API(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int* sourceweights,
                                         int maxoutdegree, int destinations[], int* destweights))
XMSG_MPI_API(int, Topo_test, (MPI_Comm comm, int* status))
XMSG_MPI_API(int, Neighbor_allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
XMSG_MPI_API(int, Neighbor_allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                        MPI_Comm comm))
XMSG_MPI_API(int, Neighbor_alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
XMSG_MPI_API(int, Neighbor_alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
XMSG_MPI_API(int, Neighbor_alltoallw, (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
XMSG_MPI_API(int, Ineighbor_allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ineighbor_allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ineighbor_alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
XMSG_MPI_API(int, Ineighbor_alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                        MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request* request))
XMSG_MPI_API(int, Ineighbor_alltoallw, (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                        MPI_Request* request))
/* MPI-4.0 persistent neighborhood collectives */
XMSG_MPI_API(int, Neighbor_allgather_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request* request))
XMSG_MPI_API(int, Neighbor_allgatherv_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                             void* recvbuf, const int recvcounts[], const int displs[],
                                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                             MPI_Request* request))
XMSG_MPI_API(int, Neighbor_alltoall_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                           MPI_Request* request))
XMSG_MPI_API(int, Neighbor_alltoallv_init, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request* request))
XMSG_MPI_API(int, Neighbor_alltoallw_init, (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                            MPI_Info info, MPI_Request* request))

/* ---- one-sided (chapter 11; docs/rma.md) ------------------------------------------------ */
XMSG_MPI_API(int, Win_create, (void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win))
XMSG_MPI_API(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                                 MPI_Win* win))
XMSG_MPI_API(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                                        MPI_Win* win))
XMSG_MPI_API(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr))
XMSG_MPI_API(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win* win))
XMSG_MPI_API(int, Win_attach, (MPI_Win win, void* base, MPI_Aint size))
XMSG_MPI_API(int, Win_detach, (MPI_Win win, const void* base))
XMSG_MPI_API(int, Win_free, (MPI_Win* win))
XMSG_MPI_API(int, Win_get_group, (MPI_Win win, MPI_Group* group))
XMSG_MPI_API(int, Win_fence, (int assert_, MPI_Win win))
XMSG_MPI_API(int, Win_start, (MPI_Group group, int assert_, MPI_Win win))
XMSG_MPI_API(int, Win_complete, (MPI_Win win))
XMSG_MPI_API(int, Win_post, (MPI_Group group, int assert_, MPI_Win win))
XMSG_MPI_API(int, Win_wait, (MPI_Win win))
XMSG_MPI_API(int, Win_test, (MPI_Win win, int* flag))
XMSG_MPI_API(int, Win_lock, (int lock_type, int rank, int assert_, MPI_Win win))
XMSG_MPI_API(int, Win_lock_all, (int assert_, MPI_Win win))
XMSG_MPI_API(int, Win_unlock, (int rank, MPI_Win win))
XMSG_MPI_API(int, Win_unlock_all, (MPI_Win win))
XMSG_MPI_API(int, Win_flush, (int rank, MPI_Win win))
XMSG_MPI_API(int, Win_flush_all, (MPI_Win win))
XMSG_MPI_API(int, Win_flush_local, (int rank, MPI_Win win))
XMSG_MPI_API(int, Win_flush_local_all, (MPI_Win win))
XMSG_MPI_API(int, Win_sync, (MPI_Win win))
XMSG_MPI_API(int, Win_set_name, (MPI_Win win, const char* win_name))
XMSG_MPI_API(int, Win_get_name, (MPI_Win win, char* win_name, int* resultlen))
XMSG_MPI_API(int, Win_set_info, (MPI_Win win, MPI_Info info))
XMSG_MPI_API(int, Win_get_info, (MPI_Win win, MPI_Info* info_used))
XMSG_MPI_API(int, Win_create_keyval, (MPI_Win_copy_attr_function* copy_fn, MPI_Win_delete_attr_function* delete_fn,
                                      int* win_keyval, void* extra_state))
XMSG_MPI_API(int, Win_free_keyval, (int* win_keyval))
XMSG_MPI_API(int, Win_set_attr, (MPI_Win win, int win_keyval, void* attribute_val))
XMSG_MPI_API(int, Win_get_attr, (MPI_Win win, int win_keyval, void* attribute_val, int* flag))
XMSG_MPI_API(int, Win_delete_attr, (MPI_Win win, int win_keyval))
XMSG_MPI_API(int, Win_create_errhandler, (MPI_Win_errhandler_function* function, MPI_Errhandler* errhandler))
XMSG_MPI_API(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
XMSG_MPI_API(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler* errhandler))
XMSG_MPI_API(int, Win_call_errhandler, (MPI_Win win, int errorcode))
XMSG_MPI_API(int, Put, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
XMSG_MPI_API(int, Get, (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
XMSG_MPI_API(int, Accumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
                               MPI_Op op, MPI_Win win))
XMSG_MPI_API(int, Get_accumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                   void* result_addr, int result_count, MPI_Datatype result_datatype,
                                   int target_rank, MPI_Aint target_disp, int target_count,
                                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
XMSG_MPI_API(int, Fetch_and_op, (const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Op op, MPI_Win win))
XMSG_MPI_API(int, Compare_and_swap, (const void* origin_addr, const void* compare_addr, void* result_addr,
                                     MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
XMSG_MPI_API(int, Rput, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request* request))
XMSG_MPI_API(int, Rget, (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request* request))
XMSG_MPI_API(int, Raccumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                int target_rank, MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request))
XMSG_MPI_API(int, Rget_accumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                    void* result_addr, int result_count, MPI_Datatype result_datatype,
                                    int target_rank, MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request))

/* ---- MPI-IO (chapter 13): not provided. Every call returns MPI_ERR_UNSUPPORTED_OPERATION
 * through the file error handler (MPI_ERRORS_RETURN unless MPI_File_set_errhandler on
 * MPI_FILE_NULL changed it), so programs that do no I/O through MPI build and run. */
XMSG_MPI_API(int, File_open, (MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh))
XMSG_MPI_API(int, File_close, (MPI_File* fh))
XMSG_MPI_API(int, File_delete, (const char* filename, MPI_Info info))
XMSG_MPI_API(int, File_set_size, (MPI_File fh, MPI_Offset size))
XMSG_MPI_API(int, File_preallocate, (MPI_File fh, MPI_Offset size))
XMSG_MPI_API(int, File_get_size, (MPI_File fh, MPI_Offset* size))
XMSG_MPI_API(int, File_get_group, (MPI_File fh, MPI_Group* group))
XMSG_MPI_API(int, File_get_amode, (MPI_File fh, int* amode))
XMSG_MPI_API(int, File_set_info, (MPI_File fh, MPI_Info info))
XMSG_MPI_API(int, File_get_info, (MPI_File fh, MPI_Info* info_used))
XMSG_MPI_API(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                  const char* datarep, MPI_Info info))
XMSG_MPI_API(int, File_get_view, (MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
                                  char* datarep))
XMSG_MPI_API(int, File_read_at, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                                 MPI_Status* status))
XMSG_MPI_API(int, File_read_at_all, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                                     MPI_Status* status))
XMSG_MPI_API(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype,
                                  MPI_Status* status))
XMSG_MPI_API(int, File_write_at_all, (MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                      MPI_Datatype datatype, MPI_Status* status))
XMSG_MPI_API(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                                  MPI_Request* request))
XMSG_MPI_API(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype,
                                   MPI_Request* request))
XMSG_MPI_API(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                                      MPI_Request* request))
XMSG_MPI_API(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                       MPI_Datatype datatype, MPI_Request* request))
XMSG_MPI_API(int, File_read, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status))
XMSG_MPI_API(int, File_read_all, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status))
XMSG_MPI_API(int, File_write, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status))
XMSG_MPI_API(int, File_write_all, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                   MPI_Status* status))
XMSG_MPI_API(int, File_iread, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request))
XMSG_MPI_API(int, File_iwrite, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                MPI_Request* request))
XMSG_MPI_API(int, File_iread_all, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request))
XMSG_MPI_API(int, File_iwrite_all, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                    MPI_Request* request))
XMSG_MPI_API(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
XMSG_MPI_API(int, File_get_position, (MPI_File fh, MPI_Offset* offset))
XMSG_MPI_API(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset* disp))
XMSG_MPI_API(int, File_read_shared, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status))
XMSG_MPI_API(int, File_write_shared, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                      MPI_Status* status))
XMSG_MPI_API(int, File_iread_shared, (MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                      MPI_Request* request))
XMSG_MPI_API(int, File_iwrite_shared, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                       MPI_Request* request))
XMSG_MPI_API(int, File_read_ordered, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status))
XMSG_MPI_API(int, File_write_ordered, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                       MPI_Status* status))
XMSG_MPI_API(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
XMSG_MPI_API(int, File_get_position_shared, (MPI_File fh, MPI_Offset* offset))
XMSG_MPI_API(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void* buf, int count,
                                           MPI_Datatype datatype))
XMSG_MPI_API(int, File_read_at_all_end, (MPI_File fh, void* buf, MPI_Status* status))
XMSG_MPI_API(int, File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                            MPI_Datatype datatype))
XMSG_MPI_API(int, File_write_at_all_end, (MPI_File fh, const void* buf, MPI_Status* status))
XMSG_MPI_API(int, File_read_all_begin, (MPI_File fh, void* buf, int count, MPI_Datatype datatype))
XMSG_MPI_API(int, File_read_all_end, (MPI_File fh, void* buf, MPI_Status* status))
XMSG_MPI_API(int, File_write_all_begin, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype))
XMSG_MPI_API(int, File_write_all_end, (MPI_File fh, const void* buf, MPI_Status* status))
XMSG_MPI_API(int, File_read_ordered_begin, (MPI_File fh, void* buf, int count, MPI_Datatype datatype))
XMSG_MPI_API(int, File_read_ordered_end, (MPI_File fh, void* buf, MPI_Status* status))
XMSG_MPI_API(int, File_write_ordered_begin, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype))
XMSG_MPI_API(int, File_write_ordered_end, (MPI_File fh, const void* buf, MPI_Status* status))
XMSG_MPI_API(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent))
XMSG_MPI_API(int, File_set_atomicity, (MPI_File fh, int flag))
XMSG_MPI_API(int, File_get_atomicity, (MPI_File fh, int* flag))
XMSG_MPI_API(int, File_sync, (MPI_File fh))
XMSG_MPI_API(int, File_create_errhandler, (MPI_File_errhandler_function* file_errhandler_fn,
                                           MPI_Errhandler* errhandler))
XMSG_MPI_API(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
XMSG_MPI_API(int, File_get_errhandler, (MPI_File file, MPI_Errhandler* errhandler))
XMSG_MPI_API(int, File_call_errhandler, (MPI_File fh, int errorcode))
XMSG_MPI_API(int, Register_datarep, (const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
                                     MPI_Datarep_conversion_function* write_conversion_fn,
                                     MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state))

/* ---- handle conversion (C <-> Fortran integers) -------------------------------------- */
XMSG_MPI_API(MPI_Fint, Comm_c2f, (MPI_Comm comm))
XMSG_MPI_API(MPI_Comm, Comm_f2c, (MPI_Fint comm))
XMSG_MPI_API(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
XMSG_MPI_API(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
XMSG_MPI_API(MPI_Fint, Group_c2f, (MPI_Group group))
XMSG_MPI_API(MPI_Group, Group_f2c, (MPI_Fint group))
XMSG_MPI_API(MPI_Fint, Op_c2f, (MPI_Op op))
XMSG_MPI_API(MPI_Op, Op_f2c, (MPI_Fint op))
XMSG_MPI_API(MPI_Fint, Info_c2f, (MPI_Info info))
XMSG_MPI_API(MPI_Info, Info_f2c, (MPI_Fint info))
XMSG_MPI_API(MPI_Fint, Win_c2f, (MPI_Win win))
XMSG_MPI_API(MPI_Win, Win_f2c, (MPI_Fint win))
XMSG_MPI_API(MPI_Fint, File_c2f, (MPI_File file))
XMSG_MPI_API(MPI_File, File_f2c, (MPI_Fint file))
XMSG_MPI_API(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
XMSG_MPI_API(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
/* Requests: Fortran sees an index into this process's request table (docs/fortran.md). */
XMSG_MPI_API(MPI_Fint, Request_c2f, (MPI_Request request))
XMSG_MPI_API(MPI_Request, Request_f2c, (MPI_Fint request))
/* A Fortran status is INTEGER(MPI_STATUS_SIZE), the C struct's words in order. */
XMSG_MPI_API(int, Status_c2f, (const MPI_Status* c_status, MPI_Fint* f_status))
XMSG_MPI_API(int, Status_f2c, (const MPI_Fint* f_status, MPI_Status* c_status))

#undef XMSG_MPI_API

#ifdef __cplusplus
}
#endif

#endif /* XMSG_MPI_H */
