/* Derived datatypes in point-to-point at every protocol size (MPI-3.1 3.3, 4.1): eager and
 * rendezvous, posted and unexpected, derived on one side or both, truncated, synchronous, to
 * self, with the type freed before the request completes. Non-contiguous data travels as its
 * packed stream, packed into and unpacked out of the transports' buffers in pieces (the
 * runtime's packed messages): piece boundaries fall inside elements and inside blocks, so the
 * element counts below are chosen not to divide any fragment size.
 *
 * Every receive is checked as a whole image: the receive buffer starts as 0xEE bytes and must
 * end up exactly as MPI_Unpack of the expected stream into 0xEE bytes makes it (data where the
 * type map says, every gap untouched, nothing written past the buffer). */
#include "conformance.h"

#include <stdint.h>

static int rank = 0, nranks = 1;

typedef struct {
  int a;
  double b;
  char c;
} Rec; /* 13 bytes of data in 24: three blocks an element, padding between */

enum { kTypes = 3 };
static const char* type_names[kTypes] = {"vector(n, 3, 5, int)", "struct {int; double; char}",
                                         "indexed {1, 4, 2} at {0, 3, 9} ints"};

/* Element count of type k needing about `ints` ints of data. */
static int count_for(int k, int ints) {
  switch (k) {
    case 0: return ints / 3 > 0 ? ints / 3 : 1; /* one vector element is 3 ints: count = blocks */
    case 1: return ints / 3 > 0 ? ints / 3 : 1;
    default: return ints / 7 > 0 ? ints / 7 : 1;
  }
}

/* Type k for `count` elements; *span: bytes from the buffer start to the end of the data. */
static MPI_Datatype make_type(int k, int count, MPI_Aint* span, int* elems) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (k == 0) {
    /* One element = one block of 3 ints every 5: the vector of all of them is 1 element of a
     * type with count blocks (a regular stride). */
    CHECK_MPI(MPI_Type_vector(count, 3, 5, MPI_INT, &t));
    *elems = 1;
    *span = ((MPI_Aint)(count - 1) * 5 + 3) * (MPI_Aint)sizeof(int);
  } else if (k == 1) {
    const int bl[3] = {1, 1, 1};
    const MPI_Aint disp[3] = {offsetof(Rec, a), offsetof(Rec, b), offsetof(Rec, c)};
    const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype s;
    CHECK_MPI(MPI_Type_create_struct(3, bl, disp, types, &s));
    CHECK_MPI(MPI_Type_create_resized(s, 0, (MPI_Aint)sizeof(Rec), &t));
    CHECK_MPI(MPI_Type_free(&s));
    *elems = count;
    *span = (MPI_Aint)count * (MPI_Aint)sizeof(Rec);
  } else {
    const int bl[3] = {1, 4, 2}, disp[3] = {0, 3, 9};
    CHECK_MPI(MPI_Type_indexed(3, bl, disp, MPI_INT, &t)); /* extent 11 ints, irregular blocks */
    *elems = count;
    *span = (MPI_Aint)count * 11 * (MPI_Aint)sizeof(int);
  }
  CHECK_MPI(MPI_Type_commit(&t));
  return t;
}

static void fill_source(unsigned char* p, MPI_Aint n, int seed) {
  for (MPI_Aint i = 0; i < n; ++i) p[i] = (unsigned char)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

/* The packed stream of (src, elems, t) and the image a receive of it into 0xEE bytes gives. */
static void expected(const void* src, int elems, MPI_Datatype t, MPI_Aint span, unsigned char** stream,
                     int* stream_bytes, unsigned char** image) {
  int size = 0, pos = 0;
  CHECK_MPI(MPI_Pack_size(elems, t, MPI_COMM_WORLD, &size));
  *stream = malloc((size_t)size + 1);
  CHECK_MPI(MPI_Pack(src, elems, t, *stream, size, &pos, MPI_COMM_WORLD));
  *stream_bytes = pos;
  *image = malloc((size_t)span + 64);
  memset(*image, 0xEE, (size_t)span + 64);
  pos = 0;
  CHECK_MPI(MPI_Unpack(*stream, *stream_bytes, &pos, *image, elems, t, MPI_COMM_WORLD));
}

static void expect_image(const char* what, const unsigned char* got, const unsigned char* want, MPI_Aint span) {
  for (MPI_Aint i = 0; i < span + 64; ++i)
    if (got[i] != want[i]) {
      CHECK(got[i] == want[i], "%s: byte %lld of the receive buffer is 0x%02x, expected 0x%02x%s", what, (long long)i,
            got[i], want[i], i >= span ? " (past the data)" : "");
      return;
    }
}

/* One message from `from` to `to` (maybe the same rank) in every combination of derived and
 * contiguous sides, posted and unexpected. */
static void exchange(int k, int ints, int from, int to, int tag) {
  const int count = count_for(k, ints);
  MPI_Aint span = 0;
  int elems = 0;
  MPI_Datatype t = make_type(k, count, &span, &elems);
  unsigned char* src = malloc((size_t)span + 64);
  fill_source(src, span + 64, tag);
  unsigned char *stream = NULL, *image = NULL;
  int stream_bytes = 0;
  expected(src, elems, t, span, &stream, &stream_bytes, &image);
  unsigned char* dst = malloc((size_t)span + 64);
  unsigned char* flat = malloc((size_t)stream_bytes + 64);
  char what[200];
  const int sender = rank == from, receiver = rank == to;
  MPI_Request sreq[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st;
  int n = -1;

  /* 1. derived -> derived, the receive posted first (a barrier orders it before the send). */
  memset(dst, 0xEE, (size_t)span + 64);
  MPI_Request rreq = MPI_REQUEST_NULL;
  if (receiver) CHECK_MPI(MPI_Irecv(dst, elems, t, from, tag, MPI_COMM_WORLD, &rreq));
  MPI_Barrier(MPI_COMM_WORLD);
  if (sender) CHECK_MPI(MPI_Isend(src, elems, t, to, tag, MPI_COMM_WORLD, &sreq[0]));
  if (receiver) {
    CHECK_MPI(MPI_Wait(&rreq, &st));
    snprintf(what, sizeof what, "%s x%d, %d -> %d, posted", type_names[k], elems, from, to);
    expect_image(what, dst, image, span);
    CHECK_MPI(MPI_Get_count(&st, t, &n));
    CHECK(n == elems, "%s: MPI_Get_count %d, expected %d", what, n, elems);
  }
  if (sender) CHECK_MPI(MPI_Wait(&sreq[0], MPI_STATUS_IGNORE));

  /* 2. derived -> derived, unexpected (the send is in before the receive is posted), and
   *    3. derived -> contiguous bytes (MPI_PACKED), and 4. contiguous -> derived, the type freed
   *    before the receive completes. */
  if (sender) {
    CHECK_MPI(MPI_Isend(src, elems, t, to, tag + 1, MPI_COMM_WORLD, &sreq[1]));
    CHECK_MPI(MPI_Isend(src, elems, t, to, tag + 2, MPI_COMM_WORLD, &sreq[2]));
    CHECK_MPI(MPI_Isend(stream, stream_bytes, MPI_PACKED, to, tag + 3, MPI_COMM_WORLD, &sreq[3]));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (receiver) {
    memset(dst, 0xEE, (size_t)span + 64);
    CHECK_MPI(MPI_Recv(dst, elems, t, from, tag + 1, MPI_COMM_WORLD, &st));
    snprintf(what, sizeof what, "%s x%d, %d -> %d, unexpected", type_names[k], elems, from, to);
    expect_image(what, dst, image, span);

    memset(flat, 0xEE, (size_t)stream_bytes + 64);
    CHECK_MPI(MPI_Recv(flat, stream_bytes + 64, MPI_PACKED, from, tag + 2, MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Get_count(&st, MPI_PACKED, &n));
    snprintf(what, sizeof what, "%s x%d, %d -> %d, received as MPI_PACKED", type_names[k], elems, from, to);
    CHECK(n == stream_bytes, "%s: %d bytes, expected %d", what, n, stream_bytes);
    CHECK(memcmp(flat, stream, (size_t)stream_bytes) == 0, "%s: differs from MPI_Pack", what);
    CHECK(flat[stream_bytes] == 0xEE, "%s: wrote past the message", what);

    MPI_Aint span2 = 0;
    int elems2 = 0;
    MPI_Datatype t2 = make_type(k, count, &span2, &elems2);
    memset(dst, 0xEE, (size_t)span + 64);
    CHECK_MPI(MPI_Irecv(dst, elems, t2, from, tag + 3, MPI_COMM_WORLD, &rreq));
    CHECK_MPI(MPI_Type_free(&t2));
    CHECK_MPI(MPI_Wait(&rreq, &st));
    snprintf(what, sizeof what, "%s x%d, %d -> %d, sent as MPI_PACKED, type freed before the wait", type_names[k],
             elems, from, to);
    expect_image(what, dst, image, span);
  }
  if (sender) CHECK_MPI(MPI_Waitall(3, &sreq[1], MPI_STATUSES_IGNORE));

  /* 5. synchronous send of a derived type (a rendezvous at every size); the sender's type is
   *    freed before the wait. */
  if (sender) {
    MPI_Aint span3 = 0;
    int elems3 = 0;
    MPI_Datatype t3 = make_type(k, count, &span3, &elems3);
    CHECK_MPI(MPI_Issend(src, elems, t3, to, tag + 4, MPI_COMM_WORLD, &sreq[0]));
    CHECK_MPI(MPI_Type_free(&t3));
  }
  if (receiver) {
    memset(dst, 0xEE, (size_t)span + 64);
    CHECK_MPI(MPI_Recv(dst, elems, t, MPI_ANY_SOURCE, tag + 4, MPI_COMM_WORLD, &st));
    snprintf(what, sizeof what, "%s x%d, %d -> %d, MPI_Issend, MPI_ANY_SOURCE", type_names[k], elems, from, to);
    expect_image(what, dst, image, span);
    CHECK(st.MPI_SOURCE == from, "%s: MPI_SOURCE %d", what, st.MPI_SOURCE);
  }
  if (sender) CHECK_MPI(MPI_Wait(&sreq[0], MPI_STATUS_IGNORE));

  /* 6. truncated: a receive of fewer elements than were sent (types with more than one). */
  if (elems > 1) {
    if (sender) CHECK_MPI(MPI_Isend(src, elems, t, to, tag + 5, MPI_COMM_WORLD, &sreq[0]));
    if (receiver) {
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      memset(dst, 0xEE, (size_t)span + 64);
      const int rc = MPI_Recv(dst, elems - 1, t, from, tag + 5, MPI_COMM_WORLD, &st);
      int cls = -1;
      MPI_Error_class(rc, &cls);
      snprintf(what, sizeof what, "%s x%d into %d, %d -> %d", type_names[k], elems, elems - 1, from, to);
      CHECK(cls == MPI_ERR_TRUNCATE, "%s: MPI_Recv returned class %d, expected MPI_ERR_TRUNCATE", what, cls);
      /* Nothing lands past the elements received into. */
      const MPI_Aint end = (MPI_Aint)(elems - 1) * (MPI_Aint)sizeof(Rec);
      if (k == 1)
        for (MPI_Aint i = end; i < span + 64; ++i)
          if (dst[i] != 0xEE) {
            CHECK(dst[i] == 0xEE, "%s: byte %lld past the receive's elements written", what, (long long)i);
            break;
          }
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    if (sender) CHECK_MPI(MPI_Wait(&sreq[0], MPI_STATUS_IGNORE));
  }

  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Type_free(&t));
  free(src);
  free(dst);
  free(flat);
  free(stream);
  free(image);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  /* From one element to ~2.4 MB of data: the mailbox, the ring's eager records, the rendezvous
   * (CMA chunks, stream fragments, tcp's pushed head) and several chunks of it. */
  const int sizes[] = {1, 10, 333, 3001, 40001, 600001};
  int tag = 0;
  for (int k = 0; k < kTypes; ++k)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
      exchange(k, sizes[s], 0, 0, tag += 10); /* to self */
      if (nranks >= 2) {
        exchange(k, sizes[s], 0, nranks - 1, tag += 10);
        exchange(k, sizes[s], nranks - 1, 0, tag += 10);
      }
    }
  return FINISH("datatype_messages");
}
