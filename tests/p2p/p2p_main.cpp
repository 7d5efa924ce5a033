// Entry point of the multi-rank GoogleTest programs: every rank runs every test between
// xmsg_init and xmsg_finalize; only rank 0 prints progress, every rank prints its failures.
// The exit code is non-zero on any rank's failure (the launcher then fails the job).
#include <xmsg/xmsg.h>

#include <gtest/gtest.h>

#include <cstdio>

namespace {
class QuietUnlessFailing : public testing::EmptyTestEventListener {
 public:
  explicit QuietUnlessFailing(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(),
                   r.summary());
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (xmsg_init(&argc, &argv) != XMSG_SUCCESS) {
    std::fprintf(stderr, "xmsg_init failed: %s\n", xmsg_last_error_message());
    return 2;
  }
  int rank = 0;
  xmsg_comm_rank(XMSG_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new QuietUnlessFailing(rank));
  }
  int rc = RUN_ALL_TESTS();
  if (xmsg_finalize() != XMSG_SUCCESS) {
    std::fprintf(stderr, "[rank %d] xmsg_finalize failed: %s\n", rank, xmsg_last_error_message());
    rc = 3;
  }
  return rc;
}
