// Build-time generator of the Fortran constants: every INTEGER PARAMETER of mpif.h and of the
// `mpi` module is printed here from mpi.h's own values, so the two languages cannot disagree.
//   xmsg_mpif_gen constants FILE   the declarations (xmsg_mpif_constants.h, included by mpif.h)
//   xmsg_mpif_gen values           "NAME VALUE" lines as C sees them (tests/fortran compares)
//   xmsg_mpif_gen program-f FILE   a fixed-form program (include 'mpif.h') printing the same
//   xmsg_mpif_gen program-f90 FILE a free-form program (use mpi) printing the same
//   xmsg_mpif_gen f08-constants FILE  mpi_f08's declarations (handles as TYPE(MPI_Comm) ...)
//   xmsg_mpif_gen program-f08 FILE a program (use mpi_f08) printing the same
// Every generated line fits fixed form (statements in columns 7-72, `!` comments).
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Constant {
  const char* name;
  long long value;
  const char* handle = nullptr;  // mpi_f08: the handle type (TYPE(MPI_Comm) ...); nullptr: INTEGER
};

// Fortran's predefined datatypes are the C layer's datatypes of the same size and kind
// (gfortran: default INTEGER, REAL and LOGICAL are 4 bytes, DOUBLE PRECISION 8).
static_assert(sizeof(int) == 4 && sizeof(float) == 4 && sizeof(double) == 8, "gfortran's default kinds");
static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8, "8-byte kinds");
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "MPI_Status is a whole number of Fortran integers");

#define C(name) {#name, static_cast<long long>(name)}
#define F(name, value) {#name, static_cast<long long>(value)}
// Handles: INTEGER in mpif.h and `use mpi`, TYPE(<type>) in mpi_f08.
#define H(name, type) {#name, static_cast<long long>(name), #type}
#define FH(name, value, type) {#name, static_cast<long long>(value), #type}

const std::vector<Constant>& constants() {
  static const std::vector<Constant> list = {
      // versions and kinds
      C(MPI_VERSION), C(MPI_SUBVERSION),
      F(MPI_ADDRESS_KIND, sizeof(MPI_Aint)), F(MPI_OFFSET_KIND, sizeof(MPI_Offset)),
      F(MPI_COUNT_KIND, sizeof(MPI_Count)), F(MPI_INTEGER_KIND, sizeof(MPI_Fint)),
      // status: an INTEGER array of MPI_STATUS_SIZE holding the C struct as it is
      F(MPI_STATUS_SIZE, sizeof(MPI_Status) / sizeof(MPI_Fint)),
      F(MPI_SOURCE, offsetof(MPI_Status, MPI_SOURCE) / sizeof(MPI_Fint) + 1),
      F(MPI_TAG, offsetof(MPI_Status, MPI_TAG) / sizeof(MPI_Fint) + 1),
      F(MPI_ERROR, offsetof(MPI_Status, MPI_ERROR) / sizeof(MPI_Fint) + 1),
      // error classes
      C(MPI_SUCCESS), C(MPI_ERR_ARG), C(MPI_ERR_RANK), C(MPI_ERR_COUNT), C(MPI_ERR_BUFFER), C(MPI_ERR_TAG),
      C(MPI_ERR_COMM), C(MPI_ERR_TYPE), C(MPI_ERR_OP), C(MPI_ERR_ROOT), C(MPI_ERR_REQUEST), C(MPI_ERR_TRUNCATE),
      C(MPI_ERR_PROC_FAILED), C(MPI_ERR_NO_MEM), C(MPI_ERR_OTHER), C(MPI_ERR_PENDING), C(MPI_ERR_INTERN),
      C(MPI_ERR_IN_STATUS), C(MPI_ERR_UNKNOWN), C(MPI_ERR_GROUP), C(MPI_ERR_TOPOLOGY), C(MPI_ERR_DIMS),
      C(MPI_ERR_KEYVAL), C(MPI_ERR_INFO), C(MPI_ERR_INFO_KEY), C(MPI_ERR_INFO_VALUE), C(MPI_ERR_INFO_NOKEY),
      C(MPI_ERR_UNSUPPORTED_OPERATION), C(MPI_ERR_NOT_SAME), C(MPI_ERR_WIN), C(MPI_ERR_BASE), C(MPI_ERR_SIZE),
      C(MPI_ERR_DISP), C(MPI_ERR_LOCKTYPE), C(MPI_ERR_ASSERT), C(MPI_ERR_RMA_CONFLICT), C(MPI_ERR_RMA_SYNC),
      C(MPI_ERR_RMA_RANGE), C(MPI_ERR_RMA_ATTACH), C(MPI_ERR_RMA_SHARED), C(MPI_ERR_RMA_FLAVOR), C(MPI_ERR_SPAWN),
      C(MPI_ERR_PORT), C(MPI_ERR_SERVICE), C(MPI_ERR_NAME), C(MPI_ERR_FILE), C(MPI_ERR_AMODE),
      C(MPI_ERR_UNSUPPORTED_DATAREP), C(MPI_ERR_NO_SUCH_FILE), C(MPI_ERR_FILE_EXISTS), C(MPI_ERR_BAD_FILE),
      C(MPI_ERR_ACCESS), C(MPI_ERR_NO_SPACE), C(MPI_ERR_QUOTA), C(MPI_ERR_READ_ONLY), C(MPI_ERR_FILE_IN_USE),
      C(MPI_ERR_DUP_DATAREP), C(MPI_ERR_CONVERSION), C(MPI_ERR_IO), C(MPI_ERR_LASTCODE),
      // handles (ints in C; MPI_REQUEST_NULL is the Fortran request table's 0)
      H(MPI_COMM_NULL, MPI_Comm), H(MPI_COMM_WORLD, MPI_Comm), H(MPI_COMM_SELF, MPI_Comm),
      FH(MPI_REQUEST_NULL, 0, MPI_Request), H(MPI_GROUP_NULL, MPI_Group), H(MPI_GROUP_EMPTY, MPI_Group),
      H(MPI_INFO_NULL, MPI_Info), H(MPI_INFO_ENV, MPI_Info), H(MPI_WIN_NULL, MPI_Win), H(MPI_FILE_NULL, MPI_File),
      H(MPI_MESSAGE_NULL, MPI_Message), H(MPI_MESSAGE_NO_PROC, MPI_Message), H(MPI_ERRHANDLER_NULL, MPI_Errhandler),
      H(MPI_ERRORS_ARE_FATAL, MPI_Errhandler), H(MPI_ERRORS_RETURN, MPI_Errhandler),
      H(MPI_DATATYPE_NULL, MPI_Datatype), H(MPI_OP_NULL, MPI_Op),
      // ranks, tags, limits
      C(MPI_ANY_SOURCE), C(MPI_ANY_TAG), C(MPI_PROC_NULL), C(MPI_ROOT), C(MPI_UNDEFINED), C(MPI_MAX_PROCESSOR_NAME),
      C(MPI_MAX_ERROR_STRING), C(MPI_MAX_OBJECT_NAME), C(MPI_MAX_INFO_KEY), C(MPI_MAX_INFO_VAL),
      C(MPI_MAX_LIBRARY_VERSION_STRING), C(MPI_MAX_PORT_NAME), C(MPI_MAX_DATAREP_STRING), C(MPI_BSEND_OVERHEAD),
      C(MPI_IDENT), C(MPI_CONGRUENT), C(MPI_SIMILAR), C(MPI_UNEQUAL), C(MPI_THREAD_SINGLE), C(MPI_THREAD_FUNNELED),
      C(MPI_THREAD_SERIALIZED), C(MPI_THREAD_MULTIPLE), C(MPI_GRAPH), C(MPI_CART), C(MPI_DIST_GRAPH),
      C(MPI_COMM_TYPE_SHARED), C(MPI_KEYVAL_INVALID), C(MPI_TAG_UB), C(MPI_HOST), C(MPI_IO), C(MPI_WTIME_IS_GLOBAL),
      C(MPI_APPNUM), C(MPI_UNIVERSE_SIZE), C(MPI_LASTUSEDCODE), C(MPI_WIN_BASE), C(MPI_WIN_SIZE),
      C(MPI_WIN_DISP_UNIT), C(MPI_WIN_CREATE_FLAVOR), C(MPI_WIN_MODEL),
      // datatype decoding and constructors
      C(MPI_COMBINER_NAMED), C(MPI_COMBINER_DUP), C(MPI_COMBINER_CONTIGUOUS), C(MPI_COMBINER_VECTOR),
      C(MPI_COMBINER_HVECTOR), C(MPI_COMBINER_INDEXED), C(MPI_COMBINER_HINDEXED), C(MPI_COMBINER_INDEXED_BLOCK),
      C(MPI_COMBINER_HINDEXED_BLOCK), C(MPI_COMBINER_STRUCT), C(MPI_COMBINER_SUBARRAY), C(MPI_COMBINER_DARRAY),
      C(MPI_COMBINER_F90_REAL), C(MPI_COMBINER_F90_COMPLEX), C(MPI_COMBINER_F90_INTEGER), C(MPI_COMBINER_RESIZED),
      C(MPI_COMBINER_HVECTOR_INTEGER), C(MPI_COMBINER_HINDEXED_INTEGER), C(MPI_COMBINER_STRUCT_INTEGER),
      C(MPI_ORDER_C), C(MPI_ORDER_FORTRAN), C(MPI_DISTRIBUTE_BLOCK), C(MPI_DISTRIBUTE_CYCLIC), C(MPI_DISTRIBUTE_NONE),
      C(MPI_DISTRIBUTE_DFLT_DARG), C(MPI_TYPECLASS_REAL), C(MPI_TYPECLASS_INTEGER), C(MPI_TYPECLASS_COMPLEX),
      // one-sided
      C(MPI_LOCK_EXCLUSIVE), C(MPI_LOCK_SHARED), C(MPI_MODE_NOCHECK), C(MPI_MODE_NOSTORE), C(MPI_MODE_NOPUT),
      C(MPI_MODE_NOPRECEDE), C(MPI_MODE_NOSUCCEED), C(MPI_WIN_FLAVOR_CREATE), C(MPI_WIN_FLAVOR_ALLOCATE),
      C(MPI_WIN_FLAVOR_DYNAMIC), C(MPI_WIN_FLAVOR_SHARED), C(MPI_WIN_SEPARATE), C(MPI_WIN_UNIFIED),
      // MPI-IO's modes and seek positions (the values only: MPI-IO is not provided)
      C(MPI_MODE_CREATE), C(MPI_MODE_RDONLY), C(MPI_MODE_WRONLY), C(MPI_MODE_RDWR), C(MPI_MODE_DELETE_ON_CLOSE),
      C(MPI_MODE_UNIQUE_OPEN), C(MPI_MODE_EXCL), C(MPI_MODE_APPEND), C(MPI_MODE_SEQUENTIAL), C(MPI_SEEK_SET),
      C(MPI_SEEK_CUR), C(MPI_SEEK_END),
      // Fortran datatypes: the C datatypes of the same size and kind
      FH(MPI_INTEGER, MPI_INT, MPI_Datatype), FH(MPI_REAL, MPI_FLOAT, MPI_Datatype),
      FH(MPI_DOUBLE_PRECISION, MPI_DOUBLE, MPI_Datatype), FH(MPI_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_Datatype),
      FH(MPI_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_Datatype), FH(MPI_LOGICAL, MPI_INT, MPI_Datatype),
      FH(MPI_CHARACTER, MPI_CHAR, MPI_Datatype), FH(MPI_INTEGER1, MPI_INT8_T, MPI_Datatype),
      FH(MPI_INTEGER2, MPI_INT16_T, MPI_Datatype), FH(MPI_INTEGER4, MPI_INT32_T, MPI_Datatype),
      FH(MPI_INTEGER8, MPI_INT64_T, MPI_Datatype), FH(MPI_REAL4, MPI_FLOAT, MPI_Datatype),
      FH(MPI_REAL8, MPI_DOUBLE, MPI_Datatype), FH(MPI_COMPLEX8, MPI_C_FLOAT_COMPLEX, MPI_Datatype),
      FH(MPI_COMPLEX16, MPI_C_DOUBLE_COMPLEX, MPI_Datatype), FH(MPI_2INTEGER, MPI_2INT, MPI_Datatype),
      // C datatypes (Fortran programs may name them too)
      H(MPI_BYTE, MPI_Datatype), H(MPI_PACKED, MPI_Datatype), H(MPI_CHAR, MPI_Datatype),
      H(MPI_SIGNED_CHAR, MPI_Datatype), H(MPI_UNSIGNED_CHAR, MPI_Datatype), H(MPI_SHORT, MPI_Datatype),
      H(MPI_UNSIGNED_SHORT, MPI_Datatype), H(MPI_INT, MPI_Datatype), H(MPI_UNSIGNED, MPI_Datatype),
      H(MPI_LONG, MPI_Datatype), H(MPI_UNSIGNED_LONG, MPI_Datatype), H(MPI_LONG_LONG, MPI_Datatype),
      H(MPI_LONG_LONG_INT, MPI_Datatype), H(MPI_UNSIGNED_LONG_LONG, MPI_Datatype), H(MPI_INT8_T, MPI_Datatype),
      H(MPI_INT16_T, MPI_Datatype), H(MPI_INT32_T, MPI_Datatype), H(MPI_INT64_T, MPI_Datatype),
      H(MPI_UINT8_T, MPI_Datatype), H(MPI_UINT16_T, MPI_Datatype), H(MPI_UINT32_T, MPI_Datatype),
      H(MPI_UINT64_T, MPI_Datatype), H(MPI_FLOAT, MPI_Datatype), H(MPI_DOUBLE, MPI_Datatype),
      H(MPI_LONG_DOUBLE, MPI_Datatype), H(MPI_C_BOOL, MPI_Datatype), H(MPI_FLOAT_INT, MPI_Datatype),
      H(MPI_DOUBLE_INT, MPI_Datatype), H(MPI_LONG_INT, MPI_Datatype), H(MPI_2INT, MPI_Datatype),
      H(MPI_SHORT_INT, MPI_Datatype), H(MPI_LONG_DOUBLE_INT, MPI_Datatype), H(MPI_WCHAR, MPI_Datatype),
      H(MPI_AINT, MPI_Datatype), H(MPI_OFFSET, MPI_Datatype), H(MPI_COUNT, MPI_Datatype),
      H(MPI_C_FLOAT_COMPLEX, MPI_Datatype), H(MPI_C_COMPLEX, MPI_Datatype), H(MPI_C_DOUBLE_COMPLEX, MPI_Datatype),
      H(MPI_C_LONG_DOUBLE_COMPLEX, MPI_Datatype), H(MPI_CXX_BOOL, MPI_Datatype),
      H(MPI_CXX_FLOAT_COMPLEX, MPI_Datatype), H(MPI_CXX_DOUBLE_COMPLEX, MPI_Datatype),
      H(MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_Datatype),
      // ops
      H(MPI_SUM, MPI_Op), H(MPI_PROD, MPI_Op), H(MPI_MIN, MPI_Op), H(MPI_MAX, MPI_Op), H(MPI_LAND, MPI_Op),
      H(MPI_LOR, MPI_Op), H(MPI_LXOR, MPI_Op), H(MPI_BAND, MPI_Op), H(MPI_BOR, MPI_Op), H(MPI_BXOR, MPI_Op),
      H(MPI_MINLOC, MPI_Op), H(MPI_MAXLOC, MPI_Op), H(MPI_REPLACE, MPI_Op), H(MPI_NO_OP, MPI_Op),
  };
  return list;
}

#undef C
#undef F
#undef H
#undef FH

FILE* open_out(const char* path) {
  FILE* f = std::fopen(path, "w");
  if (!f) std::perror(path);
  return f;
}

int write_constants(const char* path) {
  FILE* f = open_out(path);
  if (!f) return 1;
  std::fprintf(f,
               "! xmsg_mpif_constants.h: generated by xmsg_mpif_gen from the\n"
               "! values of mpi.h; do not edit. Included by mpif.h.\n");
  for (const Constant& c : constants()) {
    std::fprintf(f, "      INTEGER %s\n", c.name);
    std::string line = std::string("      PARAMETER (") + c.name + "=" + std::to_string(c.value) + ")";
    if (line.size() > 72) {
      std::fprintf(stderr, "xmsg_mpif_gen: line over 72 columns: %s\n", line.c_str());
      std::fclose(f);
      return 1;
    }
    std::fprintf(f, "%s\n", line.c_str());
  }
  return std::fclose(f) == 0 ? 0 : 1;
}

// mpi_f08's constants (free form, included by mpi_f08.f90 after the handle types): handles
// are TYPE(<type>) PARAMETERs, the rest INTEGER as in mpif.h.
int write_f08_constants(const char* path) {
  FILE* f = open_out(path);
  if (!f) return 1;
  std::fprintf(f,
               "! xmsg_mpi_f08_constants.h: generated by xmsg_mpif_gen from the values of\n"
               "! mpi.h; do not edit. Included by mpi_f08.f90.\n");
  for (const Constant& c : constants()) {
    if (c.handle)
      std::fprintf(f, "  type(%s), parameter :: %s = %s(%lld)\n", c.handle, c.name, c.handle, c.value);
    else
      std::fprintf(f, "  integer, parameter :: %s = %lld\n", c.name, c.value);
  }
  return std::fclose(f) == 0 ? 0 : 1;
}

int write_program(const char* path, bool fixed) {
  FILE* f = open_out(path);
  if (!f) return 1;
  if (fixed) {
    std::fprintf(f,
                 "! Generated by xmsg_mpif_gen: prints every constant of mpif.h.\n"
                 "      PROGRAM CONSTANTS_MPIF\n"
                 "      IMPLICIT NONE\n"
                 "      INCLUDE 'mpif.h'\n");
    for (const Constant& c : constants())
      std::fprintf(f, "      WRITE(*,'(A,1X,I0)') '%s',\n     &  %s\n", c.name, c.name);
    std::fprintf(f, "      END PROGRAM\n");
  } else {
    std::fprintf(f,
                 "! Generated by xmsg_mpif_gen: prints every constant of the mpi module.\n"
                 "program constants_use_mpi\n"
                 "  use mpi\n"
                 "  implicit none\n");
    for (const Constant& c : constants())
      std::fprintf(f, "  write(*,'(A,1X,I0)') '%s', %s\n", c.name, c.name);
    std::fprintf(f, "end program\n");
  }
  return std::fclose(f) == 0 ? 0 : 1;
}

// The same through `use mpi_f08` (a handle prints its MPI_VAL).
int write_program_f08(const char* path) {
  FILE* f = open_out(path);
  if (!f) return 1;
  std::fprintf(f,
               "! Generated by xmsg_mpif_gen: prints every constant of the mpi_f08 module.\n"
               "program constants_use_mpi_f08\n"
               "  use mpi_f08\n"
               "  implicit none\n");
  for (const Constant& c : constants())
    std::fprintf(f, "  write(*,'(A,1X,I0)') '%s', %s%s\n", c.name, c.name, c.handle ? "%MPI_VAL" : "");
  std::fprintf(f, "end program\n");
  return std::fclose(f) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "constants") == 0) return write_constants(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "program-f") == 0) return write_program(argv[2], true);
  if (argc == 3 && std::strcmp(argv[1], "program-f90") == 0) return write_program(argv[2], false);
  if (argc == 3 && std::strcmp(argv[1], "f08-constants") == 0) return write_f08_constants(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "program-f08") == 0) return write_program_f08(argv[2]);
  if (argc == 2 && std::strcmp(argv[1], "values") == 0) {
    for (const Constant& c : constants()) std::printf("%s %lld\n", c.name, c.value);
    return 0;
  }
  std::fprintf(stderr,
               "usage: %s constants FILE | f08-constants FILE | program-f FILE | program-f90 FILE | "
               "program-f08 FILE | values\n",
               argv[0]);
  return 2;
}
