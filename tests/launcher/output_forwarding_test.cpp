// How xmsgrun forwards rank output (issue 19, finding 8), through real jobs: long lines leave
// before their end and in bounded memory, '\r' updates appear while the job runs, lines of
// different ranks never share a line, and a reader that stops reading neither freezes the
// launcher (--timeout, SIGINT, fences between other ranks) nor loses output once it reads again.
// Ranks are output_actions (see there). Each test also checks that the job left no process, job
// directory or /dev/shm file behind.
#include "process_gone.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kEventMs = 30000;  // how long a test waits for something that must happen

// xmsgrun with pipes on its stdin, stdout and stderr; the test decides when stdout is read.
class Job {
 public:
  explicit Job(const std::vector<std::string>& args) {
    ::signal(SIGPIPE, SIG_IGN);  // a job that ended early fails the test, not the test program
    int in[2], out[2], err[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    std::vector<std::string> argv_s{XMSGRUN};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::execv(XMSGRUN, argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    fd_[0] = in[1];
    fd_[1] = out[0];
    fd_[2] = err[0];
  }
  ~Job() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (int fd : fd_)
      if (fd >= 0) ::close(fd);
  }
  pid_t pid() const { return pid_; }
  const std::string& out() const { return text_[1]; }
  const std::string& err() const { return text_[2]; }

  void send(const std::string& s) {
    ASSERT_EQ(::write(fd_[0], s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void close_stdin() { close_fd(0); }
  // The reader goes away: xmsgrun's writes to stdout fail with EPIPE from now on.
  void close_stdout() { close_fd(1); }

  // Reads (stdout only when `read_stdout`) until `done()` holds; false after kEventMs.
  bool read_until(const std::function<bool()>& done, bool read_stdout = true) {
    auto deadline = Clock::now() + std::chrono::milliseconds(kEventMs);
    while (!done()) {
      if (Clock::now() >= deadline || !pump(read_stdout, 50)) return done();
    }
    return true;
  }
  // Bytes in xmsgrun's stdout pipe that nobody has read.
  int unread_stdout() const {
    int n = 0;
    ::ioctl(fd_[1], FIONREAD, &n);
    return n;
  }
  int stdout_capacity() const { return ::fcntl(fd_[1], F_GETPIPE_SZ); }

  // Waits for xmsgrun to end; its exit code (128 + signal), or -1 when it had not ended after
  // kEventMs (then it is killed).
  int wait(bool read_stdout = true) {
    auto deadline = Clock::now() + std::chrono::milliseconds(kEventMs);
    for (;;) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        while (pump(read_stdout, 0)) {
        }
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      if (Clock::now() >= deadline) return -1;
      pump(read_stdout, 20);
    }
  }

 private:
  void close_fd(int i) {
    if (fd_[i] >= 0) ::close(fd_[i]);
    fd_[i] = -1;
  }
  // One poll round over stderr (and stdout); false once nothing is left to read.
  bool pump(bool read_stdout, int ms) {
    pollfd fds[2] = {{read_stdout ? fd_[1] : -1, POLLIN, 0}, {fd_[2], POLLIN, 0}};
    if (::poll(fds, 2, ms) <= 0) return (read_stdout && fd_[1] >= 0) || fd_[2] >= 0;
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents) continue;
      char buf[65536];
      ssize_t n = ::read(fd_[i + 1], buf, sizeof buf);
      if (n > 0) text_[i + 1].append(buf, static_cast<size_t>(n));
      else close_fd(i + 1);
    }
    return (read_stdout && fd_[1] >= 0) || fd_[2] >= 0;
  }

  pid_t pid_ = -1;
  int fd_[3] = {-1, -1, -1};
  std::string text_[3];
};

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + what.size())) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

using xmsg::test::process_gone;

// The ranks named by their "output_actions: rank R pid P job J" lines (stderr) are gone, and
// so are the job directory and the job's /dev/shm files.
void expect_no_leftovers(const std::string& err, size_t ranks) {
  static const std::regex re("output_actions: rank [0-9]+ pid ([0-9]+) job ([A-Za-z0-9_.-]+)");
  std::vector<int> pids;
  std::string job;
  for (std::sregex_iterator it(err.begin(), err.end(), re), end; it != end; ++it) {
    pids.push_back(std::stoi((*it)[1]));
    job = (*it)[2];
  }
  ASSERT_EQ(pids.size(), ranks) << "not every rank reported its pid and job:\n" << err;
  auto deadline = Clock::now() + std::chrono::seconds(5);
  for (int pid : pids) {
    while (!process_gone(pid) && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(process_gone(pid)) << "process " << pid << " survived the job";
  }
  const char* t = std::getenv("TMPDIR");
  std::string dir = std::string(t && *t ? t : "/tmp") + "/" + job;
  EXPECT_NE(::access(dir.c_str(), F_OK), 0) << dir << " survived the job";
  std::string prefix = "xmsg-" + job;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d))
      EXPECT_NE(std::strncmp(e->d_name, prefix.c_str(), prefix.size()), 0) << "/dev/shm/" << e->d_name;
    ::closedir(d);
  }
}

// VmHWM of a live process, in KiB.
long peak_rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Long lines, '\r', lines of several ranks.

TEST(OutputForwarding, LongLineLeavesBeforeItsEndUnchanged) {
  for (bool tagged : {false, true}) {
    SCOPED_TRACE(tagged ? "--tag-output" : "untagged");
    std::vector<std::string> args{"-n", "1", OUTPUT_ACTIONS, "partial", "300000"};
    if (tagged) args.insert(args.begin() + 2, "--tag-output");
    Job j(args);
    // Everything but a last piece shorter than the bound (64 KiB) leaves before the newline.
    ASSERT_TRUE(j.read_until([&] { return j.out().size() >= 300000 - 65536; }))
        << "a line of 300000 bytes was still held back after " << j.out().size() << " bytes";
    j.send("\n");
    j.close_stdin();
    ASSERT_EQ(j.wait(), 0) << j.err();
    // One rank alone: the bytes are the rank's own, split nowhere.
    EXPECT_EQ(j.out(), (tagged ? "[0] " : "") + std::string(300000, 'x') + "tail\n");
    expect_no_leftovers(j.err(), 1);
  }
}

TEST(OutputForwarding, CarriageReturnUpdatesAppearWhileTheJobRuns) {
  for (bool tagged : {false, true}) {
    SCOPED_TRACE(tagged ? "--tag-output" : "untagged");
    std::vector<std::string> args{"-n", "2", OUTPUT_ACTIONS, "progress", "3"};
    if (tagged) args.insert(args.begin() + 2, "--tag-output");
    const std::string tag = tagged ? "[0] " : "";
    Job j(args);
    std::string expected;
    for (int step = 1; step <= 3; ++step) {
      expected += tag + "step " + std::to_string(step) + "\r";
      // The rank waits for this line before its next update.
      ASSERT_TRUE(j.read_until([&] { return j.out() == expected; }))
          << "step " << step << " not shown while the job runs; stdout so far: " << j.out();
      j.send("\n");
    }
    j.close_stdin();
    ASSERT_EQ(j.wait(), 0) << j.err();
    EXPECT_EQ(j.out(), expected + tag + "done\n");
    expect_no_leftovers(j.err(), 2);
  }
}

TEST(OutputForwarding, AnotherRanksLineEndsAnUnfinishedLineAndTheRestIsMarked) {
  for (bool tagged : {false, true}) {
    SCOPED_TRACE(tagged ? "--tag-output" : "untagged");
    std::vector<std::string> args{"-n", "2", OUTPUT_ACTIONS, "interrupt", "100000"};
    if (tagged) args.insert(args.begin() + 2, "--tag-output");
    Job j(args);
    // Rank 0's first piece is out, its line unfinished; then rank 1 prints a line of its own.
    ASSERT_TRUE(j.read_until([&] { return j.out().size() >= 65536; })) << j.out().size();
    j.send("\n");
    ASSERT_TRUE(j.read_until([&] { return j.out().find("hello\n") != std::string::npos; }));
    j.send("\n");
    j.close_stdin();
    ASSERT_EQ(j.wait(), 0) << j.err();
    // [0] x...x\n[1] hello\n[0]+ x...xrest\n (untagged: the same without the tags)
    const std::string& out = j.out();
    const std::string start = tagged ? "[0] " : "", hello = tagged ? "\n[1] hello\n[0]+ " : "\nhello\n";
    ASSERT_EQ(out.rfind(start, 0), 0u) << out.substr(0, 100);
    size_t first_end = out.find_first_not_of('x', start.size());
    ASSERT_EQ(out.compare(first_end, hello.size(), hello), 0) << out.substr(first_end, 100);
    size_t rest = first_end + hello.size();
    size_t rest_end = out.find_first_not_of('x', rest);
    EXPECT_EQ(out.substr(rest_end), "rest\n");
    EXPECT_GE(first_end - start.size(), 65536u) << "the first piece is the bound (64 KiB) or more";
    EXPECT_EQ(first_end - start.size() + rest_end - rest, 100000u);
    expect_no_leftovers(j.err(), 2);
  }
}

TEST(OutputForwarding, LongLinesOfTwoRanksNeverShareALine) {
  constexpr size_t kBytes = 4'000'000;
  for (bool tagged : {false, true}) {
    SCOPED_TRACE(tagged ? "--tag-output" : "untagged");
    std::vector<std::string> args{"-n", "2", "--nodes", "2", OUTPUT_ACTIONS, "long", std::to_string(kBytes)};
    if (tagged) args.insert(args.begin() + 4, "--tag-output");
    Job j(args);
    j.close_stdin();
    ASSERT_EQ(j.wait(), 0) << j.err();
    std::map<char, size_t> bytes_of;
    std::map<char, int> lines_of_rank;
    for (const auto& line : lines_of(j.out())) {
      std::string body = line;
      if (tagged) {
        // "[r] " starts a rank's line, "[r]+ " continues it after another rank's line.
        ASSERT_TRUE(line.starts_with("[0]") || line.starts_with("[1]")) << line.substr(0, 80);
        const char letter = static_cast<char>('a' + (line[1] - '0'));
        const bool continued = line.compare(3, 2, "+ ") == 0;
        ASSERT_TRUE(continued || line.compare(3, 1, " ") == 0) << line.substr(0, 80);
        body = line.substr(continued ? 5 : 4);
        ASSERT_FALSE(body.empty());
        ASSERT_EQ(body[0], letter) << "rank " << line[1] << " tagged another's bytes";
        EXPECT_EQ(continued, lines_of_rank[letter] > 0) << line.substr(0, 20);
      }
      ASSERT_FALSE(body.empty());
      ASSERT_EQ(body.find_first_not_of(body[0]), std::string::npos) << "mixed line: " << body.substr(0, 80);
      bytes_of[body[0]] += body.size();
      ++lines_of_rank[body[0]];
    }
    EXPECT_EQ(bytes_of['a'], kBytes);
    EXPECT_EQ(bytes_of['b'], kBytes);
    expect_no_leftovers(j.err(), 2);
  }
}

TEST(OutputForwarding, XmsgrunStaysSmallWhileAHugeLinePasses) {
  constexpr size_t kBytes = 48 << 20;
  Job j({"-n", "1", OUTPUT_ACTIONS, "long", std::to_string(kBytes)});
  // The rank holds the job open (reading stdin) until the test has looked at xmsgrun.
  ASSERT_TRUE(j.read_until([&] { return j.out().size() == kBytes + 1; })) << j.out().size();
  long peak = peak_rss_kib(j.pid());
  j.close_stdin();
  ASSERT_EQ(j.wait(), 0) << j.err();
  EXPECT_EQ(j.out(), std::string(kBytes, 'a') + "\n");
  expect_no_leftovers(j.err(), 1);
  EXPECT_GT(peak, 0);
#ifdef XMSG_SANITIZED
  GTEST_SKIP() << "xmsgrun's peak RSS " << peak << " KiB is mostly the sanitizer's own: not checked";
#endif
  // Whole-line buffering needed the line at least twice over (96 MiB and more).
  EXPECT_LT(peak, 24 * 1024) << "xmsgrun's peak RSS in KiB while forwarding a 48 MiB line";
}

TEST(OutputForwarding, ReaderGoneDropsOutputAndTheJobGoesOn) {
  Job j({"-n", "2", OUTPUT_ACTIONS, "long", "2000000"});
  j.close_stdout();
  j.close_stdin();
  EXPECT_EQ(j.wait(false), 0) << j.err();
  expect_no_leftovers(j.err(), 2);
}

// ---------------------------------------------------------------------------------------------
// A reader that stops reading (a paused pager): stdout is never read until the test says so.

// Waits until the ranks are up and xmsgrun's stdout pipe is filling up (a pipe counts as full
// with less than its capacity in it when writes left pages partly filled).
void wait_for_stalled_stdout(Job& j, size_t ranks) {
  ASSERT_TRUE(j.read_until([&] { return count_of(j.err(), "output_actions: rank ") == ranks; }, false))
      << j.err();
  ASSERT_TRUE(j.read_until([&] { return j.unread_stdout() >= j.stdout_capacity() / 2; }, false))
      << j.unread_stdout() << " of " << j.stdout_capacity() << " bytes in stdout";
}

TEST(StalledReader, TimeoutStillEndsTheJob) {
  Job j({"-n", "2", "--nodes", "2", "--timeout", "10", OUTPUT_ACTIONS, "flood"});
  wait_for_stalled_stdout(j, 2);
  EXPECT_EQ(j.wait(false), 124) << "with stdout not read, --timeout did not end the job\n" << j.err();
  EXPECT_NE(j.err().find("xmsgrun: job timed out after 10 s (--timeout); ending it\n"), std::string::npos)
      << j.err();
  expect_no_leftovers(j.err(), 2);
}

TEST(StalledReader, InterruptStillEndsTheJob) {
  Job j({"-n", "2", OUTPUT_ACTIONS, "flood"});
  wait_for_stalled_stdout(j, 2);
  ASSERT_EQ(::kill(j.pid(), SIGINT), 0);
  EXPECT_EQ(j.wait(false), 130) << "with stdout not read, SIGINT did not end the job\n" << j.err();
  EXPECT_NE(j.err().find("xmsgrun: received signal 2 (Interrupt), forwarding it to the ranks\n"),
            std::string::npos)
      << j.err();
  expect_no_leftovers(j.err(), 2);
}

TEST(StalledReader, OtherRanksFencesCompleteAndNoOutputIsLost) {
  constexpr size_t kBytes = 8'000'000;  // far more than the pipes and xmsgrun's queue hold
  Job j({"-n", "4", "--nodes", "2", OUTPUT_ACTIONS, "fence_others", "20", std::to_string(kBytes)});
  wait_for_stalled_stdout(j, 4);
  // Ranks 1..3 span both nodes: their fences go through xmsgrun while rank 0 cannot write.
  ASSERT_TRUE(j.read_until([&] { return count_of(j.err(), " fences without rank 0 done\n") == 3; }, false))
      << "fences between other ranks did not complete while stdout was not read\n" << j.err();
  ASSERT_EQ(j.wait(true), 0) << j.err();
  auto lines = lines_of(j.out());
  size_t total = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ(lines[i].rfind("rank 0 line " + std::to_string(i) + " ", 0), 0u) << "line " << i << ": " << lines[i];
    total += lines[i].size() + 1;
  }
  EXPECT_EQ(total, j.out().size());
  EXPECT_GE(total, kBytes);
  expect_no_leftovers(j.err(), 4);
}

}  // namespace
