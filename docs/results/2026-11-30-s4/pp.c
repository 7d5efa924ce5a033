#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* one-way latency at arbitrary sizes: pp size... */
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *buf; posix_memalign((void**)&buf, 4096, 1 << 20); memset(buf, 1, 1 << 20);
  for (int a = 1; a < argc; ++a) {
    int size = atoi(argv[a]);
    double t0 = 0;
    for (int it = 0; it < 12000; ++it) {
      if (it == 2000) t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0) printf("%d %.3f\n", size, t / 10000 / 2 * 1e6);
  }
  MPI_Finalize();
  return 0;
}
