#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int* base; MPI_Win win;
  MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  const int iters = argc > 1 ? atoi(argv[1]) : 20000;
  int one = 1, got = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int i = 0; i < iters; ++i) { MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win); MPI_Win_flush(1, win); }
    MPI_Win_unlock(1, win);
  }
  double t1 = MPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD);
  double t2 = MPI_Wtime();
  if (rank == 0) { for (int i = 0; i < iters; ++i) { MPI_Send(&one, 1, MPI_INT, 1, 5, MPI_COMM_WORLD); MPI_Recv(&got, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); } }
  else { for (int i = 0; i < iters; ++i) { MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&one, 1, MPI_INT, 0, 5, MPI_COMM_WORLD); } }
  double t3 = MPI_Wtime();
  if (rank == 0) printf("acc+flush %.2f us, pingpong rtt %.2f us\n", (t1 - t0) / iters * 1e6, (t3 - t2) / iters * 1e6);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
