/* coll_algorithm_mismatch OP BYTES0 BYTES: rank 0 passes BYTES0 bytes to one collective
 * (MPI_BYTE; MPI_UNSIGNED_CHAR for MPI_MAX), every other rank BYTES: sizes that send the ranks
 * down different algorithms (or down the same pipeline with another layout) within a node,
 * issue 19, finding 9's remainder. Every rank must come back (no hang) with MPI_ERR_TRUNCATE,
 * except where MPI leaves a rank no way to tell: a bcast's root and a reduce's non-roots only
 * send, and may succeed. Then the communicator must still work (the ranks' collectives stay
 * numbered alike): one correct allreduce. OP: allreduce (MPI_MAX: commutative),
 * allreduce-noncommutative (a user op), reduce, bcast, alltoall, allgather (BYTES per block). Prints one
 * line per rank; exits 0 when all held. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Non-commutative (and associative): the result is rank 0's vector. */
static void keep_left(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  memcpy(inout, in, (size_t)*len);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 4) {
    fprintf(stderr, "usage: coll_algorithm_mismatch allreduce|allreduce-noncommutative|reduce|bcast|alltoall|allgather BYTES0 BYTES\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* op = argv[1];
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int b0 = atoi(argv[2]), b = atoi(argv[3]);
  const int mine = rank == 0 ? b0 : b, largest = b0 > b ? b0 : b;
  char* in = calloc((size_t)largest * (size_t)size, 1);
  char* out = calloc((size_t)largest * (size_t)size, 1);
  MPI_Op noncommutative;
  MPI_Op_create(keep_left, 0, &noncommutative);
  int rc = MPI_SUCCESS, may_succeed = 0;
  if (strcmp(op, "allreduce") == 0) {
    rc = MPI_Allreduce(in, out, mine, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
  } else if (strcmp(op, "allreduce-noncommutative") == 0) {
    rc = MPI_Allreduce(in, out, mine, MPI_BYTE, noncommutative, MPI_COMM_WORLD);
  } else if (strcmp(op, "reduce") == 0) {
    rc = MPI_Reduce(in, out, mine, MPI_UNSIGNED_CHAR, MPI_MAX, 0, MPI_COMM_WORLD);
    may_succeed = rank != 0;
  } else if (strcmp(op, "bcast") == 0) {
    rc = MPI_Bcast(in, mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    may_succeed = rank == 0;
  } else if (strcmp(op, "alltoall") == 0) {
    rc = MPI_Alltoall(in, mine, MPI_BYTE, out, mine, MPI_BYTE, MPI_COMM_WORLD);
  } else if (strcmp(op, "allgather") == 0) {
    rc = MPI_Allgather(in, mine, MPI_BYTE, out, mine, MPI_BYTE, MPI_COMM_WORLD);
  } else {
    fprintf(stderr, "coll_algorithm_mismatch: unknown OP '%s'\n", op);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int cls = MPI_SUCCESS, len = 0;
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING] = "";
  MPI_Error_string(rc, text, &len);
  int ok = cls == MPI_ERR_TRUNCATE || (may_succeed && cls == MPI_SUCCESS);
  int one = rank + 1, sum = 0;
  const int after = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int after_ok = after == MPI_SUCCESS && sum == size * (size + 1) / 2;
  printf("coll_algorithm_mismatch %s %d/%d: rank %d: %s: %s; allreduce afterwards %s\n", op, b0, b, rank,
         ok ? "ok" : "WRONG", text, after_ok ? "ok" : "WRONG");
  fflush(stdout);
  MPI_Op_free(&noncommutative);
  free(in);
  free(out);
  MPI_Finalize();
  return ok && after_ok ? 0 : 1;
}
