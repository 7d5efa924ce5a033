/* shm_footprint [--pattern hello|ring|all] [--before-collectives] [--max-mapped BYTES]
 *               [--max-segments K] [--sleep S]
 *
 * An MPI hello (MPI_Allreduce of the ranks) that reports how much shared memory each rank has
 * mapped after it (or, with --before-collectives, before it): the sum of the Size and Rss
 * fields of every shared-memory mapping in /proc/self/smaps, gathered to rank 0, which prints
 * one line
 *   footprint: ranks N size avg A max M rss avg A max M segments max K
 * Shared memory is a /dev/shm object (unlinked ones show as "/dev/shm/... (deleted)") or one of
 * xmsg's memfds ("/memfd:xmsg-... (deleted)", which never have a name). Built against xmsg
 * (xmsg_mpi) and against Open MPI (mpicc) alike, so both are measured the same way in one run.
 *   --pattern ring  first exchanges one small message with each neighbour (rank +- 1)
 *   --pattern all   first exchanges one small message with every other rank (every peer in use)
 *   --before-collectives  measures after that exchange, before the first collective: the
 *                   rank has then talked to exactly the peers of its pattern
 *   --max-mapped B  every rank checks its own mapped Size against B: exit 1 when above
 *   --max-segments K  likewise for the number of shared-memory mappings
 *   --sleep S       sleeps S seconds before MPI_Finalize (time for an outside sampler)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct shm_maps {
  long long size;
  long long rss;
  long long segments;
};

/* Walks smaps: a mapping's header line names its file; the Size: and Rss: lines that follow
 * belong to it until the next header (a line whose first field is an address range). */
static int read_shm_maps(struct shm_maps* out) {
  FILE* f = fopen("/proc/self/smaps", "r");
  char line[4096];
  int in_shm = 0;
  memset(out, 0, sizeof *out);
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    long long kb;
    char* dash = strchr(line, '-');
    char* space = strchr(line, ' ');
    if (dash && space && dash < space && strchr("0123456789abcdef", line[0])) {
      in_shm = strstr(line, " /dev/shm/") != NULL || strstr(line, " /memfd:xmsg-") != NULL;
      if (in_shm) ++out->segments;
    } else if (in_shm && sscanf(line, "Size: %lld kB", &kb) == 1) {
      out->size += kb * 1024;
    } else if (in_shm && sscanf(line, "Rss: %lld kB", &kb) == 1) {
      out->rss += kb * 1024;
    }
  }
  fclose(f);
  return 0;
}

/* Exchanges one int with each neighbour (rank +- 1) or with every other rank, point-to-point
 * only: a collective may go through a node-wide region instead. */
static int exchange(const char* pattern, int rank, int size) {
  int* got = malloc(sizeof(int) * (size_t)size);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
  int n = 0, i, bad = 0;
  for (i = 0; i < size; ++i) {
    const int neighbour = i == (rank + 1) % size || i == (rank + size - 1) % size;
    got[i] = -1;
    if (i == rank || (strcmp(pattern, "ring") == 0 && !neighbour)) continue;
    MPI_Irecv(&got[i], 1, MPI_INT, i, 3, MPI_COMM_WORLD, &reqs[n++]);
    MPI_Isend(&rank, 1, MPI_INT, i, 3, MPI_COMM_WORLD, &reqs[n++]);
  }
  MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
  for (i = 0; i < size; ++i)
    if (got[i] != -1 && got[i] != i) {
      fprintf(stderr, "shm_footprint: rank %d: got %d from %d\n", rank, got[i], i);
      bad = 1;
    }
  free(got);
  free(reqs);
  return bad;
}

int main(int argc, char** argv) {
  const char* pattern = "hello";
  long long max_mapped = -1, max_segments = -1;
  int sleep_s = 0, early = 0, rank = -1, size = 0, sum = -1, i;
  struct shm_maps maps;
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--pattern") == 0 && i + 1 < argc) pattern = argv[++i];
    else if (strcmp(argv[i], "--before-collectives") == 0) early = 1;
    else if (strcmp(argv[i], "--max-mapped") == 0 && i + 1 < argc) max_mapped = atoll(argv[++i]);
    else if (strcmp(argv[i], "--max-segments") == 0 && i + 1 < argc) max_segments = atoll(argv[++i]);
    else if (strcmp(argv[i], "--sleep") == 0 && i + 1 < argc) sleep_s = atoi(argv[++i]);
    else {
      fprintf(stderr, "shm_footprint: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (strcmp(pattern, "hello") != 0 && strcmp(pattern, "ring") != 0 && strcmp(pattern, "all") != 0) {
    fprintf(stderr, "shm_footprint: unknown pattern '%s'\n", pattern);
    return 2;
  }
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(pattern, "hello") != 0 && size > 1 && exchange(pattern, rank, size) != 0) return 1;
  if (early && read_shm_maps(&maps) != 0) {
    perror("shm_footprint: /proc/self/smaps");
    return 1;
  }
  if (MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) return 1;
  if (sum != size * (size - 1) / 2) {
    fprintf(stderr, "shm_footprint: rank %d: allreduce gave %d\n", rank, sum);
    return 1;
  }
  if (!early && read_shm_maps(&maps) != 0) {
    perror("shm_footprint: /proc/self/smaps");
    return 1;
  }
  long long mine[3] = {maps.size, maps.rss, maps.segments}, total[3], most[3];
  MPI_Reduce(mine, total, 3, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(mine, most, 3, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("footprint: ranks %d size avg %lld max %lld rss avg %lld max %lld segments max %lld\n", size,
           total[0] / size, most[0], total[1] / size, most[1], most[2]);
  fflush(stdout);
  int failed = 0;
  if (max_mapped >= 0 && maps.size > max_mapped) {
    fprintf(stderr, "shm_footprint: rank %d maps %lld bytes of shared memory, bound %lld\n", rank, maps.size, max_mapped);
    failed = 1;
  }
  if (max_segments >= 0 && maps.segments > max_segments) {
    fprintf(stderr, "shm_footprint: rank %d maps %lld shared-memory segments, bound %lld\n", rank, maps.segments,
            max_segments);
    failed = 1;
  }
  if (sleep_s > 0) sleep((unsigned)sleep_s);
  MPI_Finalize();
  return failed;
}
