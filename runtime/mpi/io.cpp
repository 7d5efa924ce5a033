// MPI-IO (MPI-3.1 chapter 13) is not provided: every MPI_File_* call (and
// MPI_Register_datarep) returns MPI_ERR_UNSUPPORTED_OPERATION naming the call, so a program
// whose I/O paths through MPI are never taken builds and runs. Errors go through the file error
// handler, whose default MPI defines as MPI_ERRORS_RETURN (13.7): the code comes back and the
// job goes on, as when a program checks for a file system it does not find. A program that set
// MPI_ERRORS_ARE_FATAL on MPI_FILE_NULL gets the message and the job ends. No file can ever be
// open, so every file handle other than MPI_FILE_NULL is unknown; MPI_File_c2f/f2c are the
// identity like the other handles.
#include "mpi_impl.hpp"

using namespace xmsg::mpi;

namespace {

// The handler MPI_File_open would attach (MPI_File_set_errhandler on MPI_FILE_NULL sets it).
std::atomic<MPI_Errhandler> g_file_errhandler{MPI_ERRORS_RETURN};

int unsupported(const char* func) {
  const MPI_Errhandler eh = g_file_errhandler.load();
  if (eh == MPI_ERRORS_ARE_FATAL)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION, func, MPI_COMM_WORLD,
                "MPI-IO is not provided by xmsg (docs/mpi.md); the file error handler is MPI_ERRORS_ARE_FATAL");
  xmsgi_error(MPI_ERR_UNSUPPORTED_OPERATION, "%s: MPI-IO is not provided by xmsg (docs/mpi.md)", func);
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

}  // namespace

// Each definition: the call's MPI-3.1 parameters (unnamed: none is looked at), the entry guard,
// the error.
#define XMSG_MPI_IO(name, params)          \
  extern "C" int PMPI_##name params {      \
    XMSG_MPI_ENTRY;                        \
    return unsupported("MPI_" #name);      \
  }                                        \
  XMSG_MPI_ALIAS(name)

extern "C" int PMPI_File_open(MPI_Comm, const char*, int, MPI_Info, MPI_File* fh) {
  XMSG_MPI_ENTRY;
  if (fh) *fh = MPI_FILE_NULL;
  return unsupported("MPI_File_open");
}
XMSG_MPI_ALIAS(File_open)

XMSG_MPI_IO(File_close, (MPI_File*))
XMSG_MPI_IO(File_delete, (const char*, MPI_Info))
XMSG_MPI_IO(File_set_size, (MPI_File, MPI_Offset))
XMSG_MPI_IO(File_preallocate, (MPI_File, MPI_Offset))
XMSG_MPI_IO(File_get_size, (MPI_File, MPI_Offset*))
XMSG_MPI_IO(File_get_group, (MPI_File, MPI_Group*))
XMSG_MPI_IO(File_get_amode, (MPI_File, int*))
XMSG_MPI_IO(File_set_info, (MPI_File, MPI_Info))
XMSG_MPI_IO(File_get_info, (MPI_File, MPI_Info*))
XMSG_MPI_IO(File_set_view, (MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char*, MPI_Info))
XMSG_MPI_IO(File_get_view, (MPI_File, MPI_Offset*, MPI_Datatype*, MPI_Datatype*, char*))
XMSG_MPI_IO(File_read_at, (MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_read_at_all, (MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_write_at, (MPI_File, MPI_Offset, const void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_write_at_all, (MPI_File, MPI_Offset, const void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_iread_at, (MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_iwrite_at, (MPI_File, MPI_Offset, const void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_iread_at_all, (MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_iwrite_at_all, (MPI_File, MPI_Offset, const void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_read, (MPI_File, void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_read_all, (MPI_File, void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_write, (MPI_File, const void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_write_all, (MPI_File, const void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_iread, (MPI_File, void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_iwrite, (MPI_File, const void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_iread_all, (MPI_File, void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_iwrite_all, (MPI_File, const void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_seek, (MPI_File, MPI_Offset, int))
XMSG_MPI_IO(File_get_position, (MPI_File, MPI_Offset*))
XMSG_MPI_IO(File_get_byte_offset, (MPI_File, MPI_Offset, MPI_Offset*))
XMSG_MPI_IO(File_read_shared, (MPI_File, void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_write_shared, (MPI_File, const void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_iread_shared, (MPI_File, void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_iwrite_shared, (MPI_File, const void*, int, MPI_Datatype, MPI_Request*))
XMSG_MPI_IO(File_read_ordered, (MPI_File, void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_write_ordered, (MPI_File, const void*, int, MPI_Datatype, MPI_Status*))
XMSG_MPI_IO(File_seek_shared, (MPI_File, MPI_Offset, int))
XMSG_MPI_IO(File_get_position_shared, (MPI_File, MPI_Offset*))
XMSG_MPI_IO(File_read_at_all_begin, (MPI_File, MPI_Offset, void*, int, MPI_Datatype))
XMSG_MPI_IO(File_read_at_all_end, (MPI_File, void*, MPI_Status*))
XMSG_MPI_IO(File_write_at_all_begin, (MPI_File, MPI_Offset, const void*, int, MPI_Datatype))
XMSG_MPI_IO(File_write_at_all_end, (MPI_File, const void*, MPI_Status*))
XMSG_MPI_IO(File_read_all_begin, (MPI_File, void*, int, MPI_Datatype))
XMSG_MPI_IO(File_read_all_end, (MPI_File, void*, MPI_Status*))
XMSG_MPI_IO(File_write_all_begin, (MPI_File, const void*, int, MPI_Datatype))
XMSG_MPI_IO(File_write_all_end, (MPI_File, const void*, MPI_Status*))
XMSG_MPI_IO(File_read_ordered_begin, (MPI_File, void*, int, MPI_Datatype))
XMSG_MPI_IO(File_read_ordered_end, (MPI_File, void*, MPI_Status*))
XMSG_MPI_IO(File_write_ordered_begin, (MPI_File, const void*, int, MPI_Datatype))
XMSG_MPI_IO(File_write_ordered_end, (MPI_File, const void*, MPI_Status*))
XMSG_MPI_IO(File_get_type_extent, (MPI_File, MPI_Datatype, MPI_Aint*))
XMSG_MPI_IO(File_set_atomicity, (MPI_File, int))
XMSG_MPI_IO(File_get_atomicity, (MPI_File, int*))
XMSG_MPI_IO(File_sync, (MPI_File))
XMSG_MPI_IO(File_create_errhandler, (MPI_File_errhandler_function*, MPI_Errhandler*))
XMSG_MPI_IO(File_call_errhandler, (MPI_File, int))
XMSG_MPI_IO(Register_datarep, (const char*, MPI_Datarep_conversion_function*, MPI_Datarep_conversion_function*,
                               MPI_Datarep_extent_function*, void*))

// The default file handler (on MPI_FILE_NULL) takes the two predefined handlers.
extern "C" int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  XMSG_MPI_ENTRY;
  if (file != MPI_FILE_NULL) return unsupported("MPI_File_set_errhandler");
  if (errhandler != MPI_ERRORS_RETURN && errhandler != MPI_ERRORS_ARE_FATAL)
    return fail(MPI_ERR_ARG, "MPI_File_set_errhandler", MPI_COMM_WORLD,
                "errhandler %d: only MPI_ERRORS_RETURN and MPI_ERRORS_ARE_FATAL apply to files (no MPI-IO)",
                errhandler);
  g_file_errhandler.store(errhandler);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(File_set_errhandler)

extern "C" int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  XMSG_MPI_ENTRY;
  if (file != MPI_FILE_NULL) return unsupported("MPI_File_get_errhandler");
  if (!errhandler) return fail(MPI_ERR_ARG, "MPI_File_get_errhandler", MPI_COMM_WORLD, "errhandler is NULL");
  *errhandler = g_file_errhandler.load();
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(File_get_errhandler)

extern "C" MPI_Fint PMPI_File_c2f(MPI_File file) {
  XMSG_MPI_ENTRY;
  return file;
}
XMSG_MPI_ALIAS(File_c2f)
extern "C" MPI_File PMPI_File_f2c(MPI_Fint file) {
  XMSG_MPI_ENTRY;
  return file;
}
XMSG_MPI_ALIAS(File_f2c)
