/* MPI-3.1 chapter 7, process topologies: MPI_Dims_create, cartesian communicators (coords and
 * ranks, shifts at the edges, subgrids, maps), graph and distributed-graph communicators
 * (adjacent and general forms, weighted and not) and the ten neighborhood collectives on each
 * kind of topology, every received value (and every byte that must stay untouched, such as
 * the blocks of MPI_PROC_NULL neighbours) checked. Runs at any number of ranks >= 1.
 *
 * Which send block lands in which receive block when a rank is a neighbour more than once:
 * cartesian: block s of the sender lands in block s^1 of the receiver (MPI-4.0 erratum to 3.1,
 * also for periodic dimensions of size 1 and 2); graphs: the k-th edge to a rank matches the
 * k-th edge from it. */
#include "conformance.h"

#define MAXDEG 8
#define SENTINEL (-1)
#define HOLE (-7)

static int world_rank, world_size;

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are constant non-null pointers to nothing; mpi.h
 * declares the weight parameters as arrays (const int weights[]), and GCC 11+ then warns at
 * -O1 and above that the call reads "4 bytes from a region of size 0" (-Wstringop-overread).
 * The value passes through a volatile so that this program builds with -Werror either way. */
static int* opaque(int* p) {
  int* volatile v = p;
  return v;
}
#define UNWEIGHTED opaque(MPI_UNWEIGHTED)
#define WEIGHTS_EMPTY opaque(MPI_WEIGHTS_EMPTY)

static int err_class(int rc) {
  int c = rc;
  MPI_Error_class(rc, &c);
  return c;
}

#define CHECK_ERR(call, cls)                                                                       \
  do {                                                                                             \
    int rc_ = (call);                                                                              \
    CHECK(rc_ != MPI_SUCCESS && err_class(rc_) == (cls), "%s returned %d (class %d), expected %s", \
          #call, rc_, err_class(rc_), #cls);                                                       \
  } while (0)

static int ring_left(int r, int n) { return (r - 1 + n) % n; }
static int ring_right(int r, int n) { return (r + 1) % n; }

/* MPI_Graph_create's arrays of the ring: node i's neighbours are i-1 and i+1. */
static void ring_graph(int n, int* index, int* edges) {
  for (int i = 0; i < n; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = ring_left(i, n);
    edges[2 * i + 1] = ring_right(i, n);
  }
}

/* ---- MPI_Dims_create ------------------------------------------------------------------- */

static void dims_case(int nnodes, int ndims, const int* in, const int* want) {
  int d[8];
  for (int i = 0; i < ndims; ++i) d[i] = in[i];
  int rc = MPI_Dims_create(nnodes, ndims, d);
  CHECK(rc == MPI_SUCCESS, "MPI_Dims_create(%d, %d) returned %d", nnodes, ndims, rc);
  for (int i = 0; i < ndims; ++i)
    CHECK(d[i] == want[i], "MPI_Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims, i, d[i], want[i]);
}

static void test_dims_create(void) {
  /* The standard's examples. */
  dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
  dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
  dims_case(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
  {
    int d[3] = {0, 3, 0};
    CHECK_ERR(MPI_Dims_create(7, 3, d), MPI_ERR_DIMS);
  }
  /* Balanced, non-increasing, non-zero entries kept. */
  dims_case(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
  dims_case(16, 4, (int[]){0, 0, 0, 0}, (int[]){2, 2, 2, 2});
  dims_case(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
  dims_case(30, 3, (int[]){0, 0, 0}, (int[]){5, 3, 2});
  dims_case(36, 2, (int[]){0, 0}, (int[]){6, 6});
  dims_case(8, 4, (int[]){0, 0, 0, 0}, (int[]){2, 2, 2, 1});
  dims_case(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
  dims_case(13, 1, (int[]){0}, (int[]){13});
  dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
  dims_case(6, 2, (int[]){2, 0}, (int[]){2, 3});
  dims_case(12, 3, (int[]){0, 2, 0}, (int[]){3, 2, 2});
  dims_case(5, 1, (int[]){5}, (int[]){5});
  dims_case(60, 4, (int[]){0, 0, 1, 0}, (int[]){5, 4, 1, 3});
  CHECK_MPI(MPI_Dims_create(1, 0, NULL));
  {
    int d[2] = {0, 0};
    CHECK_MPI(MPI_Dims_create(world_size, 2, d));
    CHECK(d[0] * d[1] == world_size && d[0] >= d[1], "MPI_Dims_create(%d, 2) gave %d x %d", world_size, d[0], d[1]);
  }
  /* Errors. */
  {
    int d[2] = {4, 0};
    CHECK_ERR(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
    int e[2] = {-1, 0};
    CHECK_ERR(MPI_Dims_create(4, 2, e), MPI_ERR_DIMS);
    int g[2] = {2, 2};
    CHECK_ERR(MPI_Dims_create(6, 2, g), MPI_ERR_DIMS);
    CHECK_ERR(MPI_Dims_create(4, -1, g), MPI_ERR_DIMS);
  }
}

/* ---- cartesian topologies -------------------------------------------------------------- */

static void test_cart(void) {
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(world_size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  CHECK(cart != MPI_COMM_NULL, "MPI_Cart_create over all ranks gave MPI_COMM_NULL");
  if (cart == MPI_COMM_NULL) return;
  int status = -5, nd = -1, r = -1, s = -1;
  CHECK_MPI(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART, "MPI_Topo_test gave %d, expected MPI_CART", status);
  CHECK_MPI(MPI_Cartdim_get(cart, &nd));
  CHECK(nd == 2, "MPI_Cartdim_get gave %d", nd);
  MPI_Comm_rank(cart, &r);
  MPI_Comm_size(cart, &s);
  CHECK(r == world_rank && s == world_size, "cart rank %d size %d (world %d of %d)", r, s, world_rank, world_size);

  int gd[2] = {0, 0}, gp[2] = {-1, -1}, gc[2] = {-1, -1};
  CHECK_MPI(MPI_Cart_get(cart, 2, gd, gp, gc));
  const int c0 = world_rank / dims[1], c1 = world_rank % dims[1];
  CHECK(gd[0] == dims[0] && gd[1] == dims[1], "MPI_Cart_get dims %d x %d", gd[0], gd[1]);
  CHECK(gp[0] == 1 && gp[1] == 0, "MPI_Cart_get periods %d %d", gp[0], gp[1]);
  CHECK(gc[0] == c0 && gc[1] == c1, "MPI_Cart_get coords (%d, %d), expected (%d, %d)", gc[0], gc[1], c0, c1);

  /* Coordinates and ranks round trip, row-major. */
  for (int q = 0; q < world_size; ++q) {
    int c[2] = {-1, -1}, back = -1;
    CHECK_MPI(MPI_Cart_coords(cart, q, 2, c));
    CHECK(c[0] == q / dims[1] && c[1] == q % dims[1], "MPI_Cart_coords(%d) = (%d, %d)", q, c[0], c[1]);
    CHECK_MPI(MPI_Cart_rank(cart, c, &back));
    CHECK(back == q, "MPI_Cart_rank(MPI_Cart_coords(%d)) = %d", q, back);
  }
  /* Periodic dimension 0 wraps; non-periodic dimension 1 does not. */
  {
    int c[2] = {c0 + dims[0], c1}, q = -1;
    CHECK_MPI(MPI_Cart_rank(cart, c, &q));
    CHECK(q == world_rank, "MPI_Cart_rank(%d + dims[0], %d) = %d", c0, c1, q);
    c[0] = c0 - 3 * dims[0];
    CHECK_MPI(MPI_Cart_rank(cart, c, &q));
    CHECK(q == world_rank, "MPI_Cart_rank(%d - 3 dims[0], %d) = %d", c0, c1, q);
    c[0] = c0;
    c[1] = dims[1];
    CHECK_ERR(MPI_Cart_rank(cart, c, &q), MPI_ERR_RANK);
    c[1] = -1;
    CHECK_ERR(MPI_Cart_rank(cart, c, &q), MPI_ERR_RANK);
  }
  CHECK_ERR(MPI_Cart_coords(cart, world_size, 2, gc), MPI_ERR_RANK);

  /* Shifts: periodic in 0, MPI_PROC_NULL off the edges in 1. */
  {
    int src = -5, dst = -5;
    CHECK_MPI(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    int want_src = ((c0 - 1 + dims[0]) % dims[0]) * dims[1] + c1, want_dst = ((c0 + 1) % dims[0]) * dims[1] + c1;
    CHECK(src == want_src && dst == want_dst, "shift(0, 1): %d %d, expected %d %d", src, dst, want_src, want_dst);
    CHECK_MPI(MPI_Cart_shift(cart, 0, 2, &src, &dst));
    want_src = ((c0 - 2 + 2 * dims[0]) % dims[0]) * dims[1] + c1;
    want_dst = ((c0 + 2) % dims[0]) * dims[1] + c1;
    CHECK(src == want_src && dst == want_dst, "shift(0, 2): %d %d, expected %d %d", src, dst, want_src, want_dst);
    CHECK_MPI(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    want_src = c1 == 0 ? MPI_PROC_NULL : world_rank - 1;
    want_dst = c1 == dims[1] - 1 ? MPI_PROC_NULL : world_rank + 1;
    CHECK(src == want_src && dst == want_dst, "shift(1, 1): %d %d, expected %d %d", src, dst, want_src, want_dst);
    CHECK_MPI(MPI_Cart_shift(cart, 1, -1, &src, &dst));
    CHECK(src == want_dst && dst == want_src, "shift(1, -1): %d %d, expected %d %d", src, dst, want_dst, want_src);
    CHECK_MPI(MPI_Cart_shift(cart, 1, dims[1], &src, &dst));
    CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL, "shift(1, dims[1]): %d %d", src, dst);
    CHECK_MPI(MPI_Cart_shift(cart, 1, 0, &src, &dst));
    CHECK(src == world_rank && dst == world_rank, "shift(1, 0): %d %d", src, dst);
    CHECK_ERR(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_ERR(MPI_Cart_shift(cart, -1, 1, &src, &dst), MPI_ERR_ARG);
  }

  /* Subgrids. */
  {
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0}, keep_none[2] = {0, 0};
    MPI_Comm row = MPI_COMM_NULL, col = MPI_COMM_NULL, none = MPI_COMM_NULL;
    CHECK_MPI(MPI_Cart_sub(cart, keep_row, &row));
    CHECK_MPI(MPI_Cart_sub(cart, keep_col, &col));
    CHECK_MPI(MPI_Cart_sub(cart, keep_none, &none));
    int rr = -1, rs = -1, sd[1] = {0}, sp[1] = {-1}, sc[1] = {-1};
    MPI_Comm_rank(row, &rr);
    MPI_Comm_size(row, &rs);
    CHECK(rr == c1 && rs == dims[1], "row subgrid: rank %d size %d", rr, rs);
    CHECK_MPI(MPI_Topo_test(row, &status));
    CHECK(status == MPI_CART, "row subgrid Topo_test %d", status);
    CHECK_MPI(MPI_Cart_get(row, 1, sd, sp, sc));
    CHECK(sd[0] == dims[1] && sp[0] == 0 && sc[0] == c1, "row subgrid Cart_get %d %d %d", sd[0], sp[0], sc[0]);
    /* Everyone in my row has my c0: the world ranks sum to c0 * dims[1] * dims[1] + 0+1+...+dims[1]-1. */
    int sum = 0;
    MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, row);
    CHECK(sum == c0 * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2, "row subgrid members sum to %d", sum);
    MPI_Comm_rank(col, &rr);
    MPI_Comm_size(col, &rs);
    CHECK(rr == c0 && rs == dims[0], "column subgrid: rank %d size %d", rr, rs);
    CHECK_MPI(MPI_Cart_get(col, 1, sd, sp, sc));
    CHECK(sd[0] == dims[0] && sp[0] == 1 && sc[0] == c0, "column subgrid Cart_get %d %d %d", sd[0], sp[0], sc[0]);
    MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, col);
    CHECK(sum == dims[1] * dims[0] * (dims[0] - 1) / 2 + dims[0] * c1, "column subgrid members sum to %d", sum);
    MPI_Comm_size(none, &rs);
    CHECK_MPI(MPI_Cartdim_get(none, &nd));
    CHECK(rs == 1 && nd == 0, "empty subgrid: size %d ndims %d", rs, nd);
    CHECK_MPI(MPI_Topo_test(none, &status));
    CHECK(status == MPI_CART, "empty subgrid Topo_test %d", status);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Comm_free(&none);
  }

  /* A duplicate keeps the topology. */
  {
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup(cart, &dup));
    CHECK_MPI(MPI_Topo_test(dup, &status));
    CHECK(status == MPI_CART, "MPI_Comm_dup of a cartesian communicator: Topo_test %d", status);
    int dd[2] = {0, 0}, dp[2] = {-1, -1}, dc[2] = {-1, -1};
    if (status == MPI_CART) {
      CHECK_MPI(MPI_Cart_get(dup, 2, dd, dp, dc));
      CHECK(dd[0] == dims[0] && dd[1] == dims[1] && dp[0] == 1 && dp[1] == 0 && dc[0] == c0 && dc[1] == c1,
            "MPI_Cart_get on the duplicate");
    }
    MPI_Comm_free(&dup);
  }

  /* Topology queries of the wrong kind. */
  {
    int n = 0, in = 0, out = 0, w = 0;
    CHECK_ERR(MPI_Graph_neighbors_count(cart, 0, &n), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Graphdims_get(cart, &n, &in), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Dist_graph_neighbors_count(cart, &in, &out, &w), MPI_ERR_TOPOLOGY);
  }

  /* MPI_Cart_map keeps ranks inside the grid. */
  {
    int nr = -5, one[1] = {1}, per[1] = {0};
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr));
    CHECK(nr == world_rank, "MPI_Cart_map over all ranks: %d", nr);
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 1, one, per, &nr));
    CHECK(nr == (world_rank == 0 ? 0 : MPI_UNDEFINED), "MPI_Cart_map onto one process: %d", nr);
  }
  MPI_Comm_free(&cart);

  /* A grid smaller than the communicator: the ranks outside get MPI_COMM_NULL. */
  {
    int d1[1] = {world_size > 1 ? world_size - 1 : 1}, p1[1] = {0};
    MPI_Comm small = MPI_COMM_NULL;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 1, &small));
    const int inside = world_rank < d1[0];
    CHECK((small != MPI_COMM_NULL) == inside, "rank %d: grid of %d gave %s", world_rank, d1[0],
          small == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (small != MPI_COMM_NULL) {
      int n = -1;
      MPI_Comm_size(small, &n);
      CHECK(n == d1[0], "grid of %d: size %d", d1[0], n);
      MPI_Comm_free(&small);
    }
    /* Zero dimensions: one process. */
    MPI_Comm zero = MPI_COMM_NULL;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &zero));
    CHECK((zero != MPI_COMM_NULL) == (world_rank == 0), "zero-dimensional grid on rank %d", world_rank);
    if (zero != MPI_COMM_NULL) {
      int n = -1;
      MPI_Comm_size(zero, &n);
      CHECK_MPI(MPI_Cartdim_get(zero, &nd));
      CHECK(n == 1 && nd == 0, "zero-dimensional grid: size %d ndims %d", n, nd);
      int q = -1;
      CHECK_MPI(MPI_Cart_rank(zero, NULL, &q));
      CHECK(q == 0, "MPI_Cart_rank in zero dimensions: %d", q);
      MPI_Comm_free(&zero);
    }
  }

  /* Creation errors (the same on every rank). */
  {
    MPI_Comm c = MPI_COMM_NULL;
    int big[1] = {world_size + 1}, zero[1] = {0}, p1[1] = {0};
    CHECK_ERR(MPI_Cart_create(MPI_COMM_WORLD, 1, big, p1, 0, &c), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Cart_create(MPI_COMM_WORLD, 1, zero, p1, 0, &c), MPI_ERR_DIMS);
    CHECK_ERR(MPI_Cart_create(MPI_COMM_WORLD, -1, zero, p1, 0, &c), MPI_ERR_DIMS);
  }
}

/* ---- graph topologies ------------------------------------------------------------------ */

static void test_graph(void) {
  const int n = world_size;
  int* index = malloc(sizeof(int) * (size_t)n);
  int* edges = malloc(sizeof(int) * 2 * (size_t)n);
  int* gi = malloc(sizeof(int) * (size_t)n);
  int* ge = malloc(sizeof(int) * 2 * (size_t)n);
  ring_graph(n, index, edges);
  MPI_Comm graph = MPI_COMM_NULL;
  CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &graph));
  CHECK(graph != MPI_COMM_NULL, "MPI_Graph_create over all ranks gave MPI_COMM_NULL");
  if (graph == MPI_COMM_NULL) {
    free(index), free(edges), free(gi), free(ge);
    return;
  }
  int status = -5, nn = -1, ne = -1;
  CHECK_MPI(MPI_Topo_test(graph, &status));
  CHECK(status == MPI_GRAPH, "MPI_Topo_test gave %d, expected MPI_GRAPH", status);
  CHECK_MPI(MPI_Graphdims_get(graph, &nn, &ne));
  CHECK(nn == n && ne == 2 * n, "MPI_Graphdims_get: %d nodes %d edges", nn, ne);
  CHECK_MPI(MPI_Graph_get(graph, n, 2 * n, gi, ge));
  for (int i = 0; i < n; ++i) CHECK(gi[i] == index[i], "MPI_Graph_get index[%d] = %d", i, gi[i]);
  for (int i = 0; i < 2 * n; ++i) CHECK(ge[i] == edges[i], "MPI_Graph_get edges[%d] = %d", i, ge[i]);
  for (int q = 0; q < n; ++q) {
    int cnt = -1, nb[4] = {-5, -5, -5, -5};
    CHECK_MPI(MPI_Graph_neighbors_count(graph, q, &cnt));
    CHECK(cnt == 2, "MPI_Graph_neighbors_count(%d) = %d", q, cnt);
    CHECK_MPI(MPI_Graph_neighbors(graph, q, 4, nb));
    CHECK(nb[0] == ring_left(q, n) && nb[1] == ring_right(q, n) && nb[2] == -5,
          "MPI_Graph_neighbors(%d) = %d %d %d", q, nb[0], nb[1], nb[2]);
  }
  {
    int cnt = 0, nb[2];
    CHECK_ERR(MPI_Graph_neighbors_count(graph, n, &cnt), MPI_ERR_RANK);
    CHECK_ERR(MPI_Graph_neighbors(graph, -1, 2, nb), MPI_ERR_RANK);
    int nd = 0;
    CHECK_ERR(MPI_Cartdim_get(graph, &nd), MPI_ERR_TOPOLOGY);
    int src = 0, dst = 0;
    CHECK_ERR(MPI_Cart_shift(graph, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
  }
  {
    int nr = -5;
    CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &nr));
    CHECK(nr == world_rank, "MPI_Graph_map: %d", nr);
    int one_index[1] = {0};
    CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, 1, one_index, edges, &nr));
    CHECK(nr == (world_rank == 0 ? 0 : MPI_UNDEFINED), "MPI_Graph_map onto one node: %d", nr);
  }
  {
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup(graph, &dup));
    CHECK_MPI(MPI_Topo_test(dup, &status));
    CHECK(status == MPI_GRAPH, "MPI_Comm_dup of a graph communicator: Topo_test %d", status);
    MPI_Comm_free(&dup);
  }
  MPI_Comm_free(&graph);
  /* The empty graph: MPI_COMM_NULL everywhere. */
  MPI_Comm empty = MPI_COMM_WORLD;
  CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, 0, index, edges, 0, &empty));
  CHECK(empty == MPI_COMM_NULL, "empty graph gave a communicator");
  /* Bad edges. */
  {
    MPI_Comm g = MPI_COMM_NULL;
    int bad_index[1] = {1}, bad_edges[1] = {1};
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, 1, bad_index, bad_edges, 0, &g) != MPI_SUCCESS,
          "MPI_Graph_create accepted an edge to node 1 of a 1-node graph");
  }
  free(index), free(edges), free(gi), free(ge);
}

/* ---- distributed graphs ---------------------------------------------------------------- */

static int weight_of(int from, int to) { return 100 * from + to + 1; }

static int cmp_int(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

/* Compares the (rank, weight) pairs of got and want as multisets (order of assembled
 * neighbour lists is the implementation's) or as sequences. */
static void check_edges(const char* what, int n, const int* got, const int* gotw, const int* want, const int* wantw,
                        int ordered) {
  int a[MAXDEG], b[MAXDEG];
  for (int i = 0; i < n; ++i) {
    a[i] = got[i] * 100000 + (gotw ? gotw[i] : 0);
    b[i] = want[i] * 100000 + (wantw ? wantw[i] : 0);
  }
  if (!ordered) {
    qsort(a, (size_t)n, sizeof(int), cmp_int);
    qsort(b, (size_t)n, sizeof(int), cmp_int);
  }
  for (int i = 0; i < n; ++i)
    CHECK(a[i] == b[i], "%s: entry %d is rank %d weight %d, expected rank %d weight %d", what, i, a[i] / 100000,
          a[i] % 100000, b[i] / 100000, b[i] % 100000);
}

/* The bidirectional ring: in-neighbours left, right; out-neighbours left, right. */
static void check_ring(MPI_Comm comm, const char* what, int weighted, int ordered) {
  const int n = world_size, L = ring_left(world_rank, n), R = ring_right(world_rank, n);
  int status = -5, indeg = -1, outdeg = -1, w = -1;
  CHECK_MPI(MPI_Topo_test(comm, &status));
  CHECK(status == MPI_DIST_GRAPH, "%s: Topo_test %d", what, status);
  CHECK_MPI(MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &w));
  CHECK(indeg == 2 && outdeg == 2 && w == weighted, "%s: indegree %d outdegree %d weighted %d", what, indeg, outdeg,
        w);
  if (indeg != 2 || outdeg != 2) return;
  int src[MAXDEG], sw[MAXDEG], dst[MAXDEG], dw[MAXDEG];
  for (int i = 0; i < MAXDEG; ++i) src[i] = sw[i] = dst[i] = dw[i] = -5;
  CHECK_MPI(MPI_Dist_graph_neighbors(comm, MAXDEG, src, sw, MAXDEG, dst, dw));
  const int want_src[2] = {L, R}, want_dst[2] = {L, R};
  const int want_sw[2] = {weight_of(L, world_rank), weight_of(R, world_rank)};
  const int want_dw[2] = {weight_of(world_rank, L), weight_of(world_rank, R)};
  char label[96];
  snprintf(label, sizeof label, "%s sources", what);
  check_edges(label, 2, src, weighted ? sw : NULL, want_src, weighted ? want_sw : NULL, ordered);
  snprintf(label, sizeof label, "%s destinations", what);
  check_edges(label, 2, dst, weighted ? dw : NULL, want_dst, weighted ? want_dw : NULL, ordered);
  CHECK(src[2] == -5 && dst[2] == -5, "%s: MPI_Dist_graph_neighbors wrote past the degree", what);
  if (!weighted) CHECK(sw[0] == -5 && dw[0] == -5, "%s: weights written for an unweighted graph", what);
}

static MPI_Comm ring_adjacent(int weighted) {
  const int n = world_size, L = ring_left(world_rank, n), R = ring_right(world_rank, n);
  int src[2] = {L, R}, dst[2] = {L, R};
  int sw[2] = {weight_of(L, world_rank), weight_of(R, world_rank)};
  int dw[2] = {weight_of(world_rank, L), weight_of(world_rank, R)};
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, weighted ? sw : UNWEIGHTED, 2, dst,
                                           weighted ? dw : UNWEIGHTED, MPI_INFO_NULL, 0, &comm));
  return comm;
}

/* The same ring through the general form: every rank names its own out-edges. */
static MPI_Comm ring_general_own(int weighted) {
  const int n = world_size, L = ring_left(world_rank, n), R = ring_right(world_rank, n);
  int sources[1] = {world_rank}, degrees[1] = {2}, dst[2] = {L, R};
  int w[2] = {weight_of(world_rank, L), weight_of(world_rank, R)};
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, dst, weighted ? w : UNWEIGHTED,
                                  MPI_INFO_NULL, 0, &comm));
  return comm;
}

static void test_dist_graph(void) {
  const int n = world_size;
  MPI_Comm comm;
  /* Adjacent form: the lists come back as given, in order. */
  comm = ring_adjacent(1);
  check_ring(comm, "adjacent weighted ring", 1, 1);
  {
    MPI_Comm dup = MPI_COMM_NULL;
    int status = -5;
    CHECK_MPI(MPI_Comm_dup(comm, &dup));
    CHECK_MPI(MPI_Topo_test(dup, &status));
    CHECK(status == MPI_DIST_GRAPH, "MPI_Comm_dup of a distributed graph: Topo_test %d", status);
    if (status == MPI_DIST_GRAPH) check_ring(dup, "duplicate of the adjacent weighted ring", 1, 1);
    MPI_Comm_free(&dup);
    int nd = 0, cnt = 0;
    CHECK_ERR(MPI_Cartdim_get(comm, &nd), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Graph_neighbors_count(comm, 0, &cnt), MPI_ERR_TOPOLOGY);
  }
  MPI_Comm_free(&comm);
  comm = ring_adjacent(0);
  check_ring(comm, "adjacent unweighted ring", 0, 1);
  MPI_Comm_free(&comm);

  /* General form, each rank naming its own edges. */
  comm = ring_general_own(1);
  check_ring(comm, "general weighted ring (own edges)", 1, 0);
  MPI_Comm_free(&comm);
  comm = ring_general_own(0);
  check_ring(comm, "general unweighted ring (own edges)", 0, 0);
  MPI_Comm_free(&comm);

  /* General form, rank 0 naming every edge (the others none: MPI_WEIGHTS_EMPTY). */
  {
    int* sources = malloc(sizeof(int) * (size_t)n);
    int* degrees = malloc(sizeof(int) * (size_t)n);
    int* dst = malloc(sizeof(int) * 2 * (size_t)n);
    int* w = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < n; ++i) {
      sources[i] = i;
      degrees[i] = 2;
      dst[2 * i] = ring_left(i, n);
      dst[2 * i + 1] = ring_right(i, n);
      w[2 * i] = weight_of(i, ring_left(i, n));
      w[2 * i + 1] = weight_of(i, ring_right(i, n));
    }
    const int mine = world_rank == 0 ? n : 0;
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, mine, sources, degrees, dst, mine ? w : WEIGHTS_EMPTY,
                                    MPI_INFO_NULL, 0, &comm));
    check_ring(comm, "general weighted ring (rank 0 names all)", 1, 0);
    MPI_Comm_free(&comm);
    free(sources), free(degrees), free(dst), free(w);
    /* Unweighted, each rank naming its in-edges (sources left and right, one edge each). */
    int s2[2] = {ring_left(world_rank, n), ring_right(world_rank, n)}, d2[2] = {1, 1}, t2[2] = {world_rank, world_rank};
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 2, s2, d2, t2, UNWEIGHTED, MPI_INFO_NULL, 0, &comm));
    check_ring(comm, "general unweighted ring (in-edges named)", 0, 0);
    MPI_Comm_free(&comm);
  }

  /* A star: rank 0 sends to every rank (itself too); the others have no out-edges. */
  {
    int* dst = malloc(sizeof(int) * (size_t)n);
    int* dw = malloc(sizeof(int) * (size_t)n);
    int* gd = malloc(sizeof(int) * (size_t)n);
    int* gdw = malloc(sizeof(int) * (size_t)n);
    int src[1] = {0}, sw[1] = {7};
    for (int i = 0; i < n; ++i) dst[i] = i, dw[i] = 10 + i;
    const int outdeg = world_rank == 0 ? n : 0;
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, outdeg, dst,
                                             outdeg ? dw : WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &comm));
    int indeg = -1, od = -1, weighted = -1;
    CHECK_MPI(MPI_Dist_graph_neighbors_count(comm, &indeg, &od, &weighted));
    CHECK(indeg == 1 && od == outdeg && weighted == 1, "star: indegree %d outdegree %d weighted %d", indeg, od,
          weighted);
    int gs[1] = {-5}, gsw[1] = {-5};
    CHECK_MPI(MPI_Dist_graph_neighbors(comm, 1, gs, gsw, n, gd, gdw));
    CHECK(gs[0] == 0 && gsw[0] == 7, "star: source %d weight %d", gs[0], gsw[0]);
    for (int i = 0; i < od && i < n; ++i)
      CHECK(gd[i] == i && gdw[i] == 10 + i, "star: destination %d is %d weight %d", i, gd[i], gdw[i]);
    /* Each rank receives rank 0's value. */
    int send = 1000 + world_rank, recv = -1;
    CHECK_MPI(MPI_Neighbor_allgather(&send, 1, MPI_INT, &recv, 1, MPI_INT, comm));
    CHECK(recv == 1000, "star allgather: %d", recv);
    MPI_Comm_free(&comm);
    free(dst), free(dw), free(gd), free(gdw);
  }

  /* Errors (the same on every rank). */
  {
    int bad[1] = {n}, ok[1] = {0};
    CHECK_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, UNWEIGHTED, 1, ok, UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &comm),
              MPI_ERR_RANK);
    int deg[1] = {1};
    CHECK_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, deg, bad, UNWEIGHTED, MPI_INFO_NULL, 0, &comm),
              MPI_ERR_RANK);
    int indeg = 0, outdeg = 0, w = 0;
    CHECK_ERR(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &indeg, &outdeg, &w), MPI_ERR_TOPOLOGY);
  }
}

/* ---- neighborhood collectives ---------------------------------------------------------- */

/* Every rank's neighbour lists, as the topology queries give them. */
typedef struct {
  const char* name;
  MPI_Comm comm;
  int cart;
  int rank, size;
  int* in; /* size x MAXDEG: in[r * MAXDEG + k] */
  int* out;
  int* indeg;
  int* outdeg;
} Nbrs;
#define IN(r, k) nbrs.in[(r) * MAXDEG + (k)]
#define OUT(r, k) nbrs.out[(r) * MAXDEG + (k)]

static Nbrs nbrs;

static void nbrs_init(const char* name, MPI_Comm comm) {
  Nbrs* t = &nbrs;
  t->name = name;
  t->comm = comm;
  MPI_Comm_rank(comm, &t->rank);
  MPI_Comm_size(comm, &t->size);
  t->in = malloc(sizeof(int) * MAXDEG * (size_t)t->size);
  t->out = malloc(sizeof(int) * MAXDEG * (size_t)t->size);
  t->indeg = malloc(sizeof(int) * (size_t)t->size);
  t->outdeg = malloc(sizeof(int) * (size_t)t->size);
  int status = MPI_UNDEFINED, in[MAXDEG] = {0}, out[MAXDEG] = {0}, indeg = 0, outdeg = 0;
  MPI_Topo_test(comm, &status);
  t->cart = status == MPI_CART;
  if (status == MPI_CART) {
    int nd = 0;
    MPI_Cartdim_get(comm, &nd);
    for (int d = 0; d < nd; ++d) MPI_Cart_shift(comm, d, 1, &in[2 * d], &in[2 * d + 1]);
    indeg = outdeg = 2 * nd;
    memcpy(out, in, sizeof in);
  } else if (status == MPI_GRAPH) {
    MPI_Graph_neighbors_count(comm, t->rank, &indeg);
    MPI_Graph_neighbors(comm, t->rank, MAXDEG, in);
    outdeg = indeg;
    memcpy(out, in, sizeof in);
  } else {
    int w = 0, sw[MAXDEG], dw[MAXDEG];
    MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &w);
    MPI_Dist_graph_neighbors(comm, MAXDEG, in, sw, MAXDEG, out, dw);
  }
  MPI_Allgather(in, MAXDEG, MPI_INT, t->in, MAXDEG, MPI_INT, comm);
  MPI_Allgather(out, MAXDEG, MPI_INT, t->out, MAXDEG, MPI_INT, comm);
  MPI_Allgather(&indeg, 1, MPI_INT, t->indeg, 1, MPI_INT, comm);
  MPI_Allgather(&outdeg, 1, MPI_INT, t->outdeg, 1, MPI_INT, comm);
}

/* The neighbour that fills my receive block k, and which of its send blocks lands there
 * (*j); MPI_PROC_NULL when none does. */
static int source_of(int k, int* j) {
  const Nbrs* t = &nbrs;
  const int r = t->rank, p = IN(r, k);
  *j = -1;
  if (p == MPI_PROC_NULL) return p;
  if (t->cart) {
    *j = k ^ 1;
    return p;
  }
  int m = 0;
  for (int i = 0; i < k; ++i) m += IN(r, i) == p;
  for (int i = 0; i < t->outdeg[p]; ++i)
    if (OUT(p, i) == r && m-- == 0) {
      *j = i;
      break;
    }
  return p;
}

static int val(int p, int j, int e) { return p * 10000 + j * 100 + e + 1; }
static int pair_count(int p, int q) { return 1 + (p + 2 * q) % 3; }

#define BUF 512

/* nb: 0 blocking, 1 non-blocking (waited for), 2 persistent (MPI-4.0 _init): started twice, the
 * receive buffer refilled with SENTINEL between the starts, both results the same, then freed. */
static void finish_call(int nb, int rc, MPI_Request* req, const char* what, int* recv) {
  CHECK(rc == MPI_SUCCESS, "%s on %s returned %d", what, nbrs.name, rc);
  if (rc != MPI_SUCCESS || nb == 0) return;
  if (nb == 2) {
    int first[BUF];
    CHECK_MPI(MPI_Start(req));
    CHECK_MPI(MPI_Wait(req, MPI_STATUS_IGNORE));
    CHECK(*req != MPI_REQUEST_NULL, "MPI_Wait freed the persistent request of %s", what);
    memcpy(first, recv, sizeof first);
    for (int i = 0; i < BUF; ++i) recv[i] = SENTINEL;
    CHECK_MPI(MPI_Start(req));
    CHECK_MPI(MPI_Wait(req, MPI_STATUS_IGNORE));
    CHECK(memcmp(first, recv, sizeof first) == 0, "the second start of persistent %s on %s gave other data", what,
          nbrs.name);
    CHECK_MPI(MPI_Request_free(req));
    CHECK(*req == MPI_REQUEST_NULL, "MPI_Request_free left the request of %s", what);
    return;
  }
  int wrc = MPI_Wait(req, MPI_STATUS_IGNORE);
  CHECK(wrc == MPI_SUCCESS, "MPI_Wait of %s on %s returned %d", what, nbrs.name, wrc);
  CHECK(*req == MPI_REQUEST_NULL, "MPI_Wait left the request of %s", what);
}

static void compare(const int* got, const int* want, int n, const char* what, int nb) {
  static const char* form[] = {"", "non-blocking ", "persistent "};
  for (int i = 0; i < n; ++i)
    CHECK(got[i] == want[i], "%s%s on %s: recvbuf[%d] = %d, expected %d", form[nb], what, nbrs.name, i, got[i],
          want[i]);
}

/* Offset in ints of int e of a message made of vec2 elements (2 ints, stride 2, extent 3). */
static int vec2_pos(int e) { return 3 * (e / 2) + 2 * (e % 2); }

static void test_allgather(int nb, int derived, MPI_Datatype vec2) {
  const int r = nbrs.rank, indeg = nbrs.indeg[r];
  int send[BUF], recv[BUF], want[BUF];
  const int C = 4;
  for (int i = 0; i < BUF; ++i) send[i] = HOLE, recv[i] = want[i] = SENTINEL;
  const int slot = derived ? 6 : C; /* ints per receive block */
  for (int e = 0; e < C; ++e) send[derived ? vec2_pos(e) : e] = val(r, 0, e);
  for (int k = 0; k < indeg; ++k) {
    int j;
    int p = source_of(k, &j);
    for (int e = 0; e < C; ++e) want[k * slot + (derived ? vec2_pos(e) : e)] = p == MPI_PROC_NULL ? SENTINEL : val(p, 0, e);
  }
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  MPI_Datatype t = derived ? vec2 : MPI_INT;
  const int count = derived ? 2 : C;
  if (nb == 2) rc = MPI_Neighbor_allgather_init(send, count, t, recv, count, t, nbrs.comm, MPI_INFO_NULL, &req);
  else if (nb) rc = MPI_Ineighbor_allgather(send, count, t, recv, count, t, nbrs.comm, &req);
  else rc = MPI_Neighbor_allgather(send, count, t, recv, count, t, nbrs.comm);
  finish_call(nb, rc, &req, derived ? "MPI_Neighbor_allgather (vector type)" : "MPI_Neighbor_allgather", recv);
  compare(recv, want, BUF, derived ? "MPI_Neighbor_allgather (vector type)" : "MPI_Neighbor_allgather", nb);
}

static void test_allgatherv(int nb) {
  const int r = nbrs.rank, indeg = nbrs.indeg[r];
  int send[BUF], recv[BUF], want[BUF], counts[MAXDEG], displs[MAXDEG];
  for (int i = 0; i < BUF; ++i) send[i] = HOLE, recv[i] = want[i] = SENTINEL;
  const int mine = 1 + r % 3;
  for (int e = 0; e < mine; ++e) send[e] = val(r, 0, e);
  int pos = 0;
  for (int k = indeg - 1; k >= 0; --k) { /* blocks in reverse order, a gap after each */
    int j;
    int p = source_of(k, &j);
    counts[k] = p == MPI_PROC_NULL ? 2 : 1 + p % 3;
    displs[k] = pos;
    for (int e = 0; e < counts[k]; ++e) want[pos + e] = p == MPI_PROC_NULL ? SENTINEL : val(p, 0, e);
    pos += counts[k] + 1;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (nb == 2)
    rc = MPI_Neighbor_allgatherv_init(send, mine, MPI_INT, recv, counts, displs, MPI_INT, nbrs.comm, MPI_INFO_NULL,
                                      &req);
  else if (nb) rc = MPI_Ineighbor_allgatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, nbrs.comm, &req);
  else rc = MPI_Neighbor_allgatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, nbrs.comm);
  finish_call(nb, rc, &req, "MPI_Neighbor_allgatherv", recv);
  compare(recv, want, BUF, "MPI_Neighbor_allgatherv", nb);
}

static void test_alltoall(int nb) {
  const int r = nbrs.rank, indeg = nbrs.indeg[r], outdeg = nbrs.outdeg[r];
  int send[BUF], recv[BUF], want[BUF];
  const int C = 3;
  for (int i = 0; i < BUF; ++i) send[i] = HOLE, recv[i] = want[i] = SENTINEL;
  for (int j = 0; j < outdeg; ++j)
    for (int e = 0; e < C; ++e) send[j * C + e] = val(r, j, e);
  for (int k = 0; k < indeg; ++k) {
    int j;
    int p = source_of(k, &j);
    for (int e = 0; e < C; ++e) want[k * C + e] = p == MPI_PROC_NULL ? SENTINEL : val(p, j, e);
  }
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (nb == 2) rc = MPI_Neighbor_alltoall_init(send, C, MPI_INT, recv, C, MPI_INT, nbrs.comm, MPI_INFO_NULL, &req);
  else if (nb) rc = MPI_Ineighbor_alltoall(send, C, MPI_INT, recv, C, MPI_INT, nbrs.comm, &req);
  else rc = MPI_Neighbor_alltoall(send, C, MPI_INT, recv, C, MPI_INT, nbrs.comm);
  finish_call(nb, rc, &req, "MPI_Neighbor_alltoall", recv);
  compare(recv, want, BUF, "MPI_Neighbor_alltoall", nb);
}

static void test_alltoallv(int nb) {
  const int r = nbrs.rank, indeg = nbrs.indeg[r], outdeg = nbrs.outdeg[r];
  int send[BUF], recv[BUF], want[BUF], sc[MAXDEG], sd[MAXDEG], rcn[MAXDEG], rd[MAXDEG];
  for (int i = 0; i < BUF; ++i) send[i] = HOLE, recv[i] = want[i] = SENTINEL;
  int pos = 0;
  for (int j = outdeg - 1; j >= 0; --j) { /* send blocks in reverse order with gaps */
    const int q = OUT(r, j);
    sc[j] = q == MPI_PROC_NULL ? 1 : pair_count(r, q);
    sd[j] = pos;
    for (int e = 0; e < sc[j]; ++e) send[pos + e] = val(r, j, e);
    pos += sc[j] + 1;
  }
  pos = 0;
  for (int k = 0; k < indeg; ++k) {
    int j;
    int p = source_of(k, &j);
    rcn[k] = p == MPI_PROC_NULL ? 1 : pair_count(p, r);
    rd[k] = pos;
    for (int e = 0; e < rcn[k]; ++e) want[pos + e] = p == MPI_PROC_NULL ? SENTINEL : val(p, j, e);
    pos += rcn[k] + 2;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (nb == 2)
    rc = MPI_Neighbor_alltoallv_init(send, sc, sd, MPI_INT, recv, rcn, rd, MPI_INT, nbrs.comm, MPI_INFO_NULL, &req);
  else if (nb) rc = MPI_Ineighbor_alltoallv(send, sc, sd, MPI_INT, recv, rcn, rd, MPI_INT, nbrs.comm, &req);
  else rc = MPI_Neighbor_alltoallv(send, sc, sd, MPI_INT, recv, rcn, rd, MPI_INT, nbrs.comm);
  finish_call(nb, rc, &req, "MPI_Neighbor_alltoallv", recv);
  compare(recv, want, BUF, "MPI_Neighbor_alltoallv", nb);
}

/* Even send blocks are plain ints and odd ones vec2 elements; even receive blocks are vec2
 * elements and odd ones plain ints: 2 * pair_count ints per message either way. */
static void test_alltoallw(int nb) {
  const int r = nbrs.rank, indeg = nbrs.indeg[r], outdeg = nbrs.outdeg[r];
  int send[BUF], recv[BUF], want[BUF], sc[MAXDEG], rcn[MAXDEG];
  MPI_Aint sd[MAXDEG], rd[MAXDEG];
  MPI_Datatype st[MAXDEG], rt[MAXDEG], vec2;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec2);
  MPI_Type_commit(&vec2);
  for (int i = 0; i < BUF; ++i) send[i] = HOLE, recv[i] = want[i] = SENTINEL;
  int pos = 0;
  for (int j = 0; j < outdeg; ++j) {
    const int q = OUT(r, j);
    const int n = q == MPI_PROC_NULL ? 2 : 2 * pair_count(r, q);
    const int vec = j % 2;
    st[j] = vec ? vec2 : MPI_INT;
    sc[j] = vec ? n / 2 : n;
    sd[j] = (MPI_Aint)(pos * (int)sizeof(int));
    for (int e = 0; e < n; ++e) send[pos + (vec ? vec2_pos(e) : e)] = val(r, j, e);
    pos += (vec ? 3 * (n / 2) : n) + 1;
  }
  pos = 0;
  for (int k = 0; k < indeg; ++k) {
    int j;
    int p = source_of(k, &j);
    const int n = p == MPI_PROC_NULL ? 2 : 2 * pair_count(p, r);
    const int vec = k % 2 == 0;
    rt[k] = vec ? vec2 : MPI_INT;
    rcn[k] = vec ? n / 2 : n;
    rd[k] = (MPI_Aint)(pos * (int)sizeof(int));
    for (int e = 0; e < n; ++e) want[pos + (vec ? vec2_pos(e) : e)] = p == MPI_PROC_NULL ? SENTINEL : val(p, j, e);
    pos += (vec ? 3 * (n / 2) : n) + 2;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  int rc;
  if (nb == 2) {
    rc = MPI_Neighbor_alltoallw_init(send, sc, sd, st, recv, rcn, rd, rt, nbrs.comm, MPI_INFO_NULL, &req);
    MPI_Type_free(&vec2); /* allowed: the request keeps what it needs for every start */
  } else if (nb) {
    rc = MPI_Ineighbor_alltoallw(send, sc, sd, st, recv, rcn, rd, rt, nbrs.comm, &req);
    MPI_Type_free(&vec2); /* allowed while the operation is pending */
  } else {
    rc = MPI_Neighbor_alltoallw(send, sc, sd, st, recv, rcn, rd, rt, nbrs.comm);
    MPI_Type_free(&vec2);
  }
  finish_call(nb, rc, &req, "MPI_Neighbor_alltoallw", recv);
  compare(recv, want, BUF, "MPI_Neighbor_alltoallw", nb);
}

static void test_neighborhood(const char* name, MPI_Comm comm, MPI_Datatype vec2) {
  if (comm == MPI_COMM_NULL) return;
  nbrs_init(name, comm);
  for (int nb = 0; nb < 3; ++nb) {
    test_allgather(nb, 0, vec2);
    test_allgather(nb, 1, vec2);
    test_allgatherv(nb);
    test_alltoall(nb);
    test_alltoallv(nb);
    test_alltoallw(nb);
  }
  /* Several non-blocking ones in flight at once, completed in reverse order. */
  {
    const int r = nbrs.rank, indeg = nbrs.indeg[r];
    int a = val(r, 0, 0), b = val(r, 0, 1), ra[MAXDEG], rb[MAXDEG];
    MPI_Request reqs[2];
    for (int k = 0; k < MAXDEG; ++k) ra[k] = rb[k] = SENTINEL;
    CHECK_MPI(MPI_Ineighbor_allgather(&a, 1, MPI_INT, ra, 1, MPI_INT, comm, &reqs[0]));
    CHECK_MPI(MPI_Ineighbor_allgather(&b, 1, MPI_INT, rb, 1, MPI_INT, comm, &reqs[1]));
    CHECK_MPI(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    for (int k = 0; k < indeg; ++k) {
      int j;
      int p = source_of(k, &j);
      const int wa = p == MPI_PROC_NULL ? SENTINEL : val(p, 0, 0), wb = p == MPI_PROC_NULL ? SENTINEL : val(p, 0, 1);
      CHECK(ra[k] == wa && rb[k] == wb, "two MPI_Ineighbor_allgather in flight on %s: block %d = %d %d, expected %d %d",
            name, k, ra[k], rb[k], wa, wb);
    }
  }
  free(nbrs.in), free(nbrs.out), free(nbrs.indeg), free(nbrs.outdeg);
}

static void test_neighborhood_collectives(void) {
  MPI_Datatype vec2;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec2);
  MPI_Type_commit(&vec2);
  const int n = world_size;
  MPI_Comm comm;
  int d1[1] = {n}, p1[1] = {1}, p0[1] = {0};

  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &comm));
  test_neighborhood("1-D periodic cart", comm, vec2);
  MPI_Comm_free(&comm);

  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p0, 0, &comm));
  test_neighborhood("1-D non-periodic cart", comm, vec2);
  MPI_Comm_free(&comm);

  {
    int d2[2] = {0, 0}, p2[2] = {1, 0};
    MPI_Dims_create(n, 2, d2);
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &comm));
    test_neighborhood("2-D cart (periodic x non-periodic)", comm, vec2);
    MPI_Comm_free(&comm);
    /* A periodic dimension of size 1 next to the others. */
    int d3[3] = {1, n, 1}, p3[3] = {1, 1, 0};
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &comm));
    test_neighborhood("3-D cart 1 x n x 1", comm, vec2);
    MPI_Comm_free(&comm);
  }

  {
    int* index = malloc(sizeof(int) * (size_t)n);
    int* edges = malloc(sizeof(int) * 2 * (size_t)n);
    ring_graph(n, index, edges);
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &comm));
    test_neighborhood("graph ring", comm, vec2);
    MPI_Comm_free(&comm);
    free(index), free(edges);
  }

  comm = ring_adjacent(1);
  test_neighborhood("dist-graph ring (adjacent)", comm, vec2);
  MPI_Comm_free(&comm);

  comm = ring_general_own(0);
  test_neighborhood("dist-graph ring (general form)", comm, vec2);
  MPI_Comm_free(&comm);

  /* A directed ring: receive from the left, send to the right. */
  {
    int src[1] = {ring_left(world_rank, n)}, dst[1] = {ring_right(world_rank, n)};
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, UNWEIGHTED, 1, dst, UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &comm));
    test_neighborhood("directed dist-graph ring", comm, vec2);
    MPI_Comm_free(&comm);
  }

  /* Errors: no topology, a bad count. */
  {
    int x = 0, y[MAXDEG];
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_ERR(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Ineighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &req), MPI_ERR_TOPOLOGY);
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &comm));
    CHECK_ERR(MPI_Neighbor_alltoall(&x, -1, MPI_INT, y, 1, MPI_INT, comm), MPI_ERR_COUNT);
    MPI_Comm_free(&comm);
  }
  MPI_Type_free(&vec2);
}

/* ---- no topology ----------------------------------------------------------------------- */

static void test_no_topology(void) {
  int status = -5, nd = 0, n = 0, e = 0;
  CHECK_MPI(MPI_Topo_test(MPI_COMM_WORLD, &status));
  CHECK(status == MPI_UNDEFINED, "MPI_Topo_test(MPI_COMM_WORLD) = %d", status);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK_MPI(MPI_Topo_test(dup, &status));
  CHECK(status == MPI_UNDEFINED, "MPI_Topo_test of a duplicate of MPI_COMM_WORLD = %d", status);
  CHECK_ERR(MPI_Cartdim_get(dup, &nd), MPI_ERR_TOPOLOGY);
  MPI_Comm_free(&dup);
  CHECK_ERR(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
  int c[2] = {0, 0}, q = 0;
  CHECK_ERR(MPI_Cart_rank(MPI_COMM_WORLD, c, &q), MPI_ERR_TOPOLOGY);
  CHECK_ERR(MPI_Graphdims_get(MPI_COMM_WORLD, &n, &e), MPI_ERR_TOPOLOGY);
  CHECK_ERR(MPI_Topo_test(MPI_COMM_NULL, &status), MPI_ERR_COMM);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  test_dims_create();
  test_no_topology();
  test_cart();
  test_graph();
  test_dist_graph();
  test_neighborhood_collectives();
  return FINISH("topology");
}
