// A rank that dies must turn its peers' waits into XMSG_ERR_PEER_FAILED, never a hang.
// Rank 1 exits abruptly (no finalize) once rank 0 waits on a receive from it; rank 0 prints
// DEAD_PEER_DETECTED with the error message and leaves (the launcher may then fail the job,
// which is why ctest matches the output rather than the exit code).
#include <xmsg/xmsg.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

int main(int argc, char** argv) {
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) return 2;
  int rank = 0, size = 0;
  xmsg_comm_rank(XMSG_COMM_WORLD, &rank);
  xmsg_comm_size(XMSG_COMM_WORLD, &size);
  if (size < 2) {
    std::printf("needs 2 ranks\n");
    return 1;
  }
  int v = 0;
  if (rank == 1) {
    xmsg_recv(&v, 1, XMSG_INT, 0, 1, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
    usleep(20000);  // rank 0 is blocked in its receive by now
    _exit(0);
  }
  if (rank == 0) {
    xmsg_send(&v, 1, XMSG_INT, 1, 1, XMSG_COMM_WORLD);
    int rc = xmsg_recv(&v, 1, XMSG_INT, 1, 2, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
    if (rc == XMSG_ERR_PEER_FAILED && std::strstr(xmsg_last_error_message(), "rank 1")) {
      std::printf("DEAD_PEER_DETECTED: %s\n", xmsg_last_error_message());
      // A receive posted after the failure fails at once, too.
      rc = xmsg_recv(&v, 1, XMSG_INT, XMSG_ANY_SOURCE, 3, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
      if (rc == XMSG_ERR_PEER_FAILED) std::printf("ANY_SOURCE_AFTER_FAILURE_OK\n");
    } else {
      std::printf("UNEXPECTED: rc=%d %s\n", rc, xmsg_last_error_message());
    }
    std::fflush(stdout);
    _exit(0);
  }
  // Other ranks just leave without finalize too (the job is broken anyway).
  _exit(0);
}
