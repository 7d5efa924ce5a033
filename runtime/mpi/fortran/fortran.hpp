// Shared by the Fortran bindings (runtime/mpi/fortran/*.cpp, compiled into libxmsg_mpi): how a
// Fortran argument becomes a C one. gfortran's conventions: lowercase names with one trailing
// underscore, every argument by reference, IERROR last, the length of each CHARACTER argument
// appended after all the others as a size_t, LOGICAL .TRUE. is 1.
//
// Handles are C's own ints (MPI_Comm, MPI_Datatype, MPI_Op, MPI_Group, MPI_Info, MPI_Errhandler
// are MPI_Fint already), except MPI_Request, a pointer in C: Fortran gets an index into the
// request table below (0 is MPI_REQUEST_NULL).
#pragma once

#include "../mpi_impl.hpp"

#include <cstddef>
#include <cstring>
#include <string>

constexpr int kStatusInts = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "MPI_Status as INTEGER(MPI_STATUS_SIZE)");

// The common blocks of mpif.h whose addresses stand for MPI_BOTTOM, MPI_IN_PLACE,
// MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE and MPI_ERRCODES_IGNORE (COMMON /XMSG_MPIF_BOTTOM/ is
// the symbol xmsg_mpif_bottom_). Defined here, so a program that never includes mpif.h links.
extern "C" {
extern MPI_Fint xmsg_mpif_bottom_;
extern MPI_Fint xmsg_mpif_in_place_;
extern MPI_Fint xmsg_mpif_status_ignore_[kStatusInts];
extern MPI_Fint xmsg_mpif_statuses_ignore_[kStatusInts];
extern MPI_Fint xmsg_mpif_errcodes_ignore_[1];

// Request and status conversions for C code handed Fortran values. mpi.h does not declare
// MPI_Request_c2f/_f2c and MPI_Status_c2f/_f2c yet (and libxmsg_mpi may export no MPI_ name
// mpi.h lacks), so only the PMPI_ implementations exist for now.
MPI_Fint PMPI_Request_c2f(MPI_Request request);
MPI_Request PMPI_Request_f2c(MPI_Fint request);
int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status);
int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status);
}

// Defines the Fortran entry point pmpi_NAME_ and its weak alias mpi_NAME_ (profiling, as the C
// layer does for PMPI_X / MPI_X). The body follows the macro.
#define XMSG_FORTRAN(ret, name, params)                                                           \
  extern "C" ret pmpi_##name##_ params;                                                            \
  extern "C" __typeof__(pmpi_##name##_) mpi_##name##_ __attribute__((weak, alias("pmpi_" #name "_"))); \
  extern "C" ret pmpi_##name##_ params

namespace xmsg::mpi::fortran {

// A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become C's.
inline void* buffer(const void* p) {
  if (p == &xmsg_mpif_bottom_) return MPI_BOTTOM;
  if (p == &xmsg_mpif_in_place_) return MPI_IN_PLACE;
  return const_cast<void*>(p);
}

inline bool status_ignored(const MPI_Fint* s) {
  return s == nullptr || s == xmsg_mpif_status_ignore_ || s == &xmsg_mpif_statuses_ignore_[0];
}
inline bool statuses_ignored(const MPI_Fint* s) {
  return s == nullptr || s == &xmsg_mpif_statuses_ignore_[0] || s == xmsg_mpif_status_ignore_;
}

// An output status: the C call fills c(), the destructor copies it into the INTEGER array.
class StatusOut {
 public:
  explicit StatusOut(MPI_Fint* f) : f_(status_ignored(f) ? nullptr : f) {}
  StatusOut(const StatusOut&) = delete;
  StatusOut& operator=(const StatusOut&) = delete;
  ~StatusOut() {
    if (f_) std::memcpy(f_, &c_, sizeof c_);
  }
  MPI_Status* c() { return f_ ? &c_ : MPI_STATUS_IGNORE; }

 private:
  MPI_Fint* f_;
  MPI_Status c_{};
};

inline MPI_Status status_in(const MPI_Fint* f) {
  MPI_Status s{};
  std::memcpy(&s, f, sizeof s);
  return s;
}

// LOGICAL in and out (gfortran: .TRUE. is 1, .FALSE. 0; any non-zero value reads as true).
inline bool logical_in(const MPI_Fint* l) { return *l != 0; }
inline MPI_Fint logical_out(int flag) { return flag ? 1 : 0; }

// CHARACTER: a Fortran string has a length and no terminator; trailing blanks are padding.
std::string string_in(const char* f, size_t len);
// Copies a C string into a CHARACTER of length `len`, blank-padded (truncated when longer).
void string_out(const char* c, char* f, size_t len);

// ---- the request table --------------------------------------------------------------------
// Fortran handle -> C request. f2c of 0 is MPI_REQUEST_NULL; of a handle that is not in the
// table, *ok is false.
MPI_Request request_f2c(MPI_Fint f, bool* ok);
// C request -> Fortran handle (the same handle while the request lives); 0 for
// MPI_REQUEST_NULL.
MPI_Fint request_c2f(MPI_Request c);
// After a C call took the request of Fortran handle *f and left `c` in its place: a completed
// (or freed) request, c == MPI_REQUEST_NULL, frees the entry and sets *f to MPI_REQUEST_NULL.
void request_update(MPI_Fint* f, MPI_Request c);
// The error for a Fortran request handle that names no request.
int bad_request(const char* func, MPI_Fint f);

}  // namespace xmsg::mpi::fortran
