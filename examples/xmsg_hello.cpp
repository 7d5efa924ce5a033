// The smallest xmsg job: every rank says who and where it is.
//   xmsgrun -n 4 build/bin/xmsg_hello
#include <xmsg/bootstrap/bootstrap.hpp>

#include <cstdio>

int main() {
  try {
    auto boot = xmsg::bootstrap::make_bootstrap();
    std::printf("rank %d of %d on node %d (%s)\n", boot->rank(), boot->size(), boot->node_id(),
                boot->hostname().c_str());
    boot->finalize();
  } catch (const xmsg::bootstrap::BootstrapError& e) {
    std::fprintf(stderr, "xmsg_hello: %s\n", e.what());
    return 1;
  }
  return 0;
}
