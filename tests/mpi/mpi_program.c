/* An MPI program built with xmsgcc: the subset of MPI that xmsg's mpi.h covers, each call
 * checked. Exits 0 and prints "mpi_program: OK" on rank 0 when everything held. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static int rank = 0, size = 1;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond); \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

/* Element-wise "keep the left operand": associative, not commutative; result = rank 0's. */
static void keep_left(void* in, void* inout, int* len, MPI_Datatype* type) {
  CHECK(*type == MPI_INT);
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] = ((int*)in)[i];
}

int main(int argc, char** argv) {
  int flag = 0, provided = -1;
  CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 0);
  CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS);
  CHECK(provided == MPI_THREAD_FUNNELED);  /* what was asked, and what xmsg provides */
  CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 1);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  CHECK(MPI_Get_processor_name(name, &len) == MPI_SUCCESS && len > 0 && (int)strlen(name) == len);
  double t0 = MPI_Wtime();
  CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1);

  /* point-to-point around a ring */
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  int out = rank * 10, in = -1;
  MPI_Status status;
  CHECK(MPI_Sendrecv(&out, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &status) == MPI_SUCCESS);
  CHECK(in == left * 10 && status.MPI_SOURCE == left && status.MPI_TAG == 5);
  int count = -1;
  CHECK(MPI_Get_count(&status, MPI_INT, &count) == MPI_SUCCESS && count == 1);

  MPI_Request requests[2];
  double dout[3] = {rank, rank + 0.5, rank + 0.25}, din[3] = {0};
  CHECK(MPI_Irecv(din, 3, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &requests[0]) == MPI_SUCCESS);
  CHECK(MPI_Isend(dout, 3, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &requests[1]) == MPI_SUCCESS);
  MPI_Status statuses[2];
  CHECK(MPI_Waitall(2, requests, statuses) == MPI_SUCCESS);
  CHECK(din[0] == left && din[2] == left + 0.25 && statuses[0].MPI_SOURCE == left);
  CHECK(requests[0] == MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL);

  if (size > 1) {
    if (rank == 0) {
      int big[100];
      for (int i = 0; i < 100; ++i) big[i] = i;
      CHECK(MPI_Send(big, 100, MPI_INT, 1, 9, MPI_COMM_WORLD) == MPI_SUCCESS);
    } else if (rank == 1) {
      CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status) == MPI_SUCCESS);
      CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == 9);
      CHECK(MPI_Get_count(&status, MPI_INT, &count) == MPI_SUCCESS && count == 100);
      int big[100] = {0};
      MPI_Request r;
      CHECK(MPI_Irecv(big, 100, MPI_INT, 0, 9, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
      int index = -1, done = 0;
      CHECK(MPI_Waitany(1, &r, &index, &status) == MPI_SUCCESS && index == 0);
      CHECK(big[99] == 99);
      CHECK(MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 1); /* null request */
    }
  }

  /* collectives on a duplicate and on a split */
  MPI_Comm dup, half;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half) == MPI_SUCCESS);
  int half_rank = -1, half_size = 0;
  MPI_Comm_rank(half, &half_rank);
  MPI_Comm_size(half, &half_size);
  CHECK(half_size == (size + 1 - rank % 2) / 2);

  CHECK(MPI_Barrier(dup) == MPI_SUCCESS);
  int value = rank == size - 1 ? 42 : 0;
  CHECK(MPI_Bcast(&value, 1, MPI_INT, size - 1, dup) == MPI_SUCCESS && value == 42);
  long sum = 0, mine = rank + 1;
  CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, dup) == MPI_SUCCESS);
  CHECK(sum == (long)size * (size + 1) / 2);
  double mx = -1, dmine = rank;
  CHECK(MPI_Reduce(&dmine, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == 0) CHECK(mx == size - 1);
  struct { double v; int i; } loc = {(double)(rank % 3), rank}, best;
  CHECK(MPI_Allreduce(&loc, &best, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(best.v == 0 && best.i == 0);
  int inplace = 1;
  CHECK(MPI_Allreduce(MPI_IN_PLACE, &inplace, 1, MPI_INT, MPI_SUM, half) == MPI_SUCCESS && inplace == half_size);

  MPI_Op left_op;
  CHECK(MPI_Op_create(keep_left, 0, &left_op) == MPI_SUCCESS);
  int first = -1, me = rank + 100;
  CHECK(MPI_Allreduce(&me, &first, 1, MPI_INT, left_op, MPI_COMM_WORLD) == MPI_SUCCESS && first == 100);
  CHECK(MPI_Op_free(&left_op) == MPI_SUCCESS && left_op == MPI_OP_NULL);

  int* all = malloc(sizeof(int) * size * 2);
  int* counts = malloc(sizeof(int) * size);
  int* displs = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) {
    counts[i] = i % 2 + 1;
    displs[i] = 2 * i;
  }
  int pair[2] = {rank, -rank};
  CHECK(MPI_Gather(pair, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == 0)
    for (int i = 0; i < size; ++i) CHECK(all[2 * i] == i && all[2 * i + 1] == -i);
  CHECK(MPI_Gatherv(pair, counts[rank], MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  int got[2] = {-1, -1};
  CHECK(MPI_Scatter(all, 2, MPI_INT, got, 2, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(got[0] == rank);
  CHECK(MPI_Scatterv(all, counts, displs, MPI_INT, got, counts[rank], MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(got[0] == rank);
  CHECK(MPI_Allgather(pair, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(all[2 * (size - 1)] == size - 1);
  CHECK(MPI_Allgatherv(pair, counts[rank], MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(all[0] == 0);
  int* sendv = malloc(sizeof(int) * size);
  int* recvv = malloc(sizeof(int) * size);
  int* ones = malloc(sizeof(int) * size);
  int* offs = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) {
    sendv[i] = rank * 100 + i;
    ones[i] = 1;
    offs[i] = i;
  }
  CHECK(MPI_Alltoall(sendv, 1, MPI_INT, recvv, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  for (int i = 0; i < size; ++i) CHECK(recvv[i] == i * 100 + rank);
  CHECK(MPI_Alltoallv(sendv, ones, offs, MPI_INT, recvv, ones, offs, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  for (int i = 0; i < size; ++i) CHECK(recvv[i] == i * 100 + rank);

  /* errors: with MPI_ERRORS_RETURN the class comes back and the job goes on */
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  CHECK(MPI_Bcast(&value, 1, MPI_INT, size, MPI_COMM_WORLD) == MPI_ERR_ROOT);
  CHECK(MPI_Send(&value, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
  CHECK(MPI_Allreduce(&value, &sum, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD) == MPI_ERR_OP);
  char text[MPI_MAX_ERROR_STRING];
  CHECK(MPI_Error_string(MPI_ERR_ROOT, text, &len) == MPI_SUCCESS && len > 0);
  int cls = -1;
  CHECK(MPI_Error_class(MPI_ERR_TRUNCATE, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE);
  int tsize = 0;
  /* MPI's size counts the data (a double and an int); the extent includes the struct's padding. */
  CHECK(MPI_Type_size(MPI_DOUBLE_INT, &tsize) == MPI_SUCCESS && tsize == (int)(sizeof(double) + sizeof(int)));
  MPI_Aint lb = -1, extent = 0;
  CHECK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent) == MPI_SUCCESS && lb == 0 && extent == (MPI_Aint)sizeof(best));

  CHECK(MPI_Wtime() >= t0);
  CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS && dup == MPI_COMM_NULL);
  CHECK(MPI_Comm_free(&half) == MPI_SUCCESS);
  free(all);
  free(counts);
  free(displs);
  free(sendv);
  free(recvv);
  free(ones);
  free(offs);

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(MPI_Finalize() == MPI_SUCCESS);
  CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 1);
  if (rank == 0) printf(total == 0 ? "mpi_program: OK on %d ranks\n" : "mpi_program: FAILED on %d ranks\n", size);
  return failures == 0 && total == 0 ? 0 : 1;
}
