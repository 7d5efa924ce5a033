/* Collectives on derived datatypes that are not contiguous, at sizes that take every algorithm
 * (the shared-memory slot and pipelines, single copy, point-to-point trees, rings, Bruck, linear
 * and pairwise exchanges; tests/mpi/CMakeLists.txt runs it under settings that force each and
 * checks the trace). MPI lets every rank pass its own datatype of the same signature, so even
 * ranks pass a strided int (an MPI_INT resized to two ints' extent: every other int, the gaps
 * must stay untouched) and odd ranks plain MPI_INT. Covers MPI_Bcast, MPI_Alltoall, MPI_Allgather,
 * MPI_Gather and MPI_Scatter, with MPI_IN_PLACE where MPI allows it, and the v-variants with
 * blocks of different sizes placed out of rank order with holes between them (the holes must
 * stay untouched too); MPI_Allreduce and MPI_Reduce on the strided type (every rank alike);
 * MPI_Alltoallw with a datatype per peer. Each blocking and non-blocking. */
#include <stdint.h>

#include "conformance.h"

static int rank, nranks;
static MPI_Datatype strided; /* MPI_INT with the extent of two ints */

enum { kGap = -7 };

/* The int element `j` from rank `from` for rank `to`. */
static int value(int from, int to, long j) { return (int)((from * 1000003L + to * 7919L + j * 31L) % 2000000011L); }

/* A buffer of `n` ints as rank `r` lays them out: strided on even ranks (gaps set to kGap),
 * plain on odd ranks. */
typedef struct {
  int* mem;
  long n;
  int stride;
  MPI_Datatype type;
} Buf;

static Buf buf_for(int r, long n) {
  Buf b;
  b.n = n;
  b.stride = r % 2 == 0 ? 2 : 1;
  b.type = r % 2 == 0 ? strided : MPI_INT;
  b.mem = malloc(sizeof(int) * (size_t)(n * b.stride + 1));
  for (long i = 0; i < n * b.stride + 1; ++i) b.mem[i] = kGap;
  return b;
}
static int* elem(Buf* b, long i) { return &b->mem[i * b->stride]; }

/* Every element holds want(i), every gap kGap; reports the first difference. */
#define CHECK_BUF(b, what, want_expr)                                                                \
  do {                                                                                               \
    long bad_ = -1;                                                                                  \
    int got_ = 0, expected_ = 0;                                                                     \
    for (long i = 0; i < (b).n && bad_ < 0; ++i) {                                                   \
      const int w_ = (want_expr);                                                                    \
      if (*elem(&(b), i) != w_) bad_ = i, got_ = *elem(&(b), i), expected_ = w_;                     \
    }                                                                                                \
    CHECK(bad_ < 0, "%s n=%ld: element %ld is %d, expected %d", what, (b).n, bad_, got_, expected_); \
    long gap_ = -1;                                                                                  \
    for (long i = 0; i < (b).n * (b).stride + 1 && gap_ < 0; ++i)                                    \
      if (((b).stride == 2 && i % 2 == 1) || i == (b).n * (b).stride)                                \
        if ((b).mem[i] != kGap) gap_ = i;                                                            \
    CHECK(gap_ < 0, "%s n=%ld: the gap at int %ld was written", what, (b).n, gap_);                  \
  } while (0)

/* Every collective below runs blocking, then again non-blocking (the schedules, which send and
 * receive derived datatypes as packed messages). */
static int nonblocking;
static int finish_request(int code, MPI_Request* req) {
  return code != MPI_SUCCESS ? code : MPI_Wait(req, MPI_STATUS_IGNORE);
}
#define RUN(blocking_call, nonblocking_call)              \
  do {                                                    \
    MPI_Request req_ = MPI_REQUEST_NULL;                  \
    if (nonblocking)                                      \
      CHECK_MPI(finish_request(nonblocking_call, &req_)); \
    else                                                  \
      CHECK_MPI(blocking_call);                           \
  } while (0)

static void test_bcast(long n) {
  for (int root = 0; root<nranks; root += nranks> 2 ? nranks - 1 : 1) {
    Buf b = buf_for(rank, n);
    if (rank == root)
      for (long i = 0; i < n; ++i) *elem(&b, i) = value(root, 0, i);
    RUN(MPI_Bcast(b.mem, (int)n, b.type, root, MPI_COMM_WORLD),
        MPI_Ibcast(b.mem, (int)n, b.type, root, MPI_COMM_WORLD, &req_));
    CHECK_BUF(b, "MPI_Bcast", value(root, 0, i));
    free(b.mem);
  }
}

static void test_alltoall(long block, int in_place) {
  Buf s = buf_for(rank + 1, block * nranks), r = buf_for(rank, block * nranks);
  Buf* src = in_place ? &r : &s;
  for (int to = 0; to < nranks; ++to)
    for (long j = 0; j < block; ++j) *elem(src, to * block + j) = value(rank, to, j);
  if (in_place)
    RUN(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.mem, (int)block, r.type, MPI_COMM_WORLD),
        MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.mem, (int)block, r.type, MPI_COMM_WORLD, &req_));
  else
    RUN(MPI_Alltoall(s.mem, (int)block, s.type, r.mem, (int)block, r.type, MPI_COMM_WORLD),
        MPI_Ialltoall(s.mem, (int)block, s.type, r.mem, (int)block, r.type, MPI_COMM_WORLD, &req_));
  CHECK_BUF(r, in_place ? "MPI_Alltoall in place" : "MPI_Alltoall", value((int)(i / block), rank, i % block));
  free(s.mem);
  free(r.mem);
}

static void test_allgather(long block, int in_place) {
  Buf s = buf_for(rank + 1, block), r = buf_for(rank, block * nranks);
  for (long j = 0; j < block; ++j) {
    *elem(&s, j) = value(rank, 0, j);
    if (in_place) *elem(&r, rank * block + j) = value(rank, 0, j);
  }
  RUN(MPI_Allgather(in_place ? MPI_IN_PLACE : s.mem, (int)block, s.type, r.mem, (int)block, r.type, MPI_COMM_WORLD),
      MPI_Iallgather(in_place ? MPI_IN_PLACE : s.mem, (int)block, s.type, r.mem, (int)block, r.type, MPI_COMM_WORLD,
                     &req_));
  CHECK_BUF(r, in_place ? "MPI_Allgather in place" : "MPI_Allgather", value((int)(i / block), 0, i % block));
  free(s.mem);
  free(r.mem);
}

static void test_gather_scatter(long block, int root, int in_place) {
  Buf s = buf_for(rank + 1, block), r = buf_for(rank, rank == root ? block * nranks : 0);
  for (long j = 0; j < block; ++j) *elem(&s, j) = value(rank, root, j);
  if (in_place && rank == root)
    for (long j = 0; j < block; ++j) *elem(&r, root * block + j) = value(root, root, j);
  const void* sendbuf = in_place && rank == root ? MPI_IN_PLACE : s.mem;
  RUN(MPI_Gather(sendbuf, (int)block, s.type, r.mem, (int)block, r.type, root, MPI_COMM_WORLD),
      MPI_Igather(sendbuf, (int)block, s.type, r.mem, (int)block, r.type, root, MPI_COMM_WORLD, &req_));
  if (rank == root)
    CHECK_BUF(r, in_place ? "MPI_Gather in place" : "MPI_Gather", value((int)(i / block), root, i % block));

  /* And back out: the root scatters what it gathered (block i to rank i). */
  Buf back = buf_for(rank + 1, block);
  if (in_place && rank == root)
    for (long j = 0; j < block; ++j) *elem(&back, j) = kGap; /* untouched: root's block stays in r */
  void* recvbuf = in_place && rank == root ? MPI_IN_PLACE : back.mem;
  RUN(MPI_Scatter(r.mem, (int)block, r.type, recvbuf, (int)block, back.type, root, MPI_COMM_WORLD),
      MPI_Iscatter(r.mem, (int)block, r.type, recvbuf, (int)block, back.type, root, MPI_COMM_WORLD, &req_));
  if (!(in_place && rank == root)) CHECK_BUF(back, "MPI_Scatter", value(rank, root, i));
  free(back.mem);
  free(s.mem);
  free(r.mem);
}

/* Every element equals want[i] (kGap in the holes), every stride gap kGap. */
static void check_against(Buf* b, const int* want, const char* what) {
  long bad = -1;
  for (long i = 0; i < b->n && bad < 0; ++i)
    if (*elem(b, i) != want[i]) bad = i;
  CHECK(bad < 0, "%s n=%ld: element %ld is %d, expected %d", what, b->n, bad, bad < 0 ? 0 : *elem(b, bad),
        bad < 0 ? 0 : want[bad]);
  long gap = -1;
  for (long i = 0; i < b->n * b->stride + 1 && gap < 0; ++i)
    if ((b->stride == 2 && i % 2 == 1) || i == b->n * b->stride)
      if (b->mem[i] != kGap) gap = i;
  CHECK(gap < 0, "%s n=%ld: the gap at int %ld was written", what, b->n, gap);
}

/* Blocks of counts[i] elements, laid out in reverse rank order with 3-element holes between;
 * returns the elements spanned. */
static long reverse_layout(const int* counts, int* displs) {
  long at = 0;
  for (int i = nranks - 1; i >= 0; --i) {
    displs[i] = (int)at;
    at += counts[i] + 3;
  }
  return at;
}

static void test_v(long base) {
  int* counts = malloc(sizeof(int) * (size_t)nranks);
  int* displs = malloc(sizeof(int) * (size_t)nranks);
  for (int i = 0; i < nranks; ++i) counts[i] = (int)(base + i);
  const long span = reverse_layout(counts, displs);
  const int root = nranks - 1;

  /* Gatherv to the root, then Scatterv back out. */
  Buf s = buf_for(rank + 1, counts[rank]), r = buf_for(rank, rank == root ? span : 0);
  for (long j = 0; j < counts[rank]; ++j) *elem(&s, j) = value(rank, root, j);
  RUN(MPI_Gatherv(s.mem, counts[rank], s.type, r.mem, counts, displs, r.type, root, MPI_COMM_WORLD),
      MPI_Igatherv(s.mem, counts[rank], s.type, r.mem, counts, displs, r.type, root, MPI_COMM_WORLD, &req_));
  int* want = malloc(sizeof(int) * (size_t)(span + 1));
  for (long i = 0; i < span; ++i) want[i] = kGap;
  for (int from = 0; from < nranks; ++from)
    for (long j = 0; j < counts[from]; ++j) want[displs[from] + j] = value(from, root, j);
  if (rank == root) check_against(&r, want, "MPI_Gatherv");
  Buf back = buf_for(rank + 1, counts[rank]);
  RUN(MPI_Scatterv(r.mem, counts, displs, r.type, back.mem, counts[rank], back.type, root, MPI_COMM_WORLD),
      MPI_Iscatterv(r.mem, counts, displs, r.type, back.mem, counts[rank], back.type, root, MPI_COMM_WORLD, &req_));
  CHECK_BUF(back, "MPI_Scatterv", value(rank, root, i));
  free(back.mem);
  free(r.mem);

  /* Allgatherv: everyone gets the root's picture. */
  Buf all = buf_for(rank, span);
  RUN(MPI_Allgatherv(s.mem, counts[rank], s.type, all.mem, counts, displs, all.type, MPI_COMM_WORLD),
      MPI_Iallgatherv(s.mem, counts[rank], s.type, all.mem, counts, displs, all.type, MPI_COMM_WORLD, &req_));
  check_against(&all, want, "MPI_Allgatherv");
  free(all.mem);
  free(s.mem);

  /* Alltoallv: to rank d, base + (rank + d) % 3 elements; sent in reverse order, received
   * forwards, holes on both sides. */
  int* sc = malloc(sizeof(int) * (size_t)nranks);
  int* sd = malloc(sizeof(int) * (size_t)nranks);
  int* rc = malloc(sizeof(int) * (size_t)nranks);
  int* rd = malloc(sizeof(int) * (size_t)nranks);
  long rspan = 0;
  for (int i = 0; i < nranks; ++i) {
    sc[i] = (int)(base + (rank + i) % 3);
    rc[i] = (int)(base + (i + rank) % 3);
    rd[i] = (int)rspan;
    rspan += rc[i] + 2;
  }
  const long sspan = reverse_layout(sc, sd);
  Buf to = buf_for(rank + 1, sspan), from = buf_for(rank, rspan);
  for (int d = 0; d < nranks; ++d)
    for (long j = 0; j < sc[d]; ++j) *elem(&to, sd[d] + j) = value(rank, d, j);
  RUN(MPI_Alltoallv(to.mem, sc, sd, to.type, from.mem, rc, rd, from.type, MPI_COMM_WORLD),
      MPI_Ialltoallv(to.mem, sc, sd, to.type, from.mem, rc, rd, from.type, MPI_COMM_WORLD, &req_));
  int* want2 = malloc(sizeof(int) * (size_t)(rspan + 1));
  for (long i = 0; i < rspan; ++i) want2[i] = kGap;
  for (int f = 0; f < nranks; ++f)
    for (long j = 0; j < rc[f]; ++j) want2[rd[f] + j] = value(f, rank, j);
  check_against(&from, want2, "MPI_Alltoallv");
  free(want2);
  free(to.mem);
  free(from.mem);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(want);
  free(counts);
  free(displs);
}
static int sum_over_ranks(long i) {
  int sum = 0;
  for (int r = 0; r < nranks; ++r) sum += value(r, 0, i) % 1000;
  return sum;
}
static int max_over_ranks(long i) {
  int max = 0;
  for (int r = 0; r < nranks; ++r)
    if (value(r, 0, i) % 1000 > max) max = value(r, 0, i) % 1000;
  return max;
}

/* MPI_Allreduce and MPI_Reduce (every rank the same datatype, as MPI requires of reductions) on
 * strided ints: predefined ops reduce the packed elements, in pieces past a megabyte. */
static void test_reductions(long n) {
  Buf in = buf_for(0, n), out = buf_for(0, n);
  for (long i = 0; i < n; ++i) *elem(&in, i) = value(rank, 0, i) % 1000;
  RUN(MPI_Allreduce(in.mem, out.mem, (int)n, strided, MPI_SUM, MPI_COMM_WORLD),
      MPI_Iallreduce(in.mem, out.mem, (int)n, strided, MPI_SUM, MPI_COMM_WORLD, &req_));
  CHECK_BUF(out, "MPI_Allreduce", sum_over_ranks(i));
  RUN(MPI_Allreduce(MPI_IN_PLACE, in.mem, (int)n, strided, MPI_MAX, MPI_COMM_WORLD),
      MPI_Iallreduce(MPI_IN_PLACE, in.mem, (int)n, strided, MPI_MAX, MPI_COMM_WORLD, &req_));
  CHECK_BUF(in, "MPI_Allreduce in place", max_over_ranks(i));
  for (long i = 0; i < n; ++i) *elem(&in, i) = value(rank, 0, i) % 1000;
  const int root = nranks / 2;
  Buf red = buf_for(0, rank == root ? n : 0);
  RUN(MPI_Reduce(in.mem, red.mem, (int)n, strided, MPI_SUM, root, MPI_COMM_WORLD),
      MPI_Ireduce(in.mem, red.mem, (int)n, strided, MPI_SUM, root, MPI_COMM_WORLD, &req_));
  if (rank == root) CHECK_BUF(red, "MPI_Reduce", sum_over_ranks(i));
  free(red.mem);
  free(in.mem);
  free(out.mem);
}

/* MPI_Alltoallw (a schedule in both forms): every peer's block with its own datatype, strided
 * or plain by the peer's parity on the send side and by ours on the receive side, byte
 * displacements out of rank order. */
static void test_alltoallw(long block) {
  int* sc = malloc(sizeof(int) * (size_t)nranks);
  int* rc = malloc(sizeof(int) * (size_t)nranks);
  int* sd = malloc(sizeof(int) * (size_t)nranks);
  int* rd = malloc(sizeof(int) * (size_t)nranks);
  MPI_Datatype* st = malloc(sizeof(MPI_Datatype) * (size_t)nranks);
  MPI_Datatype* rt = malloc(sizeof(MPI_Datatype) * (size_t)nranks);
  /* Send side: block for rank d at slot (n - 1 - d), strided (stride 2 ints) when d is even. */
  int* out = malloc(sizeof(int) * (size_t)(2 * block * nranks + 1));
  int* in = malloc(sizeof(int) * (size_t)(2 * block * nranks + 1));
  for (long i = 0; i < 2 * block * nranks + 1; ++i) out[i] = in[i] = kGap;
  for (int d = 0; d < nranks; ++d) {
    const int slot = nranks - 1 - d, stride = d % 2 == 0 ? 2 : 1;
    sc[d] = rc[d] = (int)block;
    st[d] = d % 2 == 0 ? strided : MPI_INT;
    sd[d] = (int)(sizeof(int) * (size_t)(2 * block * slot));
    for (long j = 0; j < block; ++j) out[2 * block * slot + j * stride] = value(rank, d, j);
    /* Receive side: from rank f at slot f, strided when our rank is even. */
    rt[d] = rank % 2 == 0 ? strided : MPI_INT;
    rd[d] = (int)(sizeof(int) * (size_t)(2 * block * d));
  }
  RUN(MPI_Alltoallw(out, sc, sd, st, in, rc, rd, rt, MPI_COMM_WORLD),
      MPI_Ialltoallw(out, sc, sd, st, in, rc, rd, rt, MPI_COMM_WORLD, &req_));
  long bad = -1;
  const int stride = rank % 2 == 0 ? 2 : 1;
  for (int f = 0; f < nranks && bad < 0; ++f)
    for (long j = 0; j < 2 * block && bad < 0; ++j) {
      const long at = 2 * block * f + j;
      const int want = j % stride == 0 && j / stride < block ? value(f, rank, j / stride) : kGap;
      if (in[at] != want) bad = at;
    }
  CHECK(bad < 0, "MPI_Alltoallw block=%ld: int %ld is %d", block, bad, bad < 0 ? 0 : in[bad]);
  free(out);
  free(in);
  free(sc);
  free(rc);
  free(sd);
  free(rd);
  free(st);
  free(rt);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &strided));
  CHECK_MPI(MPI_Type_commit(&strided));
  /* 4 B to 1.2 MB per block: slots, pipelines (several chunks), single copy, rendezvous. */
  const long sizes[] = {1, 7, 100, 1000, 5000, 40000, 300000};
  for (nonblocking = 0; nonblocking < 2; ++nonblocking)
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
      const long n = sizes[k];
      test_bcast(n);
      test_alltoall(n, 0);
      test_alltoall(n, 1);
      test_allgather(n, 0);
      test_allgather(n, 1);
      test_gather_scatter(n, nranks - 1, 0);
      test_gather_scatter(n, 0, 1);
      test_v(n);
      test_reductions(n);
      test_alltoallw(n);
    }
  CHECK_MPI(MPI_Type_free(&strided));
  return FINISH("datatype_collectives");
}
