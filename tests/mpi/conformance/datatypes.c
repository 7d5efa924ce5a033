/* MPI-3.1 chapter 4 (datatypes): every constructor's size, bounds and true bounds against
 * values computed by hand (negative strides, resized markers, struct padding, subarrays in C
 * and Fortran order, block and cyclic darrays), decoding (envelope and contents), names,
 * MPI_Pack/MPI_Unpack and external32, statuses (MPI_Get_count/MPI_Get_elements on partial
 * receives), derived types on the wire (rank 0 to rank 1, received as the same type, as
 * contiguous MPI_INT/MPI_BYTE and the other way round, gaps untouched), in MPI_Bcast and
 * MPI_Allreduce, and the error classes of bad arguments. Runs at any number of ranks. */
#include "conformance.h"

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

static int rank = 0, nranks = 1;

/* ---- helpers ------------------------------------------------------------------------- */
static void expect_layout(const char* what, MPI_Datatype t, long long size, long long lb, long long extent,
                          long long true_lb, long long true_extent) {
  int s = -1;
  MPI_Aint l = -1, e = -1, tl = -1, te = -1;
  CHECK_MPI(MPI_Type_size(t, &s));
  CHECK_MPI(MPI_Type_get_extent(t, &l, &e));
  CHECK_MPI(MPI_Type_get_true_extent(t, &tl, &te));
  CHECK(s == size && l == lb && e == extent && tl == true_lb && te == true_extent,
        "%s: size %d lb %lld extent %lld true_lb %lld true_extent %lld, expected %lld %lld %lld %lld %lld", what, s,
        (long long)l, (long long)e, (long long)tl, (long long)te, size, lb, extent, true_lb, true_extent);
  MPI_Count sx = -1, lx = -1, ex = -1, tlx = -1, tex = -1;
  CHECK_MPI(MPI_Type_size_x(t, &sx));
  CHECK_MPI(MPI_Type_get_extent_x(t, &lx, &ex));
  CHECK_MPI(MPI_Type_get_true_extent_x(t, &tlx, &tex));
  CHECK(sx == size && lx == lb && ex == extent && tlx == true_lb && tex == true_extent,
        "%s: the _x queries differ (size %lld lb %lld extent %lld true %lld %lld)", what, (long long)sx,
        (long long)lx, (long long)ex, (long long)tlx, (long long)tex);
}

static void expect_envelope(const char* what, MPI_Datatype t, int combiner, int ni, int na, int nd) {
  int i = -1, a = -1, d = -1, c = -1;
  CHECK_MPI(MPI_Type_get_envelope(t, &i, &a, &d, &c));
  CHECK(c == combiner && i == ni && a == na && d == nd,
        "%s: envelope combiner %d ints %d addresses %d types %d, expected %d %d %d %d", what, c, i, a, d, combiner, ni,
        na, nd);
}

#define MAXC 64
typedef struct {
  int ints[MAXC];
  MPI_Aint addrs[MAXC];
  MPI_Datatype types[MAXC];
} Contents;

static void get_contents(MPI_Datatype t, Contents* c) {
  memset(c, 0, sizeof *c);
  CHECK_MPI(MPI_Type_get_contents(t, MAXC, MAXC, MAXC, c->ints, c->addrs, c->types));
}

static void expect_ints(const char* what, const int* got, const int* want, int n) {
  for (int i = 0; i < n; ++i) CHECK(got[i] == want[i], "%s: integer %d is %d, expected %d", what, i, got[i], want[i]);
}

/* Source array: src[i] = 1000 + i. A type over MPI_INT applied at src + origin selects, in
 * type-map order, the ints at origin + idx[k]. */
#define NSRC 160
static int src[NSRC];

static void fill(int* a, int n, int v) {
  for (int i = 0; i < n; ++i) a[i] = v;
}

/* dst (NSRC ints) holds exactly the selected ints, every other entry still -1. */
static void expect_scattered(const char* what, const int* dst, int origin, const int* idx, int n) {
  char hit[NSRC];
  memset(hit, 0, sizeof hit);
  for (int k = 0; k < n; ++k) {
    int at = origin + idx[k];
    hit[at] = 1;
    CHECK(dst[at] == 1000 + at, "%s: int %d (map entry %d) is %d, expected %d", what, at, k, dst[at], 1000 + at);
  }
  for (int i = 0; i < NSRC; ++i)
    if (!hit[i]) CHECK(dst[i] == -1, "%s: gap int %d was overwritten (%d)", what, i, dst[i]);
}

static void expect_packed_order(const char* what, MPI_Datatype t, int origin, const int* idx, int n) {
  int packed[NSRC], dst[NSRC], psize = -1, pos = 0;
  CHECK_MPI(MPI_Pack_size(1, t, MPI_COMM_WORLD, &psize));
  CHECK(psize == n * (int)sizeof(int), "%s: MPI_Pack_size %d, expected %d", what, psize, n * (int)sizeof(int));
  CHECK_MPI(MPI_Pack(src + origin, 1, t, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD));
  CHECK(pos == n * (int)sizeof(int), "%s: position after MPI_Pack %d, expected %d", what, pos, n * (int)sizeof(int));
  for (int k = 0; k < n && k < NSRC; ++k)
    CHECK(packed[k] == 1000 + origin + idx[k], "%s: packed int %d is %d, expected %d", what, k, packed[k],
          1000 + origin + idx[k]);
  fill(dst, NSRC, -1);
  pos = 0;
  CHECK_MPI(MPI_Unpack(packed, n * (int)sizeof(int), &pos, dst + origin, 1, t, MPI_COMM_WORLD));
  CHECK(pos == n * (int)sizeof(int), "%s: position after MPI_Unpack %d", what, pos);
  expect_scattered(what, dst, origin, idx, n);
}

/* ---- predefined types ---------------------------------------------------------------- */
static void expect_name(MPI_Datatype t, const char* want) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_MPI(MPI_Type_get_name(t, name, &len));
  CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "name of datatype %d is \"%s\" (%d), expected \"%s\"",
        (int)t, name, len, want);
}

static void test_predefined(void) {
  struct di { double v; int i; };
  struct si { short v; int i; };
  expect_layout("MPI_INT", MPI_INT, sizeof(int), 0, sizeof(int), 0, sizeof(int));
  expect_layout("MPI_DOUBLE", MPI_DOUBLE, 8, 0, 8, 0, 8);
  expect_layout("MPI_CHAR", MPI_CHAR, 1, 0, 1, 0, 1);
  expect_layout("MPI_2INT", MPI_2INT, 2 * sizeof(int), 0, 2 * sizeof(int), 0, 2 * sizeof(int));
  expect_layout("MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(double) + sizeof(int), 0, sizeof(struct di), 0,
                offsetof(struct di, i) + sizeof(int));
  expect_layout("MPI_SHORT_INT", MPI_SHORT_INT, sizeof(short) + sizeof(int), 0, sizeof(struct si), 0,
                offsetof(struct si, i) + sizeof(int));
  expect_layout("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, 16, 0, 16, 0, 16);
  expect_layout("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, 8, 0, 8, 0, 8);
  expect_layout("MPI_WCHAR", MPI_WCHAR, sizeof(wchar_t), 0, sizeof(wchar_t), 0, sizeof(wchar_t));
  expect_layout("MPI_AINT", MPI_AINT, sizeof(MPI_Aint), 0, sizeof(MPI_Aint), 0, sizeof(MPI_Aint));
  expect_layout("MPI_PACKED", MPI_PACKED, 1, 0, 1, 0, 1);
  expect_layout("MPI_CXX_BOOL", MPI_CXX_BOOL, 1, 0, 1, 0, 1);
  expect_envelope("MPI_INT", MPI_INT, MPI_COMBINER_NAMED, 0, 0, 0);
  expect_envelope("MPI_PACKED", MPI_PACKED, MPI_COMBINER_NAMED, 0, 0, 0);
  expect_name(MPI_INT, "MPI_INT");
  expect_name(MPI_DOUBLE, "MPI_DOUBLE");
  expect_name(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
  expect_name(MPI_FLOAT_INT, "MPI_FLOAT_INT");
  expect_name(MPI_PACKED, "MPI_PACKED");
  expect_name(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
  expect_name(MPI_CXX_BOOL, "MPI_CXX_BOOL");
  MPI_Datatype committed = MPI_INT;
  CHECK_MPI(MPI_Type_commit(&committed));
  CHECK(committed == MPI_INT, "MPI_Type_commit changed a predefined handle");

  MPI_Datatype m = MPI_DATATYPE_NULL;
  CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
  CHECK(m == MPI_DOUBLE, "MPI_Type_match_size(REAL, 8) is %d", (int)m);
  CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &m));
  CHECK(m == MPI_FLOAT, "MPI_Type_match_size(REAL, 4) is %d", (int)m);
  CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, (int)sizeof(int), &m));
  int msize = 0;
  CHECK_MPI(MPI_Type_size(m, &msize));
  CHECK(msize == (int)sizeof(int), "MPI_Type_match_size(INTEGER, %d) has size %d", (int)sizeof(int), msize);
  CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
  CHECK(m == MPI_C_DOUBLE_COMPLEX, "MPI_Type_match_size(COMPLEX, 16) is %d", (int)m);
}

/* ---- constructors ------------------------------------------------------------------------ */
static void test_contiguous_vector(void) {
  MPI_Datatype t;
  Contents c;
  const int I = (int)sizeof(int);

  CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("contiguous(3, int)", t, 3 * I, 0, 3 * I, 0, 3 * I);
  expect_envelope("contiguous", t, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
  get_contents(t, &c);
  CHECK(c.ints[0] == 3 && c.types[0] == MPI_INT, "contiguous contents %d %d", c.ints[0], (int)c.types[0]);
  {
    const int idx[] = {0, 1, 2};
    expect_packed_order("contiguous(3, int)", t, 0, idx, 3);
  }
  CHECK_MPI(MPI_Type_free(&t));
  CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free left handle %d", (int)t);

  /* vector(3, 2, 4): ints 0 1, 4 5, 8 9. */
  CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("vector(3, 2, 4, int)", t, 6 * I, 0, 10 * I, 0, 10 * I);
  expect_envelope("vector", t, MPI_COMBINER_VECTOR, 3, 0, 1);
  get_contents(t, &c);
  {
    const int want[] = {3, 2, 4};
    expect_ints("vector contents", c.ints, want, 3);
    CHECK(c.types[0] == MPI_INT, "vector contents type %d", (int)c.types[0]);
    const int idx[] = {0, 1, 4, 5, 8, 9};
    expect_packed_order("vector(3, 2, 4, int)", t, 0, idx, 6);
  }
  CHECK_MPI(MPI_Type_free(&t));

  /* Negative stride: vector(3, 1, -2): ints 0, -2, -4 -> lb -4 ints, extent 5 ints. */
  CHECK_MPI(MPI_Type_vector(3, 1, -2, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("vector(3, 1, -2, int)", t, 3 * I, -4 * I, 5 * I, -4 * I, 5 * I);
  {
    const int idx[] = {0, -2, -4};
    expect_packed_order("vector(3, 1, -2, int)", t, 10, idx, 3);
  }
  CHECK_MPI(MPI_Type_free(&t));

  /* hvector(2, 1, 12 bytes, double): doubles at 0 and 12 -> extent 20. */
  CHECK_MPI(MPI_Type_create_hvector(2, 1, 12, MPI_DOUBLE, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("hvector(2, 1, 12, double)", t, 16, 0, 20, 0, 20);
  expect_envelope("hvector", t, MPI_COMBINER_HVECTOR, 2, 1, 1);
  get_contents(t, &c);
  CHECK(c.ints[0] == 2 && c.ints[1] == 1 && c.addrs[0] == 12 && c.types[0] == MPI_DOUBLE,
        "hvector contents %d %d %lld %d", c.ints[0], c.ints[1], (long long)c.addrs[0], (int)c.types[0]);
  CHECK_MPI(MPI_Type_free(&t));

  /* hvector with a negative byte stride over ints: ints at 0, -3 ints, -6 ints. */
  CHECK_MPI(MPI_Type_create_hvector(3, 2, -3 * I, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("hvector(3, 2, -3 ints, int)", t, 6 * I, -6 * I, 8 * I, -6 * I, 8 * I);
  {
    const int idx[] = {0, 1, -3, -2, -6, -5};
    expect_packed_order("hvector(3, 2, -3 ints, int)", t, 20, idx, 6);
  }
  CHECK_MPI(MPI_Type_free(&t));

  /* An empty vector. */
  CHECK_MPI(MPI_Type_vector(0, 3, 5, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("vector(0, ...)", t, 0, 0, 0, 0, 0);
  CHECK_MPI(MPI_Type_free(&t));
}

static void test_indexed(void) {
  MPI_Datatype t;
  Contents c;
  const int I = (int)sizeof(int);

  /* indexed {2 at 5, 1 at 0, 3 at 10}: type-map order 5 6 0 10 11 12. */
  {
    const int bl[] = {2, 1, 3}, disp[] = {5, 0, 10};
    CHECK_MPI(MPI_Type_indexed(3, bl, disp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("indexed", t, 6 * I, 0, 13 * I, 0, 13 * I);
    expect_envelope("indexed", t, MPI_COMBINER_INDEXED, 7, 0, 1);
    get_contents(t, &c);
    const int want[] = {3, 2, 1, 3, 5, 0, 10};
    expect_ints("indexed contents", c.ints, want, 7);
    const int idx[] = {5, 6, 0, 10, 11, 12};
    expect_packed_order("indexed", t, 0, idx, 6);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* indexed with a negative displacement and an empty block: ints 3, -2 -1. */
  {
    const int bl[] = {1, 0, 2}, disp[] = {3, 50, -2};
    CHECK_MPI(MPI_Type_indexed(3, bl, disp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("indexed with negative displacement", t, 3 * I, -2 * I, 6 * I, -2 * I, 6 * I);
    const int idx[] = {3, -2, -1};
    expect_packed_order("indexed with negative displacement", t, 4, idx, 3);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* hindexed {1 double at 16, 1 at -8}. */
  {
    const int bl[] = {1, 1};
    const MPI_Aint disp[] = {16, -8};
    CHECK_MPI(MPI_Type_create_hindexed(2, bl, disp, MPI_DOUBLE, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("hindexed", t, 16, -8, 32, -8, 32);
    expect_envelope("hindexed", t, MPI_COMBINER_HINDEXED, 3, 2, 1);
    get_contents(t, &c);
    CHECK(c.ints[0] == 2 && c.ints[1] == 1 && c.ints[2] == 1 && c.addrs[0] == 16 && c.addrs[1] == -8,
          "hindexed contents");
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* indexed_block(3, 2, {0, 4, 9}, short): shorts 0 1 4 5 9 10 -> extent 11 shorts. */
  {
    const int disp[] = {0, 4, 9};
    CHECK_MPI(MPI_Type_create_indexed_block(3, 2, disp, MPI_SHORT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int S = (int)sizeof(short);
    expect_layout("indexed_block", t, 6 * S, 0, 11 * S, 0, 11 * S);
    expect_envelope("indexed_block", t, MPI_COMBINER_INDEXED_BLOCK, 5, 0, 1);
    get_contents(t, &c);
    const int want[] = {3, 2, 0, 4, 9};
    expect_ints("indexed_block contents", c.ints, want, 5);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* indexed_block over ints for the order check: {7, 2} blocks of 2. */
  {
    const int disp[] = {7, 2};
    CHECK_MPI(MPI_Type_create_indexed_block(2, 2, disp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int idx[] = {7, 8, 2, 3};
    expect_packed_order("indexed_block(2, 2, {7, 2}, int)", t, 0, idx, 4);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* hindexed_block(2, 1, {0, 20 bytes}, int). */
  {
    const MPI_Aint disp[] = {0, 5 * I};
    CHECK_MPI(MPI_Type_create_hindexed_block(2, 1, disp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("hindexed_block", t, 2 * I, 0, 6 * I, 0, 6 * I);
    expect_envelope("hindexed_block", t, MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 1);
    get_contents(t, &c);
    CHECK(c.ints[0] == 2 && c.ints[1] == 1 && c.addrs[0] == 0 && c.addrs[1] == 5 * I, "hindexed_block contents");
    const int idx[] = {0, 5};
    expect_packed_order("hindexed_block", t, 0, idx, 2);
    CHECK_MPI(MPI_Type_free(&t));
  }
}

struct S1 {
  double d;
  char c;
};
struct S2 {
  char c;
  int i;
  short s;
};
struct S3 {
  int a;
  double b;
  char c;
};

static MPI_Datatype make_s3(void) {
  MPI_Datatype t;
  const int bl[] = {1, 1, 1};
  const MPI_Aint disp[] = {offsetof(struct S3, a), offsetof(struct S3, b), offsetof(struct S3, c)};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  CHECK_MPI(MPI_Type_create_struct(3, bl, disp, types, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  return t;
}

static void test_struct_resized(void) {
  MPI_Datatype t, r, u;
  Contents c;
  const int I = (int)sizeof(int);

  /* {double, char}: 9 bytes of data, the extent padded to the alignment of double. */
  {
    const int bl[] = {1, 1};
    const MPI_Aint disp[] = {offsetof(struct S1, d), offsetof(struct S1, c)};
    const MPI_Datatype types[] = {MPI_DOUBLE, MPI_CHAR};
    CHECK_MPI(MPI_Type_create_struct(2, bl, disp, types, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("struct {double, char}", t, 9, 0, sizeof(struct S1), 0, 9);
    expect_envelope("struct", t, MPI_COMBINER_STRUCT, 3, 2, 2);
    get_contents(t, &c);
    CHECK(c.ints[0] == 2 && c.ints[1] == 1 && c.ints[2] == 1 && c.addrs[0] == 0 &&
              c.addrs[1] == (MPI_Aint)offsetof(struct S1, c) && c.types[0] == MPI_DOUBLE && c.types[1] == MPI_CHAR,
          "struct contents");
    /* Two of them: the second starts at the padded extent. */
    CHECK_MPI(MPI_Type_contiguous(2, t, &u));
    expect_layout("contiguous(2, struct {double, char})", u, 18, 0, 2 * sizeof(struct S1), 0,
                  sizeof(struct S1) + 9);
    CHECK_MPI(MPI_Type_free(&u));
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* {char, int, short}: 7 bytes, the extent rounded to the alignment of int. */
  {
    const int bl[] = {1, 1, 1};
    const MPI_Aint disp[] = {offsetof(struct S2, c), offsetof(struct S2, i), offsetof(struct S2, s)};
    const MPI_Datatype types[] = {MPI_CHAR, MPI_INT, MPI_SHORT};
    CHECK_MPI(MPI_Type_create_struct(3, bl, disp, types, &t));
    expect_layout("struct {char, int, short}", t, 1 + sizeof(int) + sizeof(short), 0, sizeof(struct S2), 0,
                  offsetof(struct S2, s) + sizeof(short));
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* {int, double, char} (used on the wire below). */
  t = make_s3();
  expect_layout("struct S3", t, sizeof(int) + sizeof(double) + 1, 0, sizeof(struct S3), 0,
                offsetof(struct S3, c) + 1);
  CHECK_MPI(MPI_Type_free(&t));

  /* resized(int, -4, 16): explicit bounds, the data where it was. */
  CHECK_MPI(MPI_Type_create_resized(MPI_INT, -4, 16, &r));
  CHECK_MPI(MPI_Type_commit(&r));
  expect_layout("resized(int, -4, 16)", r, I, -4, 16, 0, I);
  expect_envelope("resized", r, MPI_COMBINER_RESIZED, 0, 2, 1);
  get_contents(r, &c);
  CHECK(c.addrs[0] == -4 && c.addrs[1] == 16 && c.types[0] == MPI_INT, "resized contents %lld %lld %d",
        (long long)c.addrs[0], (long long)c.addrs[1], (int)c.types[0]);
  /* Two of them: elements 16 bytes apart, the markers carried along. */
  CHECK_MPI(MPI_Type_contiguous(2, r, &u));
  CHECK_MPI(MPI_Type_commit(&u));
  expect_layout("contiguous(2, resized(int, -4, 16))", u, 2 * I, -4, 32, 0, 16 + I);
  {
    const int idx[] = {0, 16 / I};
    expect_packed_order("contiguous(2, resized)", u, 0, idx, 2);
  }
  CHECK_MPI(MPI_Type_free(&u));
  /* A struct whose member has an explicit ub: the ub marker wins over the char past it. */
  {
    MPI_Datatype r8;
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 8, &r8));
    const int bl[] = {1, 1};
    const MPI_Aint disp[] = {0, 12};
    const MPI_Datatype types[] = {r8, MPI_CHAR};
    CHECK_MPI(MPI_Type_create_struct(2, bl, disp, types, &u));
    expect_layout("struct {resized(int, 0, 8), char at 12}", u, I + 1, 0, 8, 0, 13);
    CHECK_MPI(MPI_Type_free(&u));
    CHECK_MPI(MPI_Type_free(&r8));
  }
  /* Resized to a smaller extent than the data: a vector of ints interleaved. */
  {
    MPI_Datatype v, vr;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    CHECK_MPI(MPI_Type_create_resized(v, 0, I, &vr));
    CHECK_MPI(MPI_Type_commit(&vr));
    expect_layout("resized(vector(2, 1, 2), 0, int)", vr, 2 * I, 0, I, 0, 3 * I);
    MPI_Datatype two;
    CHECK_MPI(MPI_Type_contiguous(2, vr, &two));
    CHECK_MPI(MPI_Type_commit(&two));
    const int idx[] = {0, 2, 1, 3};
    expect_packed_order("contiguous(2, resized vector)", two, 0, idx, 4);
    CHECK_MPI(MPI_Type_free(&two));
    CHECK_MPI(MPI_Type_free(&vr));
    CHECK_MPI(MPI_Type_free(&v));
  }
  CHECK_MPI(MPI_Type_free(&r));
}

static void test_subarray_darray(void) {
  MPI_Datatype t;
  Contents c;
  const int I = (int)sizeof(int);
  const int sizes[] = {4, 6}, subsizes[] = {2, 3}, starts[] = {1, 2};

  /* C order: element (i, j) at i * 6 + j; rows 1-2, columns 2-4. */
  CHECK_MPI(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("subarray C", t, 6 * I, 0, 24 * I, 8 * I, 9 * I);
  expect_envelope("subarray", t, MPI_COMBINER_SUBARRAY, 8, 0, 1);
  get_contents(t, &c);
  {
    const int want[] = {2, 4, 6, 2, 3, 1, 2, MPI_ORDER_C};
    expect_ints("subarray contents", c.ints, want, 8);
    const int idx[] = {8, 9, 10, 14, 15, 16};
    expect_packed_order("subarray C", t, 0, idx, 6);
  }
  CHECK_MPI(MPI_Type_free(&t));

  /* Fortran order: element (i, j) at i + j * 4; i in 1-2, j in 2-4. */
  CHECK_MPI(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  expect_layout("subarray Fortran", t, 6 * I, 0, 24 * I, 9 * I, 10 * I);
  {
    const int idx[] = {9, 10, 13, 14, 17, 18};
    expect_packed_order("subarray Fortran", t, 0, idx, 6);
  }
  CHECK_MPI(MPI_Type_free(&t));

  /* 3-d C order over doubles: 2x3x4, sub 1x2x2 at (1, 1, 2). */
  {
    const int s3[] = {2, 3, 4}, ss3[] = {1, 2, 2}, st3[] = {1, 1, 2};
    CHECK_MPI(MPI_Type_create_subarray(3, s3, ss3, st3, MPI_ORDER_C, MPI_DOUBLE, &t));
    /* first (1,1,2) = 12 + 4 + 2 = 18, last (1,2,3) = 12 + 8 + 3 = 23 */
    expect_layout("subarray 3-d", t, 4 * 8, 0, 24 * 8, 18 * 8, 6 * 8);
    CHECK_MPI(MPI_Type_free(&t));
  }

  /* darray, block: 8 elements over 4 processes, rank 1 owns 2 and 3. */
  {
    const int g[] = {8}, d[] = {MPI_DISTRIBUTE_BLOCK}, a[] = {MPI_DISTRIBUTE_DFLT_DARG}, p[] = {4};
    CHECK_MPI(MPI_Type_create_darray(4, 1, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("darray block", t, 2 * I, 0, 8 * I, 2 * I, 2 * I);
    expect_envelope("darray", t, MPI_COMBINER_DARRAY, 8, 0, 1);
    get_contents(t, &c);
    const int want[] = {4, 1, 1, 8, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 4, MPI_ORDER_C};
    expect_ints("darray contents", c.ints, want, 8);
    const int idx[] = {2, 3};
    expect_packed_order("darray block", t, 0, idx, 2);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* darray, block with the last process short: 10 over 4 (blocks of 3), rank 3 owns 9. */
  {
    const int g[] = {10}, d[] = {MPI_DISTRIBUTE_BLOCK}, a[] = {MPI_DISTRIBUTE_DFLT_DARG}, p[] = {4};
    CHECK_MPI(MPI_Type_create_darray(4, 3, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t));
    expect_layout("darray short block", t, I, 0, 10 * I, 9 * I, I);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* darray, cyclic(2): 10 elements over 3 processes, rank 1 owns 2 3 and 8 9. */
  {
    const int g[] = {10}, d[] = {MPI_DISTRIBUTE_CYCLIC}, a[] = {2}, p[] = {3};
    CHECK_MPI(MPI_Type_create_darray(3, 1, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("darray cyclic(2)", t, 4 * I, 0, 10 * I, 2 * I, 8 * I);
    const int idx[] = {2, 3, 8, 9};
    expect_packed_order("darray cyclic(2)", t, 0, idx, 4);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* darray, 4x6 over a 2x3 grid: rows block, columns cyclic(1); rank 4 is (1, 1): rows 2-3,
   * columns 1 and 4. */
  {
    const int g[] = {4, 6}, d[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
              a[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p[] = {2, 3};
    CHECK_MPI(MPI_Type_create_darray(6, 4, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    expect_layout("darray 2-d C", t, 4 * I, 0, 24 * I, 13 * I, 10 * I);
    const int idx[] = {13, 16, 19, 22};
    expect_packed_order("darray 2-d C", t, 0, idx, 4);
    CHECK_MPI(MPI_Type_free(&t));
    /* Fortran order: element (i, j) at i + 4 j; rows 2-3, columns 1 and 4 -> 6 7 18 19. */
    CHECK_MPI(MPI_Type_create_darray(6, 4, 2, g, d, a, p, MPI_ORDER_FORTRAN, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int fidx[] = {6, 7, 18, 19};
    expect_packed_order("darray 2-d Fortran", t, 0, fidx, 4);
    CHECK_MPI(MPI_Type_free(&t));
  }
  /* darray, distribute none in one dimension. */
  {
    const int g[] = {3, 4}, d[] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK},
              a[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p[] = {1, 2};
    CHECK_MPI(MPI_Type_create_darray(2, 1, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int idx[] = {2, 3, 6, 7, 10, 11};
    expect_packed_order("darray none x block", t, 0, idx, 6);
    CHECK_MPI(MPI_Type_free(&t));
  }
}

static void test_dup_contents_names(void) {
  MPI_Datatype v, d, inner, outer;
  Contents c;
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;

  CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
  CHECK_MPI(MPI_Type_get_name(v, name, &len));
  CHECK(len == 0 && name[0] == '\0', "a new derived type is named \"%s\"", name);
  CHECK_MPI(MPI_Type_set_name(v, "my vector"));
  CHECK_MPI(MPI_Type_get_name(v, name, &len));
  CHECK(strcmp(name, "my vector") == 0 && len == 9, "name after MPI_Type_set_name: \"%s\" (%d)", name, len);

  CHECK_MPI(MPI_Type_commit(&v));
  CHECK_MPI(MPI_Type_dup(v, &d));
  expect_layout("dup(vector)", d, 6 * sizeof(int), 0, 10 * sizeof(int), 0, 10 * sizeof(int));
  expect_envelope("dup", d, MPI_COMBINER_DUP, 0, 0, 1);
  get_contents(d, &c);
  CHECK(c.types[0] != MPI_DATATYPE_NULL, "dup contents returned no type");
  expect_envelope("contents of dup", c.types[0], MPI_COMBINER_VECTOR, 3, 0, 1);
  CHECK_MPI(MPI_Type_free(&c.types[0]));
  {
    /* The dup of a committed type is committed: it can be packed right away. */
    const int idx[] = {0, 1, 4, 5, 8, 9};
    expect_packed_order("dup(vector)", d, 0, idx, 6);
  }
  CHECK_MPI(MPI_Type_free(&d));
  CHECK_MPI(MPI_Type_free(&v));

  /* Contents outlive the type they name: free the inner type, decode the outer one. */
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &inner));
  CHECK_MPI(MPI_Type_vector(2, 1, 3, inner, &outer));
  CHECK_MPI(MPI_Type_free(&inner));
  CHECK_MPI(MPI_Type_commit(&outer));
  expect_layout("vector(2, 1, 3, contiguous(2, int))", outer, 4 * sizeof(int), 0, 8 * sizeof(int), 0,
                8 * sizeof(int));
  get_contents(outer, &c);
  {
    const int want[] = {2, 1, 3};
    expect_ints("vector over a freed type", c.ints, want, 3);
    MPI_Datatype got = c.types[0];
    expect_envelope("freed inner type, decoded", got, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    Contents ci;
    get_contents(got, &ci);
    CHECK(ci.ints[0] == 2 && ci.types[0] == MPI_INT, "contents of the decoded inner type %d %d", ci.ints[0],
          (int)ci.types[0]);
    int s = 0;
    CHECK_MPI(MPI_Type_size(got, &s));
    CHECK(s == 2 * (int)sizeof(int), "decoded inner type has size %d", s);
    CHECK_MPI(MPI_Type_free(&got));
    const int idx[] = {0, 1, 6, 7};
    expect_packed_order("vector over a freed type", outer, 0, idx, 4);
  }
  CHECK_MPI(MPI_Type_free(&outer));

  /* A struct's contents name every member type. */
  MPI_Datatype s3 = make_s3();
  get_contents(s3, &c);
  CHECK(c.ints[0] == 3 && c.types[0] == MPI_INT && c.types[1] == MPI_DOUBLE && c.types[2] == MPI_CHAR &&
            c.addrs[1] == (MPI_Aint)offsetof(struct S3, b),
        "struct S3 contents");
  CHECK_MPI(MPI_Type_free(&s3));
}

/* ---- addresses, pack, external32 -------------------------------------------------------- */
static void test_addresses_pack(void) {
  struct S3 s;
  memset(&s, 0, sizeof s);
  MPI_Aint base, ab, ac;
  CHECK_MPI(MPI_Get_address(&s, &base));
  CHECK_MPI(MPI_Get_address(&s.b, &ab));
  CHECK_MPI(MPI_Get_address(&s.c, &ac));
  CHECK(MPI_Aint_diff(ab, base) == (MPI_Aint)offsetof(struct S3, b), "MPI_Aint_diff %lld",
        (long long)MPI_Aint_diff(ab, base));
  CHECK(MPI_Aint_add(base, (MPI_Aint)offsetof(struct S3, c)) == ac, "MPI_Aint_add");

  /* Absolute addresses with MPI_BOTTOM. */
  {
    int x[4] = {11, 22, 33, 44}, y[4] = {0, 0, 0, 0};
    MPI_Aint disp[2];
    int bl[2] = {1, 1};
    MPI_Datatype t, tt[2] = {MPI_INT, MPI_INT};
    CHECK_MPI(MPI_Get_address(&x[3], &disp[0]));
    CHECK_MPI(MPI_Get_address(&x[1], &disp[1]));
    CHECK_MPI(MPI_Type_create_struct(2, bl, disp, tt, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    int packed[2], pos = 0;
    CHECK_MPI(MPI_Pack(MPI_BOTTOM, 1, t, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(packed[0] == 44 && packed[1] == 22, "MPI_Pack from MPI_BOTTOM: %d %d", packed[0], packed[1]);
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Get_address(&y[0], &disp[0]));
    CHECK_MPI(MPI_Get_address(&y[2], &disp[1]));
    CHECK_MPI(MPI_Type_create_struct(2, bl, disp, tt, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    pos = 0;
    CHECK_MPI(MPI_Unpack(packed, (int)sizeof packed, &pos, MPI_BOTTOM, 1, t, MPI_COMM_WORLD));
    CHECK(y[0] == 44 && y[1] == 0 && y[2] == 22 && y[3] == 0, "MPI_Unpack to MPI_BOTTOM: %d %d %d %d", y[0], y[1],
          y[2], y[3]);
    CHECK_MPI(MPI_Type_free(&t));
  }

  /* Several items into one buffer, then out again in the same order. */
  {
    MPI_Datatype v, s3 = make_s3();
    CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    double dv[5] = {1.5, -1, 2.5, -1, 3.5}, dout[5] = {0, 7, 0, 7, 0};
    struct S3 in[2], out[2];
    memset(in, 0, sizeof in);
    memset(out, 0x5a, sizeof out);
    in[0].a = 7;
    in[0].b = 0.25;
    in[0].c = 'x';
    in[1].a = -9;
    in[1].b = 1e100;
    in[1].c = 'y';
    int n = 42, nout = 0;
    char buf[256];
    int pos = 0, s1 = 0, s2 = 0, s3size = 0;
    CHECK_MPI(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1));
    CHECK_MPI(MPI_Pack_size(1, v, MPI_COMM_WORLD, &s2));
    CHECK_MPI(MPI_Pack_size(2, s3, MPI_COMM_WORLD, &s3size));
    CHECK(s2 == 24 && s3size == 2 * (int)(sizeof(int) + sizeof(double) + 1), "MPI_Pack_size %d %d", s2, s3size);
    CHECK_MPI(MPI_Pack(&n, 1, MPI_INT, buf, (int)sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(dv, 1, v, buf, (int)sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(in, 2, s3, buf, (int)sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == s1 + s2 + s3size, "position after three MPI_Pack %d, expected %d", pos, s1 + s2 + s3size);
    int end = pos;
    pos = 0;
    CHECK_MPI(MPI_Unpack(buf, end, &pos, &nout, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(buf, end, &pos, dout, 1, v, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(buf, end, &pos, out, 2, s3, MPI_COMM_WORLD));
    CHECK(pos == end, "position after three MPI_Unpack %d", pos);
    CHECK(nout == 42, "unpacked int %d", nout);
    CHECK(dout[0] == 1.5 && dout[1] == 7 && dout[2] == 2.5 && dout[3] == 7 && dout[4] == 3.5,
          "unpacked vector %g %g %g %g %g", dout[0], dout[1], dout[2], dout[3], dout[4]);
    CHECK(out[0].a == 7 && out[0].b == 0.25 && out[0].c == 'x' && out[1].a == -9 && out[1].b == 1e100 &&
              out[1].c == 'y',
          "unpacked structs");
    const unsigned char* raw = (const unsigned char*)out;
    for (size_t i = sizeof(int); i < offsetof(struct S3, b); ++i)
      CHECK(raw[i] == 0x5a, "padding byte %d of an unpacked struct was written", (int)i);
    CHECK_MPI(MPI_Type_free(&v));
    CHECK_MPI(MPI_Type_free(&s3));
  }

  /* external32: big-endian, the standard's sizes. */
  {
    int x = 0x01020304;
    unsigned char buf[64];
    MPI_Aint pos = 0, size = 0;
    CHECK_MPI(MPI_Pack_external_size("external32", 1, MPI_INT, &size));
    CHECK(size == 4, "external32 size of MPI_INT %lld", (long long)size);
    CHECK_MPI(MPI_Pack_external("external32", &x, 1, MPI_INT, buf, sizeof buf, &pos));
    CHECK(pos == 4 && buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4,
          "external32 of 0x01020304: %02x %02x %02x %02x (position %lld)", buf[0], buf[1], buf[2], buf[3],
          (long long)pos);
    int back = 0;
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", buf, 4, &pos, &back, 1, MPI_INT));
    CHECK(back == x && pos == 4, "external32 round trip of an int: %x", back);

    double one = 1.0;
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &one, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    CHECK(pos == 8 && buf[0] == 0x3f && buf[1] == 0xf0 && buf[2] == 0 && buf[7] == 0,
          "external32 of 1.0: %02x %02x ... %02x", buf[0], buf[1], buf[7]);

    /* MPI_LONG is 4 bytes in external32 (sign-extended on the way back). */
    long l = -5, lback = 0;
    CHECK_MPI(MPI_Pack_external_size("external32", 1, MPI_LONG, &size));
    CHECK(size == 4, "external32 size of MPI_LONG %lld", (long long)size);
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &l, 1, MPI_LONG, buf, sizeof buf, &pos));
    CHECK(pos == 4 && buf[0] == 0xff && buf[1] == 0xff && buf[2] == 0xff && buf[3] == 0xfb,
          "external32 of (long)-5: %02x %02x %02x %02x", buf[0], buf[1], buf[2], buf[3]);
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", buf, 4, &pos, &lback, 1, MPI_LONG));
    CHECK(lback == -5, "external32 round trip of a long: %ld", lback);

    /* A struct and a vector: per-member conversion, no padding. */
    MPI_Datatype s3 = make_s3();
    struct S3 in = {0x0a0b0c0d, 2.0, 'q'}, out;
    memset(&out, 0, sizeof out);
    CHECK_MPI(MPI_Pack_external_size("external32", 1, s3, &size));
    CHECK(size == 13, "external32 size of struct {int, double, char} %lld", (long long)size);
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &in, 1, s3, buf, sizeof buf, &pos));
    CHECK(pos == 13 && buf[0] == 0x0a && buf[3] == 0x0d && buf[4] == 0x40 && buf[5] == 0 && buf[12] == 'q',
          "external32 of a struct: %02x %02x %02x %02x %02x", buf[0], buf[3], buf[4], buf[5], buf[12]);
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", buf, 13, &pos, &out, 1, s3));
    CHECK(out.a == in.a && out.b == in.b && out.c == in.c, "external32 round trip of a struct");
    CHECK_MPI(MPI_Type_free(&s3));

    short sv[6] = {0x0102, -1, 0x0304, -1, 0x0506, -1}, sback[6] = {0, 9, 0, 9, 0, 9};
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_SHORT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", sv, 1, v, buf, sizeof buf, &pos));
    CHECK(pos == 6 && buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4 && buf[4] == 5 && buf[5] == 6,
          "external32 of a vector of shorts");
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", buf, 6, &pos, sback, 1, v));
    CHECK(sback[0] == 0x0102 && sback[1] == 9 && sback[2] == 0x0304 && sback[4] == 0x0506 && sback[5] == 9,
          "external32 round trip of a vector of shorts");
    CHECK_MPI(MPI_Type_free(&v));

    /* long double: IEEE binary128, 1.0L = 3fff 0000 ... */
    long double ld = 1.0L, ldback = 0;
    CHECK_MPI(MPI_Pack_external_size("external32", 1, MPI_LONG_DOUBLE, &size));
    CHECK(size == 16, "external32 size of MPI_LONG_DOUBLE %lld", (long long)size);
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    CHECK(buf[0] == 0x3f && buf[1] == 0xff && buf[2] == 0 && buf[15] == 0, "external32 of 1.0L: %02x %02x %02x",
          buf[0], buf[1], buf[2]);
    ld = -3.25L;
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", buf, 16, &pos, &ldback, 1, MPI_LONG_DOUBLE));
    CHECK(ldback == -3.25L, "external32 round trip of a long double: %Lg", ldback);
  }
}

/* ---- statuses -------------------------------------------------------------------------- */
static void test_status(void) {
  MPI_Status st;
  MPI_Datatype s3 = make_s3(), c2;
  int n = -1;
  MPI_Count nx = -1;
  memset(&st, 0, sizeof st);

  /* struct {int, double, char}: 3 basic elements per element. */
  CHECK_MPI(MPI_Status_set_elements(&st, s3, 3));
  CHECK_MPI(MPI_Get_elements(&st, s3, &n));
  CHECK(n == 3, "MPI_Get_elements after MPI_Status_set_elements(3) is %d", n);
  CHECK_MPI(MPI_Get_count(&st, s3, &n));
  CHECK(n == 1, "MPI_Get_count after 3 elements of a 3-element struct is %d", n);
  CHECK_MPI(MPI_Status_set_elements(&st, s3, 4));
  CHECK_MPI(MPI_Get_count(&st, s3, &n));
  CHECK(n == MPI_UNDEFINED, "MPI_Get_count of 4 elements of a 3-element struct is %d", n);
  CHECK_MPI(MPI_Get_elements_x(&st, s3, &nx));
  CHECK(nx == 4, "MPI_Get_elements_x is %lld", (long long)nx);
  CHECK_MPI(MPI_Status_set_elements_x(&st, s3, 6));
  CHECK_MPI(MPI_Get_count(&st, s3, &n));
  CHECK(n == 2, "MPI_Get_count of 6 elements is %d", n);
  CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
  CHECK(n == 26, "MPI_Get_count in bytes of 2 structs is %d", n);

  CHECK_MPI(MPI_Status_set_cancelled(&st, 1));
  int flag = 0;
  CHECK_MPI(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1, "MPI_Test_cancelled after MPI_Status_set_cancelled(1)");
  CHECK_MPI(MPI_Status_set_cancelled(&st, 0));
  CHECK_MPI(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 0, "MPI_Test_cancelled after MPI_Status_set_cancelled(0)");

  /* A real partial receive, rank to itself: 5 ints into 3 x contiguous(2, int). */
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &c2));
  CHECK_MPI(MPI_Type_commit(&c2));
  {
    int out[5] = {1, 2, 3, 4, 5}, in[8];
    MPI_Request req;
    fill(in, 8, -1);
    CHECK_MPI(MPI_Isend(out, 5, MPI_INT, 0, 11, MPI_COMM_SELF, &req));
    CHECK_MPI(MPI_Recv(in, 3, c2, 0, 11, MPI_COMM_SELF, &st));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Get_count(&st, c2, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Get_count of 5 ints as pairs is %d", n);
    CHECK_MPI(MPI_Get_elements(&st, c2, &n));
    CHECK(n == 5, "MPI_Get_elements of 5 ints as pairs is %d", n);
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 5, "MPI_Get_count as MPI_INT is %d", n);
    for (int i = 0; i < 5; ++i) CHECK(in[i] == i + 1, "partial receive int %d is %d", i, in[i]);
    CHECK(in[5] == -1 && in[6] == -1, "partial receive wrote past the data");
  }
  /* Partial receive into a non-contiguous type: 3 ints into vector(2, 2, 3). */
  {
    MPI_Datatype v;
    int out[3] = {7, 8, 9}, in[8];
    MPI_Request req;
    CHECK_MPI(MPI_Type_vector(2, 2, 3, MPI_INT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    fill(in, 8, -1);
    CHECK_MPI(MPI_Isend(out, 3, MPI_INT, 0, 12, MPI_COMM_SELF, &req));
    CHECK_MPI(MPI_Recv(in, 1, v, 0, 12, MPI_COMM_SELF, &st));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(in[0] == 7 && in[1] == 8 && in[2] == -1 && in[3] == 9 && in[4] == -1,
          "partial receive into a vector: %d %d %d %d %d", in[0], in[1], in[2], in[3], in[4]);
    CHECK_MPI(MPI_Get_elements(&st, v, &n));
    CHECK(n == 3, "MPI_Get_elements of a partial vector is %d", n);
    CHECK_MPI(MPI_Get_count(&st, v, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Get_count of a partial vector is %d", n);
    CHECK_MPI(MPI_Type_free(&v));
  }
  /* A receive whose type is freed before it completes. */
  {
    MPI_Datatype v;
    int out[4] = {21, 22, 23, 24}, in[8];
    MPI_Request req;
    CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    fill(in, 8, -1);
    CHECK_MPI(MPI_Irecv(in, 1, v, 0, 13, MPI_COMM_SELF, &req));
    CHECK_MPI(MPI_Type_free(&v));
    CHECK_MPI(MPI_Send(out, 4, MPI_INT, 0, 13, MPI_COMM_SELF));
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK(in[0] == 21 && in[1] == -1 && in[2] == 22 && in[4] == 23 && in[6] == 24 && in[7] == -1,
          "receive into a freed vector type: %d %d %d %d %d %d", in[0], in[1], in[2], in[4], in[6], in[7]);
  }
  CHECK_MPI(MPI_Type_free(&c2));
  CHECK_MPI(MPI_Type_free(&s3));
}

/* ---- derived types on the wire ------------------------------------------------------------ */
/* Rank 0 sends (src + origin, 1, t) three ways; rank 1 receives it as t, as n MPI_INT, and
 * (the other way round) n contiguous ints received as t. */
static void wire_ints(const char* what, MPI_Datatype t, int origin, const int* idx, int n, int tag) {
  if (nranks < 2 || rank > 1) return;
  if (rank == 0) {
    int flat[NSRC];
    CHECK_MPI(MPI_Send(src + origin, 1, t, 1, tag, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Send(src + origin, 1, t, 1, tag + 1, MPI_COMM_WORLD));
    for (int k = 0; k < n; ++k) flat[k] = 1000 + origin + idx[k];
    CHECK_MPI(MPI_Send(flat, n, MPI_INT, 1, tag + 2, MPI_COMM_WORLD));
    /* Buffered: the data is packed into the attached buffer. */
    static char attached[4096 + MPI_BSEND_OVERHEAD];
    void* old = NULL;
    int old_size = 0;
    CHECK_MPI(MPI_Buffer_attach(attached, (int)sizeof attached));
    CHECK_MPI(MPI_Bsend(src + origin, 1, t, 1, tag + 3, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Buffer_detach(&old, &old_size));
    return;
  }
  int dst[NSRC], flat[NSRC], count = -1;
  MPI_Status st;
  char label[160];
  fill(dst, NSRC, -1);
  CHECK_MPI(MPI_Recv(dst + origin, 1, t, 0, tag, MPI_COMM_WORLD, &st));
  snprintf(label, sizeof label, "%s received as the same type", what);
  expect_scattered(label, dst, origin, idx, n);
  CHECK_MPI(MPI_Get_count(&st, t, &count));
  CHECK(count == 1, "%s: MPI_Get_count %d", label, count);
  CHECK_MPI(MPI_Get_elements(&st, t, &count));
  CHECK(count == n, "%s: MPI_Get_elements %d, expected %d", label, count, n);

  fill(flat, NSRC, -1);
  CHECK_MPI(MPI_Recv(flat, NSRC, MPI_INT, 0, tag + 1, MPI_COMM_WORLD, &st));
  CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(count == n, "%s received as MPI_INT: count %d, expected %d", what, count, n);
  for (int k = 0; k < n; ++k)
    CHECK(flat[k] == 1000 + origin + idx[k], "%s received as MPI_INT: int %d is %d, expected %d", what, k, flat[k],
          1000 + origin + idx[k]);
  CHECK(flat[n] == -1, "%s received as MPI_INT: wrote past the data", what);

  fill(dst, NSRC, -1);
  CHECK_MPI(MPI_Recv(dst + origin, 1, t, 0, tag + 2, MPI_COMM_WORLD, &st));
  snprintf(label, sizeof label, "%s sent as MPI_INT, received as the type", what);
  expect_scattered(label, dst, origin, idx, n);

  MPI_Message msg;
  fill(dst, NSRC, -1);
  CHECK_MPI(MPI_Mprobe(0, tag + 3, MPI_COMM_WORLD, &msg, &st));
  CHECK_MPI(MPI_Mrecv(dst + origin, 1, t, &msg, &st));
  snprintf(label, sizeof label, "%s sent by MPI_Bsend, received by MPI_Mrecv as the type", what);
  expect_scattered(label, dst, origin, idx, n);
  CHECK_MPI(MPI_Get_elements(&st, t, &count));
  CHECK(count == n, "%s: MPI_Get_elements %d, expected %d", label, count, n);
}

static void test_wire(void) {
  MPI_Datatype t;
  {
    CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int idx[] = {0, 1, 4, 5, 8, 9};
    wire_ints("vector(3, 2, 4, int)", t, 0, idx, 6, 100);
    CHECK_MPI(MPI_Type_free(&t));
  }
  {
    CHECK_MPI(MPI_Type_vector(4, 1, -3, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int idx[] = {0, -3, -6, -9};
    wire_ints("vector(4, 1, -3, int)", t, 12, idx, 4, 110);
    CHECK_MPI(MPI_Type_free(&t));
  }
  {
    const int bl[] = {2, 1, 3}, disp[] = {5, 0, 10};
    CHECK_MPI(MPI_Type_indexed(3, bl, disp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int idx[] = {5, 6, 0, 10, 11, 12};
    wire_ints("indexed", t, 0, idx, 6, 120);
    CHECK_MPI(MPI_Type_free(&t));
  }
  {
    const int sizes[] = {4, 6}, subsizes[] = {2, 3}, starts[] = {1, 2};
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int idx[] = {8, 9, 10, 14, 15, 16};
    wire_ints("subarray", t, 0, idx, 6, 130);
    CHECK_MPI(MPI_Type_free(&t));
  }
  {
    /* Many blocks (a column of a 100 x 8 matrix): 100 ints, 8 apart. */
    MPI_Datatype col;
    CHECK_MPI(MPI_Type_vector(19, 1, 8, MPI_INT, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    int idx[19];
    for (int i = 0; i < 19; ++i) idx[i] = 8 * i;
    wire_ints("column vector", col, 3, idx, 19, 140);
    CHECK_MPI(MPI_Type_free(&col));
  }

  /* Structs with padding: two of them, as the type and as packed bytes. */
  if (nranks >= 2 && rank <= 1) {
    MPI_Datatype s3 = make_s3();
    struct S3 v[3];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 3; ++i) {
      v[i].a = 100 + i;
      v[i].b = 0.5 * i - 3;
      v[i].c = (char)('a' + i);
    }
    const int packed_size = 3 * (int)(sizeof(int) + sizeof(double) + 1);
    if (rank == 0) {
      CHECK_MPI(MPI_Send(v, 3, s3, 1, 150, MPI_COMM_WORLD));
      CHECK_MPI(MPI_Send(v, 3, s3, 1, 151, MPI_COMM_WORLD));
    } else {
      struct S3 in[4];
      MPI_Status st;
      int count = -1;
      memset(in, 0x77, sizeof in);
      CHECK_MPI(MPI_Recv(in, 4, s3, 0, 150, MPI_COMM_WORLD, &st));
      CHECK_MPI(MPI_Get_count(&st, s3, &count));
      CHECK(count == 3, "struct receive: MPI_Get_count %d", count);
      CHECK_MPI(MPI_Get_elements(&st, s3, &count));
      CHECK(count == 9, "struct receive: MPI_Get_elements %d", count);
      for (int i = 0; i < 3; ++i)
        CHECK(in[i].a == v[i].a && in[i].b == v[i].b && in[i].c == v[i].c, "struct %d received as %d %g %c", i,
              in[i].a, in[i].b, in[i].c);
      const unsigned char* raw = (const unsigned char*)in;
      for (int i = 0; i < 3; ++i) {
        for (size_t b = sizeof(int); b < offsetof(struct S3, b); ++b)
          CHECK(raw[i * sizeof(struct S3) + b] == 0x77, "struct %d: padding byte %d written", i, (int)b);
        for (size_t b = offsetof(struct S3, c) + 1; b < sizeof(struct S3); ++b)
          CHECK(raw[i * sizeof(struct S3) + b] == 0x77, "struct %d: tail padding byte %d written", i, (int)b);
      }
      for (size_t b = 0; b < sizeof(struct S3); ++b)
        CHECK(raw[3 * sizeof(struct S3) + b] == 0x77, "struct receive wrote into the fourth struct");

      char bytes[256], want[256];
      int pos = 0;
      CHECK_MPI(MPI_Recv(bytes, (int)sizeof bytes, MPI_BYTE, 0, 151, MPI_COMM_WORLD, &st));
      CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
      CHECK(count == packed_size, "struct received as MPI_BYTE: %d bytes, expected %d", count, packed_size);
      CHECK_MPI(MPI_Pack(v, 3, s3, want, (int)sizeof want, &pos, MPI_COMM_WORLD));
      CHECK(memcmp(bytes, want, (size_t)packed_size) == 0, "struct received as MPI_BYTE differs from MPI_Pack");
    }
    CHECK_MPI(MPI_Type_free(&s3));
  }
}

/* ---- collectives ----------------------------------------------------------------------------- */
static void test_collectives(void) {
  MPI_Datatype v, c3, v3;
  /* Bcast of 2 x vector(4, 1, 2, double): doubles 0 2 4 6 and 7 9 11 13. */
  CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &v));
  CHECK_MPI(MPI_Type_commit(&v));
  {
    double b[16];
    for (int i = 0; i < 16; ++i) b[i] = rank == 0 ? i + 0.5 : -1;
    CHECK_MPI(MPI_Bcast(b, 2, v, 0, MPI_COMM_WORLD));
    const int sel[] = {0, 2, 4, 6, 7, 9, 11, 13};
    char hit[16] = {0};
    for (int k = 0; k < 8; ++k) {
      hit[sel[k]] = 1;
      CHECK(b[sel[k]] == sel[k] + 0.5, "MPI_Bcast of a vector: double %d is %g", sel[k], b[sel[k]]);
    }
    for (int i = 0; i < 16; ++i)
      if (!hit[i]) CHECK(b[i] == (rank == 0 ? i + 0.5 : -1), "MPI_Bcast of a vector: gap %d is %g", i, b[i]);
  }
  CHECK_MPI(MPI_Type_free(&v));

  /* Allreduce (MPI_SUM) of 2 x contiguous(3, double). */
  CHECK_MPI(MPI_Type_contiguous(3, MPI_DOUBLE, &c3));
  CHECK_MPI(MPI_Type_commit(&c3));
  {
    double in[6], out[7];
    for (int i = 0; i < 6; ++i) in[i] = rank + 1 + 10.0 * i;
    for (int i = 0; i < 7; ++i) out[i] = -7;
    CHECK_MPI(MPI_Allreduce(in, out, 2, c3, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 6; ++i) {
      double want = nranks * (nranks + 1) / 2.0 + 10.0 * i * nranks;
      CHECK(out[i] == want, "MPI_Allreduce of contiguous doubles: %d is %g, expected %g", i, out[i], want);
    }
    CHECK(out[6] == -7, "MPI_Allreduce of contiguous doubles wrote past the data");
  }
  CHECK_MPI(MPI_Type_free(&c3));

  /* Allreduce (MPI_SUM) of 2 x vector(3, 1, 2, double): doubles 0 2 4 and 5 7 9. */
  CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &v3));
  CHECK_MPI(MPI_Type_commit(&v3));
  {
    double in[12], out[12];
    for (int i = 0; i < 12; ++i) {
      in[i] = rank + 1 + i;
      out[i] = -7;
    }
    CHECK_MPI(MPI_Allreduce(in, out, 2, v3, MPI_SUM, MPI_COMM_WORLD));
    const int sel[] = {0, 2, 4, 5, 7, 9};
    char hit[12] = {0};
    for (int k = 0; k < 6; ++k) {
      const int i = sel[k];
      hit[i] = 1;
      double want = nranks * (nranks + 1) / 2.0 + (double)i * nranks;
      CHECK(out[i] == want, "MPI_Allreduce of a vector: double %d is %g, expected %g", i, out[i], want);
    }
    for (int i = 0; i < 12; ++i)
      if (!hit[i]) CHECK(out[i] == -7, "MPI_Allreduce of a vector: gap %d is %g", i, out[i]);
    /* the same non-blocking (the schedules' recursive doubling on packed data) */
    for (int i = 0; i < 12; ++i) out[i] = -7;
    MPI_Request req;
    CHECK_MPI(MPI_Iallreduce(in, out, 2, v3, MPI_SUM, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < 6; ++k) {
      const int i = sel[k];
      double want = nranks * (nranks + 1) / 2.0 + (double)i * nranks;
      CHECK(out[i] == want, "MPI_Iallreduce of a vector: double %d is %g, expected %g", i, out[i], want);
    }
    for (int i = 0; i < 12; ++i)
      if (!hit[i]) CHECK(out[i] == -7, "MPI_Iallreduce of a vector: gap %d is %g", i, out[i]);
  }
  CHECK_MPI(MPI_Type_free(&v3));

  /* Ialltoall and Iallgather with a strided type on one side: each block is vector(2, 1, 3, int)
   * resized to a 4-int extent (ints 0 and 3 of every 4), the other side contiguous pairs; the
   * own block moves too. Block of rank r for rank d holds 100 r + 10 d + {0, 1}. */
  {
    MPI_Datatype pair, strided;
    CHECK_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &pair));
    CHECK_MPI(MPI_Type_create_resized(pair, 0, 4 * (MPI_Aint)sizeof(int), &strided));
    CHECK_MPI(MPI_Type_commit(&strided));
    int* sparse = malloc(sizeof(int) * 4 * (size_t)nranks);
    int* dense = malloc(sizeof(int) * 2 * (size_t)nranks);
    for (int d = 0; d < nranks; ++d) {
      sparse[4 * d] = 100 * rank + 10 * d;
      sparse[4 * d + 1] = sparse[4 * d + 2] = -5;
      sparse[4 * d + 3] = 100 * rank + 10 * d + 1;
      dense[2 * d] = dense[2 * d + 1] = -1;
    }
    MPI_Request req;
    CHECK_MPI(MPI_Ialltoall(sparse, 1, strided, dense, 2, MPI_INT, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int f = 0; f < nranks; ++f)
      CHECK(dense[2 * f] == 100 * f + 10 * rank && dense[2 * f + 1] == 100 * f + 10 * rank + 1,
            "MPI_Ialltoall strided -> dense: block from %d is %d %d", f, dense[2 * f], dense[2 * f + 1]);
    /* back: dense -> strided, the gaps untouched */
    for (int d = 0; d < nranks; ++d) {
      dense[2 * d] = 100 * rank + 10 * d;
      dense[2 * d + 1] = 100 * rank + 10 * d + 1;
      for (int k = 0; k < 4; ++k) sparse[4 * d + k] = -9;
    }
    CHECK_MPI(MPI_Ialltoall(dense, 2, MPI_INT, sparse, 1, strided, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int f = 0; f < nranks; ++f)
      CHECK(sparse[4 * f] == 100 * f + 10 * rank && sparse[4 * f + 3] == 100 * f + 10 * rank + 1 &&
                sparse[4 * f + 1] == -9 && sparse[4 * f + 2] == -9,
            "MPI_Ialltoall dense -> strided: block from %d is %d %d %d %d", f, sparse[4 * f], sparse[4 * f + 1],
            sparse[4 * f + 2], sparse[4 * f + 3]);
    /* Iallgather of my strided pair into dense pairs, and of a dense pair into strided blocks */
    int mine[4] = {rank, -5, -5, rank + 1000};
    for (int i = 0; i < 2 * nranks; ++i) dense[i] = -1;
    CHECK_MPI(MPI_Iallgather(mine, 1, strided, dense, 2, MPI_INT, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int f = 0; f < nranks; ++f)
      CHECK(dense[2 * f] == f && dense[2 * f + 1] == f + 1000, "MPI_Iallgather strided -> dense: %d is %d %d", f,
            dense[2 * f], dense[2 * f + 1]);
    int two[2] = {rank, rank + 1000};
    for (int i = 0; i < 4 * nranks; ++i) sparse[i] = -9;
    CHECK_MPI(MPI_Iallgather(two, 2, MPI_INT, sparse, 1, strided, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int f = 0; f < nranks; ++f)
      CHECK(sparse[4 * f] == f && sparse[4 * f + 3] == f + 1000 && sparse[4 * f + 1] == -9 && sparse[4 * f + 2] == -9,
            "MPI_Iallgather dense -> strided: %d is %d %d %d %d", f, sparse[4 * f], sparse[4 * f + 1],
            sparse[4 * f + 2], sparse[4 * f + 3]);
    free(sparse);
    free(dense);
    CHECK_MPI(MPI_Type_free(&pair));
    CHECK_MPI(MPI_Type_free(&strided));
  }
}

/* ---- errors ----------------------------------------------------------------------------------- */
static int error_class(int code) {
  int c = -1;
  MPI_Error_class(code, &c);
  return c;
}

#define EXPECT_CLASS(call, cls)                                                                       \
  do {                                                                                                \
    int rc_ = (call);                                                                                 \
    CHECK(rc_ != MPI_SUCCESS && error_class(rc_) == (cls), "%s returned %d (class %d), expected %s", #call, \
          rc_, error_class(rc_), #cls);                                                                \
  } while (0)

#define EXPECT_FAIL(call)                                                              \
  do {                                                                                 \
    int rc_ = (call);                                                                  \
    CHECK(rc_ != MPI_SUCCESS, "%s succeeded, expected an error", #call);             \
  } while (0)

static void test_errors(void) {
  MPI_Datatype t = MPI_DATATYPE_NULL, u = MPI_DATATYPE_NULL;
  int ibuf[8] = {0};
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

  EXPECT_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_contiguous(2, (MPI_Datatype)7777, &t), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
  {
    const int bl[] = {1, -1}, disp[] = {0, 2};
    EXPECT_CLASS(MPI_Type_indexed(2, bl, disp, MPI_INT, &t), MPI_ERR_ARG);
  }
  {
    const int bl[] = {1, 1};
    const MPI_Aint disp[] = {0, 8};
    const MPI_Datatype types[] = {MPI_INT, (MPI_Datatype)9999};
    EXPECT_CLASS(MPI_Type_create_struct(2, bl, disp, types, &t), MPI_ERR_TYPE);
  }
  {
    const int sizes[] = {4}, subsizes[] = {5}, starts[] = {0};
    EXPECT_CLASS(MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    const int subsizes2[] = {2}, starts2[] = {3};
    EXPECT_CLASS(MPI_Type_create_subarray(1, sizes, subsizes2, starts2, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_subarray(1, sizes, subsizes2, starts, 7, MPI_INT, &t), MPI_ERR_ARG);
  }
  {
    const int g[] = {8}, d[] = {MPI_DISTRIBUTE_BLOCK}, a[] = {MPI_DISTRIBUTE_DFLT_DARG}, p[] = {4};
    EXPECT_CLASS(MPI_Type_create_darray(3, 0, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    const int small[] = {1};
    EXPECT_CLASS(MPI_Type_create_darray(4, 0, 1, g, d, small, p, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
  }
  EXPECT_CLASS(MPI_Type_commit(NULL), MPI_ERR_ARG);

  /* Freeing a predefined type: an error, the handle unchanged. */
  t = MPI_INT;
  EXPECT_CLASS(MPI_Type_free(&t), MPI_ERR_TYPE);
  CHECK(t == MPI_INT, "a failed MPI_Type_free changed the handle to %d", (int)t);
  /* Freeing twice: the handle is MPI_DATATYPE_NULL after the first. */
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
  CHECK_MPI(MPI_Type_free(&t));
  EXPECT_CLASS(MPI_Type_free(&t), MPI_ERR_TYPE);

  /* Decoding a named type. */
  {
    int ints[4];
    MPI_Aint addrs[4];
    MPI_Datatype types[4];
    EXPECT_FAIL(MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, addrs, types));
  }
  EXPECT_FAIL(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t));
  EXPECT_FAIL(MPI_Pack_external("native", ibuf, 1, MPI_INT, ibuf + 2, 16, &(MPI_Aint){0}));
  {
    int pos = 0;
    char small[4];
    EXPECT_FAIL(MPI_Pack(ibuf, 2, MPI_INT, small, (int)sizeof small, &pos, MPI_COMM_WORLD));
    CHECK(pos == 0, "a failed MPI_Pack moved the position to %d", pos);
  }

  /* An uncommitted type in communication, a negative count. */
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &u));
  {
    int rc = MPI_Send(ibuf, 1, u, rank, 901, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_TYPE, "MPI_Send of an uncommitted type returned %d", rc);
    if (rc == MPI_SUCCESS) MPI_Recv(ibuf, 2, MPI_INT, rank, 901, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_CLASS(MPI_Pack(ibuf, 1, u, ibuf + 4, 16, &(int){0}, MPI_COMM_WORLD), MPI_ERR_TYPE);
  }
  EXPECT_CLASS(MPI_Send(ibuf, -1, MPI_INT, rank, 902, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Send(ibuf, 1, (MPI_Datatype)7777, rank, 903, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_MPI(MPI_Type_free(&u));

  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  for (int i = 0; i < NSRC; ++i) src[i] = 1000 + i;

  test_predefined();
  test_contiguous_vector();
  test_indexed();
  test_struct_resized();
  test_subarray_darray();
  test_dup_contents_names();
  test_addresses_pack();
  test_status();
  test_wire();
  test_collectives();
  test_errors();
  return FINISH("datatypes");
}
