// Fortran bindings of MPI-IO as xmsg has it (runtime/mpi/io.cpp: not provided). Each routine
// calls the C function, which returns MPI_ERR_UNSUPPORTED_OPERATION naming the call through the
// file error handler, so a Fortran program whose MPI-IO paths are never taken links and runs.
// File handles are the C ints; offsets are INTEGER(KIND=MPI_OFFSET_KIND). Conventions:
// fortran.hpp.
#include "fortran.hpp"

using namespace xmsg::mpi::fortran;

XMSG_FORTRAN(void, file_open,
             (const MPI_Fint* comm, const char* filename, const MPI_Fint* amode, const MPI_Fint* info, MPI_Fint* fh,
              MPI_Fint* ierr, size_t filename_len)) {
  MPI_File f = MPI_FILE_NULL;
  *ierr = MPI_File_open(*comm, string_in(filename, filename_len).c_str(), *amode, *info, &f);
  *fh = f;
}
XMSG_FORTRAN(void, file_close, (MPI_Fint* fh, MPI_Fint* ierr)) {
  MPI_File f = *fh;
  *ierr = MPI_File_close(&f);
  *fh = f;
}
XMSG_FORTRAN(void, file_delete, (const char* filename, const MPI_Fint* info, MPI_Fint* ierr, size_t filename_len)) {
  *ierr = MPI_File_delete(string_in(filename, filename_len).c_str(), *info);
}
XMSG_FORTRAN(void, file_set_view,
             (const MPI_Fint* fh, const MPI_Offset* disp, const MPI_Fint* etype, const MPI_Fint* filetype,
              const char* datarep, const MPI_Fint* info, MPI_Fint* ierr, size_t datarep_len)) {
  *ierr = MPI_File_set_view(*fh, *disp, *etype, *filetype, string_in(datarep, datarep_len).c_str(), *info);
}
XMSG_FORTRAN(void, file_get_size, (const MPI_Fint* fh, MPI_Offset* size, MPI_Fint* ierr)) {
  *ierr = MPI_File_get_size(*fh, size);
}
XMSG_FORTRAN(void, file_set_size, (const MPI_Fint* fh, const MPI_Offset* size, MPI_Fint* ierr)) {
  *ierr = MPI_File_set_size(*fh, *size);
}
XMSG_FORTRAN(void, file_seek, (const MPI_Fint* fh, const MPI_Offset* offset, const MPI_Fint* whence, MPI_Fint* ierr)) {
  *ierr = MPI_File_seek(*fh, *offset, *whence);
}
XMSG_FORTRAN(void, file_sync, (const MPI_Fint* fh, MPI_Fint* ierr)) { *ierr = MPI_File_sync(*fh); }

// Reads and writes: (fh, [offset,] buf, count, datatype, status, ierr).
#define XMSG_FORTRAN_FILE_RW(lower, Cname, Buf)                                                                   \
  XMSG_FORTRAN(void, lower,                                                                                     \
               (const MPI_Fint* fh, Buf buf, const MPI_Fint* count, const MPI_Fint* datatype, MPI_Fint* status, \
                MPI_Fint* ierr)) {                                                                               \
    StatusOut st(status);                                                                                        \
    *ierr = Cname(*fh, buffer(buf), *count, *datatype, st.c());                                                  \
  }
#define XMSG_FORTRAN_FILE_RW_AT(lower, Cname, Buf)                                                                \
  XMSG_FORTRAN(void, lower,                                                                                     \
               (const MPI_Fint* fh, const MPI_Offset* offset, Buf buf, const MPI_Fint* count,                   \
                const MPI_Fint* datatype, MPI_Fint* status, MPI_Fint* ierr)) {                                   \
    StatusOut st(status);                                                                                        \
    *ierr = Cname(*fh, *offset, buffer(buf), *count, *datatype, st.c());                                         \
  }
XMSG_FORTRAN_FILE_RW(file_read, MPI_File_read, void*)
XMSG_FORTRAN_FILE_RW(file_read_all, MPI_File_read_all, void*)
XMSG_FORTRAN_FILE_RW(file_write, MPI_File_write, const void*)
XMSG_FORTRAN_FILE_RW(file_write_all, MPI_File_write_all, const void*)
XMSG_FORTRAN_FILE_RW_AT(file_read_at, MPI_File_read_at, void*)
XMSG_FORTRAN_FILE_RW_AT(file_read_at_all, MPI_File_read_at_all, void*)
XMSG_FORTRAN_FILE_RW_AT(file_write_at, MPI_File_write_at, const void*)
XMSG_FORTRAN_FILE_RW_AT(file_write_at_all, MPI_File_write_at_all, const void*)

XMSG_FORTRAN(void, file_set_errhandler, (const MPI_Fint* file, const MPI_Fint* errhandler, MPI_Fint* ierr)) {
  *ierr = MPI_File_set_errhandler(*file, *errhandler);
}
XMSG_FORTRAN(void, file_get_errhandler, (const MPI_Fint* file, MPI_Fint* errhandler, MPI_Fint* ierr)) {
  MPI_Errhandler e = MPI_ERRHANDLER_NULL;
  *ierr = MPI_File_get_errhandler(*file, &e);
  *errhandler = e;
}
