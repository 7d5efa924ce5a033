/* coll_zero_counts: a correct program whose every rank passes count 0 and NULL buffers to every
 * blocking collective, three times over, then one allreduce of data. Zero-count collectives now
 * run their algorithms with empty blocks (issue 19, finding 9); this checks that they succeed,
 * touch no buffer, and leave the communicator in step. Exits 0 when every call succeeded. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &n);
  int z[64] = {0}, d[64] = {0};
  int e = 0;
  for (int it = 0; it < 3; ++it) {
    e |= MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    e |= MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
    e |= MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    e |= MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD);
    e |= MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD);
    e |= MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
    e |= MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
    e |= MPI_Alltoallv(NULL, z, d, MPI_INT, NULL, z, d, MPI_INT, MPI_COMM_WORLD);
    e |= MPI_Allgatherv(NULL, 0, MPI_INT, NULL, z, d, MPI_INT, MPI_COMM_WORLD);
    e |= MPI_Gatherv(NULL, 0, MPI_INT, NULL, z, d, MPI_INT, 0, MPI_COMM_WORLD);
    e |= MPI_Scatterv(NULL, z, d, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
    e |= MPI_Reduce_scatter(NULL, NULL, z, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  int one = 1, s = 0; MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d e=%d sum=%d\n", rank, e, s);
  MPI_Finalize(); return e != 0 || s != n;
}
