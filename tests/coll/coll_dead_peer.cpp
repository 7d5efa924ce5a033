// A rank that dies while its peers wait in a shared-memory collective. Three ranks on one node
// set up their region with a first barrier; rank 2 then leaves while ranks 0 and 1 wait in the
// next barrier.
//   coll_dead_peer [exit]          rank 2 _exit(0)s without finalizing anything. The launcher must
//                                  end the job at once and name rank 2 (xmsgrun: exit status 1,
//                                  "rank 2 (pid P) exited with status 0 without finalizing"), as
//                                  mpirun does. Ranks 0 and 1 never leave by themselves (they may
//                                  print COLL_DEAD_PEER_DETECTED first): a launcher that let the
//                                  job run on would hang it.
//   coll_dead_peer pmix-finalized  rank 2 leaves PMIx cleanly (PMIx_Finalize, so no launcher sees
//                                  a failure) but not the xmsg runtime, then exits 0: the runtime
//                                  alone must turn the others' barrier into XMSG_ERR_PEER_FAILED
//                                  naming rank 2, never a hang. Ranks 0 and 1 each print
//                                  COLL_DEAD_PEER_DETECTED and leave the same way; the job exits 0.
// Anything unexpected prints UNEXPECTED and exits 1.
#include <xmsg/xmsg.h>

#include <pmix.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "exit";
  const bool pmix_finalized = std::strcmp(mode, "pmix-finalized") == 0;
  if (!pmix_finalized && std::strcmp(mode, "exit") != 0) {
    std::printf("UNEXPECTED: unknown mode '%s'\n", mode);
    return 1;
  }
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) return 2;
  int rank = 0, size = 0;
  xmsg_comm_rank(XMSG_COMM_WORLD, &rank);
  xmsg_comm_size(XMSG_COMM_WORLD, &size);
  if (size != 3) {
    std::printf("UNEXPECTED: needs 3 ranks\n");
    return 1;
  }
  int rc = xmsg_barrier(XMSG_COMM_WORLD);
  if (rc != XMSG_SUCCESS) {
    std::printf("UNEXPECTED: first barrier rc=%d %s\n", rc, xmsg_last_error_message());
    return 1;
  }
  if (rank == 2) {
    usleep(50000);  // the others are waiting in the second barrier by now
    if (pmix_finalized) PMIx_Finalize(nullptr, 0);
    _exit(0);
  }
  rc = xmsg_barrier(XMSG_COMM_WORLD);
  if (rc == XMSG_ERR_PEER_FAILED && std::strstr(xmsg_last_error_message(), "rank 2")) {
    std::printf("COLL_DEAD_PEER_DETECTED rank %d: %s\n", rank, xmsg_last_error_message());
  } else {
    std::printf("UNEXPECTED: rank %d rc=%d %s\n", rank, rc, xmsg_last_error_message());
    std::fflush(stdout);
    _exit(1);
  }
  std::fflush(stdout);
  if (!pmix_finalized) {
    for (;;) pause();  // the launcher ends the job
  }
  // Neither survivor leaves before the other has seen rank 2 fail (else the slower one could
  // find the faster one gone first): a point-to-point exchange between the two live ranks.
  const int other = 1 - rank;
  int token = rank, got = -1;
  xmsg_request_t request = XMSG_REQUEST_NULL;
  xmsg_isend(&token, 1, XMSG_INT, other, 7, XMSG_COMM_WORLD, &request);
  xmsg_recv(&got, 1, XMSG_INT, other, 7, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
  xmsg_wait(&request, XMSG_STATUS_IGNORE);
  // The job is broken: nobody finalizes the runtime, only PMIx (the bootstrap's PMIx_Init).
  PMIx_Finalize(nullptr, 0);
  _exit(0);
}
