/* coll_count_mismatch CASE: the 2 ranks of a job pass counts that disagree to one collective;
 * with MPI_ERRORS_RETURN the rank that receives the disagreeing data must get MPI_ERR_TRUNCATE
 * (the other may succeed: it cannot tell), no rank may hang, and the communicator's next
 * collectives must deliver the right data: a message of the failed call must not reach them
 * (issue 19, finding 9). Cases:
 *   allreduce        rank 0 four ints, rank 1 eight (both must fail)
 *   bcast-short      the root sends fewer than rank 1 expects; bcast-long more
 *   *-empty          one rank passes count 0, the other 4 (a rank whose every message is empty)
 *   allgather-lines  blocks of 16 ints (rank 0) against 14, both in stamped lines
 *   alltoallv-lines  rank 0 sends rank 1 20 ints (its posted line continued in a second
 *                    line), rank 1 expects 16
 *   alltoall-lines   blocks of 16 ints (rank 0) against 20: at 2 ranks both sides' data in
 *                    stamped lines; alltoall-lines-inline: 16 against 8 (rank 1's beside its
 *                    posted counter, so rank 0's lines from it never come)
 *   gatherv-zero     rank 1 sends nothing, the root expects 4 from it
 *   scatterv-zero    the root sends nothing to rank 1, which expects 4
 *   allgatherv-zero  rank 0's recvcounts[1] is 0, rank 1 sends 4
 *   alltoallv-*      rank 0 sends rank 1 a block of 0 (zero-send), 2 (short) or 6 (long) ints
 *                    where rank 1 expects 4, or rank 1 expects 0 from rank 0 (zero-recv)
 *   gather-long/-short  rank 1 sends 6 / 2 ints where the root expects 4; scatter-long: the
 *                    root sends 4, rank 1 expects 2; reduce-long: rank 1 reduces 8, the root 4
 *   reduce-scatter-block  rank 0 keeps 2 a rank, rank 1 4; scan: rank 0 4 ints, rank 1 8;
 *                    exscan: rank 0 8, rank 1 4; alltoallw-long: rank 0 sends rank 1 6 ints
 *                    where it expects 4; iallreduce, ibcast-long: as allreduce and bcast-long,
 *                    non-blocking (the error comes from MPI_Wait)
 *   *-strided        the same on a derived datatype (MPI_INT resized to 8 bytes), which the
 *                    collectives pack piece by piece: allreduce (rank 0 1.2 MB, rank 1 2.4 MB,
 *                    so they would cut a different number of pieces), bcast (20 KB against
 *                    40 KB), alltoall (20 KB blocks against 40 KB)
 * Exits 0 when every rank behaved. Sizes that make the ranks pick different algorithms:
 * coll_algorithm_mismatch.c. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBoth = -1 };

int main(int argc, char** argv) {
  const char* op = argc > 1 ? argv[1] : "allreduce";
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    fprintf(stderr, "coll_count_mismatch: run with 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int in[16], out[16];
  for (int i = 0; i < 16; ++i) in[i] = 100 * rank + i, out[i] = -1;
  int scounts[2] = {4, 4}, sdispls[2] = {0, 8}, rcounts[2] = {4, 4}, rdispls[2] = {0, 8};
  int rc = MPI_SUCCESS, must_fail = kBoth;  /* the rank that must see MPI_ERR_TRUNCATE, or both */
  const MPI_Comm w = MPI_COMM_WORLD;
  if (strcmp(op, "allreduce") == 0) {
    rc = MPI_Allreduce(in, out, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, w);
  } else if (strcmp(op, "bcast-short") == 0) {
    rc = MPI_Bcast(in, rank == 0 ? 4 : 8, MPI_INT, 0, w), must_fail = 1;
  } else if (strcmp(op, "bcast-long") == 0) {
    rc = MPI_Bcast(in, rank == 0 ? 8 : 4, MPI_INT, 0, w), must_fail = 1;
  } else if (strcmp(op, "allreduce-empty") == 0) {
    rc = MPI_Allreduce(in, out, rank == 0 ? 0 : 4, MPI_INT, MPI_SUM, w);
  } else if (strcmp(op, "bcast-empty-root") == 0) {
    rc = MPI_Bcast(in, rank == 0 ? 0 : 4, MPI_INT, 0, w), must_fail = 1;
  } else if (strcmp(op, "bcast-empty-leaf") == 0) {
    rc = MPI_Bcast(in, rank == 1 ? 0 : 4, MPI_INT, 0, w), must_fail = 1;
  } else if (strcmp(op, "reduce-empty") == 0) {
    rc = MPI_Reduce(in, out, rank == 1 ? 0 : 4, MPI_INT, MPI_SUM, 0, w), must_fail = 0;
  } else if (strcmp(op, "allgather-empty") == 0) {
    const int n = rank == 0 ? 0 : 4;
    rc = MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, w);
  } else if (strcmp(op, "alltoall-empty") == 0) {
    const int n = rank == 0 ? 0 : 4;
    rc = MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, w);
  } else if (strcmp(op, "allgather-lines") == 0) {
    int y[64];
    rc = MPI_Allgather(in, rank == 0 ? 16 : 14, MPI_INT, y, rank == 0 ? 16 : 14, MPI_INT, w);
  } else if (strcmp(op, "alltoallv-lines") == 0) {
    int x[64] = {0}, y[64], sc[2] = {20, 20}, sd[2] = {0, 32}, rc2[2] = {20, 20}, rd[2] = {0, 32};
    if (rank == 1) rc2[0] = 16;
    rc = MPI_Alltoallv(x, sc, sd, MPI_INT, y, rc2, rd, MPI_INT, w), must_fail = 1;
  } else if (strncmp(op, "alltoall-lines", 14) == 0) {
    int x[64] = {0}, y[64];
    const int n = rank == 0 ? 16 : strcmp(op, "alltoall-lines") == 0 ? 20 : 8;
    rc = MPI_Alltoall(x, n, MPI_INT, y, n, MPI_INT, w);
  } else if (strcmp(op, "gatherv-zero") == 0) {
    rc = MPI_Gatherv(in, rank == 1 ? 0 : 4, MPI_INT, out, rcounts, rdispls, MPI_INT, 0, w), must_fail = 0;
  } else if (strcmp(op, "scatterv-zero") == 0) {
    if (rank == 0) scounts[1] = 0;
    rc = MPI_Scatterv(in, scounts, sdispls, MPI_INT, out, 4, MPI_INT, 0, w), must_fail = 1;
  } else if (strcmp(op, "allgatherv-zero") == 0) {
    if (rank == 0) rcounts[1] = 0;
    rc = MPI_Allgatherv(in, 4, MPI_INT, out, rcounts, rdispls, MPI_INT, w), must_fail = 0;
  } else if (strcmp(op, "gather-long") == 0) {
    rc = MPI_Gather(in, rank == 1 ? 6 : 4, MPI_INT, out, 4, MPI_INT, 0, w), must_fail = 0;
  } else if (strcmp(op, "gather-short") == 0) {
    rc = MPI_Gather(in, rank == 1 ? 2 : 4, MPI_INT, out, 4, MPI_INT, 0, w), must_fail = 0;
  } else if (strcmp(op, "scatter-long") == 0) {
    rc = MPI_Scatter(in, 4, MPI_INT, out, rank == 1 ? 2 : 4, MPI_INT, 0, w), must_fail = 1;
  } else if (strcmp(op, "reduce-long") == 0) {
    rc = MPI_Reduce(in, out, rank == 1 ? 8 : 4, MPI_INT, MPI_SUM, 0, w), must_fail = 0;
  } else if (strcmp(op, "reduce-scatter-block") == 0) {
    rc = MPI_Reduce_scatter_block(in, out, rank == 0 ? 2 : 4, MPI_INT, MPI_SUM, w);
  } else if (strcmp(op, "scan") == 0) {
    rc = MPI_Scan(in, out, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, w), must_fail = 1;
  } else if (strcmp(op, "exscan") == 0) {
    rc = MPI_Exscan(in, out, rank == 0 ? 8 : 4, MPI_INT, MPI_SUM, w), must_fail = 1;
  } else if (strcmp(op, "alltoallw-long") == 0) {
    int wc[2] = {4, 4}, wd[2] = {0, 8 * (int)sizeof(int)};
    MPI_Datatype wt[2] = {MPI_INT, MPI_INT};
    int rc2[2] = {4, 4};
    if (rank == 0) wc[1] = 6;
    rc = MPI_Alltoallw(in, wc, wd, wt, out, rc2, wd, wt, w), must_fail = 1;
  } else if (strcmp(op, "iallreduce") == 0 || strcmp(op, "ibcast-long") == 0) {
    MPI_Request req = MPI_REQUEST_NULL;
    if (op[1] == 'a') rc = MPI_Iallreduce(in, out, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, w, &req);
    else rc = MPI_Ibcast(in, rank == 0 ? 8 : 4, MPI_INT, 0, w, &req), must_fail = 1;
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else if (strncmp(op, "alltoallv-", 10) == 0) {
    const char* how = op + 10;
    if (strcmp(how, "zero-recv") == 0) {
      if (rank == 1) rcounts[0] = 0;
    } else if (rank == 0) {
      scounts[1] = strcmp(how, "zero-send") == 0 ? 0 : strcmp(how, "short") == 0 ? 2 : 6;
    }
    rc = MPI_Alltoallv(in, scounts, sdispls, MPI_INT, out, rcounts, rdispls, MPI_INT, w), must_fail = 1;
  } else if (strstr(op, "-strided")) {
    MPI_Datatype strided;
    MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &strided);
    MPI_Type_commit(&strided);
    const int small = strncmp(op, "allreduce", 9) == 0 ? 300000 : 5000, n = rank == 0 ? small : 2 * small;
    int* x = calloc(4 * (size_t)n, sizeof(int));
    int* y = calloc(4 * (size_t)n, sizeof(int));
    if (strcmp(op, "allreduce-strided") == 0) {
      rc = MPI_Allreduce(x, y, n, strided, MPI_SUM, w);
    } else if (strcmp(op, "bcast-strided") == 0) {
      rc = MPI_Bcast(x, n, strided, 0, w), must_fail = 1;
    } else if (strcmp(op, "alltoall-strided") == 0) {
      rc = MPI_Alltoall(x, n, strided, y, n, strided, w);
    } else {
      fprintf(stderr, "coll_count_mismatch: unknown case %s (see the file header)\n", op);
      MPI_Abort(w, 2);
    }
    free(x);
    free(y);
    MPI_Type_free(&strided);
  } else {
    fprintf(stderr, "coll_count_mismatch: unknown case %s (see the file header)\n", op);
    MPI_Abort(w, 2);
  }
  int cls = MPI_SUCCESS, len = 0;
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING] = "";
  MPI_Error_string(rc, text, &len);
  const int must = must_fail == kBoth || must_fail == rank;
  int ok = cls == MPI_ERR_TRUNCATE || (!must && cls == MPI_SUCCESS);
  printf("coll_count_mismatch %s: rank %d: %s: %s\n", op, rank, ok ? "ok" : "WRONG", text);

  /* The next collectives on the communicator: right data, nothing of the failed call. */
  int one = rank + 1, sum = 0;
  int later = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, w) == MPI_SUCCESS && sum == 3;
  int a[8], b[8], c4[2] = {4, 4}, d4[2] = {0, 4};
  for (int i = 0; i < 8; ++i) a[i] = 10 * rank + i, b[i] = -1;
  later = later && MPI_Alltoallv(a, c4, d4, MPI_INT, b, c4, d4, MPI_INT, w) == MPI_SUCCESS;
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k < 4; ++k) later = later && b[4 * p + k] == 10 * p + 4 * rank + k;
  int root_data[4] = {7, 8, 9, 10};
  if (rank != 0) memset(root_data, 0, sizeof root_data);
  later = later && MPI_Bcast(root_data, 4, MPI_INT, 0, w) == MPI_SUCCESS && root_data[3] == 10;
  printf("coll_count_mismatch %s: rank %d: later collectives %s\n", op, rank, later ? "ok" : "WRONG");
  fflush(stdout);
  MPI_Finalize();
  return ok && later ? 0 : 1;
}
