/* Conformance, MPI-3.1 chapter 5 (and MPI-4.0 persistent collectives): every collective in its
 * blocking, non-blocking and persistent form, every value checked, MPI_IN_PLACE where MPI
 * allows it, several non-blocking collectives in flight at once with point-to-point traffic
 * between them, arithmetic on MPI_CHAR, complex products, user ops (commutative and not), and argument errors. */
#include "conformance.h"

#include <complex.h>

static int rank, size;

/* The value rank r contributes at index i. */
static int val(int r, int i) { return r * 1000 + i; }

enum Form { BLOCKING, NONBLOCKING, PERSISTENT };
static const char* form_name[] = {"blocking", "non-blocking", "persistent"};

/* Runs a collective in the given form after `reset` set its buffers; the persistent form is
 * started twice, each time after `reset`. */
#define RUN(form, blocking_call, nb_call, init_call, reset)                        \
  do {                                                                             \
    MPI_Request req_ = MPI_REQUEST_NULL;                                           \
    if ((form) == BLOCKING) {                                                      \
      reset;                                                                       \
      CHECK_MPI(blocking_call);                                                    \
    } else if ((form) == NONBLOCKING) {                                            \
      reset;                                                                       \
      CHECK_MPI(nb_call);                                                          \
      CHECK_MPI(MPI_Wait(&req_, MPI_STATUS_IGNORE));                               \
    } else {                                                                       \
      CHECK_MPI(init_call);                                                        \
      for (int round_ = 0; round_ < 2; ++round_) {                                 \
        reset;                                                                     \
        CHECK_MPI(MPI_Start(&req_));                                               \
        CHECK_MPI(MPI_Wait(&req_, MPI_STATUS_IGNORE));                             \
      }                                                                            \
      CHECK_MPI(MPI_Request_free(&req_));                                          \
    }                                                                              \
  } while (0)

static void test_barrier_bcast(enum Form f) {
  RUN(f, MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, &req_),
      MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req_), (void)0);
  for (int root = 0; root < size; ++root) {
    int buf[100];
    RUN(f, MPI_Bcast(buf, 100, MPI_INT, root, MPI_COMM_WORLD), MPI_Ibcast(buf, 100, MPI_INT, root, MPI_COMM_WORLD, &req_),
        MPI_Bcast_init(buf, 100, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        for (int i = 0; i < 100; ++i) buf[i] = rank == root ? val(root, i) : -1);
    for (int i = 0; i < 100; ++i)
      CHECK(rank == root || buf[i] == val(root, i), "%s bcast root %d element %d = %d", form_name[f], root, i, buf[i]);
  }
}

static void test_reductions(enum Form f) {
  int in[10], out[10];
  for (int root = 0; root < size; ++root) {
    for (int i = 0; i < 10; ++i) in[i] = val(rank, i);
    RUN(f, MPI_Reduce(in, out, 10, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
        MPI_Ireduce(in, out, 10, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req_),
        MPI_Reduce_init(in, out, 10, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        for (int i = 0; i < 10; ++i) out[i] = -1);
    if (rank == root)
      for (int i = 0; i < 10; ++i) {
        int want = 0;
        for (int r = 0; r < size; ++r) want += val(r, i);
        CHECK(out[i] == want, "%s reduce root %d element %d = %d, want %d", form_name[f], root, i, out[i], want);
      }
  }
  for (int i = 0; i < 10; ++i) in[i] = val(rank, i);
  RUN(f, MPI_Allreduce(in, out, 10, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
      MPI_Iallreduce(in, out, 10, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req_),
      MPI_Allreduce_init(in, out, 10, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < 10; ++i) out[i] = -1);
  for (int i = 0; i < 10; ++i) CHECK(out[i] == val(size - 1, i), "%s allreduce max %d = %d", form_name[f], i, out[i]);

  /* scan and exscan */
  int one = rank + 1, prefix = -1;
  RUN(f, MPI_Scan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
      MPI_Iscan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_),
      MPI_Scan_init(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req_), prefix = -1);
  CHECK(prefix == (rank + 1) * (rank + 2) / 2, "%s scan = %d", form_name[f], prefix);
  prefix = -7;
  RUN(f, MPI_Exscan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
      MPI_Iexscan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_),
      MPI_Exscan_init(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req_), prefix = -7);
  if (rank > 0) CHECK(prefix == rank * (rank + 1) / 2, "%s exscan = %d", form_name[f], prefix);

  /* reduce_scatter_block and reduce_scatter (rank r gets r+1 elements) */
  int* big = malloc(sizeof(int) * (size_t)(size * (size + 1)));
  int* part = malloc(sizeof(int) * (size_t)(size + 1));
  int* counts = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size * (size + 1); ++i) big[i] = val(rank, i);
  RUN(f, MPI_Reduce_scatter_block(big, part, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
      MPI_Ireduce_scatter_block(big, part, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_),
      MPI_Reduce_scatter_block_init(big, part, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      part[0] = part[1] = -1);
  for (int k = 0; k < 2; ++k) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += val(r, rank * 2 + k);
    CHECK(part[k] == want, "%s reduce_scatter_block %d = %d, want %d", form_name[f], k, part[k], want);
  }
  int offset = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = r + 1;
    if (r < rank) offset += r + 1;
  }
  RUN(f, MPI_Reduce_scatter(big, part, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
      MPI_Ireduce_scatter(big, part, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_),
      MPI_Reduce_scatter_init(big, part, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int k = 0; k <= rank; ++k) part[k] = -1);
  for (int k = 0; k <= rank; ++k) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += val(r, offset + k);
    CHECK(part[k] == want, "%s reduce_scatter %d = %d, want %d", form_name[f], k, part[k], want);
  }
  free(big);
  free(part);
  free(counts);
}

static void test_gather_family(enum Form f) {
  int n = size;
  int mine[3] = {val(rank, 0), val(rank, 1), val(rank, 2)};
  int* all = malloc(sizeof(int) * (size_t)(3 * n));
  int* counts = malloc(sizeof(int) * (size_t)n);
  int* displs = malloc(sizeof(int) * (size_t)n);
  for (int r = 0; r < n; ++r) {
    counts[r] = 3;
    displs[r] = 3 * (n - 1 - r); /* reversed placement */
  }
  for (int root = 0; root < n; ++root) {
    RUN(f, MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Igather(mine, 3, MPI_INT, all, 3, MPI_INT, root, MPI_COMM_WORLD, &req_),
        MPI_Gather_init(mine, 3, MPI_INT, all, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        for (int i = 0; i < 3 * n; ++i) all[i] = -1);
    if (rank == root)
      for (int r = 0; r < n; ++r)
        for (int k = 0; k < 3; ++k)
          CHECK(all[3 * r + k] == val(r, k), "%s gather root %d [%d][%d] = %d", form_name[f], root, r, k, all[3 * r + k]);
    RUN(f, MPI_Gatherv(mine, 3, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Igatherv(mine, 3, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &req_),
        MPI_Gatherv_init(mine, 3, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        for (int i = 0; i < 3 * n; ++i) all[i] = -1);
    if (rank == root)
      for (int r = 0; r < n; ++r)
        for (int k = 0; k < 3; ++k)
          CHECK(all[displs[r] + k] == val(r, k), "%s gatherv root %d [%d][%d]", form_name[f], root, r, k);
    /* scatter / scatterv: the root's table, block r for rank r */
    int got[3];
    if (rank == root)
      for (int r = 0; r < n; ++r)
        for (int k = 0; k < 3; ++k) all[3 * r + k] = val(r + 7, k);
    RUN(f, MPI_Scatter(all, 3, MPI_INT, got, 3, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Iscatter(all, 3, MPI_INT, got, 3, MPI_INT, root, MPI_COMM_WORLD, &req_),
        MPI_Scatter_init(all, 3, MPI_INT, got, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        got[0] = got[1] = got[2] = -1);
    for (int k = 0; k < 3; ++k) CHECK(got[k] == val(rank + 7, k), "%s scatter root %d [%d] = %d", form_name[f], root, k, got[k]);
    if (rank == root)
      for (int r = 0; r < n; ++r)
        for (int k = 0; k < 3; ++k) all[displs[r] + k] = val(r + 9, k);
    RUN(f, MPI_Scatterv(all, counts, displs, MPI_INT, got, 3, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Iscatterv(all, counts, displs, MPI_INT, got, 3, MPI_INT, root, MPI_COMM_WORLD, &req_),
        MPI_Scatterv_init(all, counts, displs, MPI_INT, got, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        got[0] = got[1] = got[2] = -1);
    for (int k = 0; k < 3; ++k) CHECK(got[k] == val(rank + 9, k), "%s scatterv root %d [%d]", form_name[f], root, k);
  }
  RUN(f, MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD),
      MPI_Iallgather(mine, 3, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD, &req_),
      MPI_Allgather_init(mine, 3, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < 3 * n; ++i) all[i] = -1);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 3; ++k) CHECK(all[3 * r + k] == val(r, k), "%s allgather [%d][%d]", form_name[f], r, k);
  RUN(f, MPI_Allgatherv(mine, 3, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD),
      MPI_Iallgatherv(mine, 3, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &req_),
      MPI_Allgatherv_init(mine, 3, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < 3 * n; ++i) all[i] = -1);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 3; ++k) CHECK(all[displs[r] + k] == val(r, k), "%s allgatherv [%d][%d]", form_name[f], r, k);
  /* in place: each rank's block already sits in the receive buffer */
  for (int i = 0; i < 3 * n; ++i) all[i] = i / 3 == rank ? val(rank, i % 3) : -1;
  RUN(f, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 3, MPI_INT, MPI_COMM_WORLD),
      MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 3, MPI_INT, MPI_COMM_WORLD, &req_),
      MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 3, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      (void)0);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 3; ++k) CHECK(all[3 * r + k] == val(r, k), "%s allgather in place [%d][%d]", form_name[f], r, k);
  free(all);
  free(counts);
  free(displs);
}

static void test_alltoall_family(enum Form f) {
  int n = size;
  int* out = malloc(sizeof(int) * (size_t)(2 * n));
  int* in = malloc(sizeof(int) * (size_t)(2 * n));
  int* sc = malloc(sizeof(int) * (size_t)n);
  int* sd = malloc(sizeof(int) * (size_t)n);
  int* rc = malloc(sizeof(int) * (size_t)n);
  int* rd = malloc(sizeof(int) * (size_t)n);
  MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * (size_t)n);
  for (int r = 0; r < n; ++r) {
    out[2 * r] = val(rank, 2 * r);
    out[2 * r + 1] = val(rank, 2 * r + 1);
    sc[r] = rc[r] = 2;
    sd[r] = 2 * r;
    rd[r] = 2 * (n - 1 - r);
    types[r] = MPI_INT;
  }
  RUN(f, MPI_Alltoall(out, 2, MPI_INT, in, 2, MPI_INT, MPI_COMM_WORLD),
      MPI_Ialltoall(out, 2, MPI_INT, in, 2, MPI_INT, MPI_COMM_WORLD, &req_),
      MPI_Alltoall_init(out, 2, MPI_INT, in, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < 2 * n; ++i) in[i] = -1);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 2; ++k)
      CHECK(in[2 * r + k] == val(r, 2 * rank + k), "%s alltoall [%d][%d] = %d", form_name[f], r, k, in[2 * r + k]);
  RUN(f, MPI_Alltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, MPI_COMM_WORLD),
      MPI_Ialltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, MPI_COMM_WORLD, &req_),
      MPI_Alltoallv_init(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < 2 * n; ++i) in[i] = -1);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 2; ++k) CHECK(in[rd[r] + k] == val(r, 2 * rank + k), "%s alltoallv [%d][%d]", form_name[f], r, k);
  /* alltoallw: displacements in bytes */
  for (int r = 0; r < n; ++r) {
    sd[r] *= (int)sizeof(int);
    rd[r] *= (int)sizeof(int);
  }
  RUN(f, MPI_Alltoallw(out, sc, sd, types, in, rc, rd, types, MPI_COMM_WORLD),
      MPI_Ialltoallw(out, sc, sd, types, in, rc, rd, types, MPI_COMM_WORLD, &req_),
      MPI_Alltoallw_init(out, sc, sd, types, in, rc, rd, types, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < 2 * n; ++i) in[i] = -1);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 2; ++k)
      CHECK(in[rd[r] / (int)sizeof(int) + k] == val(r, 2 * rank + k), "%s alltoallw [%d][%d]", form_name[f], r, k);
  free(out);
  free(in);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(types);
}

/* Allreduce with a commutative op over vectors past the eager limit (recursive doubling in the
 * schedules, the folded pairs included when the rank count is not a power of two), in place and
 * not: every element checked, and a floating-point sum must come out bit for bit the same on
 * every rank (MAX and MIN of each element across ranks agree with it). */
static void test_large_commutative_allreduce(enum Form f) {
  const int n = 40000;
  int* in = malloc((size_t)n * sizeof(int));
  int* out = malloc((size_t)n * sizeof(int));
  double* x = malloc((size_t)n * sizeof(double));
  double* y = malloc((size_t)n * sizeof(double));
  double* lo = malloc((size_t)n * sizeof(double));
  double* hi = malloc((size_t)n * sizeof(double));
  const int ranks_sum = 1000 * (size * (size - 1) / 2);
  RUN(f, MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
      MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_),
      MPI_Allreduce_init(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < n; ++i) { in[i] = val(rank, i); out[i] = -1; });
  int bad = -1;
  for (int i = 0; i < n && bad < 0; ++i)
    if (out[i] != ranks_sum + size * i) bad = i;
  CHECK(bad < 0, "%s allreduce of %d ints: [%d] = %d, want %d", form_name[f], n, bad, bad < 0 ? 0 : out[bad],
        bad < 0 ? 0 : ranks_sum + size * bad);
  RUN(f, MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
      MPI_Iallreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req_),
      MPI_Allreduce_init(MPI_IN_PLACE, out, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < n; ++i) out[i] = (i + rank) % size);
  bad = -1;
  for (int i = 0; i < n && bad < 0; ++i)
    if (out[i] != size - 1) bad = i;
  CHECK(bad < 0, "%s in-place max of %d ints: [%d] = %d, want %d", form_name[f], n, bad, bad < 0 ? 0 : out[bad],
        size - 1);
  RUN(f, MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
      MPI_Iallreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req_),
      MPI_Allreduce_init(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
      for (int i = 0; i < n; ++i) { x[i] = 1.0 / (3.0 + rank + i % 97); y[i] = -1.0; });
  CHECK_MPI(MPI_Allreduce(y, lo, n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Allreduce(y, hi, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  bad = -1;
  for (int i = 0; i < n && bad < 0; ++i)
    if (lo[i] != y[i] || hi[i] != y[i] || y[i] <= 0.0) bad = i;
  CHECK(bad < 0, "%s allreduce of %d doubles differs across ranks at [%d]: %.17g here, %.17g..%.17g", form_name[f],
        n, bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : lo[bad], bad < 0 ? 0.0 : hi[bad]);
  free(in);
  free(out);
  free(x);
  free(y);
  free(lo);
  free(hi);
}

/* Several non-blocking collectives in flight together, with point-to-point traffic between
 * them, completed in an order unlike the one they started in. */
static void test_overlap(void) {
  int a = rank, b = 0;
  int* c = calloc((size_t)size, sizeof(int));
  int token = -1;
  MPI_Request reqs[4];
  CHECK_MPI(MPI_Iallreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
  CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[1]));
  int root_value = rank == 0 ? 4242 : 0;
  CHECK_MPI(MPI_Ibcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD, &reqs[2]));
  CHECK_MPI(MPI_Irecv(&token, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &reqs[3]));
  CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, c, 1, MPI_INT, MPI_COMM_WORLD));
  int index = -1;
  for (int k = 0; k < 4; ++k) CHECK_MPI(MPI_Waitany(4, reqs, &index, MPI_STATUS_IGNORE));
  CHECK(b == size * (size - 1) / 2, "overlapped allreduce = %d", b);
  CHECK(root_value == 4242, "overlapped bcast = %d", root_value);
  CHECK(token == (rank + size - 1) % size, "p2p between collectives = %d", token);
  for (int r = 0; r < size; ++r) CHECK(c[r] == r, "blocking allgather between them [%d] = %d", r, c[r]);
  free(c);
}

/* A non-blocking collective moves on while one rank computes outside MPI: the last rank starts
 * an allreduce and a barrier, then spins on its own window memory with no MPI call until every
 * other rank has completed both and said so with an accumulate under a shared lock (30 s hang
 * guard). Their completion needs the computing rank's part of the later rounds, which its
 * progress thread sends; the accumulate needs nothing from it on one node (the direct path) and
 * the same thread serves it across nodes. With XMSG_PROGRESS_THREAD=off it is not checked. */
static void test_progress_while_computing(void) {
  if (size < 2 || progress_thread_off()) {
    if (rank == 0) printf("collectives: progress while a rank computes: not checked (%s)\n",
                          size < 2 ? "one rank" : "XMSG_PROGRESS_THREAD=off");
    return;
  }
  int* done = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &done, &win));
  *done = 0;
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  const int computing = size - 1;
  int a = rank + 1, sum = 0;
  MPI_Request reqs[2];
  CHECK_MPI(MPI_Iallreduce(&a, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
  CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[1]));
  if (rank == computing) {
    const double give_up = MPI_Wtime() + 30.0;
    volatile int* seen = done;
    while (*seen != size - 1 && MPI_Wtime() < give_up) {
    }
    CHECK(*seen == size - 1,
          "%d of %d ranks completed an allreduce and a barrier while rank %d computed outside MPI", *seen,
          size - 1, computing);
    CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  } else {
    CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    const int one = 1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, computing, 0, win));
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, computing, 0, 1, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(computing, win));
  }
  CHECK(sum == size * (size + 1) / 2, "allreduce while a rank computed = %d", sum);
  CHECK_MPI(MPI_Win_free(&win));
}

/* Concatenation of decimal digits, (value, digits) pairs: associative, not commutative. */
static void concat(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  int* a = in;
  int* b = inout;
  for (int i = 0; i < *len; ++i) {
    int scale = 1;
    for (int k = 0; k < b[2 * i + 1]; ++k) scale *= 10;
    b[2 * i] = a[2 * i] * scale + b[2 * i];
    b[2 * i + 1] += a[2 * i + 1];
  }
}

static void test_ops(void) {
  /* MPI_SUM on MPI_CHAR, as Open MPI and MPICH accept it (OSU's default type). */
  char ch = 1, chsum = 0;
  CHECK_MPI(MPI_Allreduce(&ch, &chsum, 1, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
  CHECK(chsum == (char)size, "char sum = %d", chsum);
  /* MPI_PROD on complex types multiplies complex numbers (not the parts one by one):
   * (1+i)^size is exact in double for these sizes, (2+3i)(4+5i) = -7+22i. */
  double _Complex z = 1.0 + 1.0 * I, zprod = 0, zwant = 1;
  for (int k = 0; k < size; ++k) zwant *= z;
  CHECK_MPI(MPI_Allreduce(&z, &zprod, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
  CHECK(zprod == zwant, "complex prod = %g%+gi, want %g%+gi", creal(zprod), cimag(zprod), creal(zwant), cimag(zwant));
  MPI_Request zr;
  zprod = 0;
  CHECK_MPI(MPI_Iallreduce(&z, &zprod, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD, &zr));
  CHECK_MPI(MPI_Wait(&zr, MPI_STATUS_IGNORE));
  CHECK(zprod == zwant, "complex iallreduce prod = %g%+gi", creal(zprod), cimag(zprod));
  float _Complex fa = 2.0f + 3.0f * I, fb = 4.0f + 5.0f * I;
  CHECK_MPI(MPI_Reduce_local(&fa, &fb, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD));
  CHECK(fb == -7.0f + 22.0f * I, "reduce_local complex prod = %g%+gi", (double)crealf(fb), (double)cimagf(fb));
  /* A non-commutative user op combines in rank order: ((r0 op r1) op r2) ... */
  MPI_Op op;
  CHECK_MPI(MPI_Op_create(concat, 0, &op));
  int commute = 1;
  CHECK_MPI(MPI_Op_commutative(op, &commute));
  CHECK(commute == 0, "op_commutative");
  CHECK_MPI(MPI_Op_commutative(MPI_SUM, &commute));
  CHECK(commute == 1, "MPI_SUM commutes");
  int digit[2] = {rank % 10, 1}, result[2] = {-1, -1};
  int want = 0;
  for (int k = 0; k < size; ++k) want = want * 10 + k % 10;
  MPI_Request r;
  CHECK_MPI(MPI_Iallreduce(digit, result, 1, MPI_2INT, op, MPI_COMM_WORLD, &r));
  CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
  if (size <= 8) CHECK(result[0] == want && result[1] == size, "non-commutative iallreduce = %d, want %d", result[0], want);
  result[0] = -1;
  CHECK_MPI(MPI_Allreduce(digit, result, 1, MPI_2INT, op, MPI_COMM_WORLD));
  if (size <= 8) CHECK(result[0] == want, "non-commutative allreduce = %d, want %d", result[0], want);
  result[0] = -1;
  CHECK_MPI(MPI_Reduce(digit, result, 1, MPI_2INT, op, size - 1, MPI_COMM_WORLD));
  if (size <= 8 && rank == size - 1) CHECK(result[0] == want, "non-commutative reduce to the last rank = %d", result[0]);
  int x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
  CHECK_MPI(MPI_Reduce_local(x, y, 3, MPI_INT, MPI_SUM));
  CHECK(y[0] == 11 && y[1] == 22 && y[2] == 33, "reduce_local %d %d %d", y[0], y[1], y[2]);
  CHECK_MPI(MPI_Op_free(&op));
  CHECK(op == MPI_OP_NULL, "op freed");
}

static void test_errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 0, y = 0;
  MPI_Request r;
  CHECK(MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, &r) == MPI_ERR_ROOT, "ibcast bad root");
  CHECK(MPI_Iallreduce(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r) == MPI_ERR_COUNT, "iallreduce negative count");
  CHECK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &r) == MPI_ERR_OP, "iallreduce MPI_OP_NULL");
  CHECK(MPI_Ibarrier((MPI_Comm)555, &r) == MPI_ERR_COMM, "ibarrier bad comm");
  /* MPI defines no order on complex values: MIN and MAX on them are errors, in every form. */
  double _Complex z = 1.0, zr = 0;
  CHECK(MPI_Allreduce(&z, &zr, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD) == MPI_ERR_OP, "allreduce complex max");
  CHECK(MPI_Iallreduce(&z, &zr, 1, MPI_C_DOUBLE_COMPLEX, MPI_MIN, MPI_COMM_WORLD, &r) == MPI_ERR_OP, "iallreduce complex min");
  CHECK(MPI_Reduce_local(&z, &zr, 1, MPI_CXX_FLOAT_COMPLEX, MPI_MAX) == MPI_ERR_OP, "reduce_local complex max");
  CHECK(MPI_Scan(&x, &y, 1, (MPI_Datatype)4444, MPI_SUM, MPI_COMM_WORLD) == MPI_ERR_TYPE, "scan bad type");
  /* Alltoallv of predefined types takes a shorter path; every bad argument still fails on every
   * rank before anything moves. */
  int* counts = calloc((size_t)size, sizeof(int));
  int* displs = calloc((size_t)size, sizeof(int));
  counts[size - 1] = -1;
  CHECK(MPI_Alltoallv(&x, counts, displs, MPI_INT, &y, displs, displs, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_COUNT,
        "alltoallv negative sendcount");
  CHECK(MPI_Alltoallv(&x, displs, displs, MPI_INT, &y, counts, displs, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_COUNT,
        "alltoallv negative recvcount");
  CHECK(MPI_Alltoallv(&x, displs, displs, MPI_INT, &y, displs, NULL, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_ARG,
        "alltoallv NULL rdispls");
  CHECK(MPI_Alltoallv(&x, displs, displs, MPI_INT, &y, displs, displs, MPI_INT, (MPI_Comm)555) == MPI_ERR_COMM,
        "alltoallv bad comm");
  CHECK(MPI_Alltoallv(&x, displs, displs, (MPI_Datatype)4444, &y, displs, displs, MPI_INT, MPI_COMM_WORLD) ==
            MPI_ERR_TYPE,
        "alltoallv bad sendtype");
  free(counts);
  free(displs);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Type_free and MPI_Op_free leave operations that use a type or op intact: a persistent
 * collective whose types and user op the program freed right after the init call still moves
 * and combines the same data at every start (a freed user op gave a silently wrong sum). A type
 * created after the free must not change what the request does. */
static void user_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}

static void test_persistent_outlives_types(void) {
  enum { kCount = 4, kStride = 3, kExtent = (kCount - 1) * kStride + 1 };
  MPI_Datatype strided, triple, later;
  CHECK_MPI(MPI_Type_vector(kCount, 1, kStride, MPI_INT, &strided));
  CHECK_MPI(MPI_Type_commit(&strided));
  CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &triple));
  CHECK_MPI(MPI_Type_commit(&triple));
  int bbuf[kExtent], in[6], out[6];
  int* a2a_in = malloc(sizeof(int) * (size_t)size * kCount);
  int* a2a_out = malloc(sizeof(int) * (size_t)size * kExtent);
  int user_in[2], user_out[2];
  MPI_Op op;
  CHECK_MPI(MPI_Op_create(user_sum, 1, &op));
  MPI_Request req[4];
  CHECK_MPI(MPI_Bcast_init(bbuf, 1, strided, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
  CHECK_MPI(MPI_Allreduce_init(in, out, 2, triple, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
  CHECK_MPI(MPI_Alltoall_init(a2a_in, kCount, MPI_INT, a2a_out, 1, strided, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
  CHECK_MPI(MPI_Allreduce_init(user_in, user_out, 2, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &req[3]));
  CHECK_MPI(MPI_Type_free(&strided));
  CHECK_MPI(MPI_Type_free(&triple));
  CHECK_MPI(MPI_Op_free(&op));
  CHECK_MPI(MPI_Type_contiguous(2, MPI_DOUBLE, &later));
  CHECK_MPI(MPI_Type_commit(&later));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kExtent; ++i) bbuf[i] = rank == 0 ? val(round, i) : -1;
    for (int i = 0; i < 6; ++i) {
      in[i] = val(rank, i + round);
      out[i] = -1;
    }
    for (int i = 0; i < size * kCount; ++i) a2a_in[i] = val(rank, i + round);
    for (int i = 0; i < size * kExtent; ++i) a2a_out[i] = -1;
    for (int i = 0; i < 2; ++i) {
      user_in[i] = val(rank, i + round);
      user_out[i] = -1;
    }
    CHECK_MPI(MPI_Startall(4, req));
    CHECK_MPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 2; ++i) {
      int want = 0;
      for (int r = 0; r < size; ++r) want += val(r, i + round);
      CHECK(user_out[i] == want, "round %d: persistent allreduce with a freed user op, element %d = %d, want %d",
            round, i, user_out[i], want);
    }
    for (int i = 0; i < kExtent; ++i) {
      const int want = (rank == 0 || i % kStride == 0) ? val(round, i) : -1;
      CHECK(bbuf[i] == want, "round %d: persistent bcast of a freed vector type, element %d = %d, want %d", round, i,
            bbuf[i], want);
    }
    for (int i = 0; i < 6; ++i) {
      int want = 0;
      for (int r = 0; r < size; ++r) want += val(r, i + round);
      CHECK(out[i] == want, "round %d: persistent allreduce of a freed contiguous type, element %d = %d, want %d",
            round, i, out[i], want);
    }
    /* Block p of the receive buffer is one element of the vector type (kExtent ints): the kCount
     * ints from rank p, kStride apart; the ints between stay untouched. */
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < kExtent; ++i) {
        const int got = a2a_out[p * kExtent + i];
        const int want = i % kStride == 0 ? val(p, rank * kCount + i / kStride + round) : -1;
        CHECK(got == want, "round %d: persistent alltoall into a freed vector type, block %d element %d = %d, want %d",
              round, p, i, got, want);
      }
  }
  for (int i = 0; i < 4; ++i) CHECK_MPI(MPI_Request_free(&req[i]));
  CHECK_MPI(MPI_Type_free(&later));
  free(a2a_in);
  free(a2a_out);
}

/* The non-blocking form combines after its call returned: an op freed meanwhile still applies
 * (it combined nothing: each rank kept its own contribution, no error). */
static void test_nonblocking_outlives_op(void) {
  enum { kCount = 50000 };
  int* in = malloc(sizeof(int) * kCount);
  int* out = malloc(sizeof(int) * kCount);
  for (int i = 0; i < kCount; ++i) {
    in[i] = val(rank, i % 7);
    out[i] = -1;
  }
  MPI_Op op;
  MPI_Request req;
  CHECK_MPI(MPI_Op_create(user_sum, 1, &op));
  CHECK_MPI(MPI_Iallreduce(in, out, kCount, MPI_INT, op, MPI_COMM_WORLD, &req));
  CHECK_MPI(MPI_Op_free(&op));
  CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  for (int i = 0; i < kCount; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += val(r, i % 7);
    if (out[i] != want) {
      CHECK(out[i] == want, "iallreduce with an op freed before MPI_Wait: element %d = %d, want %d", i, out[i], want);
      break;
    }
  }
  free(in);
  free(out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int f = BLOCKING; f <= PERSISTENT; ++f) {
    test_barrier_bcast((enum Form)f);
    test_reductions((enum Form)f);
    test_gather_family((enum Form)f);
    test_alltoall_family((enum Form)f);
    test_large_commutative_allreduce((enum Form)f);
  }
  test_persistent_outlives_types();
  test_nonblocking_outlives_op();
  test_overlap();
  test_progress_while_computing();
  test_ops();
  test_errors();
  return FINISH("collectives");
}
