/* Conformance, MPI-3.1 chapter 3: send modes, buffered sends, sendrecv_replace, persistent
 * requests, matched probes, the completion family (any/some/all, get_status), cancellation,
 * generalized requests, and the errors a program can test for. Ring pattern: rank r talks to
 * r+1 and r-1, so it works at any size (at 1 rank a rank talks to itself). */
#include "conformance.h"

static int rank, size;

static int next_rank(void) { return (rank + 1) % size; }
static int prev_rank(void) { return (rank + size - 1) % size; }

static void test_modes(void) {
  int out[4], in[4];
  MPI_Request r;
  for (int mode = 0; mode < 4; ++mode) {
    for (int i = 0; i < 4; ++i) out[i] = rank * 100 + mode * 10 + i;
    memset(in, -1, sizeof in);
    CHECK_MPI(MPI_Irecv(in, 4, MPI_INT, prev_rank(), 10 + mode, MPI_COMM_WORLD, &r));
    if (mode == 0) CHECK_MPI(MPI_Ssend(out, 4, MPI_INT, next_rank(), 10 + mode, MPI_COMM_WORLD));
    if (mode == 1) CHECK_MPI(MPI_Rsend(out, 4, MPI_INT, next_rank(), 10 + mode, MPI_COMM_WORLD));
    if (mode == 2) {
      MPI_Request s;
      CHECK_MPI(MPI_Issend(out, 4, MPI_INT, next_rank(), 10 + mode, MPI_COMM_WORLD, &s));
      CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
      CHECK(s == MPI_REQUEST_NULL, "a completed request is MPI_REQUEST_NULL");
    }
    if (mode == 3) {
      MPI_Request s;
      CHECK_MPI(MPI_Irsend(out, 4, MPI_INT, next_rank(), 10 + mode, MPI_COMM_WORLD, &s));
      CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == prev_rank() && st.MPI_TAG == 10 + mode, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < 4; ++i)
      CHECK(in[i] == prev_rank() * 100 + mode * 10 + i, "mode %d element %d = %d", mode, i, in[i]);
  }
}

/* A synchronous send cannot complete before its receive is posted: rank 1 posts it only after
 * rank 0 has tested the send and told it so. At 1 rank: a synchronous send to oneself. */
static void test_synchronous(void) {
  int payload[3] = {7, 8, 9}, got[3] = {0}, go = 1;
  if (size == 1) {
    MPI_Request s, r;
    CHECK_MPI(MPI_Issend(payload, 3, MPI_INT, 0, 80, MPI_COMM_WORLD, &s));
    CHECK_MPI(MPI_Irecv(got, 3, MPI_INT, 0, 80, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK(got[2] == 9, "ssend to self");
    return;
  }
  for (int variant = 0; variant < 2; ++variant) {
    if (rank == 0) {
      MPI_Request s;
      if (variant == 0) {
        CHECK_MPI(MPI_Issend(payload, 3, MPI_INT, 1, 80, MPI_COMM_WORLD, &s));
      } else {
        CHECK_MPI(MPI_Ssend_init(payload, 3, MPI_INT, 1, 80, MPI_COMM_WORLD, &s));
        CHECK_MPI(MPI_Start(&s));
      }
      int flag = 1;
      for (int k = 0; k < 1000 && flag; ++k) CHECK_MPI(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
      CHECK(flag == 0, "variant %d: a synchronous send completed before its receive was posted", variant);
      CHECK_MPI(MPI_Send(&go, 1, MPI_INT, 1, 81, MPI_COMM_WORLD));
      CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
      if (variant == 1) CHECK_MPI(MPI_Request_free(&s));
    } else if (rank == 1) {
      CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, 0, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK_MPI(MPI_Recv(got, 3, MPI_INT, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(got[0] == 7 && got[2] == 9, "ssend data %d %d", got[0], got[2]);
    }
  }
}

static void test_bsend(void) {
  int bufsize = 3 * (int)(sizeof(double) * 100 + MPI_BSEND_OVERHEAD);
  char* buffer = malloc((size_t)bufsize);
  CHECK_MPI(MPI_Buffer_attach(buffer, bufsize));
  double out[100], in[100];
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 100; ++i) out[i] = rank + k + i * 0.5;
    if (k < 2) {
      CHECK_MPI(MPI_Bsend(out, 100, MPI_DOUBLE, next_rank(), 20 + k, MPI_COMM_WORLD));
    } else {
      MPI_Request r;
      CHECK_MPI(MPI_Ibsend(out, 100, MPI_DOUBLE, next_rank(), 20 + k, MPI_COMM_WORLD, &r));
      CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    /* The data was copied: changing the user buffer now must not change what arrives. */
    for (int i = 0; i < 100; ++i) out[i] = -1;
  }
  for (int k = 0; k < 3; ++k) {
    CHECK_MPI(MPI_Recv(in, 100, MPI_DOUBLE, prev_rank(), 20 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 100; ++i) CHECK(in[i] == prev_rank() + k + i * 0.5, "bsend %d element %d = %g", k, i, in[i]);
  }
  /* A message larger than the buffer is MPI_ERR_BUFFER (with errors returned). */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  static double big[10000];
  CHECK(MPI_Bsend(big, 10000, MPI_DOUBLE, next_rank(), 29, MPI_COMM_WORLD) == MPI_ERR_BUFFER,
        "a Bsend larger than the attached buffer fails with MPI_ERR_BUFFER");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  void* addr = NULL;
  int got = 0;
  CHECK_MPI(MPI_Buffer_detach(&addr, &got));
  CHECK(addr == buffer && got == bufsize, "detach gives the buffer back (%p %d)", addr, got);
  free(buffer);
}

static void test_sendrecv_replace(void) {
  int v[3] = {rank, rank * 2, rank * 3};
  MPI_Status st;
  CHECK_MPI(MPI_Sendrecv_replace(v, 3, MPI_INT, next_rank(), 30, prev_rank(), 30, MPI_COMM_WORLD, &st));
  CHECK(v[0] == prev_rank() && v[1] == prev_rank() * 2 && v[2] == prev_rank() * 3, "replace got %d %d %d", v[0], v[1],
        v[2]);
  CHECK(st.MPI_SOURCE == prev_rank(), "source %d", st.MPI_SOURCE);
}

static void test_persistent(void) {
  int out = 0, in = -1;
  MPI_Request reqs[2];
  CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, prev_rank(), 40, MPI_COMM_WORLD, &reqs[0]));
  CHECK_MPI(MPI_Send_init(&out, 1, MPI_INT, next_rank(), 40, MPI_COMM_WORLD, &reqs[1]));
  /* An inactive persistent request completes at once with an empty status. */
  MPI_Status st;
  int flag = 0;
  CHECK_MPI(MPI_Test(&reqs[0], &flag, &st));
  CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE, "inactive request: flag %d source %d", flag, st.MPI_SOURCE);
  for (int round = 0; round < 5; ++round) {
    out = rank * 1000 + round;
    CHECK_MPI(MPI_Startall(2, reqs));
    CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    CHECK(reqs[0] != MPI_REQUEST_NULL, "a persistent request stays allocated");
    CHECK(in == prev_rank() * 1000 + round, "round %d got %d", round, in);
  }
  CHECK_MPI(MPI_Request_free(&reqs[0]));
  CHECK_MPI(MPI_Request_free(&reqs[1]));
  CHECK(reqs[0] == MPI_REQUEST_NULL, "freed");

  /* The datatype may be freed right after the init calls (MPI_Type_free leaves operations that
   * use it intact): every start still sends and receives the strided ints. */
  MPI_Datatype strided;
  CHECK_MPI(MPI_Type_vector(4, 1, 3, MPI_INT, &strided));
  CHECK_MPI(MPI_Type_commit(&strided));
  int sbuf[10], rbuf[10];
  CHECK_MPI(MPI_Recv_init(rbuf, 1, strided, prev_rank(), 41, MPI_COMM_WORLD, &reqs[0]));
  CHECK_MPI(MPI_Send_init(sbuf, 1, strided, next_rank(), 41, MPI_COMM_WORLD, &reqs[1]));
  CHECK_MPI(MPI_Type_free(&strided));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 10; ++i) {
      sbuf[i] = rank * 1000 + round * 100 + i;
      rbuf[i] = -1;
    }
    CHECK_MPI(MPI_Startall(2, reqs));
    CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 10; ++i) {
      const int want = i % 3 == 0 ? prev_rank() * 1000 + round * 100 + i : -1;
      CHECK(rbuf[i] == want, "round %d, type freed after init: int %d is %d, want %d", round, i, rbuf[i], want);
    }
  }
  CHECK_MPI(MPI_Request_free(&reqs[0]));
  CHECK_MPI(MPI_Request_free(&reqs[1]));
}

static void test_mprobe(void) {
  int out[5] = {1, 2, 3, 4, 5};
  for (int i = 0; i < 5; ++i) out[i] += rank;
  MPI_Request s;
  CHECK_MPI(MPI_Isend(out, 5, MPI_INT, next_rank(), 50, MPI_COMM_WORLD, &s));
  MPI_Message msg;
  MPI_Status st;
  CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &msg, &st));
  int count = -1;
  CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(count == 5 && st.MPI_SOURCE == prev_rank(), "mprobe count %d source %d", count, st.MPI_SOURCE);
  /* The matched message is no longer visible to probes. */
  int flag = 1;
  CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 0, "a matched message is gone from the queue");
  int in[5] = {0};
  CHECK_MPI(MPI_Mrecv(in, 5, MPI_INT, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL, "Mrecv sets the message to MPI_MESSAGE_NULL");
  for (int i = 0; i < 5; ++i) CHECK(in[i] == i + 1 + prev_rank(), "mrecv element %d = %d", i, in[i]);
  CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));

  /* Improbe + Imrecv */
  CHECK_MPI(MPI_Isend(out, 5, MPI_INT, next_rank(), 51, MPI_COMM_WORLD, &s));
  flag = 0;
  while (!flag) CHECK_MPI(MPI_Improbe(prev_rank(), 51, MPI_COMM_WORLD, &flag, &msg, &st));
  MPI_Request r;
  CHECK_MPI(MPI_Imrecv(in, 5, MPI_INT, &msg, &r));
  CHECK_MPI(MPI_Wait(&r, &st));
  CHECK(st.MPI_SOURCE == prev_rank() && st.MPI_TAG == 51, "imrecv status %d %d", st.MPI_SOURCE, st.MPI_TAG);
  CHECK(in[4] == 5 + prev_rank(), "imrecv data %d", in[4]);
  CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));

  /* MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC, and receiving it returns at once. */
  CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "proc null message");
  CHECK_MPI(MPI_Mrecv(in, 5, MPI_INT, &msg, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "proc null mrecv");
}

static void test_completion_family(void) {
  enum { N = 4 };
  int out[N], in[N];
  MPI_Request rr[N], sr[N];
  for (int i = 0; i < N; ++i) {
    out[i] = rank * 10 + i;
    in[i] = -1;
    CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, prev_rank(), 60 + i, MPI_COMM_WORLD, &rr[i]));
  }
  /* Nothing sent yet: Testany/Testsome find nothing, and Request_get_status leaves the request. */
  int index = -2, flag = 1, outcount = -2, indices[N];
  if (size > 1) {
    CHECK_MPI(MPI_Testany(N, rr, &index, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0 && index == MPI_UNDEFINED, "testany before sends: flag %d index %d", flag, index);
    CHECK_MPI(MPI_Testsome(N, rr, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == 0, "testsome before sends: %d", outcount);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* every rank has looked before anyone sends */
  for (int i = N - 1; i >= 0; --i) CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, next_rank(), 60 + i, MPI_COMM_WORLD, &sr[i]));
  MPI_Status st;
  int done = 0;
  while (!done) CHECK_MPI(MPI_Request_get_status(rr[0], &done, &st));
  CHECK(rr[0] != MPI_REQUEST_NULL && st.MPI_TAG == 60, "get_status keeps the request (tag %d)", st.MPI_TAG);
  CHECK_MPI(MPI_Waitany(N, rr, &index, &st));
  CHECK(index >= 0 && index < N && rr[index] == MPI_REQUEST_NULL, "waitany index %d", index);
  int completed = 1;
  while (completed < N) {
    CHECK_MPI(MPI_Waitsome(N, rr, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount != MPI_UNDEFINED && outcount > 0, "waitsome outcount %d after %d completed", outcount, completed);
    if (outcount == MPI_UNDEFINED || outcount <= 0) break;
    completed += outcount;
  }
  CHECK_MPI(MPI_Waitsome(N, rr, &outcount, indices, MPI_STATUSES_IGNORE));
  CHECK(outcount == MPI_UNDEFINED, "waitsome on all-null requests: %d", outcount);
  for (int i = 0; i < N; ++i) CHECK(in[i] == prev_rank() * 10 + i, "element %d = %d", i, in[i]);
  flag = 0;
  while (!flag) CHECK_MPI(MPI_Testall(N, sr, &flag, MPI_STATUSES_IGNORE));
  for (int i = 0; i < N; ++i) CHECK(sr[i] == MPI_REQUEST_NULL, "testall freed send %d", i);
}

static void test_cancel(void) {
  int x;
  MPI_Request r;
  CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &r));
  CHECK_MPI(MPI_Cancel(&r));
  MPI_Status st;
  CHECK_MPI(MPI_Wait(&r, &st));
  int cancelled = 0;
  CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
  CHECK(cancelled == 1, "a receive nobody matched is cancelled");
}

static int query_calls, free_calls;
static int g_query(void* extra, MPI_Status* status) {
  ++query_calls;
  MPI_Status_set_elements(status, MPI_INT, *(int*)extra);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
static int g_free(void* extra) {
  (void)extra;
  ++free_calls;
  return MPI_SUCCESS;
}
static int g_cancel(void* extra, int complete) {
  (void)extra;
  (void)complete;
  return MPI_SUCCESS;
}

static void test_generalized(void) {
  int elements = 7;
  MPI_Request r;
  CHECK_MPI(MPI_Grequest_start(g_query, g_free, g_cancel, &elements, &r));
  int flag = 1;
  CHECK_MPI(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 0, "a generalized request is pending until completed");
  CHECK_MPI(MPI_Grequest_complete(r));
  MPI_Status st;
  CHECK_MPI(MPI_Wait(&r, &st));
  int count = 0;
  CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(count == 7 && query_calls >= 1 && free_calls == 1, "grequest count %d query %d free %d", count, query_calls,
        free_calls);
  CHECK(r == MPI_REQUEST_NULL, "completed generalized request freed");
}

static void test_errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 0;
  CHECK(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD) == MPI_ERR_RANK, "dest out of range");
  CHECK(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT, "negative count");
  CHECK(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD) == MPI_ERR_TAG, "negative tag");
  CHECK(MPI_Send(&x, 1, (MPI_Datatype)9999, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE, "bad datatype");
  CHECK(MPI_Send(&x, 1, MPI_INT, 0, 0, (MPI_Comm)777) == MPI_ERR_COMM, "bad communicator");
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK(MPI_Start(&r) == MPI_ERR_REQUEST, "start of a null request");
  MPI_Message m = (MPI_Message)12345;
  CHECK(MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE) == MPI_ERR_REQUEST, "mrecv of an unknown message");
  /* A receive too small for the message: MPI_ERR_TRUNCATE, the part that fit delivered. */
  int two[2] = {rank, rank + 1}, one = -1;
  MPI_Request s;
  CHECK_MPI(MPI_Isend(two, 2, MPI_INT, next_rank(), 70, MPI_COMM_WORLD, &s));
  MPI_Status st;
  CHECK(MPI_Recv(&one, 1, MPI_INT, prev_rank(), 70, MPI_COMM_WORLD, &st) == MPI_ERR_TRUNCATE, "truncation");
  CHECK(one == prev_rank(), "truncated receive keeps what fit (%d)", one);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_modes();
  test_synchronous();
  test_bsend();
  test_sendrecv_replace();
  test_persistent();
  test_mprobe();
  test_completion_family();
  test_cancel();
  test_generalized();
  test_errors();
  MPI_Barrier(MPI_COMM_WORLD);
  return FINISH("p2p");
}
