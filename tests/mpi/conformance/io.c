/* Conformance, MPI-3.1 chapter 13 as xmsg provides it: MPI-IO is not provided, and says so.
 * Every call returns MPI_ERR_UNSUPPORTED_OPERATION through the file error handler, whose
 * default is MPI_ERRORS_RETURN (13.7), so the job goes on; MPI_File_open leaves MPI_FILE_NULL;
 * the default file handler on MPI_FILE_NULL can be read and set to the predefined handlers
 * only; the handle conversions are the identity. (With MPI_ERRORS_ARE_FATAL set there the job
 * ends: mpi_file_errors_are_fatal in tests/mpi/CMakeLists.txt.) */
#include "conformance.h"

static int class_of(int code) {
  int c = -1;
  MPI_Error_class(code, &c);
  return c;
}

static void test_calls_fail_clearly(void) {
  MPI_File fh = (MPI_File)12345;
  int e = MPI_File_open(MPI_COMM_WORLD, "data.bin", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  CHECK(class_of(e) == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_File_open returned %d", e);
  CHECK(fh == MPI_FILE_NULL, "MPI_File_open left fh %d", (int)fh);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  CHECK_MPI(MPI_Error_string(e, text, &len));
  CHECK(len > 0 && strstr(text, "not supported") != NULL, "error string \"%s\"", text);
  int value = 7;
  MPI_Status st;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Offset off = 0;
  CHECK(class_of(MPI_File_write_at(fh, 0, &value, 1, MPI_INT, &st)) == MPI_ERR_UNSUPPORTED_OPERATION, "write_at");
  CHECK(class_of(MPI_File_read_all(fh, &value, 1, MPI_INT, &st)) == MPI_ERR_UNSUPPORTED_OPERATION, "read_all");
  CHECK(class_of(MPI_File_iwrite(fh, &value, 1, MPI_INT, &req)) == MPI_ERR_UNSUPPORTED_OPERATION, "iwrite");
  CHECK(req == MPI_REQUEST_NULL, "iwrite touched the request");
  CHECK(class_of(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL)) ==
            MPI_ERR_UNSUPPORTED_OPERATION,
        "set_view");
  CHECK(class_of(MPI_File_get_size(fh, &off)) == MPI_ERR_UNSUPPORTED_OPERATION, "get_size");
  CHECK(class_of(MPI_File_seek(fh, 0, MPI_SEEK_SET)) == MPI_ERR_UNSUPPORTED_OPERATION, "seek");
  CHECK(class_of(MPI_File_sync(fh)) == MPI_ERR_UNSUPPORTED_OPERATION, "sync");
  CHECK(class_of(MPI_File_close(&fh)) == MPI_ERR_UNSUPPORTED_OPERATION, "close");
  CHECK(class_of(MPI_File_delete("data.bin", MPI_INFO_NULL)) == MPI_ERR_UNSUPPORTED_OPERATION, "delete");
  CHECK(class_of(MPI_Register_datarep("mine", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL)) ==
            MPI_ERR_UNSUPPORTED_OPERATION,
        "register_datarep");
  /* the job goes on: point-to-point and collectives still work */
  int sum = 0, one = 1;
  CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(sum == size, "allreduce after the file calls = %d", sum);
}

static void test_default_handler(void) {
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "default file errhandler %d", (int)eh);
  CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
  /* a handler of the program's own cannot apply to files: an argument error on the world */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK(class_of(MPI_File_set_errhandler(MPI_FILE_NULL, (MPI_Errhandler)77)) == MPI_ERR_ARG, "bad errhandler");
  CHECK(class_of(MPI_File_get_errhandler(MPI_FILE_NULL, NULL)) == MPI_ERR_ARG, "NULL errhandler");
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "file handle conversion");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  test_calls_fail_clearly();
  test_default_handler();
  return FINISH("io");
}
