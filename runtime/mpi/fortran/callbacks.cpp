// Fortran bindings of the routines that take procedures: attribute keyvals (communicators,
// datatypes, windows; MPI-2 forms and MPI-1's MPI_KEYVAL_CREATE), the attribute calls on
// datatypes and MPI-1's MPI_ATTR_PUT/_DELETE, error handlers (communicators, windows, files),
// the predefined callbacks a Fortran program passes (MPI_COMM_NULL_COPY_FN ...), which
// mpif.h declares EXTERNAL, and generalized requests (MPI_GREQUEST_START). Conventions:
// fortran.hpp.
//
// A Fortran attribute callback takes every argument by reference, the attribute values and
// the extra state as INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER for MPI-1's), the flag as
// LOGICAL, and returns its error through IERROR; C's returns it and takes void*. So a Fortran
// keyval is a C keyval whose callbacks are trampolines and whose extra state is a record of
// the Fortran procedures and the program's extra state. Records live until MPI_Finalize's
// exit: a keyval's callbacks may still run after MPI_*_FREE_KEYVAL (on the attributes that
// remain), so no free is safe earlier, and they are few.
//
// A Fortran error handler, SUBROUTINE HANDLER(HANDLE, ERROR_CODE), takes two INTEGERs by
// reference, which is how C calls a handler (MPI_Comm* and int*, handles being ints here):
// the procedure is registered as it is.
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "fortran.hpp"

namespace {

using namespace xmsg::mpi::fortran;

// SUBROUTINE COPY_FN(OLD, KEYVAL, EXTRA_STATE, ATTRIBUTE_VAL_IN, ATTRIBUTE_VAL_OUT, FLAG, IERROR)
using FortranCopy = void(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*, MPI_Fint*);
// SUBROUTINE DELETE_FN(HANDLE, KEYVAL, ATTRIBUTE_VAL, EXTRA_STATE, IERROR)
using FortranDelete = void(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint*);
// MPI-1 (MPI_KEYVAL_CREATE): the same with INTEGER values and extra state.
using FortranCopy1 = void(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
using FortranDelete1 = void(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);

struct FortranKeyval {
  FortranCopy* copy = nullptr;
  FortranDelete* del = nullptr;
  FortranCopy1* copy1 = nullptr;
  FortranDelete1* del1 = nullptr;
  MPI_Aint extra = 0;
};

FortranKeyval* keep(FortranKeyval k) {
  static std::mutex lock;
  static std::vector<std::unique_ptr<FortranKeyval>> records;
  std::lock_guard<std::mutex> hold(lock);
  records.push_back(std::make_unique<FortranKeyval>(k));
  return records.back().get();
}

// One trampoline pair for every handle kind: communicators, datatypes and windows are ints.
template <class Handle>
int copy_trampoline(Handle old, int keyval, void* extra, void* value_in, void* value_out, int* flag) {
  static_assert(sizeof(Handle) == sizeof(MPI_Fint), "handles are Fortran INTEGERs");
  auto* k = static_cast<FortranKeyval*>(extra);
  MPI_Fint f_old = old, f_keyval = keyval, f_flag = 0, ierr = MPI_SUCCESS;
  if (k->copy1) {
    MPI_Fint extra1 = static_cast<MPI_Fint>(k->extra), in = static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(value_in)),
             out = 0;
    k->copy1(&f_old, &f_keyval, &extra1, &in, &out, &f_flag, &ierr);
    if (f_flag) *static_cast<void**>(value_out) = reinterpret_cast<void*>(static_cast<MPI_Aint>(out));
  } else {
    MPI_Aint in = reinterpret_cast<MPI_Aint>(value_in), out = 0;
    k->copy(&f_old, &f_keyval, &k->extra, &in, &out, &f_flag, &ierr);
    if (f_flag) *static_cast<void**>(value_out) = reinterpret_cast<void*>(out);
  }
  *flag = logical_in(&f_flag) ? 1 : 0;
  return ierr;
}

template <class Handle>
int delete_trampoline(Handle handle, int keyval, void* value, void* extra) {
  auto* k = static_cast<FortranKeyval*>(extra);
  MPI_Fint f_handle = handle, f_keyval = keyval, ierr = MPI_SUCCESS;
  if (k->del1) {
    MPI_Fint v = static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(value)), extra1 = static_cast<MPI_Fint>(k->extra);
    k->del1(&f_handle, &f_keyval, &v, &extra1, &ierr);
  } else {
    MPI_Aint v = reinterpret_cast<MPI_Aint>(value);
    k->del(&f_handle, &f_keyval, &v, &k->extra, &ierr);
  }
  return ierr;
}

}  // namespace

// ---- the predefined callbacks, as Fortran procedures ------------------------------------------
// NULL_COPY: the attribute is not copied; DUP: copied as it is; NULL_DELETE: nothing to do.
#define XMSG_FORTRAN_PREDEFINED_ATTR_FNS(kind)                                                          \
  extern "C" void mpi_##kind##_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*,     \
                                             MPI_Fint* flag, MPI_Fint* ierr) {                          \
    *flag = logical_out(0);                                                                             \
    *ierr = MPI_SUCCESS;                                                                                \
  }                                                                                                     \
  extern "C" void mpi_##kind##_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint* in, MPI_Aint* out,    \
                                       MPI_Fint* flag, MPI_Fint* ierr) {                                \
    *out = *in;                                                                                         \
    *flag = logical_out(1);                                                                             \
    *ierr = MPI_SUCCESS;                                                                                \
  }                                                                                                     \
  extern "C" void mpi_##kind##_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint* ierr) { \
    *ierr = MPI_SUCCESS;                                                                                \
  }
XMSG_FORTRAN_PREDEFINED_ATTR_FNS(comm)
XMSG_FORTRAN_PREDEFINED_ATTR_FNS(type)
XMSG_FORTRAN_PREDEFINED_ATTR_FNS(win)
#undef XMSG_FORTRAN_PREDEFINED_ATTR_FNS

// MPI-1's names (MPI_KEYVAL_CREATE), with INTEGER values.
extern "C" void mpi_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* flag, MPI_Fint* ierr) {
  *flag = logical_out(0);
  *ierr = MPI_SUCCESS;
}
extern "C" void mpi_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* in, MPI_Fint* out, MPI_Fint* flag, MPI_Fint* ierr) {
  *out = *in;
  *flag = logical_out(1);
  *ierr = MPI_SUCCESS;
}
extern "C" void mpi_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* ierr) { *ierr = MPI_SUCCESS; }

// ---- keyvals ---------------------------------------------------------------------------------
namespace {

// A C keyval (made by `create`, C's MPI_X_create_keyval for handle kind Handle) whose callbacks
// are the trampolines, its extra state the record of the Fortran procedures.
template <class Handle, class Create>
MPI_Fint create_keyval(Create create, FortranKeyval record, MPI_Fint* keyval) {
  return create(copy_trampoline<Handle>, delete_trampoline<Handle>, keyval, keep(record));
}

}  // namespace

#define XMSG_FORTRAN_KEYVAL(kind, Handle, Kind)                                                          \
  XMSG_FORTRAN(void, kind##_create_keyval,                                                               \
               (FortranCopy * copy_fn, FortranDelete * delete_fn, MPI_Fint * keyval, const MPI_Aint* extra_state, \
                MPI_Fint* ierr)) {                                                                       \
    *ierr = create_keyval<Handle>(MPI_##Kind##_create_keyval, {copy_fn, delete_fn, nullptr, nullptr, *extra_state}, \
                                  keyval);                                                               \
  }                                                                                                      \
  XMSG_FORTRAN(void, kind##_free_keyval, (MPI_Fint * keyval, MPI_Fint * ierr)) { *ierr = MPI_##Kind##_free_keyval(keyval); }
XMSG_FORTRAN_KEYVAL(comm, MPI_Comm, Comm)
XMSG_FORTRAN_KEYVAL(type, MPI_Datatype, Type)
XMSG_FORTRAN_KEYVAL(win, MPI_Win, Win)
#undef XMSG_FORTRAN_KEYVAL

XMSG_FORTRAN(void, keyval_create,
             (FortranCopy1 * copy_fn, FortranDelete1* delete_fn, MPI_Fint* keyval, const MPI_Fint* extra_state,
              MPI_Fint* ierr)) {
  *ierr = create_keyval<MPI_Comm>(MPI_Comm_create_keyval, {nullptr, nullptr, copy_fn, delete_fn, *extra_state}, keyval);
}
XMSG_FORTRAN(void, keyval_free, (MPI_Fint* keyval, MPI_Fint* ierr)) { *ierr = MPI_Comm_free_keyval(keyval); }

// ---- attributes on datatypes, and MPI-1's on communicators ----------------------------------
XMSG_FORTRAN(void, type_set_attr,
             (const MPI_Fint* datatype, const MPI_Fint* keyval, const MPI_Aint* attribute_val, MPI_Fint* ierr)) {
  *ierr = MPI_Type_set_attr(*datatype, *keyval, reinterpret_cast<void*>(*attribute_val));
}
XMSG_FORTRAN(void, type_get_attr,
             (const MPI_Fint* datatype, const MPI_Fint* keyval, MPI_Aint* attribute_val, MPI_Fint* flag,
              MPI_Fint* ierr)) {
  void* value = nullptr;
  int f = 0;
  *ierr = MPI_Type_get_attr(*datatype, *keyval, &value, &f);
  *flag = logical_out(f);
  if (*ierr == MPI_SUCCESS && f) *attribute_val = reinterpret_cast<MPI_Aint>(value);
}
XMSG_FORTRAN(void, type_delete_attr, (const MPI_Fint* datatype, const MPI_Fint* keyval, MPI_Fint* ierr)) {
  *ierr = MPI_Type_delete_attr(*datatype, *keyval);
}
XMSG_FORTRAN(void, attr_put, (const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Fint* attribute_val, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_set_attr(*comm, *keyval, reinterpret_cast<void*>(static_cast<MPI_Aint>(*attribute_val)));
}
XMSG_FORTRAN(void, attr_delete, (const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_delete_attr(*comm, *keyval);
}

// ---- error handlers --------------------------------------------------------------------------
XMSG_FORTRAN(void, comm_create_errhandler, (MPI_Comm_errhandler_function * function, MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_create_errhandler(function, errhandler);
}
XMSG_FORTRAN(void, win_create_errhandler, (MPI_Win_errhandler_function * function, MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_Win_create_errhandler(function, errhandler);
}
XMSG_FORTRAN(void, file_create_errhandler, (MPI_File_errhandler_function * function, MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_File_create_errhandler(function, errhandler);
}
XMSG_FORTRAN(void, comm_call_errhandler, (const MPI_Fint* comm, const MPI_Fint* errorcode, MPI_Fint* ierr)) {
  *ierr = MPI_Comm_call_errhandler(*comm, *errorcode);
}
XMSG_FORTRAN(void, file_call_errhandler, (const MPI_Fint* file, const MPI_Fint* errorcode, MPI_Fint* ierr)) {
  *ierr = MPI_File_call_errhandler(*file, *errorcode);
}

// ---- generalized requests --------------------------------------------------------------------
// SUBROUTINE QUERY_FN(EXTRA_STATE, STATUS, IERROR), STATUS an INTEGER(MPI_STATUS_SIZE) array
// (the C struct as it is: fortran.hpp); FREE_FN(EXTRA_STATE, IERROR); CANCEL_FN(EXTRA_STATE,
// COMPLETE, IERROR) with a LOGICAL COMPLETE. The record lives until the request's free
// function ran (MPI calls it once, when it hands out the request's status or frees it).
namespace {

using FortranQuery = void(MPI_Aint*, MPI_Fint*, MPI_Fint*);
using FortranFree = void(MPI_Aint*, MPI_Fint*);
using FortranCancel = void(MPI_Aint*, MPI_Fint*, MPI_Fint*);

struct FortranGrequest {
  FortranQuery* query;
  FortranFree* free_fn;
  FortranCancel* cancel;
  MPI_Aint extra;
};

int grequest_query(void* extra, MPI_Status* status) {
  auto* g = static_cast<FortranGrequest*>(extra);
  MPI_Fint f[sizeof(MPI_Status) / sizeof(MPI_Fint)];
  std::memcpy(f, status, sizeof f);
  MPI_Fint ierr = MPI_SUCCESS;
  g->query(&g->extra, f, &ierr);
  std::memcpy(status, f, sizeof f);
  return ierr;
}

int grequest_free(void* extra) {
  std::unique_ptr<FortranGrequest> g(static_cast<FortranGrequest*>(extra));
  MPI_Fint ierr = MPI_SUCCESS;
  g->free_fn(&g->extra, &ierr);
  return ierr;
}

int grequest_cancel(void* extra, int complete) {
  auto* g = static_cast<FortranGrequest*>(extra);
  MPI_Fint done = logical_out(complete), ierr = MPI_SUCCESS;
  g->cancel(&g->extra, &done, &ierr);
  return ierr;
}

}  // namespace

XMSG_FORTRAN(void, grequest_start,
             (FortranQuery * query_fn, FortranFree* free_fn, FortranCancel* cancel_fn, const MPI_Aint* extra_state,
              MPI_Fint* request, MPI_Fint* ierr)) {
  auto* g = new FortranGrequest{query_fn, free_fn, cancel_fn, *extra_state};
  MPI_Request c = MPI_REQUEST_NULL;
  *ierr = MPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, g, &c);
  if (*ierr != MPI_SUCCESS) {
    delete g;
    return;
  }
  *request = request_c2f(c);
}
XMSG_FORTRAN(void, grequest_complete, (const MPI_Fint* request, MPI_Fint* ierr)) {
  bool ok = false;
  MPI_Request c = request_f2c(*request, &ok);
  *ierr = ok ? MPI_Grequest_complete(c) : bad_request("MPI_Grequest_complete", *request);
}
