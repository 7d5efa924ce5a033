/* coll_forwarded_mismatch CASE: a 4-rank job where rank 2 alone passes another count to a
 * collective that runs as a schedule (the non-blocking ones, scan), so that in a tree or a ring
 * the disagreement sits with a rank that forwards data to others (issue 19, finding 9). With
 * MPI_ERRORS_RETURN rank 2 (igather: the root) must get MPI_ERR_TRUNCATE, every other rank MPI_SUCCESS or
 * MPI_ERR_TRUNCATE, nobody may hang (a rank that gives up must not leave the ranks it forwards
 * to waiting), and the next collective must be right. Cases: ibcast (rank 2 expects half the
 * root's data), ibcast-long (twice), iallreduce, iscan, igather (rank 2 sends half). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* op = argc > 1 ? argv[1] : "ibcast";
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    fprintf(stderr, "coll_forwarded_mismatch: run with 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  enum { kCount = 1024 };
  int* in = calloc(4 * kCount, sizeof(int));
  int* out = calloc(4 * kCount, sizeof(int));
  const int n = rank != 2 ? kCount : strcmp(op, "ibcast-long") == 0 ? 2 * kCount : kCount / 2;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (strncmp(op, "ibcast", 6) == 0) rc = MPI_Ibcast(in, n, MPI_INT, 0, MPI_COMM_WORLD, &req);
  else if (strcmp(op, "iallreduce") == 0) rc = MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  else if (strcmp(op, "iscan") == 0) rc = MPI_Iscan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  else if (strcmp(op, "igather") == 0) rc = MPI_Igather(in, n, MPI_INT, out, kCount, MPI_INT, 0, MPI_COMM_WORLD, &req);
  else {
    fprintf(stderr, "coll_forwarded_mismatch: unknown case %s (see the file header)\n", op);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  int cls = MPI_SUCCESS, len = 0;
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING] = "";
  MPI_Error_string(rc, text, &len);
  /* A gather's rank 2 only sends its odd data: the root must find it, whoever forwards it. */
  const int must_fail = strcmp(op, "igather") == 0 ? 0 : 2;
  const int ok = rank == must_fail ? cls == MPI_ERR_TRUNCATE : (cls == MPI_ERR_TRUNCATE || cls == MPI_SUCCESS);
  printf("coll_forwarded_mismatch %s: rank %d: %s: %s\n", op, rank, ok ? "ok" : "WRONG", text);
  int one = rank + 1, sum = 0;
  const int later = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == 10;
  printf("coll_forwarded_mismatch %s: rank %d: later allreduce %s\n", op, rank, later ? "ok" : "WRONG");
  fflush(stdout);
  free(in);
  free(out);
  MPI_Finalize();
  return ok && later ? 0 : 1;
}
