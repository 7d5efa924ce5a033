/* MPI's default error handler: a bad argument prints the function and the argument, and the
 * whole job ends (the test expects the message and a non-zero exit). With the argument "file":
 * MPI_ERRORS_ARE_FATAL as the default file handler, then MPI_File_open (MPI-IO is not provided). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, value = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && strcmp(argv[1], "file") == 0) {
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_File_open(MPI_COMM_WORLD, "out.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  } else {
    MPI_Bcast(&value, 1, MPI_INT, size + 3, MPI_COMM_WORLD);
  }
  printf("mpi_fatal: still running after a fatal error\n");
  MPI_Finalize();
  return 0;
}
