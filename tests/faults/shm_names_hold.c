/* What shm_names.sh kills: every rank initialises, sends one message to the next rank only (so
 * most pairs never map each other's segments and the old rule, "unlink once every local peer has
 * mapped it", keeps those names), then prints "shm_names_hold: rank R pid P segment NAME KIND"
 * for its own segment, as /proc/self/maps shows it: NAME is xmsg-...-shm-R, KIND "dev-shm" for
 * a /dev/shm object (named or unlinked) or "memfd" for one that never had a name. Then it waits
 * to be killed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank = -1, size = 0, token = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &token, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (token != (rank + size - 1) % size) {
    fprintf(stderr, "shm_names_hold: rank %d received %d\n", rank, token);
    return 1;
  }
  char segment[512] = "";
  const char* kind = "";
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[1024];
  char want[32];
  snprintf(want, sizeof want, "-shm-%d", rank);
  while (maps && fgets(line, sizeof line, maps)) {
    char* path = strstr(line, "/dev/shm/xmsg-");
    const char* here = "dev-shm";
    if (!path) {
      path = strstr(line, "/memfd:xmsg-");
      here = "memfd";
    }
    if (!path) continue;
    path[strcspn(path, " \n")] = '\0';
    size_t n = strlen(path), w = strlen(want);
    if (n > w && strcmp(path + n - w, want) == 0) {
      snprintf(segment, sizeof segment, "%s", strstr(path, "xmsg-"));
      kind = here;
    }
  }
  if (maps) fclose(maps);
  printf("shm_names_hold: rank %d pid %d segment %s %s\n", rank, (int)getpid(), segment[0] ? segment : "none", kind);
  fflush(stdout);
  for (;;) pause();
}
