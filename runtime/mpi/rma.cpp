// MPI-3.1 chapter 11, one-sided communication: declared so that programs with RMA code paths
// build and run their other parts. Until the runtime implements windows (the one-sided issue),
// every call fails with MPI_ERR_UNSUPPORTED_OPERATION through the communicator's (or
// MPI_COMM_WORLD's) error handler, naming the call. Window keyvals and error handlers work
// (attributes.cpp, env.cpp); there is simply never a window to attach them to.
#include "mpi_impl.hpp"

namespace xmsg::mpi {
namespace {
int unsupported(const char* func, MPI_Comm comm = MPI_COMM_WORLD) {
  return fail(MPI_ERR_UNSUPPORTED_OPERATION, func, comm,
              "one-sided communication (windows, MPI_Put/MPI_Get/accumulate) is not implemented in xmsg yet");
}
}  // namespace
}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  (void)base;
  (void)size;
  (void)disp_unit;
  (void)info;
  (void)win;
  return unsupported("MPI_Win_create", comm);
}
XMSG_MPI_ALIAS(Win_create)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  (void)size;
  (void)disp_unit;
  (void)info;
  (void)baseptr;
  (void)win;
  return unsupported("MPI_Win_allocate", comm);
}
XMSG_MPI_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  (void)size;
  (void)disp_unit;
  (void)info;
  (void)baseptr;
  (void)win;
  return unsupported("MPI_Win_allocate_shared", comm);
}
XMSG_MPI_ALIAS(Win_allocate_shared)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  (void)win;
  (void)rank;
  (void)size;
  (void)disp_unit;
  (void)baseptr;
  return unsupported("MPI_Win_shared_query", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_shared_query)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  (void)info;
  (void)win;
  return unsupported("MPI_Win_create_dynamic", comm);
}
XMSG_MPI_ALIAS(Win_create_dynamic)

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  (void)win;
  (void)base;
  (void)size;
  return unsupported("MPI_Win_attach", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void* base) {
  (void)win;
  (void)base;
  return unsupported("MPI_Win_detach", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_detach)

int PMPI_Win_free(MPI_Win* win) {
  (void)win;
  return unsupported("MPI_Win_free", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_free)

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  (void)win;
  (void)group;
  return unsupported("MPI_Win_get_group", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_get_group)

int PMPI_Win_fence(int assert_, MPI_Win win) {
  (void)assert_;
  (void)win;
  return unsupported("MPI_Win_fence", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_fence)

int PMPI_Win_start(MPI_Group group, int assert_, MPI_Win win) {
  (void)group;
  (void)assert_;
  (void)win;
  return unsupported("MPI_Win_start", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win) {
  (void)win;
  return unsupported("MPI_Win_complete", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_complete)

int PMPI_Win_post(MPI_Group group, int assert_, MPI_Win win) {
  (void)group;
  (void)assert_;
  (void)win;
  return unsupported("MPI_Win_post", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_post)

int PMPI_Win_wait(MPI_Win win) {
  (void)win;
  return unsupported("MPI_Win_wait", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int* flag) {
  (void)win;
  (void)flag;
  return unsupported("MPI_Win_test", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_test)

int PMPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win) {
  (void)lock_type;
  (void)rank;
  (void)assert_;
  (void)win;
  return unsupported("MPI_Win_lock", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_lock)

int PMPI_Win_lock_all(int assert_, MPI_Win win) {
  (void)assert_;
  (void)win;
  return unsupported("MPI_Win_lock_all", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock(int rank, MPI_Win win) {
  (void)rank;
  (void)win;
  return unsupported("MPI_Win_unlock", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_unlock)

int PMPI_Win_unlock_all(MPI_Win win) {
  (void)win;
  return unsupported("MPI_Win_unlock_all", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_unlock_all)

int PMPI_Win_flush(int rank, MPI_Win win) {
  (void)rank;
  (void)win;
  return unsupported("MPI_Win_flush", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win) {
  (void)win;
  return unsupported("MPI_Win_flush_all", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win) {
  (void)rank;
  (void)win;
  return unsupported("MPI_Win_flush_local", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win) {
  (void)win;
  return unsupported("MPI_Win_flush_local_all", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win) {
  (void)win;
  return unsupported("MPI_Win_sync", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_sync)

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  (void)win;
  (void)win_name;
  return unsupported("MPI_Win_set_name", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  (void)win;
  (void)win_name;
  (void)resultlen;
  return unsupported("MPI_Win_get_name", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_get_name)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  (void)win;
  (void)info;
  return unsupported("MPI_Win_set_info", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  (void)win;
  (void)info_used;
  return unsupported("MPI_Win_get_info", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_get_info)

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  (void)win;
  (void)win_keyval;
  (void)attribute_val;
  return unsupported("MPI_Win_set_attr", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  (void)win;
  (void)win_keyval;
  (void)attribute_val;
  (void)flag;
  return unsupported("MPI_Win_get_attr", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  (void)win;
  (void)win_keyval;
  return unsupported("MPI_Win_delete_attr", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_delete_attr)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  (void)win;
  (void)errhandler;
  return unsupported("MPI_Win_set_errhandler", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  (void)win;
  (void)errhandler;
  return unsupported("MPI_Win_get_errhandler", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  (void)win;
  (void)errorcode;
  return unsupported("MPI_Win_call_errhandler", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Win_call_errhandler)

int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)win;
  return unsupported("MPI_Put", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Put)

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)win;
  return unsupported("MPI_Get", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Get)

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)op;
  (void)win;
  return unsupported("MPI_Accumulate", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Accumulate)

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)result_addr;
  (void)result_count;
  (void)result_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)op;
  (void)win;
  return unsupported("MPI_Get_accumulate", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Get_accumulate)

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  (void)origin_addr;
  (void)result_addr;
  (void)datatype;
  (void)target_rank;
  (void)target_disp;
  (void)op;
  (void)win;
  return unsupported("MPI_Fetch_and_op", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
  (void)origin_addr;
  (void)compare_addr;
  (void)result_addr;
  (void)datatype;
  (void)target_rank;
  (void)target_disp;
  (void)win;
  return unsupported("MPI_Compare_and_swap", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Compare_and_swap)

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)win;
  (void)request;
  return unsupported("MPI_Rput", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Rput)

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)win;
  (void)request;
  return unsupported("MPI_Rget", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Rget)

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)op;
  (void)win;
  (void)request;
  return unsupported("MPI_Raccumulate", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Raccumulate)

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  (void)origin_addr;
  (void)origin_count;
  (void)origin_datatype;
  (void)result_addr;
  (void)result_count;
  (void)result_datatype;
  (void)target_rank;
  (void)target_disp;
  (void)target_count;
  (void)target_datatype;
  (void)op;
  (void)win;
  (void)request;
  return unsupported("MPI_Rget_accumulate", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Rget_accumulate)

}  // extern "C"
