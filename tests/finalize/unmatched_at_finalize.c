/* unmatched_at_finalize MODE: rank 0 sends rank 1 what rank 1 never receives, then every rank
 * calls MPI_Finalize, which must return (issue 19, finding 3).
 *   eager       one small MPI_Send; over tcp it waits in the sender for a connection that rank 1,
 *               already in the finalize fence, must still accept
 *   rendezvous  a 4 MiB MPI_Isend freed with MPI_Request_free, never matched */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "eager";
  if (strcmp(mode, "eager") != 0 && strcmp(mode, "rendezvous") != 0) {
    fprintf(stderr, "usage: unmatched_at_finalize [eager|rendezvous]\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "unmatched_at_finalize needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* buffer = NULL;
  if (rank == 0) {
    if (strcmp(mode, "eager") == 0) {
      int value = 42;
      MPI_Send(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else {
      const int bytes = 4 << 20;
      buffer = malloc(bytes);
      memset(buffer, 1, bytes);
      MPI_Request request;
      MPI_Isend(buffer, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &request);
      MPI_Request_free(&request);
    }
  }
  MPI_Finalize();
  free(buffer);
  printf("unmatched_at_finalize %s: rank %d finalized\n", mode, rank);
  return 0;
}
