// mpi.h from C++, built with xmsgcxx.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<float> mine(5, 1.0f), sum(5, 0.0f);
  MPI_Allreduce(mine.data(), sum.data(), 5, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const bool good = sum[4] == static_cast<float>(size);
  MPI_Finalize();
  if (rank == 0) std::printf("mpi_program_cxx: %s\n", good ? "OK" : "FAILED");
  return good ? 0 : 1;
}
