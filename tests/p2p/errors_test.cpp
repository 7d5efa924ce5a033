// Each invalid argument yields its error code and a message naming the argument.
#include "p2p_util.hpp"

#include <string>

namespace {

void expect_error(int rc, int code, const char* mentions) {
  EXPECT_EQ(rc, code) << xmsg_error_string(rc);
  std::string msg = xmsg_last_error_message();
  EXPECT_NE(msg.find(mentions), std::string::npos) << "message '" << msg << "' should mention '" << mentions << "'";
  EXPECT_STRNE(xmsg_error_string(code), "unknown error code");
}

TEST(Errors, InvalidArgumentsAreReportedByName) {
  const int size = world_size();
  int v = 0;
  xmsg_request_t r = XMSG_REQUEST_NULL;
  expect_error(xmsg_send(&v, 1, XMSG_INT, size, 0, XMSG_COMM_WORLD), XMSG_ERR_RANK, "dest");
  expect_error(xmsg_send(&v, 1, XMSG_INT, -5, 0, XMSG_COMM_WORLD), XMSG_ERR_RANK, "dest");
  expect_error(xmsg_recv(&v, 1, XMSG_INT, size + 3, 0, XMSG_COMM_WORLD, nullptr), XMSG_ERR_RANK, "source");
  expect_error(xmsg_isend(&v, -1, XMSG_INT, 0, 0, XMSG_COMM_WORLD, &r), XMSG_ERR_COUNT, "count");
  expect_error(xmsg_irecv(&v, -7, XMSG_INT, 0, 0, XMSG_COMM_WORLD, &r), XMSG_ERR_COUNT, "count");
  expect_error(xmsg_send(nullptr, 3, XMSG_INT, 0, 0, XMSG_COMM_WORLD), XMSG_ERR_BUFFER, "buf");
  expect_error(xmsg_recv(nullptr, 1, XMSG_INT, 0, 0, XMSG_COMM_WORLD, nullptr), XMSG_ERR_BUFFER, "buf");
  expect_error(xmsg_send(&v, 1, XMSG_INT, 0, 0, 12345), XMSG_ERR_COMM, "comm");
  expect_error(xmsg_send(&v, 1, XMSG_INT, 0, 0, XMSG_COMM_NULL), XMSG_ERR_COMM, "comm");
  expect_error(xmsg_recv(&v, 1, XMSG_INT, 0, 0, -17, nullptr), XMSG_ERR_COMM, "comm");
  expect_error(xmsg_send(&v, 1, XMSG_INT, 0, -3, XMSG_COMM_WORLD), XMSG_ERR_TAG, "tag");
  expect_error(xmsg_send(&v, 1, XMSG_INT, 0, XMSG_TAG_UB + 1, XMSG_COMM_WORLD), XMSG_ERR_TAG, "tag");
  expect_error(xmsg_send(&v, 1, XMSG_INT, 0, XMSG_ANY_TAG, XMSG_COMM_WORLD), XMSG_ERR_TAG, "tag");
  expect_error(xmsg_recv(&v, 1, XMSG_INT, 0, -9, XMSG_COMM_WORLD, nullptr), XMSG_ERR_TAG, "tag");
  expect_error(xmsg_send(&v, 1, 999, 0, 0, XMSG_COMM_WORLD), XMSG_ERR_TYPE, "datatype");
  expect_error(xmsg_isend(&v, 1, XMSG_INT, 0, 0, XMSG_COMM_WORLD, nullptr), XMSG_ERR_ARG, "request");
  expect_error(xmsg_wait(nullptr, nullptr), XMSG_ERR_ARG, "request");
  expect_error(xmsg_waitall(-1, nullptr, nullptr), XMSG_ERR_COUNT, "count");
  expect_error(xmsg_comm_split(XMSG_COMM_WORLD, -4, 0, nullptr), XMSG_ERR_ARG, "newcomm");
  xmsg_comm_t w = XMSG_COMM_WORLD;
  expect_error(xmsg_comm_free(&w), XMSG_ERR_COMM, "XMSG_COMM_WORLD");
  size_t s = 0;
  expect_error(xmsg_type_size(0, &s), XMSG_ERR_TYPE, "datatype");
  EXPECT_EQ(r, XMSG_REQUEST_NULL);
}

TEST(Errors, NullBufferWithZeroCountAndProcNullAreFine) {
  XMSG_OK(xmsg_send(nullptr, 0, XMSG_INT, XMSG_PROC_NULL, 0, XMSG_COMM_WORLD));
  xmsg_status_t st;
  XMSG_OK(xmsg_recv(nullptr, 0, XMSG_INT, XMSG_PROC_NULL, XMSG_ANY_TAG, XMSG_COMM_WORLD, &st));
  EXPECT_EQ(st.source, XMSG_PROC_NULL);
  EXPECT_EQ(st.bytes, 0);
  xmsg_request_t r;
  XMSG_OK(xmsg_irecv(nullptr, 0, XMSG_INT, XMSG_PROC_NULL, 0, XMSG_COMM_WORLD, &r));
  XMSG_OK(xmsg_wait(&r, &st));
  EXPECT_EQ(st.source, XMSG_PROC_NULL);
  const int rank = world_rank();
  XMSG_OK(xmsg_send(nullptr, 0, XMSG_INT, rank, 0, XMSG_COMM_WORLD));
  XMSG_OK(xmsg_recv(nullptr, 0, XMSG_INT, rank, 0, XMSG_COMM_WORLD, &st));
  EXPECT_EQ(st.bytes, 0);
}

TEST(Errors, EveryCodeHasAString) {
  for (int c = XMSG_SUCCESS; c < XMSG_ERR_LAST; ++c) EXPECT_STRNE(xmsg_error_string(c), "unknown error code") << c;
  EXPECT_STREQ(xmsg_error_string(XMSG_ERR_LAST + 5), "unknown error code");
}

}  // namespace
