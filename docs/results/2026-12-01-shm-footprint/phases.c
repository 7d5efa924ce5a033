#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_REALTIME, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char** argv) {
  double t0 = now(), t[4];
  int rank, size, sum = 0;
  MPI_Init(&argc, &argv);
  t[0] = now();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  t[1] = now();
  MPI_Finalize();
  t[2] = now();
  fprintf(stderr, "PH %d %.6f %.6f %.6f %.6f\n", rank, t0, t[0], t[1], t[2]);
  return 0;
}
