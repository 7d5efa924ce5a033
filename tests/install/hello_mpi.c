/* Built by the installed (and moved) xmsgcc, run by the installed xmsgrun: each rank adds its
 * rank with MPI_Allreduce and prints "hello_mpi: rank R of N, sum S". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank = -1, size = 0, sum = -1;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) return 1;
  printf("hello_mpi: rank %d of %d, sum %d\n", rank, size, sum);
  MPI_Finalize();
  return sum == size * (size - 1) / 2 ? 0 : 1;
}
