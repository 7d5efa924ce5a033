/* MPI-3.1 12.4: MPI and threads. MPI_Init_thread(MPI_THREAD_MULTIPLE) is granted (with
 * XMSG_THREAD_MULTIPLE=off: MPI_THREAD_SERIALIZED, and the serialized part runs instead), and
 * several threads of every rank then call MPI at once:
 *  - a receiving thread and a sending thread per rank towards a partner rank, the receiver
 *    entering first: a lock held for a whole blocking receive keeps the sender out on both
 *    ranks and the job hangs; eager and rendezvous sizes, blocking and non-blocking;
 *  - collectives at the same time on one duplicated communicator per thread;
 *  - MPI_Improbe/MPI_Mrecv from MPI_ANY_SOURCE, each thread on its own tag;
 *  - communicators made by every thread at once (dup, split, create from a group), each from
 *    its own parent, then used;
 *  - MPI_Query_thread and MPI_Is_thread_main from the threads.
 * Every received buffer is checked whole. Built with -pthread (the conformance build passes it). */
#include <pthread.h>

#include "conformance.h"

enum { kThreads = 4, kRounds = 60, kLarge = 1 << 20 };

static int rank, size, partner;
static MPI_Comm thread_comm[kThreads];

static int value_of(int from, int thread, int round, int i) { return from * 1000003 + thread * 10007 + round * 101 + i; }

/* Thread 0 receives from the partner, thread 1 sends to it (each rank runs both), so every
 * message is one thread's while the other thread of the same rank is inside MPI too. */
static void pair_traffic(int thread) {
  static int large[2][kLarge / sizeof(int)];
  int* buf = large[thread];
  const int n = kLarge / (int)sizeof(int);
  for (int round = 0; round < kRounds; ++round) {
    const int count = round % 3 == 0 ? n : 1 + round;  /* rendezvous every third round */
    const int tag = 100 + round;
    if (thread == 0) {
      memset(buf, 0xff, sizeof large[0]);
      if (round % 2 == 0) {
        MPI_Status st;
        CHECK_MPI(MPI_Recv(buf, count, MPI_INT, partner, tag, MPI_COMM_WORLD, &st));
        int got = -1;
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(got == count, "round %d: received %d ints, expected %d", round, got, count);
      } else {
        MPI_Request r;
        CHECK_MPI(MPI_Irecv(buf, count, MPI_INT, partner, tag, MPI_COMM_WORLD, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
      }
      int bad = -1;
      for (int i = 0; i < count && bad < 0; ++i)
        if (buf[i] != value_of(partner, 1, round, i)) bad = i;
      CHECK(bad < 0, "round %d: int %d of %d is %d, expected %d", round, bad, count, bad < 0 ? 0 : buf[bad],
            bad < 0 ? 0 : value_of(partner, 1, round, bad));
      CHECK(count == n || buf[count] == -1, "round %d: written past the %d ints received", round, count);
    } else {
      for (int i = 0; i < count; ++i) buf[i] = value_of(rank, 1, round, i);
      if (round % 2 == 0) {
        CHECK_MPI(MPI_Send(buf, count, MPI_INT, partner, tag, MPI_COMM_WORLD));
      } else {
        MPI_Request r;
        CHECK_MPI(MPI_Isend(buf, count, MPI_INT, partner, tag, MPI_COMM_WORLD, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
      }
    }
  }
}

/* Collectives on this thread's own communicator while the other threads run theirs. */
static void collectives(int thread) {
  MPI_Comm comm = thread_comm[thread];
  for (int round = 0; round < kRounds; ++round) {
    int mine[3] = {rank + round, thread, 1}, sum[3] = {0, 0, 0};
    CHECK_MPI(MPI_Allreduce(mine, sum, 3, MPI_INT, MPI_SUM, comm));
    CHECK(sum[0] == size * (size - 1) / 2 + size * round && sum[1] == size * thread && sum[2] == size,
          "thread %d round %d: allreduce gave %d %d %d", thread, round, sum[0], sum[1], sum[2]);
    int root_value = rank == round % size ? value_of(round % size, thread, round, 0) : -1;
    CHECK_MPI(MPI_Bcast(&root_value, 1, MPI_INT, round % size, comm));
    CHECK(root_value == value_of(round % size, thread, round, 0), "thread %d round %d: bcast gave %d", thread, round,
          root_value);
    if (round % 8 == 0) CHECK_MPI(MPI_Barrier(comm));
  }
}

/* Every thread sends one message per round to every rank on its own tag and takes its own
 * with a matched probe from any source. */
static void matched_probes(int thread) {
  const int tag = 500 + thread;
  for (int round = 0; round < kRounds / 4; ++round) {
    MPI_Request* sends = malloc(sizeof(MPI_Request) * (size_t)size);
    int* out = malloc(sizeof(int) * (size_t)size);
    for (int to = 0; to < size; ++to) {
      out[to] = value_of(rank, thread, round, to);
      CHECK_MPI(MPI_Isend(&out[to], 1, MPI_INT, to, tag, MPI_COMM_WORLD, &sends[to]));
    }
    int* seen = calloc((size_t)size, sizeof(int));
    for (int k = 0; k < size; ++k) {
      int flag = 0;
      MPI_Message msg;
      MPI_Status st;
      while (!flag) CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg, &st));
      CHECK(st.MPI_TAG == tag, "thread %d: probed tag %d", thread, st.MPI_TAG);
      int v = -1;
      CHECK_MPI(MPI_Mrecv(&v, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
      const int from = st.MPI_SOURCE;
      CHECK(from >= 0 && from < size, "thread %d: source %d", thread, from);
      if (from < 0 || from >= size) continue;
      ++seen[from];
      /* One round's message per source: the sources' rounds may run ahead by one at most. */
      CHECK(v == value_of(from, thread, round, rank), "thread %d round %d: from %d got %d", thread, round, from, v);
    }
    for (int from = 0; from < size; ++from) CHECK(seen[from] == 1, "thread %d round %d: %d from %d", thread, round, seen[from], from);
    CHECK_MPI(MPI_Waitall(size, sends, MPI_STATUSES_IGNORE));
    /* The sources must not run a round ahead: their next messages would match this round. */
    CHECK_MPI(MPI_Barrier(thread_comm[thread]));
    free(seen);
    free(out);
    free(sends);
  }
}

/* Communicators made at the same time by every thread, each from its own parent: their context
 * ids must come out distinct and alike on every rank, or messages of one reach another. */
static void communicators(int thread) {
  MPI_Comm parent = thread_comm[thread];
  for (int round = 0; round < 8; ++round) {
    MPI_Comm dup, split;
    CHECK_MPI(MPI_Comm_dup(parent, &dup));
    CHECK_MPI(MPI_Comm_split(parent, rank % 2, size - rank, &split));
    MPI_Group group, evens;
    CHECK_MPI(MPI_Comm_group(parent, &group));
    int n_even = (size + 1) / 2, members[64];
    for (int i = 0; i < n_even && i < 64; ++i) members[i] = 2 * i;
    CHECK_MPI(MPI_Group_incl(group, n_even, members, &evens));
    MPI_Comm created;
    CHECK_MPI(MPI_Comm_create(parent, evens, &created));
    CHECK((rank % 2 == 0) == (created != MPI_COMM_NULL), "thread %d: MPI_Comm_create gave %s on rank %d", thread,
          created == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator", rank);
    /* Each new communicator carries this thread's values: a mix-up shows as another's. */
    int mine = value_of(rank, thread, round, 0), sum = 0, expect = 0;
    for (int r = 0; r < size; ++r) expect += value_of(r, thread, round, 0);
    CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == expect, "thread %d round %d: allreduce on the dup gave %d, expected %d", thread, round, sum, expect);
    int split_size = 0, split_expect = 0;
    MPI_Comm_size(split, &split_size);
    for (int r = 0; r < size; ++r)
      if (r % 2 == rank % 2) split_expect += value_of(r, thread, round, 0);
    CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, split));
    CHECK(sum == split_expect, "thread %d round %d: allreduce on the split gave %d, expected %d", thread, round, sum,
          split_expect);
    if (created != MPI_COMM_NULL) {
      int evens_expect = 0;
      for (int r = 0; r < size; r += 2) evens_expect += value_of(r, thread, round, 0);
      CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, created));
      CHECK(sum == evens_expect, "thread %d round %d: allreduce on the created gave %d, expected %d", thread, round,
            sum, evens_expect);
      CHECK_MPI(MPI_Comm_free(&created));
    }
    CHECK_MPI(MPI_Group_free(&evens));
    CHECK_MPI(MPI_Group_free(&group));
    CHECK_MPI(MPI_Comm_free(&split));
    CHECK_MPI(MPI_Comm_free(&dup));
  }
}

static void* run_thread(void* arg) {
  const int thread = (int)(long)arg;
  int level = -1, main_flag = -1;
  CHECK_MPI(MPI_Query_thread(&level));
  CHECK(level == MPI_THREAD_MULTIPLE, "thread %d: MPI_Query_thread says %d", thread, level);
  CHECK_MPI(MPI_Is_thread_main(&main_flag));
  CHECK(main_flag == 0, "thread %d: MPI_Is_thread_main says it is the main thread", thread);
  if (thread < 2) pair_traffic(thread);
  else collectives(thread);
  matched_probes(thread);
  communicators(thread);
  collectives(thread);
  return NULL;
}

static pthread_mutex_t serial = PTHREAD_MUTEX_INITIALIZER;

/* SERIALIZED: threads take turns, each turn a whole exchange with the partner. */
static void* run_serialized(void* arg) {
  const int thread = (int)(long)arg;
  for (int round = 0; round < 20; ++round) {
    pthread_mutex_lock(&serial);
    int out = value_of(rank, thread, round, 0), in = -1;
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, partner, 700 + thread, &in, 1, MPI_INT, partner, 700 + thread, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECK(in == value_of(partner, thread, round, 0), "serialized thread %d round %d: got %d", thread, round, in);
    pthread_mutex_unlock(&serial);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Pairs (0,1), (2,3), ...; an odd last rank is its own partner. */
  partner = (rank ^ 1) < size ? rank ^ 1 : rank;
  const char* allowed = getenv("XMSG_THREAD_MULTIPLE");
  const int multiple_off = allowed && (strcmp(allowed, "off") == 0 || strcmp(allowed, "0") == 0);
  const int expected = multiple_off ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE;
  CHECK(provided == expected, "MPI_Init_thread provided %d, expected %d", provided, expected);
  int level = -1, main_flag = 0;
  CHECK_MPI(MPI_Query_thread(&level));
  CHECK(level == provided, "MPI_Query_thread says %d, MPI_Init_thread provided %d", level, provided);
  CHECK_MPI(MPI_Is_thread_main(&main_flag));
  CHECK(main_flag == 1, "MPI_Is_thread_main is false on the main thread");

  for (int t = 0; t < kThreads; ++t) CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[t]));
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t)
    pthread_create(&threads[t], NULL, provided == MPI_THREAD_MULTIPLE ? run_thread : run_serialized, (void*)(long)t);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  for (int t = 0; t < kThreads; ++t) CHECK_MPI(MPI_Comm_free(&thread_comm[t]));
  return FINISH("threads");
}
