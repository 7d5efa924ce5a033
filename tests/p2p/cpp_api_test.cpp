// The C++ API over the same job: spans, requests with wait(), exceptions with code + message.
#include <xmsg/xmsg.hpp>

#include "p2p_util.hpp"

#include <array>
#include <vector>

namespace {

TEST(CppApi, SpanSendRecvAndRequests) {
  xmsg::Communicator comm(XMSG_COMM_WORLD);
  const int rank = comm.rank(), size = comm.size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  std::vector<double> out(1000), in(1000, -1);
  for (int i = 0; i < 1000; ++i) out[i] = rank * 1000.0 + i;
  xmsg::Request r = comm.irecv(std::span(in), left, 31);
  comm.send(std::span(out), right, 31);
  xmsg::Status st = r.wait();
  EXPECT_EQ(st.source, left);
  EXPECT_EQ(st.tag, 31);
  EXPECT_EQ(st.bytes, static_cast<int64_t>(1000 * sizeof(double)));
  EXPECT_EQ(in[999], left * 1000.0 + 999);
  EXPECT_FALSE(r.pending());

  struct Point {
    float x, y;
    int id;
  };
  std::array<Point, 3> pts{{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}}, got{};
  std::vector<xmsg::Request> reqs;
  reqs.push_back(comm.irecv(std::span(got), left, 32));
  reqs.push_back(comm.isend(std::span(pts), right, 32));
  auto statuses = xmsg::Request::wait_all(reqs);
  EXPECT_EQ(statuses[0].bytes, static_cast<int64_t>(sizeof pts));
  EXPECT_EQ(got[2].id, 9);
}

TEST(CppApi, ErrorsThrowWithCodeAndMessage) {
  xmsg::Communicator comm(XMSG_COMM_WORLD);
  std::vector<int> v(4);
  try {
    comm.send(std::span(v), comm.size() + 2, 0);
    FAIL() << "send to an invalid rank did not throw";
  } catch (const xmsg::Error& e) {
    EXPECT_EQ(e.code(), XMSG_ERR_RANK);
    EXPECT_NE(std::string(e.what()).find("dest"), std::string::npos) << e.what();
  }
  // Truncation surfaces from wait() as an exception carrying XMSG_ERR_TRUNCATE.
  const int rank = comm.rank();
  std::vector<int> small(2);
  auto r = comm.irecv(std::span(small), rank, 33);
  comm.send(std::span(v), rank, 33);
  try {
    r.wait();
    FAIL() << "truncated receive did not throw";
  } catch (const xmsg::Error& e) {
    EXPECT_EQ(e.code(), XMSG_ERR_TRUNCATE);
  }
}

TEST(CppApi, SplitAndDupAreOwned) {
  xmsg::Communicator world(XMSG_COMM_WORLD);
  xmsg::Communicator dup = world.dup();
  EXPECT_EQ(dup.size(), world.size());
  EXPECT_EQ(dup.rank(), world.rank());
  xmsg::Communicator solo = world.split(world.rank(), 0);
  EXPECT_EQ(solo.size(), 1);
  EXPECT_EQ(solo.rank(), 0);
  int x = 5, y = 0;
  solo.sendrecv(std::span(&x, 1), 0, 1, std::span(&y, 1), 0, 1);
  EXPECT_EQ(y, 5);
  xmsg::Status st;
  EXPECT_FALSE(solo.iprobe(xmsg::any_source, xmsg::any_tag, &st));
}

}  // namespace
