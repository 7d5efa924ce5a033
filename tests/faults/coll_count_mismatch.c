/* coll_count_mismatch OP: the ranks of a 2-rank job pass different counts to one collective
 * (rank 0 four ints, rank 1 eight); with MPI_ERRORS_RETURN every rank must get MPI_ERR_TRUNCATE
 * instead of wrong data or a hang (issue 19, finding 9). OP: allreduce, bcast-short (root sends
 * fewer than the other expects), bcast-long (root sends more). Exits 0 when every rank saw it.
 * Sizes that make the ranks pick different algorithms: coll_algorithm_mismatch.c. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* op = argc > 1 ? argv[1] : "allreduce";
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int in[8] = {1, 1, 1, 1, 1, 1, 1, 1}, out[8] = {0};
  int rc = MPI_SUCCESS;
  if (strcmp(op, "allreduce") == 0) {
    rc = MPI_Allreduce(in, out, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else if (strcmp(op, "bcast-short") == 0) {
    rc = MPI_Bcast(in, rank == 0 ? 4 : 8, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (strcmp(op, "bcast-long") == 0) {
    rc = MPI_Bcast(in, rank == 0 ? 8 : 4, MPI_INT, 0, MPI_COMM_WORLD);
  } else {
    fprintf(stderr, "usage: coll_count_mismatch [allreduce|bcast-short|bcast-long]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  /* The root of a bcast-short only sends: it cannot know, and MPI lets it succeed. */
  const int root_may_succeed = strncmp(op, "bcast", 5) == 0 && rank == 0;
  const int ok = cls == MPI_ERR_TRUNCATE || (root_may_succeed && cls == MPI_SUCCESS);
  printf("coll_count_mismatch %s: rank %d: %s: %s\n", op, rank, ok ? "ok" : "WRONG", text);
  fflush(stdout);
  MPI_Finalize();
  return ok ? 0 : 1;
}
