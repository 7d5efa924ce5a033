// A rank that dies while rank 0 waits on a receive from it.
//   xmsg_p2p_dead_peer [exit]      rank 1 _exit(0)s without finalizing anything once rank 0 waits
//                                  on a receive from it. The launcher must end the job at once
//                                  and name rank 1 (xmsgrun: exit status 1, "rank 1 (pid P) exited
//                                  with status 0 without finalizing"), as mpirun does. The other
//                                  ranks never leave by themselves (rank 0 may print what it saw
//                                  first, DEAD_PEER_DETECTED, before it is ended): a launcher that
//                                  let the job run on would hang it.
//   xmsg_p2p_dead_peer pmix-finalized
//                                  rank 1 leaves PMIx cleanly (PMIx_Finalize, so no launcher sees
//                                  a failure) but not the xmsg runtime, then exits 0: the runtime
//                                  alone must turn rank 0's wait into XMSG_ERR_PEER_FAILED naming
//                                  rank 1, never a hang. Rank 0 prints DEAD_PEER_DETECTED and, for
//                                  a receive posted after the failure, ANY_SOURCE_AFTER_FAILURE_OK;
//                                  every rank leaves the same way and the job exits 0.
// Anything unexpected prints UNEXPECTED and exits 1.
#include <xmsg/xmsg.h>

#include <pmix.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace {

bool g_pmix_finalized_mode = false;

// How a rank leaves: in pmix-finalized mode PMIx_Finalize (the runtime's bootstrap holds the
// only PMIx_Init) and _exit(0), the xmsg runtime left as it is; otherwise wait to be ended.
[[noreturn]] void leave() {
  std::fflush(stdout);
  if (g_pmix_finalized_mode) {
    PMIx_Finalize(nullptr, 0);
    _exit(0);
  }
  for (;;) pause();
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "exit";
  if (std::strcmp(mode, "pmix-finalized") == 0) {
    g_pmix_finalized_mode = true;
  } else if (std::strcmp(mode, "exit") != 0) {
    std::printf("UNEXPECTED: unknown mode '%s'\n", mode);
    return 1;
  }
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) return 2;
  int rank = 0, size = 0;
  xmsg_comm_rank(XMSG_COMM_WORLD, &rank);
  xmsg_comm_size(XMSG_COMM_WORLD, &size);
  if (size < 2) {
    std::printf("UNEXPECTED: needs 2 ranks\n");
    return 1;
  }
  int v = 0;
  if (rank == 1) {
    xmsg_recv(&v, 1, XMSG_INT, 0, 1, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
    usleep(20000);  // rank 0 is blocked in its receive by now
    if (g_pmix_finalized_mode) PMIx_Finalize(nullptr, 0);
    _exit(0);
  }
  if (rank == 0) {
    xmsg_send(&v, 1, XMSG_INT, 1, 1, XMSG_COMM_WORLD);
    int rc = xmsg_recv(&v, 1, XMSG_INT, 1, 2, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
    if (rc == XMSG_ERR_PEER_FAILED && std::strstr(xmsg_last_error_message(), "rank 1")) {
      std::printf("DEAD_PEER_DETECTED: %s\n", xmsg_last_error_message());
      // A receive posted after the failure fails at once, too.
      rc = xmsg_recv(&v, 1, XMSG_INT, XMSG_ANY_SOURCE, 3, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE);
      if (rc == XMSG_ERR_PEER_FAILED) {
        std::printf("ANY_SOURCE_AFTER_FAILURE_OK\n");
      } else {
        std::printf("UNEXPECTED: ANY_SOURCE receive after the failure: rc=%d %s\n", rc, xmsg_last_error_message());
        std::fflush(stdout);
        _exit(1);
      }
    } else {
      std::printf("UNEXPECTED: rc=%d %s\n", rc, xmsg_last_error_message());
      std::fflush(stdout);
      _exit(1);
    }
  }
  // The job is broken: nobody finalizes the runtime.
  leave();
}
