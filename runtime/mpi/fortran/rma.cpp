// Fortran bindings of one-sided communication (MPI-3.1 chapter 11). Window handles are the C
// ints; addresses, sizes and displacements are INTEGER(KIND=MPI_ADDRESS_KIND) (MPI_Aint).
// MPI_WIN_ALLOCATE(_SHARED) and MPI_WIN_SHARED_QUERY return the base address in such an
// integer, as mpif.h and `use mpi` define them (a program turns it into a pointer with
// C_F_POINTER(TRANSFER(baseptr, C_NULL_PTR), ...) or a Cray pointer). Conventions: fortran.hpp.
#include "fortran.hpp"

using namespace xmsg::mpi::fortran;

namespace {

bool predefined_win_keyval(MPI_Fint keyval) {
  return keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT || keyval == MPI_WIN_CREATE_FLAVOR ||
         keyval == MPI_WIN_MODEL;
}

}  // namespace

// ---- windows --------------------------------------------------------------------------------
XMSG_FORTRAN(void, win_create,
             (void* base, const MPI_Aint* size, const MPI_Fint* disp_unit, const MPI_Fint* info, const MPI_Fint* comm,
              MPI_Fint* win, MPI_Fint* ierr)) {
  MPI_Win w = MPI_WIN_NULL;
  *ierr = MPI_Win_create(buffer(base), *size, *disp_unit, *info, *comm, &w);
  *win = w;
}
XMSG_FORTRAN(void, win_allocate,
             (const MPI_Aint* size, const MPI_Fint* disp_unit, const MPI_Fint* info, const MPI_Fint* comm,
              MPI_Aint* baseptr, MPI_Fint* win, MPI_Fint* ierr)) {
  void* base = nullptr;
  MPI_Win w = MPI_WIN_NULL;
  *ierr = MPI_Win_allocate(*size, *disp_unit, *info, *comm, &base, &w);
  *baseptr = reinterpret_cast<MPI_Aint>(base);
  *win = w;
}
XMSG_FORTRAN(void, win_allocate_shared,
             (const MPI_Aint* size, const MPI_Fint* disp_unit, const MPI_Fint* info, const MPI_Fint* comm,
              MPI_Aint* baseptr, MPI_Fint* win, MPI_Fint* ierr)) {
  void* base = nullptr;
  MPI_Win w = MPI_WIN_NULL;
  *ierr = MPI_Win_allocate_shared(*size, *disp_unit, *info, *comm, &base, &w);
  *baseptr = reinterpret_cast<MPI_Aint>(base);
  *win = w;
}
XMSG_FORTRAN(void, win_shared_query,
             (const MPI_Fint* win, const MPI_Fint* rank, MPI_Aint* size, MPI_Fint* disp_unit, MPI_Aint* baseptr,
              MPI_Fint* ierr)) {
  void* base = nullptr;
  int unit = 0;
  *ierr = MPI_Win_shared_query(*win, *rank, size, &unit, &base);
  *disp_unit = unit;
  *baseptr = reinterpret_cast<MPI_Aint>(base);
}
// `use mpi`'s TYPE(C_PTR) forms of the three (mpi.f90): the same arguments at the ABI level.
#define XMSG_FORTRAN_CPTR_FORM(name)                                                                     \
  extern "C" __typeof__(pmpi_##name##_) pmpi_##name##_cptr_ __attribute__((alias("pmpi_" #name "_"))); \
  extern "C" __typeof__(pmpi_##name##_) mpi_##name##_cptr_ __attribute__((weak, alias("pmpi_" #name "_")));
XMSG_FORTRAN_CPTR_FORM(win_allocate)
XMSG_FORTRAN_CPTR_FORM(win_allocate_shared)
XMSG_FORTRAN_CPTR_FORM(win_shared_query)
#undef XMSG_FORTRAN_CPTR_FORM

XMSG_FORTRAN(void, win_create_dynamic, (const MPI_Fint* info, const MPI_Fint* comm, MPI_Fint* win, MPI_Fint* ierr)) {
  MPI_Win w = MPI_WIN_NULL;
  *ierr = MPI_Win_create_dynamic(*info, *comm, &w);
  *win = w;
}
XMSG_FORTRAN(void, win_attach, (const MPI_Fint* win, void* base, const MPI_Aint* size, MPI_Fint* ierr)) {
  *ierr = MPI_Win_attach(*win, buffer(base), *size);
}
XMSG_FORTRAN(void, win_detach, (const MPI_Fint* win, const void* base, MPI_Fint* ierr)) {
  *ierr = MPI_Win_detach(*win, buffer(base));
}
XMSG_FORTRAN(void, win_free, (MPI_Fint* win, MPI_Fint* ierr)) {
  MPI_Win w = *win;
  *ierr = MPI_Win_free(&w);
  *win = w;
}
XMSG_FORTRAN(void, win_get_group, (const MPI_Fint* win, MPI_Fint* group, MPI_Fint* ierr)) {
  MPI_Group g = MPI_GROUP_NULL;
  *ierr = MPI_Win_get_group(*win, &g);
  *group = g;
}
XMSG_FORTRAN(void, win_set_name, (const MPI_Fint* win, const char* name, MPI_Fint* ierr, size_t name_len)) {
  *ierr = MPI_Win_set_name(*win, string_in(name, name_len).c_str());
}
XMSG_FORTRAN(void, win_get_name,
             (const MPI_Fint* win, char* name, MPI_Fint* resultlen, MPI_Fint* ierr, size_t name_len)) {
  char c[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  *ierr = MPI_Win_get_name(*win, c, &len);
  string_out(c, name, name_len);
  *resultlen = len;
}
XMSG_FORTRAN(void, win_set_info, (const MPI_Fint* win, const MPI_Fint* info, MPI_Fint* ierr)) {
  *ierr = MPI_Win_set_info(*win, *info);
}
XMSG_FORTRAN(void, win_get_info, (const MPI_Fint* win, MPI_Fint* info_used, MPI_Fint* ierr)) {
  MPI_Info i = MPI_INFO_NULL;
  *ierr = MPI_Win_get_info(*win, &i);
  *info_used = i;
}
// MPI_WIN_BASE gives the address itself; the other predefined attributes their value.
XMSG_FORTRAN(void, win_get_attr,
             (const MPI_Fint* win, const MPI_Fint* keyval, MPI_Aint* attribute_val, MPI_Fint* flag, MPI_Fint* ierr)) {
  void* value = nullptr;
  int f = 0;
  *ierr = MPI_Win_get_attr(*win, *keyval, &value, &f);
  *flag = logical_out(f);
  if (*ierr != MPI_SUCCESS || !f) return;
  if (*keyval == MPI_WIN_SIZE) *attribute_val = *static_cast<MPI_Aint*>(value);
  else if (predefined_win_keyval(*keyval)) *attribute_val = *static_cast<int*>(value);
  else *attribute_val = reinterpret_cast<MPI_Aint>(value);
}
XMSG_FORTRAN(void, win_set_attr,
             (const MPI_Fint* win, const MPI_Fint* keyval, const MPI_Aint* attribute_val, MPI_Fint* ierr)) {
  *ierr = MPI_Win_set_attr(*win, *keyval, reinterpret_cast<void*>(*attribute_val));
}
XMSG_FORTRAN(void, win_delete_attr, (const MPI_Fint* win, const MPI_Fint* keyval, MPI_Fint* ierr)) {
  *ierr = MPI_Win_delete_attr(*win, *keyval);
}
XMSG_FORTRAN(void, win_set_errhandler, (const MPI_Fint* win, const MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_Win_set_errhandler(*win, *errhandler);
}
XMSG_FORTRAN(void, win_get_errhandler, (const MPI_Fint* win, MPI_Fint* errhandler, MPI_Fint* ierr)) {
  MPI_Errhandler e = MPI_ERRHANDLER_NULL;
  *ierr = MPI_Win_get_errhandler(*win, &e);
  *errhandler = e;
}
XMSG_FORTRAN(void, win_call_errhandler, (const MPI_Fint* win, const MPI_Fint* errorcode, MPI_Fint* ierr)) {
  *ierr = MPI_Win_call_errhandler(*win, *errorcode);
}

// ---- synchronisation --------------------------------------------------------------------------
XMSG_FORTRAN(void, win_fence, (const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_fence(*assert_, *win);
}
XMSG_FORTRAN(void, win_start, (const MPI_Fint* group, const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_start(*group, *assert_, *win);
}
XMSG_FORTRAN(void, win_complete, (const MPI_Fint* win, MPI_Fint* ierr)) { *ierr = MPI_Win_complete(*win); }
XMSG_FORTRAN(void, win_post, (const MPI_Fint* group, const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_post(*group, *assert_, *win);
}
XMSG_FORTRAN(void, win_wait, (const MPI_Fint* win, MPI_Fint* ierr)) { *ierr = MPI_Win_wait(*win); }
XMSG_FORTRAN(void, win_test, (const MPI_Fint* win, MPI_Fint* flag, MPI_Fint* ierr)) {
  int f = 0;
  *ierr = MPI_Win_test(*win, &f);
  *flag = logical_out(f);
}
XMSG_FORTRAN(void, win_lock,
             (const MPI_Fint* lock_type, const MPI_Fint* rank, const MPI_Fint* assert_, const MPI_Fint* win,
              MPI_Fint* ierr)) {
  *ierr = MPI_Win_lock(*lock_type, *rank, *assert_, *win);
}
XMSG_FORTRAN(void, win_unlock, (const MPI_Fint* rank, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_unlock(*rank, *win);
}
XMSG_FORTRAN(void, win_lock_all, (const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_lock_all(*assert_, *win);
}
XMSG_FORTRAN(void, win_unlock_all, (const MPI_Fint* win, MPI_Fint* ierr)) { *ierr = MPI_Win_unlock_all(*win); }
XMSG_FORTRAN(void, win_flush, (const MPI_Fint* rank, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_flush(*rank, *win);
}
XMSG_FORTRAN(void, win_flush_all, (const MPI_Fint* win, MPI_Fint* ierr)) { *ierr = MPI_Win_flush_all(*win); }
XMSG_FORTRAN(void, win_flush_local, (const MPI_Fint* rank, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_flush_local(*rank, *win);
}
XMSG_FORTRAN(void, win_flush_local_all, (const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Win_flush_local_all(*win);
}
XMSG_FORTRAN(void, win_sync, (const MPI_Fint* win, MPI_Fint* ierr)) { *ierr = MPI_Win_sync(*win); }

// ---- communication ------------------------------------------------------------------------------
// Put and get: (origin, count, type, target rank, target disp, target count, target type, win,
// [request,] ierr).
#define XMSG_FORTRAN_TRANSFER(lower, Cname, RCname)                                                                \
  XMSG_FORTRAN(void, lower,                                                                                       \
               (const void* origin, const MPI_Fint* origin_count, const MPI_Fint* origin_type,                    \
                const MPI_Fint* target_rank, const MPI_Aint* target_disp, const MPI_Fint* target_count,           \
                const MPI_Fint* target_type, const MPI_Fint* win, MPI_Fint* ierr)) {                              \
    *ierr = Cname(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,         \
                  *target_type, *win);                                                                             \
  }                                                                                                                \
  XMSG_FORTRAN(void, r##lower,                                                                                    \
               (const void* origin, const MPI_Fint* origin_count, const MPI_Fint* origin_type,                    \
                const MPI_Fint* target_rank, const MPI_Aint* target_disp, const MPI_Fint* target_count,           \
                const MPI_Fint* target_type, const MPI_Fint* win, MPI_Fint* request, MPI_Fint* ierr)) {           \
    MPI_Request r = MPI_REQUEST_NULL;                                                                              \
    *ierr = RCname(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,        \
                   *target_type, *win, &r);                                                                        \
    *request = request_c2f(r);                                                                                     \
  }
XMSG_FORTRAN_TRANSFER(put, MPI_Put, MPI_Rput)
XMSG_FORTRAN_TRANSFER(get, MPI_Get, MPI_Rget)

XMSG_FORTRAN(void, accumulate,
             (const void* origin, const MPI_Fint* origin_count, const MPI_Fint* origin_type,
              const MPI_Fint* target_rank, const MPI_Aint* target_disp, const MPI_Fint* target_count,
              const MPI_Fint* target_type, const MPI_Fint* op, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Accumulate(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,
                         *target_type, *op, *win);
}
XMSG_FORTRAN(void, raccumulate,
             (const void* origin, const MPI_Fint* origin_count, const MPI_Fint* origin_type,
              const MPI_Fint* target_rank, const MPI_Aint* target_disp, const MPI_Fint* target_count,
              const MPI_Fint* target_type, const MPI_Fint* op, const MPI_Fint* win, MPI_Fint* request,
              MPI_Fint* ierr)) {
  MPI_Request r = MPI_REQUEST_NULL;
  *ierr = MPI_Raccumulate(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,
                          *target_type, *op, *win, &r);
  *request = request_c2f(r);
}
XMSG_FORTRAN(void, get_accumulate,
             (const void* origin, const MPI_Fint* origin_count, const MPI_Fint* origin_type, void* result,
              const MPI_Fint* result_count, const MPI_Fint* result_type, const MPI_Fint* target_rank,
              const MPI_Aint* target_disp, const MPI_Fint* target_count, const MPI_Fint* target_type,
              const MPI_Fint* op, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Get_accumulate(buffer(origin), *origin_count, *origin_type, buffer(result), *result_count, *result_type,
                             *target_rank, *target_disp, *target_count, *target_type, *op, *win);
}
XMSG_FORTRAN(void, rget_accumulate,
             (const void* origin, const MPI_Fint* origin_count, const MPI_Fint* origin_type, void* result,
              const MPI_Fint* result_count, const MPI_Fint* result_type, const MPI_Fint* target_rank,
              const MPI_Aint* target_disp, const MPI_Fint* target_count, const MPI_Fint* target_type,
              const MPI_Fint* op, const MPI_Fint* win, MPI_Fint* request, MPI_Fint* ierr)) {
  MPI_Request r = MPI_REQUEST_NULL;
  *ierr = MPI_Rget_accumulate(buffer(origin), *origin_count, *origin_type, buffer(result), *result_count,
                              *result_type, *target_rank, *target_disp, *target_count, *target_type, *op, *win, &r);
  *request = request_c2f(r);
}
XMSG_FORTRAN(void, fetch_and_op,
             (const void* origin, void* result, const MPI_Fint* datatype, const MPI_Fint* target_rank,
              const MPI_Aint* target_disp, const MPI_Fint* op, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Fetch_and_op(buffer(origin), buffer(result), *datatype, *target_rank, *target_disp, *op, *win);
}
XMSG_FORTRAN(void, compare_and_swap,
             (const void* origin, const void* compare, void* result, const MPI_Fint* datatype,
              const MPI_Fint* target_rank, const MPI_Aint* target_disp, const MPI_Fint* win, MPI_Fint* ierr)) {
  *ierr = MPI_Compare_and_swap(buffer(origin), buffer(compare), buffer(result), *datatype, *target_rank,
                               *target_disp, *win);
}
