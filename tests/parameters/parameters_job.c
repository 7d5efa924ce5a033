/* The smallest xmsg program: init, one barrier, finalize. The parameter tests run it with
 * malformed and undeclared XMSG_* variables. */
#include <xmsg/xmsg.h>

#include <stdio.h>

int main(int argc, char** argv) {
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) {
    fprintf(stderr, "parameters_job: %s\n", xmsg_last_error_message());
    return 1;
  }
  int rank = -1;
  if (xmsg_comm_rank(XMSG_COMM_WORLD, &rank) != XMSG_SUCCESS || xmsg_barrier(XMSG_COMM_WORLD) != XMSG_SUCCESS) return 1;
  printf("parameters_job: rank %d OK\n", rank);
  return xmsg_finalize() == XMSG_SUCCESS ? 0 : 1;
}
