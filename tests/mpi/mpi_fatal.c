/* MPI's default error handler: a bad argument prints the function and the argument, and the
 * whole job ends (the test expects the message and a non-zero exit). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, value = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Bcast(&value, 1, MPI_INT, size + 3, MPI_COMM_WORLD);
  printf("mpi_fatal: still running after a fatal error\n");
  MPI_Finalize();
  return 0;
}
