/* Shared by the conformance programs: CHECK(cond, fmt, ...) prints the failed condition with
 * the rank and what differed, and counts it; FINISH(name) prints "name: OK on N ranks" only
 * when no rank saw a failure (the counts are summed over MPI_COMM_WORLD) and returns the exit
 * status. Programs run at any number of ranks >= 1. */
#ifndef XMSG_CONFORMANCE_H
#define XMSG_CONFORMANCE_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int conformance_failures = 0;

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      int r_ = -1;                                                                    \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                             \
      fprintf(stderr, "FAILED rank %d %s:%d: %s: ", r_, __FILE__, __LINE__, #cond);   \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fprintf(stderr, "\n");                                                          \
      ++conformance_failures;                                                         \
    }                                                                                 \
  } while (0)

/* An MPI call that must succeed. */
#define CHECK_MPI(call) CHECK((call) == MPI_SUCCESS, "%s did not return MPI_SUCCESS", #call)

static inline int conformance_finish(const char* name) {
  int total = 0, rank = 0, size = 0;
  MPI_Allreduce(&conformance_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    if (total == 0) printf("%s: OK on %d ranks\n", name, size);
    else printf("%s: %d check(s) failed\n", name, total);
    fflush(stdout);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
#define FINISH(name) conformance_finish(name)

/* Whether the job runs with XMSG_PROGRESS_THREAD off (the values the parameter's flag parser
 * takes for false): tests of progress while a rank computes outside MPI are then not checked. */
static inline int progress_thread_off(void) {
  const char* v = getenv("XMSG_PROGRESS_THREAD");
  return v && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0);
}

#endif
