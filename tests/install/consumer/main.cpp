// The C++ API through find_package(xmsg): rank 0 sends each other rank its rank.
#include <xmsg/xmsg.hpp>

#include <array>
#include <cstdio>

int main(int argc, char** argv) {
  xmsg::World world(argc, argv);
  auto comm = world.comm();
  std::array<int, 1> v{comm.rank()};
  if (comm.rank() == 0) {
    for (int r = 1; r < comm.size(); ++r) {
      std::array<int, 1> out{r};
      comm.send(std::span(out), r, /*tag=*/7);
    }
  } else {
    comm.recv(std::span(v), 0, 7);
  }
  std::printf("consumer_cxx: rank %d of %d got %d\n", comm.rank(), comm.size(), v[0]);
  return v[0] == comm.rank() ? 0 : 1;
}
