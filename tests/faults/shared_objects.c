/* What dev_shm_watch watches (issue 19, nothing named in /dev/shm): a one-node job that sets
 * up the objects one rank creates for all (a collective region by MPI_Allreduce on
 * MPI_COMM_WORLD, a window by MPI_Win_allocate_shared), checks each works, and ends.
 * shared_objects [--not-dumpable] */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

int main(int argc, char** argv) {
  int rank = -1, size = 0, sum = 0, bad = 0;
  /* --not-dumpable: as a rank under Yama ptrace_scope 1 or a setuid wrapper, no peer may take
   * this process's descriptors or read its memory (pidfd_getfd, process_vm_readv). */
  if (argc > 1 && strcmp(argv[1], "--not-dumpable") == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    perror("shared_objects: prctl(PR_SET_DUMPABLE)");
    return 2;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size * (size - 1) / 2) {
    fprintf(stderr, "shared_objects: rank %d: allreduce gave %d\n", rank, sum);
    bad = 1;
  }
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int* mine = NULL;
  MPI_Win win;
  if (MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win) != MPI_SUCCESS) {
    fprintf(stderr, "shared_objects: rank %d: MPI_Win_allocate_shared failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Win_lock_all(0, win);
  *mine = 100 + rank;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  int nrank = 0, nsize = 0, disp = 0;
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_size(node, &nsize);
  MPI_Aint bytes = 0;
  int* theirs = NULL;
  MPI_Win_shared_query(win, (nrank + 1) % nsize, &bytes, &disp, &theirs);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int want = 0;
  MPI_Sendrecv(&rank, 1, MPI_INT, (nrank + nsize - 1) % nsize, 0, &want, 1, MPI_INT, (nrank + 1) % nsize, 0, node,
               MPI_STATUS_IGNORE);
  if (*theirs != 100 + want) {
    fprintf(stderr, "shared_objects: rank %d: the neighbour's window holds %d, want %d\n", rank, *theirs, 100 + want);
    bad = 1;
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !any) printf("SHARED_OBJECTS_OK\n");
  MPI_Finalize();
  return any;
}
