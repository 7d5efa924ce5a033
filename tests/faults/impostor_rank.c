/* The second attacker of tests/faults/impersonation.sh: an unchanged MPI program, started by
 * another user with a rank's PMIx variables and tests/faults/uid_shim.c preloaded, so that the
 * real runtime tries to join the job as that rank. MPI_Init must fail (the job's PMIx server
 * refuses the connection); if it returns, the program says so and leaves at once, without a
 * fence the job would wait in. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("impostor_rank: JOINED THE JOB as rank %d\n", rank);
  fflush(stdout);
  _Exit(0);
}
