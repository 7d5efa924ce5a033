/* Built through `pkg-config --cflags --libs xmsg` against the moved prefix: the C API. */
#include <stdio.h>
#include <xmsg/xmsg.h>

int main(int argc, char** argv) {
  int rank = -1, size = 0;
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) return 1;
  if (xmsg_comm_rank(XMSG_COMM_WORLD, &rank) != XMSG_SUCCESS) return 1;
  if (xmsg_comm_size(XMSG_COMM_WORLD, &size) != XMSG_SUCCESS) return 1;
  printf("hello_c: rank %d of %d\n", rank, size);
  return xmsg_finalize() == XMSG_SUCCESS ? 0 : 1;
}
