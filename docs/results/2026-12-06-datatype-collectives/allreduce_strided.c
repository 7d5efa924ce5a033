#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* MPI_Allreduce of a strided double vector (MPI_DOUBLE resized to 16 bytes): median of 9 timed
 * rounds of 20 calls, per size. */
static int cmp(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return x < y ? -1 : x > y; }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Datatype st; MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &st); MPI_Type_commit(&st);
  for (long n = 8192; n <= (1L << 21); n *= 4) {
    double* in = calloc((size_t)n * 2, sizeof(double)); double* out = calloc((size_t)n * 2, sizeof(double));
    for (long i = 0; i < 2 * n; ++i) in[i] = rank + i;
    double t[9];
    MPI_Allreduce(in, out, (int)n, st, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r < 9; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int k = 0; k < 20; ++k) MPI_Allreduce(in, out, (int)n, st, MPI_SUM, MPI_COMM_WORLD);
      t[r] = (MPI_Wtime() - t0) / 20 * 1e6;
    }
    qsort(t, 9, sizeof t[0], cmp);
    if (rank == 0) printf("%ld %.1f\n", n * 8, t[4]);
    free(in); free(out);
  }
  MPI_Type_free(&st);
  MPI_Finalize();
  return 0;
}
