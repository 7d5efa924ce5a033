// OutputForwarder without a job: pipes stand in for the ranks' stdout/stderr and for xmsgrun's
// own stdout/stderr, and the test runs the poll rounds the coordinator would.
#include "OutputForwarder.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace {

using xmsg::launcher::OutputForwarder;
using xmsg::launcher::OutputLimits;
using Clock = std::chrono::steady_clock;
constexpr int kEventMs = 20000;  // how long a test waits for something that must happen

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int p[2];
    EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
    r = p[0];
    w = p[1];
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (r >= 0) ::close(r);
    r = -1;
  }
  void close_write() {
    if (w >= 0) ::close(w);
    w = -1;
  }
};

void write_str(int fd, const std::string& s) { ASSERT_EQ(::write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size())); }

// Ranks 0 and 1 (stdout and stderr each) forwarded to two pipes read by the test, or to one
// pipe for both (`one_file`: xmsgrun run with 2>&1).
class Forwarding {
 public:
  explicit Forwarding(bool tag, OutputLimits limits = {}, bool one_file = false)
      : f_(tag, limits, out_.w, one_file ? out_.w : err_.w) {
    ::signal(SIGPIPE, SIG_IGN);  // as xmsgrun: a reader gone is EPIPE, not death
    for (int fd : {out_.r, err_.r}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
    for (int r = 0; r < 2; ++r) {
      f_.add_stream(r, 1, rank_out_[r].r);
      rank_out_[r].r = -1;
      f_.add_stream(r, 2, rank_err_[r].r);
      rank_err_[r].r = -1;
    }
    EXPECT_TRUE(f_.start());
  }
  OutputForwarder& forwarder() { return f_; }
  int rank_stdout(int r) const { return rank_out_[r].w; }
  int rank_stderr(int r) const { return rank_err_[r].w; }
  void end_rank(int r) {
    rank_out_[r].close_write();
    rank_err_[r].close_write();
  }
  const std::string& out() const { return text_[0]; }
  const std::string& err() const { return text_[1]; }
  void stop_reading() { reading_ = false; }
  void start_reading() { reading_ = true; }
  void reader_gone() {
    out_.close_read();
    err_.close_read();
    reading_ = false;
  }

  // One round of the coordinator's poll loop (and of the test's reader).
  void round(int ms = 10) {
    std::vector<pollfd> fds;
    f_.append_poll_fds(fds);
    ::poll(fds.data(), fds.size(), ms);
    f_.handle_poll(fds.data());
    if (!reading_) return;
    int src[2] = {out_.r, err_.r};
    for (int i = 0; i < 2; ++i) {
      char buf[65536];
      ssize_t n;
      while (src[i] >= 0 && (n = ::read(src[i], buf, sizeof buf)) > 0) text_[i].append(buf, static_cast<size_t>(n));
    }
  }
  bool rounds_until(const std::function<bool()>& done) {
    auto deadline = Clock::now() + std::chrono::milliseconds(kEventMs);
    while (!done() && Clock::now() < deadline) round();
    return done();
  }
  // Ends every rank and forwards what is left.
  void finish() {
    end_rank(0);
    end_rank(1);
    rounds_until([&] { return !f_.streams_open() && f_.written(); });
    f_.stop();
    round(0);
  }

 private:
  Pipe out_, err_;
  Pipe rank_out_[2], rank_err_[2];
  OutputForwarder f_;
  bool reading_ = true;
  std::string text_[2];
};

TEST(OutputForwarder, WholeLinesLeaveAsTheyAreAndALineWaitsForItsEnd) {
  Forwarding t(false);
  write_str(t.rank_stdout(0), "first line\nsecond ");
  ASSERT_TRUE(t.rounds_until([&] { return t.out() == "first line\n"; })) << t.out();
  write_str(t.rank_stdout(0), "half\n");
  ASSERT_TRUE(t.rounds_until([&] { return t.out() == "first line\nsecond half\n"; })) << t.out();
  t.finish();
  EXPECT_EQ(t.out(), "first line\nsecond half\n");
  EXPECT_EQ(t.err(), "");
}

TEST(OutputForwarder, TagsStartEveryLineAndCarriageReturnEndsOne) {
  Forwarding t(true);
  write_str(t.rank_stdout(1), "a\nb\n");
  write_str(t.rank_stderr(0), "10%\r");
  ASSERT_TRUE(t.rounds_until([&] { return t.err() == "[0] 10%\r"; })) << t.err();
  write_str(t.rank_stderr(0), "20%\r");
  ASSERT_TRUE(t.rounds_until([&] { return t.err() == "[0] 10%\r[0] 20%\r"; })) << t.err();
  // "\r\n" ends one line, not two.
  write_str(t.rank_stderr(0), "\nx\r\ny\n");
  t.finish();
  EXPECT_EQ(t.out(), "[1] a\n[1] b\n");
  EXPECT_EQ(t.err(), "[0] 10%\r[0] 20%\r\n[0] x\r\n[0] y\n");
}

TEST(OutputForwarder, LongLineLeavesInPiecesAndOnlyItsStartIsTagged) {
  OutputLimits small;
  small.partial_line = 1000;
  Forwarding t(true, small);
  write_str(t.rank_stdout(0), std::string(2500, 'x'));
  // Pieces of at least the bound leave without a line end; what is shorter waits.
  ASSERT_TRUE(t.rounds_until([&] { return t.out().size() >= 4 + 2000; })) << t.out().size();
  write_str(t.rank_stdout(0), "end\n");
  t.finish();
  EXPECT_EQ(t.out(), "[0] " + std::string(2500, 'x') + "end\n");
}

TEST(OutputForwarder, AnotherLineEndsAnUnfinishedOneWhichContinuesMarked) {
  OutputLimits small;
  small.partial_line = 1000;
  for (bool tag : {false, true}) {
    SCOPED_TRACE(tag ? "tagged" : "untagged");
    Forwarding t(tag, small);
    write_str(t.rank_stdout(0), std::string(1000, 'x'));
    ASSERT_TRUE(t.rounds_until([&] { return t.out().size() == (tag ? 1004u : 1000u); }));
    write_str(t.rank_stdout(1), "hello\n");
    ASSERT_TRUE(t.rounds_until([&] { return t.out().find("hello\n") != std::string::npos; }));
    write_str(t.rank_stdout(0), "yy\n");
    t.finish();
    if (tag) EXPECT_EQ(t.out(), "[0] " + std::string(1000, 'x') + "\n[1] hello\n[0]+ yy\n");
    else EXPECT_EQ(t.out(), std::string(1000, 'x') + "\nhello\nyy\n");
  }
}

TEST(OutputForwarder, StdoutAndStderrAsOneFileKeepTheirLinesApart) {
  OutputLimits small;
  small.partial_line = 1000;
  Forwarding t(true, small, true);
  write_str(t.rank_stdout(0), std::string(1500, 'o'));
  ASSERT_TRUE(t.rounds_until([&] { return t.out().size() >= 1004; }));
  write_str(t.rank_stderr(1), "error\n");
  ASSERT_TRUE(t.rounds_until([&] { return t.out().find("error\n") != std::string::npos; }));
  t.forwarder().message("xmsgrun: a message");
  t.finish();
  // Rank 0's line was ended for rank 1's: nothing is added at its end of file.
  EXPECT_EQ(t.out(), "[0] " + std::string(1500, 'o') + "\n[1] error\nxmsgrun: a message\n");
}

TEST(OutputForwarder, ALastLineWithoutItsEndGetsOne) {
  OutputLimits small;
  small.partial_line = 1000;
  Forwarding t(false, small);
  write_str(t.rank_stdout(0), "no end");
  write_str(t.rank_stderr(0), std::string(1000, 'e'));  // already out when the rank ends
  write_str(t.rank_stdout(1), "progress\r");
  ASSERT_TRUE(t.rounds_until([&] { return t.err().size() == 1000 && t.out() == "progress\r"; }));
  // Rank 0's last line does not overwrite rank 1's '\r' line: it starts a line of its own.
  t.finish();
  EXPECT_EQ(t.out(), "progress\r\nno end\n");
  EXPECT_EQ(t.err(), std::string(1000, 'e') + "\n");
}

TEST(OutputForwarder, FullOutputHoldsTheRanksBackAndLosesNothing) {
  OutputLimits small;
  small.queued = 256 * 1024;
  Forwarding t(false, small);
  t.stop_reading();
  ::fcntl(t.rank_stdout(0), F_SETFL, O_NONBLOCK);
  // The rank writes as long as its pipe takes more; nobody reads xmsgrun's stdout.
  std::string sent;
  long line = 0;
  auto feed = [&] {
    for (;;) {
      std::string l = "line " + std::to_string(line) + " " + std::string(100, '.') + "\n";
      if (::write(t.rank_stdout(0), l.data(), l.size()) != static_cast<ssize_t>(l.size())) return;
      sent += l;
      ++line;
    }
  };
  auto deadline = Clock::now() + std::chrono::milliseconds(kEventMs);
  while (!t.forwarder().held_back() && Clock::now() < deadline) {
    feed();
    t.round();
  }
  ASSERT_TRUE(t.forwarder().held_back());
  feed();  // the last round may have taken some of the rank's pipe
  // Held back: the stream is no longer polled, the rank's pipe stays full, rounds still run
  // (and xmsgrun's own messages are taken) without blocking.
  std::vector<pollfd> fds;
  t.forwarder().append_poll_fds(fds);
  EXPECT_EQ(fds[fds.size() - 4].fd, -1);  // rank 0's stdout
  t.forwarder().message("xmsgrun: still here");
  size_t before = sent.size();
  for (int i = 0; i < 20; ++i) {
    feed();
    t.round();
  }
  EXPECT_EQ(sent.size(), before) << "the rank's pipe was read although xmsgrun's stdout is full";
  EXPECT_FALSE(t.forwarder().written());
  // The reader is back: everything arrives, in order.
  t.start_reading();
  t.finish();
  EXPECT_EQ(t.out(), sent);
  EXPECT_EQ(t.err(), "xmsgrun: still here\n");
}

TEST(OutputForwarder, ReaderGoneDropsOutputAndStillDrainsTheRanks) {
  Forwarding t(false);
  t.reader_gone();
  ::fcntl(t.rank_stdout(0), F_SETFL, O_NONBLOCK);
  const std::string line(1000, 'z');
  // Far more than every pipe and the queue hold: it all has to be read and dropped.
  size_t written = 0;
  auto deadline = Clock::now() + std::chrono::milliseconds(kEventMs);
  while (written < (16u << 20) && Clock::now() < deadline) {
    ssize_t n = ::write(t.rank_stdout(0), line.data(), line.size());
    if (n > 0) written += static_cast<size_t>(n);
    t.round(0);
  }
  EXPECT_GE(written, 16u << 20);
  EXPECT_FALSE(t.forwarder().held_back());
  t.forwarder().message("xmsgrun: nobody reads this");
  t.finish();
  EXPECT_TRUE(t.forwarder().written());
}

TEST(OutputForwarder, MessagesBeforeStartAreWrittenDirectly) {
  Pipe out, err;
  OutputForwarder f(false, {}, out.w, err.w);
  f.message("xmsgrun: early");
  char buf[64];
  ssize_t n = ::read(err.r, buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "xmsgrun: early\n");
}

}  // namespace
