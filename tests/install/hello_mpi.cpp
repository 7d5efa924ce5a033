// Built by the installed xmsgcxx: mpi.h from C++.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  int rank = -1, size = 0;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::printf("hello_mpi_cxx: rank %d of %d\n", rank, size);
  MPI_Finalize();
  return 0;
}
