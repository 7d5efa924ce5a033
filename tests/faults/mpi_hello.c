/* The smallest whole MPI job: every rank adds its rank with MPI_Allreduce and prints
 * "mpi_hello: rank R of N, sum S"; exits 1 when the sum is wrong. What runs under the tight
 * limits of address_space_limit.sh. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank = -1, size = 0, sum = -1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("mpi_hello: rank %d of %d, sum %d\n", rank, size, sum);
  MPI_Finalize();
  return sum == size * (size - 1) / 2 ? 0 : 1;
}
