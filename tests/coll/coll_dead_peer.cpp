// A rank that dies while its peers wait in a shared-memory collective must turn their wait into
// XMSG_ERR_PEER_FAILED, never a hang. Three ranks on one node set up their region with a first
// barrier; rank 2 then exits abruptly (no finalize) while ranks 0 and 1 wait in the next
// barrier. Ranks 0 and 1 print COLL_DEAD_PEER_DETECTED with the message (ctest matches the
// output: the launcher may fail the job because a rank died).
#include <xmsg/xmsg.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

int main(int argc, char** argv) {
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) return 2;
  int rank = 0, size = 0;
  xmsg_comm_rank(XMSG_COMM_WORLD, &rank);
  xmsg_comm_size(XMSG_COMM_WORLD, &size);
  if (size != 3) {
    std::printf("needs 3 ranks\n");
    return 1;
  }
  int rc = xmsg_barrier(XMSG_COMM_WORLD);
  if (rc != XMSG_SUCCESS) {
    std::printf("UNEXPECTED: first barrier rc=%d %s\n", rc, xmsg_last_error_message());
    return 1;
  }
  if (rank == 2) {
    usleep(50000);  // the others are waiting in the second barrier by now
    _exit(0);
  }
  rc = xmsg_barrier(XMSG_COMM_WORLD);
  if (rc == XMSG_ERR_PEER_FAILED && std::strstr(xmsg_last_error_message(), "rank 2")) {
    std::printf("COLL_DEAD_PEER_DETECTED rank %d: %s\n", rank, xmsg_last_error_message());
  } else {
    std::printf("UNEXPECTED: rank %d rc=%d %s\n", rank, rc, xmsg_last_error_message());
  }
  std::fflush(stdout);
  // Neither survivor leaves before the other has seen rank 2 fail (else the slower one could
  // find the faster one gone first): a point-to-point exchange between the two live ranks.
  const int other = 1 - rank;
  int token = rank, got = -1;
  xmsg_request_t request = XMSG_REQUEST_NULL;
  xmsg_isend(&token, 1, XMSG_INT, other, 7, XMSG_COMM_WORLD, &request);
  xmsg_recv(&got, 1, XMSG_INT, other, 7, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
  xmsg_wait(&request, XMSG_STATUS_IGNORE);
  _exit(0);
}
