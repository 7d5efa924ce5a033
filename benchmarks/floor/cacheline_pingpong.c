/* cacheline_pingpong: the physical floor under every shared-memory latency number.
 *
 * Two processes, one per core, bounce a counter in one shared cache line: each waits for the
 * other's value and answers with the next. Half a round trip is the cost of handing one line
 * from core to core, the least any library's one-way small-message latency can be (it has to
 * move at least that line). Printed next to a compare run it tells how far a library is from
 * the hardware; the VM this project is measured on switches between ~0.05 and ~0.25 µs.
 *
 * Usage: cacheline_pingpong [-i ITER] [-r ROUNDS]   (defaults 200000, 9; prints every round's
 * one-way latency and their median). Needs two CPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct line {
  _Alignas(64) _Atomic uint64_t value;
};

static int pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static long parse_positive(const char* flag, const char* text) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || !end || *end || v <= 0) {
    fprintf(stderr, "error: option %s: invalid value '%s' (expected a positive integer)\n", flag, text);
    exit(1);
  }
  return v;
}

int main(int argc, char** argv) {
  long iters = 200000, rounds = 9;
  int opt;
  while ((opt = getopt(argc, argv, "i:r:h")) != -1) {
    if (opt == 'i') iters = parse_positive("-i", optarg);
    else if (opt == 'r') rounds = parse_positive("-r", optarg);
    else {
      fprintf(stderr, "usage: %s [-i ITER] [-r ROUNDS]\n", argv[0]);
      return opt == 'h' ? 0 : 1;
    }
  }
  if (rounds > 1000) rounds = 1000;
  struct line* l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (l == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  /* Pinned before the fork, and the child reports through a pipe once it sits on CPU 1: under
   * chrt's SCHED_FIFO two spinners sharing a core would never let each other run. */
  if (pin(0) != 0) {
    fprintf(stderr, "error: cannot pin to CPU 0: %s\n", strerror(errno));
    return 1;
  }
  double one_way[1000];
  for (long r = 0; r < rounds; ++r) {
    int ready[2];
    if (pipe(ready) != 0) {
      perror("pipe");
      return 1;
    }
    atomic_store(&l->value, UINT64_MAX); /* no value either side waits for */
    const uint64_t base = (uint64_t)r * 4 * (uint64_t)iters;
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child < 0) {
      perror("fork");
      return 1;
    }
    if (child == 0) {
      /* A parent killed on a timeout (benchmarks/compare gives up after a few seconds) must not
       * leave its partner spinning. */
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
      if (pin(1) != 0) {
        fprintf(stderr, "error: cannot pin to CPU 1: %s\n", strerror(errno));
        _exit(1);
      }
      if (write(ready[1], "x", 1) != 1) _exit(1);
      /* The parent stores base, base+2, ...; the child answers with the odd values. */
      uint64_t v = base;
      for (long i = 0; i < iters; ++i) {
        while (atomic_load_explicit(&l->value, memory_order_acquire) != v) {
        }
        atomic_store_explicit(&l->value, v + 1, memory_order_release);
        v += 2;
      }
      _exit(0);
    }
    char byte;
    const ssize_t got = read(ready[0], &byte, 1);
    close(ready[0]);
    close(ready[1]);
    if (got != 1) {
      fprintf(stderr, "error: the partner process could not pin itself to CPU 1\n");
      waitpid(child, NULL, 0);
      return 1;
    }
    const double t0 = now_us();
    uint64_t v = base;
    for (long i = 0; i < iters; ++i) {
      atomic_store_explicit(&l->value, v, memory_order_release);
      while (atomic_load_explicit(&l->value, memory_order_acquire) != v + 1) {
      }
      v += 2;
    }
    const double t1 = now_us();
    int status = 0;
    if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "error: the partner process failed\n");
      return 1;
    }
    one_way[r] = (t1 - t0) / (2.0 * (double)iters);
    printf("round %ld: %.3f us one-way\n", r + 1, one_way[r]);
  }
  qsort(one_way, (size_t)rounds, sizeof one_way[0], cmp_double);
  printf("# cache-line hand-off, one way (median of %ld rounds of %ld round trips)\n%.3f\n", rounds, iters,
         one_way[rounds / 2]);
  munmap(l, sizeof *l);
  return 0;
}
