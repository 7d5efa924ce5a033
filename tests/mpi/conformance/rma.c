/* MPI-3.1 chapter 11 (one-sided communication): every window flavor (create, allocate,
 * allocate_shared with MPI_Win_shared_query and direct loads/stores, dynamic with attach and
 * detach), the window attributes, group, name and info; MPI_Put/MPI_Get/MPI_Accumulate/
 * MPI_Get_accumulate/MPI_Fetch_and_op/MPI_Compare_and_swap and the request forms; derived
 * datatypes at the origin and at the target; every synchronisation model (fence, post/start/
 * complete/wait and test, lock/unlock shared and exclusive, lock_all, flush, flush_local,
 * sync); accumulate atomicity (every rank adds to one counter, exact totals, every fetched
 * ticket distinct; 64-bit integers by every op kind, device atomics where every rank has them);
 * lock mutual exclusion (get + put under exclusive locks), locks and 64-bit adds reaching a target
 * that computes outside MPI;
 * passive target while the target sits in MPI_Barrier, and on one node while
 * it computes outside MPI (locks taken in the window's segment); and the error classes
 * of misuse under MPI_ERRORS_RETURN, after which the job goes on; a user window error handler
 * (called with the window and the code, the job goes on) and window keyval checks (MPI_ERR_KEYVAL
 * for a keyval never made, a communicator keyval or a freed one; a freed keyval's delete callback
 * still runs at MPI_Win_free). Runs at any number of ranks. */
#include "conformance.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank = 0, nranks = 1;

static int cmp_int(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

/* ---- flavors and attributes ---------------------------------------------------------- */
static void check_attributes(MPI_Win win, void* base, MPI_Aint size, int disp_unit, int flavor) {
  void* b = NULL;
  MPI_Aint* s = NULL;
  int *d = NULL, *f = NULL, *m = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
  CHECK(flag && b == base, "MPI_WIN_BASE %p, expected %p", b, base);
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag));
  CHECK(flag && *s == size, "MPI_WIN_SIZE %lld, expected %lld", (long long)*s, (long long)size);
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &d, &flag));
  CHECK(flag && *d == disp_unit, "MPI_WIN_DISP_UNIT %d, expected %d", *d, disp_unit);
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
  CHECK(flag && *f == flavor, "MPI_WIN_CREATE_FLAVOR %d, expected %d", *f, flavor);
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag));
  CHECK(flag && *m == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d, expected MPI_WIN_UNIFIED", *m);
  MPI_Group g, wg;
  int result = -1;
  CHECK_MPI(MPI_Win_get_group(win, &g));
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  CHECK_MPI(MPI_Group_compare(g, wg, &result));
  CHECK(result == MPI_IDENT, "window group compares %d to MPI_COMM_WORLD's", result);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
}

/* Fence epoch: every rank puts its rank into slot `rank` of its right neighbour and gets slot
 * 0 of its left neighbour. */
static void ring_fence(MPI_Win win, int* mem, int slots) {
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  for (int i = 0; i < slots; ++i) mem[i] = -1;
  mem[0] = 1000 + rank;
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  int got = -7;
  CHECK_MPI(MPI_Put(&rank, 1, MPI_INT, right, 1 + rank, 1, MPI_INT, win));
  CHECK_MPI(MPI_Get(&got, 1, MPI_INT, left, 0, 1, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CHECK(got == 1000 + left, "MPI_Get under fence gave %d, expected %d", got, 1000 + left);
  CHECK(mem[1 + left] == left, "slot %d after MPI_Put holds %d, expected %d", 1 + left, mem[1 + left], left);
}

static void test_create_and_allocate(void) {
  const int slots = nranks + 1;
  int* mem = calloc((size_t)slots, sizeof(int));
  MPI_Win win;
  CHECK_MPI(MPI_Win_create(mem, (MPI_Aint)(slots * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  check_attributes(win, mem, (MPI_Aint)(slots * sizeof(int)), sizeof(int), MPI_WIN_FLAVOR_CREATE);
  ring_fence(win, mem, slots);
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_MPI(MPI_Win_get_name(win, name, &len));
  CHECK(len == 0, "a new window's name has length %d", len);
  CHECK_MPI(MPI_Win_set_name(win, "ring"));
  CHECK_MPI(MPI_Win_get_name(win, name, &len));
  CHECK(len == 4 && strcmp(name, "ring") == 0, "window name '%s'", name);
  MPI_Info info, used;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "true");
  CHECK_MPI(MPI_Win_set_info(win, info));
  CHECK_MPI(MPI_Win_get_info(win, &used));
  char value[64];
  int flag = 0;
  MPI_Info_get(used, "no_locks", 63, value, &flag);
  CHECK(flag && strcmp(value, "true") == 0, "MPI_Win_get_info no_locks '%s' (flag %d)", flag ? value : "", flag);
  MPI_Info_free(&info);
  MPI_Info_free(&used);
  CHECK_MPI(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle %d", win);
  free(mem);

  int* base = NULL;
  CHECK_MPI(MPI_Win_allocate((MPI_Aint)(slots * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  CHECK(base != NULL, "MPI_Win_allocate returned no memory");
  check_attributes(win, base, (MPI_Aint)(slots * sizeof(int)), sizeof(int), MPI_WIN_FLAVOR_ALLOCATE);
  ring_fence(win, base, slots);
  CHECK_MPI(MPI_Win_free(&win));
}

static void test_shared(void) {
  MPI_Comm node;
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int nr = 0, ns = 1;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  const MPI_Aint mine = (MPI_Aint)((nr + 1) * sizeof(double));
  double* base = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate_shared(mine, sizeof(double), MPI_INFO_NULL, node, &base, &win));
  for (int i = 0; i <= nr; ++i) base[i] = 100.0 * nr + i;
  CHECK_MPI(MPI_Win_sync(win));
  MPI_Barrier(node);
  char* prev_end = NULL;
  for (int r = 0; r < ns; ++r) {
    MPI_Aint size = -1;
    int du = -1;
    double* p = NULL;
    CHECK_MPI(MPI_Win_shared_query(win, r, &size, &du, &p));
    CHECK(size == (MPI_Aint)((r + 1) * sizeof(double)) && du == (int)sizeof(double),
          "MPI_Win_shared_query(%d): size %lld disp_unit %d", r, (long long)size, du);
    if (prev_end) CHECK((char*)p == prev_end, "rank %d's memory does not follow rank %d's (contiguous)", r, r - 1);
    prev_end = (char*)p + size;
    for (int i = 0; i <= r; ++i)
      CHECK(p[i] == 100.0 * r + i, "load from rank %d's shared memory [%d] = %g", r, i, p[i]);
  }
  /* The same memory through RMA calls. */
  double v = -1;
  int peer = (nr + 1) % ns;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
  CHECK_MPI(MPI_Get(&v, 1, MPI_DOUBLE, peer, peer, 1, MPI_DOUBLE, win));
  CHECK_MPI(MPI_Win_unlock(peer, win));
  CHECK(v == 100.0 * peer + peer, "MPI_Get from a shared window gave %g", v);
  MPI_Barrier(node);
  int flag = 0;
  void* b = NULL;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
  CHECK(b == base, "MPI_WIN_BASE of a shared window");
  int* f = NULL;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
  CHECK(*f == MPI_WIN_FLAVOR_SHARED, "flavor %d", *f);
  CHECK_MPI(MPI_Win_free(&win));
  MPI_Comm_free(&node);
}

static void test_dynamic(void) {
  MPI_Win win;
  CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  int* f = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
  CHECK(*f == MPI_WIN_FLAVOR_DYNAMIC, "flavor %d", *f);
  long* mem = calloc(4, sizeof(long));
  CHECK_MPI(MPI_Win_attach(win, mem, 4 * sizeof(long)));
  MPI_Aint addr = 0;
  MPI_Get_address(mem, &addr);
  MPI_Aint* addrs = malloc((size_t)nranks * sizeof(MPI_Aint));
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  int right = (rank + 1) % nranks;
  long val = 7 + rank, back = 0;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  CHECK_MPI(MPI_Put(&val, 1, MPI_LONG, right, addrs[right] + (MPI_Aint)sizeof(long), 1, MPI_LONG, win));
  CHECK_MPI(MPI_Win_flush(right, win));
  CHECK_MPI(MPI_Get(&back, 1, MPI_LONG, right, addrs[right] + (MPI_Aint)sizeof(long), 1, MPI_LONG, win));
  CHECK_MPI(MPI_Win_unlock(right, win));
  CHECK(back == val, "dynamic window: read back %ld, expected %ld", back, val);
  MPI_Barrier(MPI_COMM_WORLD);
  int left = (rank + nranks - 1) % nranks;
  CHECK(mem[1] == 7 + left, "dynamic window memory holds %ld, expected %d", mem[1], 7 + left);
  /* Outside every attached region: reported at the next synchronisation. */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CHECK_MPI(MPI_Put(&val, 1, MPI_LONG, right, addrs[right] + 4 * (MPI_Aint)sizeof(long), 1, MPI_LONG, win));
  int e = MPI_Win_unlock(right, win);
  int cls = -1;
  MPI_Error_class(e, &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE, "put beyond the attached memory: class %d at unlock, expected MPI_ERR_RMA_RANGE", cls);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Win_detach(win, mem));
  e = MPI_Win_detach(win, mem);
  MPI_Error_class(e, &cls);
  CHECK(cls == MPI_ERR_RMA_ATTACH, "detach twice: class %d", cls);
  CHECK_MPI(MPI_Win_free(&win));
  free(addrs);
  free(mem);
}

/* ---- derived datatypes on both sides -------------------------------------------------- */
static void test_datatypes(void) {
  enum { N = 6 };
  int* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(3 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < 3 * N; ++i) mem[i] = -1;
  MPI_Datatype every_third, pairs;
  MPI_Type_vector(N, 1, 3, MPI_INT, &every_third); /* target: N ints at stride 3 */
  MPI_Type_commit(&every_third);
  MPI_Type_vector(N / 2, 2, 4, MPI_INT, &pairs); /* origin: pairs of ints at stride 4 */
  MPI_Type_commit(&pairs);
  int src[2 * N];
  for (int i = 0; i < 2 * N; ++i) src[i] = 10 * rank + i;
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK_MPI(MPI_Put(src, 1, pairs, right, 1, 1, every_third, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  int expect_idx[N] = {0, 1, 4, 5, 8, 9};
  for (int k = 0; k < N; ++k)
    CHECK(mem[1 + 3 * k] == 10 * left + expect_idx[k], "vector put: mem[%d] = %d, expected %d", 1 + 3 * k,
          mem[1 + 3 * k], 10 * left + expect_idx[k]);
  CHECK(mem[0] == -1 && mem[2] == -1, "vector put wrote into the gaps");
  /* Get it back the other way: strided target into contiguous origin, then accumulate with a
   * derived target type. */
  int back[N];
  CHECK_MPI(MPI_Get(back, N, MPI_INT, right, 1, 1, every_third, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  for (int k = 0; k < N; ++k)
    CHECK(back[k] == 10 * rank + expect_idx[k], "vector get: [%d] = %d", k, back[k]);
  int ones[N];
  for (int k = 0; k < N; ++k) ones[k] = 1;
  CHECK_MPI(MPI_Accumulate(ones, N, MPI_INT, right, 1, 1, every_third, MPI_SUM, win));
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  for (int k = 0; k < N; ++k)
    CHECK(mem[1 + 3 * k] == 10 * left + expect_idx[k] + 1, "vector accumulate: mem[%d] = %d", 1 + 3 * k,
          mem[1 + 3 * k]);
  MPI_Type_free(&every_third);
  MPI_Type_free(&pairs);
  CHECK_MPI(MPI_Win_free(&win));
}

/* Transfers large enough to travel as messages of their own, contiguous and strided on
 * either side, under lock and under fence. */
static void test_large(void) {
  enum { N = 20000 };
  double* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(2 * N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < 2 * N; ++i) mem[i] = -1;
  double* src = malloc(2 * N * sizeof(double));
  double* back = malloc(2 * N * sizeof(double));
  for (int i = 0; i < 2 * N; ++i) src[i] = rank * 1e6 + i;
  MPI_Datatype strided;
  MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &strided);
  MPI_Type_commit(&strided);
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  CHECK_MPI(MPI_Put(src, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win));      /* contiguous both */
  CHECK_MPI(MPI_Put(src, 1, strided, right, N, N, MPI_DOUBLE, win));         /* strided origin */
  CHECK_MPI(MPI_Win_flush(right, win));
  CHECK_MPI(MPI_Get(back, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win));
  CHECK_MPI(MPI_Get(back + N, N, MPI_DOUBLE, right, 0, 1, strided, win));    /* strided target */
  CHECK_MPI(MPI_Win_unlock(right, win));
  int bad = 0;
  for (int i = 0; i < N; ++i)
    if (back[i] != rank * 1e6 + i) ++bad;
  CHECK(bad == 0, "large contiguous get back: %d wrong elements", bad);
  /* back[N + i] is target element 2i: the contiguous put's below N, the strided put's
   * (src[2 (2i - N)]) from N on. */
  bad = 0;
  for (int i = 0; i < N; ++i) {
    const int j = 2 * i;
    double want = rank * 1e6 + (j < N ? j : 2.0 * (j - N));
    if (back[N + i] != want) ++bad;
  }
  CHECK(bad == 0, "large strided put/get: %d wrong elements", bad);
  MPI_Barrier(MPI_COMM_WORLD);
  bad = 0;
  for (int i = 0; i < N; ++i)
    if (mem[i] != left * 1e6 + i || mem[N + i] != left * 1e6 + 2.0 * i) ++bad;
  CHECK(bad == 0, "large puts landed wrong: %d elements", bad);
  /* The same under fence, strided into strided. */
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK_MPI(MPI_Put(src, 1, strided, right, 1, 1, strided, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  bad = 0;
  for (int i = 0; i < N; ++i)
    if (mem[1 + 2 * i] != left * 1e6 + 2.0 * i) ++bad;
  CHECK(bad == 0, "strided-to-strided large put under fence: %d wrong elements", bad);
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  MPI_Type_free(&strided);
  free(src);
  free(back);
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- accumulate operations and atomicity ---------------------------------------------- */
static void test_accumulate(void) {
  enum { ROUNDS = 50 };
  long long* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < 4; ++i) mem[i] = 0;
  mem[2] = 1000;
  MPI_Barrier(MPI_COMM_WORLD);
  /* Every rank: ROUNDS accumulates and ROUNDS fetch-and-adds on rank 0's counters, under a
   * shared lock, concurrently. */
  int* tickets = malloc(ROUNDS * sizeof(int));
  long long one = 1;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  for (int i = 0; i < ROUNDS; ++i) {
    long long old = -1;
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 1, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    tickets[i] = (int)old;
  }
  long long mx = rank;
  CHECK_MPI(MPI_Accumulate(&mx, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, MPI_MIN, win));
  CHECK_MPI(MPI_Accumulate(&mx, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, MPI_MAX, win));
  CHECK_MPI(MPI_Win_unlock(0, win));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK(mem[0] == (long long)ROUNDS * nranks, "accumulate counter %lld, expected %lld", mem[0],
          (long long)ROUNDS * nranks);
    CHECK(mem[1] == (long long)ROUNDS * nranks, "fetch_and_op counter %lld, expected %lld", mem[1],
          (long long)ROUNDS * nranks);
    CHECK(mem[2] == 0 && mem[3] == nranks - 1, "MPI_MIN/MPI_MAX gave %lld %lld", mem[2], mem[3]);
  }
  int* all = rank == 0 ? malloc((size_t)nranks * ROUNDS * sizeof(int)) : NULL;
  MPI_Gather(tickets, ROUNDS, MPI_INT, all, ROUNDS, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    qsort(all, (size_t)nranks * ROUNDS, sizeof(int), cmp_int);
    int distinct = 1;
    for (int i = 0; i < nranks * ROUNDS; ++i)
      if (all[i] != i) distinct = 0;
    CHECK(distinct, "fetched tickets are not exactly 0..%d (atomicity)", nranks * ROUNDS - 1);
    free(all);
  }
  free(tickets);

  /* Get_accumulate with MPI_REPLACE and MPI_NO_OP, compare-and-swap, exclusive lock. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) mem[3] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  long long mine = rank, seen = -5, cur = -5;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
  CHECK_MPI(MPI_Get_accumulate(&mine, 1, MPI_LONG_LONG, &seen, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, MPI_REPLACE,
                               win));
  CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &cur, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, MPI_NO_OP, win));
  CHECK_MPI(MPI_Win_unlock(0, win));
  CHECK(cur == rank, "MPI_NO_OP read %lld after MPI_REPLACE of %d under an exclusive lock", cur, rank);
  CHECK(seen >= -1 && seen < nranks, "MPI_Get_accumulate returned %lld", seen);
  /* One rank wins the CAS on a -1 slot; everybody sees a consistent old value. */
  long long cmp = -1, res = -9, me = rank;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  CHECK_MPI(MPI_Compare_and_swap(&me, &cmp, &res, MPI_LONG_LONG, 0, 3, win));
  CHECK_MPI(MPI_Win_unlock(0, win));
  int won = res == -1, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(winners == 1, "%d ranks won the compare-and-swap", winners);
  if (rank == 0) CHECK(mem[3] >= 0 && mem[3] < nranks, "CAS slot holds %lld", mem[3]);

  /* Request-based forms. */
  MPI_Barrier(MPI_COMM_WORLD);
  int right = (rank + 1) % nranks;
  long long put = 40 + rank, got = 0, racc = 2, rgot = 0;
  MPI_Request reqs[4];
  CHECK_MPI(MPI_Win_lock_all(0, win));
  CHECK_MPI(MPI_Rput(&put, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win, &reqs[0]));
  CHECK_MPI(MPI_Win_flush(right, win));
  CHECK_MPI(MPI_Rget(&got, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win, &reqs[1]));
  /* A get and an accumulate on one location conflict until the get completes (MPI-3.1 11.7);
   * only accumulates among themselves are ordered. */
  CHECK_MPI(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Raccumulate(&racc, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, MPI_PROD, win, &reqs[2]));
  CHECK_MPI(MPI_Rget_accumulate(NULL, 0, MPI_LONG_LONG, &rgot, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, MPI_NO_OP,
                                win, &reqs[3]));
  CHECK_MPI(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
  CHECK_MPI(MPI_Win_flush_local_all(win));
  CHECK_MPI(MPI_Win_flush_all(win));
  CHECK_MPI(MPI_Win_unlock_all(win));
  CHECK(got == 40 + rank && rgot == 2 * (40 + rank), "MPI_Rget %lld, MPI_Rget_accumulate %lld (ordered after PROD)",
        got, rgot);
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- many small operations before one synchronisation ------------------------------------- */
/* On the message path small puts and accumulates wait for a batch (a request that must go now,
 * a synchronisation, or 8 KiB held): 1500 accumulates and 15 puts to the right neighbour,
 * batched many times over, then a get_accumulate, which must see every accumulate before it
 * (MPI's accumulate ordering), a large accumulate and a large put (messages of their own, after
 * what was held), all checked at the target after the epoch. */
static void test_held_requests(void) {
  enum { N = 2048, ACCS = 1500, BIG = 512 };
  long long* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(N * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < N; ++i) mem[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  long long one = 1, seen = -1, seen_big = -1, big[BIG];
  for (int i = 0; i < BIG; ++i) big[i] = 1;
  CHECK_MPI(MPI_Win_lock_all(0, win));
  for (int i = 0; i < ACCS; ++i) {
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
    if (i % 100 == 0) {
      long long v = 1000 + i;
      CHECK_MPI(MPI_Put(&v, 1, MPI_LONG_LONG, right, 1 + i / 100, 1, MPI_LONG_LONG, win));
    }
  }
  CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &seen, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, MPI_NO_OP,
                               win));
  CHECK_MPI(MPI_Accumulate(big, BIG, MPI_LONG_LONG, right, BIG, BIG, MPI_LONG_LONG, MPI_SUM, win));
  CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &seen_big, 1, MPI_LONG_LONG, right, 2 * BIG - 1, 1,
                               MPI_LONG_LONG, MPI_NO_OP, win));
  for (int i = 0; i < BIG; ++i) big[i] = 7 + i;
  CHECK_MPI(MPI_Put(big, BIG, MPI_LONG_LONG, right, 2 * BIG, BIG, MPI_LONG_LONG, win));
  CHECK_MPI(MPI_Win_flush(right, win));
  CHECK(seen == ACCS, "get_accumulate after %d held accumulates read %lld", ACCS, seen);
  CHECK(seen_big == 1, "get_accumulate after a large accumulate read %lld", seen_big);
  CHECK_MPI(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(mem[0] == ACCS, "rank %d's counter %lld after %d accumulates from rank %d", rank, mem[0], ACCS, left);
  for (int i = 0; i < ACCS; i += 100)
    CHECK(mem[1 + i / 100] == 1000 + i, "held put %d landed as %lld", i / 100, mem[1 + i / 100]);
  int big_ok = 1;
  for (int i = 0; i < BIG; ++i)
    if (mem[BIG + i] != 1 || mem[2 * BIG + i] != 7 + i) big_ok = 0;
  CHECK(big_ok, "the large accumulate or put after held requests is wrong");
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- post/start/complete/wait ------------------------------------------------------------ */
/* A window of two ints per rank: created over `own` (MPI_Win_create: on one node the
 * single-copy path), else allocated (MPI_Win_allocate: on one node the direct path); *mem is
 * this rank's part. */
/* created: a window over `own` (MPI_Win_create), else MPI_Win_allocate's; *mem: its memory. */
static MPI_Win window_of(int created, void* own, MPI_Aint bytes, int disp_unit, void* mem) {
  MPI_Win win = MPI_WIN_NULL;
  if (created) {
    *(void**)mem = own;
    CHECK_MPI(MPI_Win_create(own, bytes, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  } else {
    CHECK_MPI(MPI_Win_allocate(bytes, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, mem, &win));
  }
  return win;
}

static MPI_Win two_int_window(int created, int* own, int** mem) {
  return window_of(created, own, 2 * sizeof(int), sizeof(int), mem);
}

/* The window's value of info `key` into value[size] ("" when unset); whether it is set. */
static int win_info(MPI_Win win, const char* key, char* value, int size) {
  MPI_Info used;
  int flag = 0;
  value[0] = '\0';
  CHECK_MPI(MPI_Win_get_info(win, &used));
  MPI_Info_get(used, key, size - 1, value, &flag);
  MPI_Info_free(&used);
  return flag;
}

/* A harness that sets environment variable `var` requires info `key` to say that. */
static void check_info_wanted(MPI_Win win, int created, const char* key, const char* var) {
  char value[64];
  const int flag = win_info(win, key, value, sizeof value);
  const char* want = getenv(var);
  if (want && *want)
    CHECK(flag && strcmp(value, want) == 0, "window by %s: %s '%s', expected '%s' (%s)",
          created ? "MPI_Win_create" : "MPI_Win_allocate", key, value, want, var);
}

/* created: an MPI_Win_create window (on one node the single-copy path, its PSCW counters in the
 * control segment); else MPI_Win_allocate (on one node the direct path). */
static void test_pscw(int created) {
  int own[2];
  int* mem = NULL;
  MPI_Win win = two_int_window(created, own, &mem);
  mem[0] = mem[1] = -1;
  MPI_Group world, to, from;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  MPI_Group_incl(world, 1, &right, &to);
  MPI_Group_incl(world, 1, &left, &from);
  for (int round = 0; round < 3; ++round) {
    int v = 100 * round + rank;
    CHECK_MPI(MPI_Win_post(from, 0, win));
    CHECK_MPI(MPI_Win_start(to, 0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Accumulate(&v, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_REPLACE, win));
    CHECK_MPI(MPI_Win_complete(win));
    if (round == 1) {
      int flag = 0;
      while (!flag) CHECK_MPI(MPI_Win_test(win, &flag));
    } else {
      CHECK_MPI(MPI_Win_wait(win));
    }
    CHECK(mem[0] == 100 * round + left && mem[1] == mem[0], "PSCW round %d: %d %d, expected %d", round, mem[0], mem[1],
          100 * round + left);
  }
  MPI_Group_free(&to);
  MPI_Group_free(&from);
  MPI_Group_free(&world);
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- passive target while the target is in MPI_Barrier ----------------------------------- */
static void test_passive_in_barrier(void) {
  int* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  *mem = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int target = nranks - 1;
  if (rank == 0) {
    int v = 4242, back = 0;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Get(&back, 1, MPI_INT, target, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    CHECK(back == 4242, "passive get gave %d", back);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* the target waits here while rank 0 works on its memory */
  if (rank == target) CHECK(*mem == 4242, "target memory %d after the passive epoch", *mem);
  CHECK_MPI(MPI_Win_free(&win));
}

static int ranks_on_my_node(void) {
  MPI_Comm node;
  int n = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

/* ---- passive target while the target computes outside MPI --------------------------------- */
/* The target spins on its own window memory and calls no MPI function until the origins' locked
 * accumulates and put have landed (or 30 s, the hang guard). On one node the origin does all the
 * work itself: MPI_Win_allocate maps one segment (the direct path), MPI_Win_create windows are
 * read and written with process_vm_readv/writev (the single-copy path). Elsewhere (across nodes,
 * or single copy refused) the target's progress thread serves the lock, accumulate, put and unlock
 * requests while it computes; with XMSG_PROGRESS_THREAD=off only a target inside MPI serves them,
 * and the check is not made. */
static void test_passive_while_target_computes(int created) {
  if (nranks < 2) return;
  int own[2];
  int* mem = NULL;
  MPI_Win win = two_int_window(created, own, &mem);
  MPI_Info used;
  char path[64] = "";
  int flag = 0;
  CHECK_MPI(MPI_Win_get_info(win, &used));
  MPI_Info_get(used, "xmsg_rma_path", sizeof path - 1, path, &flag);
  MPI_Info_free(&used);
  const int one_node = ranks_on_my_node() == nranks;
  const char* expected = !one_node ? (strcmp(path, "remote") == 0 ? "remote" : "messages")
                         : !created ? "direct"
                                    : (strcmp(path, "messages") == 0 ? "messages" : "single_copy");
  CHECK(flag && strcmp(path, expected) == 0, "window by %s: xmsg_rma_path '%s', expected '%s'",
        created ? "MPI_Win_create" : "MPI_Win_allocate", path, expected);
  if (progress_thread_off() && (strcmp(path, "messages") == 0 || strcmp(path, "remote") == 0)) {
    if (rank == 0) printf("rma: passive target while the target computes: not checked on the %s path "
                          "(XMSG_PROGRESS_THREAD=off)\n", path);
    CHECK_MPI(MPI_Win_free(&win));
    return;
  }
  mem[0] = mem[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int target = nranks - 1;
  if (rank == target) {
    /* Computing: no MPI call until the origins' values are there (or 30 s, the hang guard). */
    const double give_up = MPI_Wtime() + 30.0;
    volatile int* seen = mem;
    while ((seen[0] != nranks - 1 || seen[1] != 7) && MPI_Wtime() < give_up) {
    }
    CHECK(seen[0] == nranks - 1 && seen[1] == 7,
          "the origins' locked puts and accumulates (%d of %d, flag %d) did not reach a target computing outside MPI "
          "(window by %s)",
          seen[0], nranks - 1, seen[1], created ? "MPI_Win_create" : "MPI_Win_allocate");
  } else {
    const int one = 1, seven = 7;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, target, 0, 1, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Put(&seven, 1, MPI_INT, target, 1, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- the remote path across nodes -------------------------------------------------------- */
/* Across nodes, puts and gets to ranks a transport reaches one-sidedly (RDMA WRITE/READ over
 * verbs, CMA between the ranks of one node) are that transport's remote writes and reads, one per
 * contiguous run of the target datatype; MPI_Win_get_info says so (xmsg_rma_path "remote",
 * xmsg_rma_remote the transports in use). A harness names the transport it expects in
 * XMSG_TEST_RMA_REMOTE ("verbs" in the soft-RoCE guest), so a silent fall back to messages
 * fails there. Strided data at the target and at the origin, under fence, lock_all + flush and
 * an exclusive lock, for created and allocated windows. */
static void test_remote_path(int created) {
  const int node_size = ranks_on_my_node();
  if (node_size == nranks) return; /* one node: the direct and single-copy paths */
  enum { kInts = 64 };
  int own[kInts];
  int* mem = NULL;
  MPI_Win win = window_of(created, own, sizeof own, sizeof(int), &mem);
  char path[64], via[64];
  win_info(win, "xmsg_rma_path", path, sizeof path);
  const int via_flag = win_info(win, "xmsg_rma_remote", via, sizeof via);
  const char* want = getenv("XMSG_TEST_RMA_REMOTE");
  if (want && *want)
    CHECK(strcmp(path, "remote") == 0 && via_flag && strstr(via, want) != NULL,
          "window by %s across nodes: xmsg_rma_path '%s', xmsg_rma_remote '%s' (expected remote over %s)",
          created ? "MPI_Win_create" : "MPI_Win_allocate", path, via, want);
  else
    CHECK(strcmp(path, "remote") == 0 || strcmp(path, "messages") == 0, "window across nodes: xmsg_rma_path '%s'",
          path);
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  const int ll = (rank + 2 * nranks - 2) % nranks;
  MPI_Datatype pairs; /* 8 pairs of ints, a stride of 4 ints: 16 ints over 30 */
  MPI_Type_vector(8, 2, 4, MPI_INT, &pairs);
  MPI_Type_commit(&pairs);
  for (int i = 0; i < kInts; ++i) mem[i] = -1;
  int src[16], got[16];
  for (int i = 0; i < 16; ++i) src[i] = rank * 1000 + i;
  CHECK_MPI(MPI_Win_fence(0, win));
  /* Contiguous origin, strided target: one remote write per pair. */
  CHECK_MPI(MPI_Put(src, 16, MPI_INT, right, 0, 1, pairs, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  for (int b = 0; b < 8; ++b) {
    CHECK(mem[4 * b] == left * 1000 + 2 * b && mem[4 * b + 1] == left * 1000 + 2 * b + 1,
          "fence put: pair %d is %d,%d (from rank %d)", b, mem[4 * b], mem[4 * b + 1], left);
    CHECK(mem[4 * b + 2] == -1 && mem[4 * b + 3] == -1, "fence put wrote between the pairs (pair %d)", b);
  }
  /* Strided get from the left neighbour, whose memory holds rank ll's values. */
  CHECK_MPI(MPI_Win_lock_all(0, win));
  for (int i = 0; i < 16; ++i) got[i] = -7;
  CHECK_MPI(MPI_Get(got, 16, MPI_INT, left, 0, 1, pairs, win));
  CHECK_MPI(MPI_Win_flush(left, win));
  for (int i = 0; i < 16; ++i) CHECK(got[i] == ll * 1000 + i, "lock_all get: int %d is %d, expected %d", i, got[i], ll * 1000 + i);
  CHECK_MPI(MPI_Win_unlock_all(win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  /* Strided origin (packed first), contiguous target, under an exclusive lock. */
  int spread[32];
  for (int i = 0; i < 32; ++i) spread[i] = (i % 4 < 2) ? rank * 100 + i : -5;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  CHECK_MPI(MPI_Put(spread, 1, pairs, right, 40, 16, MPI_INT, win));
  CHECK_MPI(MPI_Win_unlock(right, win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
  for (int k = 0; k < 16; ++k) {
    const int i = (k / 2) * 4 + k % 2;
    CHECK(mem[40 + k] == left * 100 + i, "locked put of a strided origin: int %d is %d, expected %d", 40 + k,
          mem[40 + k], left * 100 + i);
  }
  CHECK_MPI(MPI_Win_unlock(rank, win));
  MPI_Type_free(&pairs);
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- accumulates on 64-bit integers, every rank on one location -------------------------
 * Where every rank reaches every rank with device atomics (verbs in the soft-RoCE guest), these
 * are the HCA's fetch-and-add and compare-and-swap, the target's own included; elsewhere the
 * target's service or the direct paths apply them. Either way they must be atomic against each
 * other: every rank, the target too, takes tickets with MPI_Fetch_and_op (all distinct, exact
 * total), adds by a compare-and-swap loop, raises a maximum (MPI_MAX: read, compare-and-swap),
 * swaps values in with MPI_Get_accumulate(MPI_REPLACE) (the values fetched and the last one
 * are exactly those put and the first), adds a strided vector of three, and adds to an aligned
 * and an unaligned element in one call (a device takes only the first, the target the other).
 * The window says who applied them (xmsg_rma_atomics); XMSG_TEST_RMA_ATOMICS names what it must
 * say. */
static int cmp_i64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

static void test_int64_atomics(int created) {
  enum { kRounds = 40, kSlots = 16 };
  const int target = nranks - 1;
  int64_t own[kSlots];
  int64_t* mem = NULL;
  MPI_Win win = window_of(created, own, sizeof own, sizeof(int64_t), &mem);
  check_info_wanted(win, created, "xmsg_rma_atomics", "XMSG_TEST_RMA_ATOMICS");
  CHECK_MPI(MPI_Win_fence(0, win));
  for (int i = 0; i < kSlots; ++i) mem[i] = 0;
  if (rank == target) mem[3] = -1; /* the value the first swap takes out */
  CHECK_MPI(MPI_Win_fence(0, win));

  int64_t tickets[kRounds], swapped[kRounds], put[kRounds];
  const int64_t one = 1;
  CHECK_MPI(MPI_Win_lock_all(0, win));
  for (int i = 0; i < kRounds; ++i) {
    CHECK_MPI(MPI_Fetch_and_op(&one, &tickets[i], MPI_INT64_T, target, 0, MPI_SUM, win));
    int64_t seen = 0, old = -1;
    CHECK_MPI(MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, target, 1, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    for (;;) {
      const int64_t next = seen + 1;
      CHECK_MPI(MPI_Compare_and_swap(&next, &seen, &old, MPI_INT64_T, target, 1, win));
      CHECK_MPI(MPI_Win_flush(target, win));
      if (old == seen) break;
      seen = old;
    }
    const int64_t mine = (int64_t)rank * 1000 + i;
    CHECK_MPI(MPI_Accumulate(&mine, 1, MPI_INT64_T, target, 2, 1, MPI_INT64_T, MPI_MAX, win));
    put[i] = (int64_t)rank * 1000000 + i;
    CHECK_MPI(MPI_Get_accumulate(&put[i], 1, MPI_INT64_T, &swapped[i], 1, MPI_INT64_T, target, 3, 1, MPI_INT64_T,
                                 MPI_REPLACE, win));
    const int64_t three[3] = {1, 10, 100};
    MPI_Datatype every_other;
    MPI_Type_vector(3, 1, 2, MPI_INT64_T, &every_other);
    MPI_Type_commit(&every_other);
    CHECK_MPI(MPI_Accumulate(three, 3, MPI_INT64_T, target, 4, 1, every_other, MPI_SUM, win));
    MPI_Type_free(&every_other);
    /* One call, two elements: slot 9 (aligned) and the 8 bytes at 84 (slots 10-11, not aligned,
     * which a device cannot take), while every rank also adds to slot 9 by MPI_Fetch_and_op. */
    int lengths[2] = {1, 1};
    MPI_Aint at[2] = {9 * 8, 84};
    MPI_Datatype split;
    MPI_Type_create_hindexed(2, lengths, at, MPI_INT64_T, &split);
    MPI_Type_commit(&split);
    const int64_t ones[2] = {1, 1};
    int64_t ignored = 0;
    CHECK_MPI(MPI_Accumulate(ones, 2, MPI_INT64_T, target, 0, 1, split, MPI_SUM, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &ignored, MPI_INT64_T, target, 9, MPI_SUM, win));
    MPI_Type_free(&split);
    CHECK_MPI(MPI_Win_flush(target, win));
  }
  CHECK_MPI(MPI_Win_unlock_all(win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  const int64_t total = (int64_t)nranks * kRounds;
  int64_t* all_tickets = malloc(sizeof(int64_t) * (size_t)total);
  int64_t* all_swapped = malloc(sizeof(int64_t) * (size_t)(total + 1));
  int64_t* all_put = malloc(sizeof(int64_t) * (size_t)(total + 1));
  CHECK_MPI(MPI_Gather(tickets, kRounds, MPI_INT64_T, all_tickets, kRounds, MPI_INT64_T, target, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Gather(swapped, kRounds, MPI_INT64_T, all_swapped, kRounds, MPI_INT64_T, target, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Gather(put, kRounds, MPI_INT64_T, all_put, kRounds, MPI_INT64_T, target, MPI_COMM_WORLD));
  if (rank == target) {
    CHECK(mem[0] == total, "MPI_Fetch_and_op(MPI_SUM) counter %lld, expected %lld", (long long)mem[0],
          (long long)total);
    qsort(all_tickets, (size_t)total, sizeof(int64_t), cmp_i64);
    for (int64_t i = 0; i < total; ++i)
      if (all_tickets[i] != i) {
        CHECK(0, "tickets from MPI_Fetch_and_op: the %lldth smallest is %lld (a ticket taken twice or lost)",
              (long long)i, (long long)all_tickets[i]);
        break;
      }
    CHECK(mem[1] == total, "compare-and-swap counter %lld, expected %lld", (long long)mem[1], (long long)total);
    const int64_t max = (int64_t)(nranks - 1) * 1000 + kRounds - 1;
    CHECK(mem[2] == max, "MPI_MAX holds %lld, expected %lld", (long long)mem[2], (long long)max);
    all_swapped[total] = mem[3];
    all_put[total] = -1;
    qsort(all_swapped, (size_t)total + 1, sizeof(int64_t), cmp_i64);
    qsort(all_put, (size_t)total + 1, sizeof(int64_t), cmp_i64);
    CHECK(memcmp(all_swapped, all_put, sizeof(int64_t) * (size_t)(total + 1)) == 0,
          "MPI_REPLACE swaps: the values fetched plus the last are not the values put plus the first");
    CHECK(mem[4] == total && mem[5] == 0 && mem[6] == 10 * total && mem[7] == 0 && mem[8] == 100 * total,
          "strided MPI_SUM: %lld %lld %lld %lld %lld, expected %lld 0 %lld 0 %lld", (long long)mem[4],
          (long long)mem[5], (long long)mem[6], (long long)mem[7], (long long)mem[8], (long long)total,
          (long long)(10 * total), (long long)(100 * total));
    int64_t unaligned = 0;
    memcpy(&unaligned, (const char*)mem + 84, sizeof unaligned);
    CHECK(mem[9] == 2 * total && unaligned == total,
          "an aligned and an unaligned element in one MPI_Accumulate: %lld and %lld, expected %lld and %lld",
          (long long)mem[9], (long long)unaligned, (long long)(2 * total), (long long)total);
  }
  free(all_tickets);
  free(all_swapped);
  free(all_put);
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- passive-target locks: mutual exclusion, and a target computing outside MPI ----------
 * Every rank, the target too, increments a counter by get + put under an exclusive lock (not
 * atomic: only the lock keeps the total exact) and by MPI_Fetch_and_op under a shared lock.
 * Then the target computes outside MPI while the others lock, add (64-bit MPI_Fetch_and_op) and
 * put: on the direct and single-copy paths (locks in the window's segment, xmsg_rma_locks
 * "segment") and with device locks and atomics over verbs ("device") nothing of that needs the
 * target, so it is checked even with XMSG_PROGRESS_THREAD=off; elsewhere only with the progress
 * thread. XMSG_TEST_RMA_LOCKS names what xmsg_rma_locks must say. */
static void test_locks_int64(int created) {
  enum { kRounds = 20, kSlots = 4 };
  const int target = nranks - 1;
  int64_t own[kSlots];
  int64_t* mem = NULL;
  MPI_Win win = window_of(created, own, sizeof own, sizeof(int64_t), &mem);
  char locks[32], atomics[32];
  win_info(win, "xmsg_rma_locks", locks, sizeof locks);
  win_info(win, "xmsg_rma_atomics", atomics, sizeof atomics);
  check_info_wanted(win, created, "xmsg_rma_locks", "XMSG_TEST_RMA_LOCKS");
  CHECK_MPI(MPI_Win_fence(0, win));
  for (int i = 0; i < kSlots; ++i) mem[i] = 0;
  CHECK_MPI(MPI_Win_fence(0, win));
  const int64_t one = 1;
  for (int i = 0; i < kRounds; ++i) {
    int64_t v = -1, old = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Get(&v, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    ++v;
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 1, MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == target) {
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK(mem[0] == (int64_t)nranks * kRounds, "get + put under exclusive locks: counter %lld, expected %lld",
          (long long)mem[0], (long long)nranks * kRounds);
    CHECK(mem[1] == (int64_t)nranks * kRounds, "MPI_Fetch_and_op under shared locks: counter %lld, expected %lld",
          (long long)mem[1], (long long)nranks * kRounds);
    CHECK_MPI(MPI_Win_unlock(target, win));
  }
  const int needs_nothing =
      strcmp(locks, "segment") == 0 || (strcmp(locks, "device") == 0 && strcmp(atomics, "device") == 0);
  if (nranks < 2 || (progress_thread_off() && !needs_nothing)) {
    if (rank == 0 && nranks > 1)
      printf("rma: locks while the target computes: not checked with locks '%s' (XMSG_PROGRESS_THREAD=off)\n", locks);
    CHECK_MPI(MPI_Win_free(&win));
    return;
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == target) {
    /* Computing: no MPI call until the origins' values are there (or 30 s, the hang guard). */
    const double give_up = MPI_Wtime() + 30.0;
    volatile int64_t* seen = mem;
    while ((seen[2] != nranks - 1 || seen[3] != 7) && MPI_Wtime() < give_up) {
    }
    CHECK(seen[2] == nranks - 1 && seen[3] == 7,
          "locked 64-bit adds and a put (%lld of %d, flag %lld) did not reach a target computing outside MPI "
          "(window by %s, locks '%s', atomics '%s')",
          (long long)seen[2], nranks - 1, (long long)seen[3], created ? "MPI_Win_create" : "MPI_Win_allocate", locks,
          atomics);
  } else {
    const int64_t seven = 7;
    int64_t old = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 2, MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Put(&seven, 1, MPI_INT64_T, target, 3, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Win_free(&win));
}

/* ---- errors --------------------------------------------------------------------------------- */
static void expect_class(int code, int cls, const char* what) {
  int c = -1;
  MPI_Error_class(code, &c);
  CHECK(c == cls, "%s: error class %d, expected %d", what, c, cls);
}

static void user_fn(void* in, void* inout, int* len, MPI_Datatype* d) {
  (void)in, (void)inout, (void)len, (void)d;
}

static void test_errors(void) {
  int* mem = NULL;
  MPI_Win win;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_MPI(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MPI_Errhandler eh;
  CHECK_MPI(MPI_Win_get_errhandler(win, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler %d", eh);
  int v = 1, right = (rank + 1) % nranks;
  expect_class(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put outside an epoch");
  expect_class(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC, "unlock without lock");
  expect_class(MPI_Win_lock(77, right, 0, win), MPI_ERR_LOCKTYPE, "bad lock type");
  expect_class(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOPRECEDE, win), MPI_ERR_ASSERT, "bad lock assert");
  expect_class(MPI_Win_fence(1 << 12, win), MPI_ERR_ASSERT, "bad fence assert");
  expect_class(MPI_Win_lock(MPI_LOCK_SHARED, nranks, 0, win), MPI_ERR_RANK, "lock rank out of range");
  expect_class(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC, "flush outside a lock epoch");
  expect_class(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "complete without start");
  expect_class(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "wait without post");
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  expect_class(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC, "lock twice");
  expect_class(MPI_Put(&v, 1, MPI_INT, right, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "put past the window end");
  expect_class(MPI_Get(&v, 2, MPI_INT, right, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE, "get across the window end");
  expect_class(MPI_Put(&v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP, "negative displacement");
  expect_class(MPI_Put(&v, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT, "negative count");
  expect_class(MPI_Put(&v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE, "null datatype");
  expect_class(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_DOUBLE, win), MPI_ERR_TYPE, "signature mismatch");
  MPI_Op op;
  MPI_Op_create(user_fn, 1, &op);
  expect_class(MPI_Accumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, op, win), MPI_ERR_OP, "accumulate with a user op");
  MPI_Op_free(&op);
  expect_class(MPI_Accumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win), MPI_ERR_OP,
               "MPI_Accumulate with MPI_NO_OP");
  double d = 1.0;
  expect_class(MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BXOR, win), MPI_ERR_OP,
               "MPI_BXOR on doubles");
  MPI_Datatype s;
  int bl[2] = {1, 1};
  MPI_Aint dp[2] = {0, 8};
  MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, dp, ts, &s);
  MPI_Type_commit(&s);
  expect_class(MPI_Accumulate(mem, 1, s, right, 0, 1, s, MPI_SUM, win), MPI_ERR_TYPE, "accumulate on a mixed struct");
  MPI_Type_free(&s);
  CHECK_MPI(MPI_Win_unlock(right, win));
  expect_class(MPI_Win_shared_query(win, 0, NULL, NULL, NULL), MPI_ERR_RMA_FLAVOR, "shared_query on an allocate window");
  expect_class(MPI_Win_attach(win, mem, 4), MPI_ERR_RMA_FLAVOR, "attach to a non-dynamic window");
  expect_class(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN, "put on MPI_WIN_NULL");
  expect_class(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN, "fence on MPI_WIN_NULL");
  MPI_Win bogus = 12345;
  expect_class(MPI_Win_free(&bogus), MPI_ERR_WIN, "free of a bogus handle");
  /* The job goes on: the window still works. */
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK_MPI(MPI_Put(&right, 1, MPI_INT, right, 0, 1, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(mem[0] == rank, "put after the errors: %d", mem[0]);
  CHECK_MPI(MPI_Win_free(&win));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- user error handlers and keyvals ---------------------------------------------------- */
static int eh_calls = 0, eh_code = MPI_SUCCESS;
static MPI_Win eh_win = MPI_WIN_NULL;

static void win_handler(MPI_Win* win, int* code, ...) {
  ++eh_calls;
  eh_win = *win;
  eh_code = *code;
}

static int deletes = 0;
static int count_delete(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win, (void)keyval, (void)value, (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

static void comm_handler(MPI_Comm* comm, int* code, ...) { (void)comm, (void)code; }

static void test_user_handlers(void) {
  int* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  MPI_Errhandler eh;
  CHECK_MPI(MPI_Win_create_errhandler(win_handler, &eh));
  CHECK_MPI(MPI_Win_set_errhandler(win, eh));
  MPI_Errhandler got;
  CHECK_MPI(MPI_Win_get_errhandler(win, &got));
  CHECK(got == eh, "MPI_Win_get_errhandler %d, expected %d", got, eh);
  int v = 1, right = (rank + 1) % nranks;
  /* An operation outside an epoch: the handler runs with the window and the code, then the
   * call returns that code and the job goes on. */
  int rc = MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
  CHECK(eh_calls == 1, "user window error handler ran %d times, expected 1", eh_calls);
  CHECK(eh_win == win, "user window error handler got window %d, expected %d", (int)eh_win, (int)win);
  expect_class(eh_code, MPI_ERR_RMA_SYNC, "code passed to the user window error handler");
  expect_class(rc, MPI_ERR_RMA_SYNC, "MPI_Put outside an epoch, user handler");
  CHECK_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
  CHECK(eh_calls == 2 && eh_code == MPI_ERR_OTHER, "MPI_Win_call_errhandler: %d calls, code %d", eh_calls,
        eh_code);
  /* A communicator handler is not a window handler. */
  MPI_Errhandler ceh;
  CHECK_MPI(MPI_Comm_create_errhandler(comm_handler, &ceh));
  expect_class(MPI_Win_set_errhandler(win, ceh), MPI_ERR_ARG, "MPI_Win_set_errhandler with a communicator handler");
  CHECK(eh_calls == 3, "the refused MPI_Win_set_errhandler went to the user handler (%d calls)", eh_calls);
  MPI_Errhandler_free(&ceh);
  CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MPI_Errhandler_free(&eh);

  /* Keyvals: MPI_ERR_KEYVAL for one never made, a communicator keyval and a freed one. */
  int comm_key = MPI_KEYVAL_INVALID, win_key = MPI_KEYVAL_INVALID;
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_key, NULL));
  expect_class(MPI_Win_set_attr(win, comm_key, &v), MPI_ERR_KEYVAL, "MPI_Win_set_attr with a communicator keyval");
  expect_class(MPI_Win_set_attr(win, 987654, &v), MPI_ERR_KEYVAL, "MPI_Win_set_attr with a keyval never made");
  expect_class(MPI_Win_set_attr(win, MPI_KEYVAL_INVALID, &v), MPI_ERR_KEYVAL,
               "MPI_Win_set_attr with MPI_KEYVAL_INVALID");
  MPI_Comm_free_keyval(&comm_key);
  CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &win_key, NULL));
  CHECK_MPI(MPI_Win_set_attr(win, win_key, &v));
  CHECK_MPI(MPI_Win_set_attr(win, win_key, &right)); /* replaces: the old value's callback runs */
  CHECK(deletes == 1, "delete callback ran %d times on replace, expected 1", deletes);
  void* val = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Win_get_attr(win, win_key, &val, &flag));
  CHECK(flag && val == &right, "MPI_Win_get_attr after replace: flag %d", flag);
  int key = win_key;
  CHECK_MPI(MPI_Win_free_keyval(&key));
  expect_class(MPI_Win_set_attr(win, win_key, &v), MPI_ERR_KEYVAL, "MPI_Win_set_attr with a freed keyval");
  CHECK_MPI(MPI_Win_free(&win));
  CHECK(deletes == 2, "delete callback of a freed keyval ran %d times in all, expected 2", deletes);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  test_create_and_allocate();
  test_shared();
  test_dynamic();
  test_datatypes();
  test_large();
  test_accumulate();
  test_held_requests();
  test_pscw(0);
  test_pscw(1);
  test_passive_in_barrier();
  test_passive_while_target_computes(0);
  test_passive_while_target_computes(1);
  test_remote_path(0);
  test_remote_path(1);
  test_int64_atomics(0);
  test_int64_atomics(1);
  test_locks_int64(0);
  test_locks_int64(1);
  test_errors();
  test_user_handlers();
  return FINISH("rma");
}
