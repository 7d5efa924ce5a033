/* Latency of one 64-bit atomic and its flush, as osu_fop_latency / osu_cas_latency measure it
 * (OSU 7.4 offers only MPI_CHAR, MPI_INT and MPI_FLOAT, none of which a device's atomics take):
 * rank 0 issues, rank 1 (another node) owns the window, both under MPI_Win_lock_all; then an
 * exclusive lock, an 8-byte put and the unlock (osu_put_latency -s lock's loop). Prints the median
 * of 7 batches per operation, in microseconds, and who applied them (xmsg_rma_atomics, _locks).
 * Build: build/bin/xmsgcc -O2 probe-atomics.c -o probe-atomics */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int iters = argc > 1 ? atoi(argv[1]) : 2000, target = n - 1;
  int64_t* mem = NULL;
  MPI_Win win;
  MPI_Win_allocate(64, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  memset(mem, 0, 64);
  MPI_Info info;
  char who[32] = "?", locks[32] = "?";
  int flag = 0;
  MPI_Win_get_info(win, &info);
  MPI_Info_get(info, "xmsg_rma_atomics", sizeof who - 1, who, &flag);
  MPI_Info_get(info, "xmsg_rma_locks", sizeof locks - 1, locks, &flag);
  MPI_Info_free(&info);
  const char* names[] = {"fetch_and_op SUM", "compare_and_swap", "fetch_and_op MAX", "accumulate SUM",
                         "lock + put + unlock"};
  MPI_Win_lock_all(0, win);
  for (int op = 0; op < 5; ++op) {
    if (op == 4) MPI_Win_unlock_all(win);
    double batch[7];
    for (int b = 0; b < 7; ++b) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == 0)
        for (int i = 0; i < iters; ++i) {
          int64_t one = 1, res = 0, cmpv = i, swap = i + 1;
          if (op == 0) MPI_Fetch_and_op(&one, &res, MPI_INT64_T, target, 0, MPI_SUM, win);
          if (op == 1) MPI_Compare_and_swap(&swap, &cmpv, &res, MPI_INT64_T, target, 1, win);
          if (op == 2) MPI_Fetch_and_op(&swap, &res, MPI_INT64_T, target, 2, MPI_MAX, win);
          if (op == 3) MPI_Accumulate(&one, 1, MPI_INT64_T, target, 3, 1, MPI_INT64_T, MPI_SUM, win);
          if (op == 4) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
            MPI_Put(&one, 1, MPI_INT64_T, target, 4, 1, MPI_INT64_T, win);
            MPI_Win_unlock(target, win);
            continue;
          }
          MPI_Win_flush(target, win);
        }
      batch[b] = (MPI_Wtime() - t0) * 1e6 / iters;
    }
    qsort(batch, 7, sizeof batch[0], cmp);
    if (rank == 0) printf("%-20s %8.2f us (atomics: %s, locks: %s)\n", names[op], batch[3], who, locks);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
