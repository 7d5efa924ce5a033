// Whole jobs through xmsgrun: key-value exchange at several scales and node counts, job control
// (abort, a killed rank, a failing rank, timeout, signals, kill -9 of the launcher), output
// forwarding, environment and bad use. Every test also checks that the job left no process,
// job directory or /dev/shm file behind.
#include "Netns.hpp"

#include "process_gone.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  int status = -1;  // exit code, or 128 + signal
  std::string out, err;
};

// A running xmsgrun with its output pipes.
class Launch {
 public:
  Launch(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
         bool pipe_stdin = false) {
    int in[2], out[2], err[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    std::vector<std::string> argv_s{XMSGRUN};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s = env;
    pid_ = ::fork();
    if (pid_ == 0) {
      if (pipe_stdin) ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      for (auto& e : env_s) ::putenv(e.data());
      ::execv(XMSGRUN, argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
    if (!pipe_stdin) close_stdin();
  }
  ~Launch() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    close_stdin();
    if (out_ >= 0) ::close(out_);
    if (err_ >= 0) ::close(err_);
  }
  pid_t pid() const { return pid_; }
  void write_stdin(const std::string& s) {
    EXPECT_EQ(::write(in_, s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void close_stdin() {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
  }
  // Reads output until `pred(stdout)` holds or the deadline passes.
  bool read_until(const std::function<bool(const std::string&)>& pred, int timeout_ms) {
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!pred(res_.out)) {
      if (Clock::now() >= deadline || !pump(50)) return pred(res_.out);
    }
    return true;
  }
  // Waits for xmsgrun to end (SIGKILL after timeout_ms, which fails the test).
  Result wait(int timeout_ms = 30000) {
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (out_ >= 0 || err_ >= 0) {
      if (Clock::now() >= deadline) {
        ADD_FAILURE() << "xmsgrun did not end within " << timeout_ms << " ms";
        ::kill(pid_, SIGKILL);
        break;
      }
      pump(100);
    }
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    res_.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return res_;
  }
  const std::string& out() const { return res_.out; }

 private:
  bool pump(int ms) {
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (::poll(fds, 2, ms) < 0) return false;
    int* fdp[2] = {&out_, &err_};
    std::string* dst[2] = {&res_.out, &res_.err};
    for (int i = 0; i < 2; ++i) {
      if (*fdp[i] < 0 || !fds[i].revents) continue;
      char buf[65536];
      ssize_t n = ::read(*fdp[i], buf, sizeof buf);
      if (n > 0) {
        dst[i]->append(buf, static_cast<size_t>(n));
      } else {
        ::close(*fdp[i]);
        *fdp[i] = -1;
      }
    }
    return out_ >= 0 || err_ >= 0;
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  Result res_;
};

Result run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  Launch l(args, env);
  return l.wait();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct RankInfo {
  int pid;
  std::string job;
};

// Every "pid P job J" in the output (bootstrap_check and job_actions print one per rank).
std::vector<RankInfo> ranks_in(const std::string& out) {
  std::vector<RankInfo> ranks;
  static const std::regex re("pid ([0-9]+) job ([A-Za-z0-9_.-]+)");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it)
    ranks.push_back({std::stoi((*it)[1]), (*it)[2]});
  return ranks;
}

using xmsg::test::process_gone;

std::string tmp_root() {
  const char* t = std::getenv("TMPDIR");
  std::string root = (t && *t) ? t : "/tmp";
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

std::vector<std::string> shm_files_of(const std::string& job) {
  std::vector<std::string> out;
  std::string prefix = "xmsg-" + job;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) out.push_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

// Asserts that the processes are gone (allowing a few seconds for death signals to travel)
// and that the job left no files.
void expect_no_leftovers(const std::vector<int>& pids, const std::string& job) {
  auto deadline = Clock::now() + std::chrono::seconds(5);
  for (int pid : pids) {
    while (!process_gone(pid) && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(process_gone(pid)) << "process " << pid << " survived the job";
  }
  ASSERT_FALSE(job.empty());
  std::string dir = tmp_root() + "/" + job;
  EXPECT_NE(::access(dir.c_str(), F_OK), 0) << dir << " survived the job";
  EXPECT_TRUE(shm_files_of(job).empty()) << "/dev/shm/" << shm_files_of(job).front();
}

void expect_no_leftovers(const std::string& out) {
  auto ranks = ranks_in(out);
  ASSERT_FALSE(ranks.empty()) << "no rank reported its pid and job:\n" << out;
  std::vector<int> pids;
  for (auto& r : ranks) {
    pids.push_back(r.pid);
    EXPECT_EQ(r.job, ranks.front().job) << "ranks disagree on the job id";
  }
  expect_no_leftovers(pids, ranks.front().job);
}

std::vector<int> children_of(pid_t parent) {
  std::vector<int> kids;
  DIR* d = ::opendir("/proc");
  while (dirent* e = d ? ::readdir(d) : nullptr) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    const std::string content = xmsg::test::proc_stat(pid);
    auto close_paren = content.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(content.substr(close_paren + 2));
    char state;
    int ppid;
    rest >> state >> ppid;
    if (ppid == parent) kids.push_back(pid);
  }
  if (d) ::closedir(d);
  return kids;
}

// ---------------------------------------------------------------------------------------------
// Key-value exchange: 0 B, 1 B, 64 KiB (or `blob` bytes: a large modex through the node servers,
// kLargeModex a rank) from every rank, fenced, read back and checked.

#ifdef XMSG_TEST_SANITIZED
constexpr size_t kLargeModex = size_t{1} << 20;  // ASan took 17-18 s at 8 MiB, TSan past 30 s
#else
constexpr size_t kLargeModex = size_t{8} << 20;  // 2 s
#endif

struct ExchangeCase {
  int ranks;
  int nodes;
  bool collect;
  size_t blob = 0;  // 0: bootstrap_check's 64 KiB
};

class Exchange : public ::testing::TestWithParam<ExchangeCase> {};

TEST_P(Exchange, EveryRankReadsEveryPeer) {
  const auto c = GetParam();
  std::vector<std::string> args{"-n", std::to_string(c.ranks)};
  if (c.nodes > 1) args.insert(args.end(), {"--nodes", std::to_string(c.nodes)});
  args.insert(args.end(), {BOOTSTRAP_CHECK, "--xmsgrun"});
  if (!c.collect) args.push_back("--no-collect");
  if (c.blob) args.insert(args.end(), {"--blob", std::to_string(c.blob)});
  args.insert(args.end(), {"--nodes", std::to_string(c.nodes)});
  Result r = run(args);
  ASSERT_EQ(r.status, 0) << r.err << r.out;

  // One line per rank; ranks 0..N-1 each exactly once; placement block-wise with one host
  // name per node.
  static const std::regex line_re(
      "bootstrap_check: rank ([0-9]+) of ([0-9]+) on node ([0-9]+) of ([0-9]+) \\(([^,]+), "
      "local ([0-9]+)/([0-9]+)\\) (collect|direct-modex) pid [0-9]+ job \\S+ ok");
  std::set<int> seen;
  std::map<int, std::string> host_of_node;
  int base = c.ranks / c.nodes, extra = c.ranks % c.nodes;
  for (const auto& line : lines_of(r.out)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << "unexpected line: " << line;
    int rank = std::stoi(m[1]), node = std::stoi(m[3]);
    EXPECT_EQ(std::stoi(m[2]), c.ranks);
    EXPECT_EQ(std::stoi(m[4]), c.nodes);
    EXPECT_EQ(m[8], c.collect ? "collect" : "direct-modex");
    EXPECT_TRUE(seen.insert(rank).second) << "rank " << rank << " twice";
    int expected_node = 0, first = 0;
    while (rank >= first + base + (expected_node < extra ? 1 : 0)) {
      first += base + (expected_node < extra ? 1 : 0);
      ++expected_node;
    }
    EXPECT_EQ(node, expected_node) << line;
    EXPECT_EQ(std::stoi(m[6]), rank - first) << line;
    EXPECT_EQ(std::stoi(m[7]), base + (expected_node < extra ? 1 : 0)) << line;
    auto [it, inserted] = host_of_node.emplace(node, m[5]);
    EXPECT_EQ(it->second, m[5]) << "two host names on node " << node;
    if (c.nodes > 1) {
      EXPECT_TRUE(m[5].str().ends_with("-n" + std::to_string(node))) << line;
    }
  }
  EXPECT_EQ(static_cast<int>(seen.size()), c.ranks);
  std::set<std::string> hosts;
  for (auto& [n, h] : host_of_node) hosts.insert(h);
  EXPECT_EQ(static_cast<int>(hosts.size()), c.nodes);
  expect_no_leftovers(r.out);
}

INSTANTIATE_TEST_SUITE_P(
    Launcher, Exchange,
    ::testing::Values(ExchangeCase{1, 1, true}, ExchangeCase{2, 1, true}, ExchangeCase{4, 1, true},
                      ExchangeCase{8, 1, true}, ExchangeCase{4, 1, false},
                      ExchangeCase{8, 1, false}, ExchangeCase{4, 2, true},
                      ExchangeCase{4, 2, false}, ExchangeCase{8, 3, true},
                      ExchangeCase{8, 3, false}, ExchangeCase{8, 2, true, kLargeModex},
                      ExchangeCase{8, 2, false, kLargeModex}),
    [](const auto& info) {
      std::string name = std::to_string(info.param.ranks) + "ranks_" +
                         std::to_string(info.param.nodes) + "nodes_" +
                         (info.param.collect ? "collect" : "direct_modex");
      if (info.param.blob) name.append("_").append(std::to_string(info.param.blob >> 20)).append("MiB");
      return name;
    });

// ---------------------------------------------------------------------------------------------
// Job control.

// xmsgrun's own lines ("xmsgrun: ..."): one verdict, and nothing else gone wrong (a node server
// that crashed while the job ended says so on a line of its own).
size_t verdicts_in(const std::string& err) {
  size_t verdicts = 0;
  for (const auto& line : lines_of(err)) verdicts += line.starts_with("xmsgrun: ");
  return verdicts;
}

TEST(JobControl, AbortEndsTheJobWithItsStatusAndMessage) {
  for (const char* nodes : {"1", "2"}) {
    Result r = run({"-n", "4", "--nodes", nodes, JOB_ACTIONS, "abort", "1", "5"});
    EXPECT_EQ(r.status, 5) << r.err;
    EXPECT_TRUE(std::regex_search(
        r.err, std::regex("xmsgrun: rank 1 \\(pid [0-9]+\\) called abort with status 5: "
                          "job_actions asked to abort")))
        << r.err;
    EXPECT_EQ(verdicts_in(r.err), 1u) << nodes << " nodes:\n" << r.err;
    expect_no_leftovers(r.out);
  }
}

TEST(JobControl, KilledRankEndsTheJob) {
  for (const char* nodes : {"1", "2"}) {
    Result r = run({"-n", "4", "--nodes", nodes, JOB_ACTIONS, "kill", "2"});
    EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
    auto ranks = ranks_in(r.out);
    ASSERT_EQ(ranks.size(), 4u) << r.out;
    EXPECT_TRUE(std::regex_search(
        r.err, std::regex("xmsgrun: rank 2 \\(pid [0-9]+\\) killed by signal 9 \\(Killed\\)")))
        << r.err;
    EXPECT_EQ(verdicts_in(r.err), 1u) << nodes << " nodes:\n" << r.err;
    expect_no_leftovers(r.out);
  }
}

// Several ranks dying at the same moment (half of them, on one node and across two): the job
// ends with the status of one of them, one verdict naming an odd rank, and nothing left.
TEST(JobControl, RanksKilledTogetherEndTheJobOnce) {
  for (const char* nodes : {"1", "2"}) {
    Result r = run({"-n", "8", "--nodes", nodes, JOB_ACTIONS, "kill-odd"});
    EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
    auto ranks = ranks_in(r.out);
    ASSERT_EQ(ranks.size(), 8u) << r.out;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("xmsgrun: rank [1357] \\(pid [0-9]+\\) killed by signal 9 \\(Killed\\)")))
        << r.err;
    EXPECT_EQ(verdicts_in(r.err), 1u) << nodes << " nodes:\n" << r.err;
    expect_no_leftovers(r.out);
  }
}

// OpenPMIx 4.2 completes (and frees) a fence of one node's ranks once more for each further
// participant whose connection closes in the same pass of its event loop; the job's end, which
// killed every other rank at once, made the node server die of heap corruption ("malloc():
// unsorted double linked list corrupted", "the node server crashed (signal 6)") in a fraction
// of runs. Many ranks on one node, several jobs: the only verdict is the rank that died.
TEST(JobControl, RanksEndedTogetherInAFenceLeaveTheNodeServerStanding) {
  for (int job = 0; job < 6; ++job) {
    for (const char* action : {"kill", "exit", "abort"}) {
      std::vector<std::string> args = {"-n", "8", JOB_ACTIONS, action, "3"};
      if (std::string(action) != "kill") args.push_back(std::string(action) == "exit" ? "0" : "4");
      Result r = run(args);
      EXPECT_EQ(verdicts_in(r.err), 1u) << action << ", job " << job << ":\n" << r.err;
      EXPECT_EQ(r.err.find("corrupted"), std::string::npos) << r.err;
      expect_no_leftovers(r.out);
    }
  }
}

// What a rank starts (here a wrapper script's background command) ends with the job, whether a
// rank was killed or all exited normally: nothing is left running, reparented to init. (Rank 2
// waits before killing itself so that its line has been forwarded.)
std::vector<int> children_named(const std::string& out) {
  std::vector<int> pids;
  static const std::regex re("child ([0-9]+)");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it) pids.push_back(std::stoi((*it)[1]));
  return pids;
}

TEST(JobControl, WhatRanksStartEndsWithTheJob) {
  const std::string script = "sleep 30 & echo \"child $!\"; if [ \"$PMIX_RANK\" = 2 ]; then sleep 0.5; kill -9 $$; fi; wait";
  for (const char* nodes : {"1", "2"}) {
    Result r = run({"-n", "4", "--nodes", nodes, "/bin/sh", "-c", script});
    EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
    const auto kids = children_named(r.out);
    EXPECT_EQ(kids.size(), 4u) << r.out;
    auto deadline = Clock::now() + std::chrono::seconds(5);
    for (int pid : kids) {
      while (!process_gone(pid) && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      EXPECT_TRUE(process_gone(pid)) << "a rank's child " << pid << " survived the job (" << nodes << " nodes)";
    }
  }
  Result ok = run({"-n", "2", "/bin/sh", "-c", "sleep 30 & echo \"child $!\""});
  EXPECT_EQ(ok.status, 0) << ok.err;
  const auto kids = children_named(ok.out);
  EXPECT_EQ(kids.size(), 2u) << ok.out;
  auto deadline = Clock::now() + std::chrono::seconds(5);
  for (int pid : kids) {
    while (!process_gone(pid) && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(process_gone(pid)) << "a rank's child " << pid << " survived a job that ended normally";
  }
}

TEST(JobControl, FailingRankEndsTheJobWithItsStatus) {
  Result r = run({"-n", "4", JOB_ACTIONS, "exit", "1", "3"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("xmsgrun: rank 1 \\(pid [0-9]+\\) exited with status 3 without finalizing\n")))
      << r.err;
  expect_no_leftovers(r.out);
}

// A rank that joined PMIx and exits 0 without finalizing fails the job at once, as mpirun's
// "exited without calling MPI_Finalize" does: its peers (here in a fence, on its node or on
// another one) would otherwise wait for it forever. Only that rank is named.
TEST(JobControl, RankExitingWithoutFinalizeEndsTheJob) {
  for (const char* nodes : {"1", "2"}) {
    Launch l({"-n", "4", "--nodes", nodes, JOB_ACTIONS, "exit", "1", "0"});
    ASSERT_TRUE(l.read_until([](const std::string& o) { return ranks_in(o).size() == 4; }, 20000))
        << l.out();
    const auto seen = Clock::now();
    Result r = l.wait(20000);
    const double took = std::chrono::duration<double>(Clock::now() - seen).count();
    // A job left running would be ended by wait()'s limit, with another status; the time is
    // reported, not judged.
    EXPECT_EQ(r.status, 1) << nodes << " nodes: " << r.err;
    std::printf("%s nodes: the job ended %.2f s after every rank had started\n", nodes, took);
    EXPECT_TRUE(std::regex_search(
        r.err, std::regex("(^|\n)xmsgrun: rank 1 \\(pid [0-9]+\\) exited with status 0 without finalizing "
                          "\\(it called PMIx_Init but not PMIx_Finalize / MPI_Finalize\\); ending the job\n")))
        << nodes << " nodes: " << r.err;
    size_t verdicts = 0;
    for (const auto& line : lines_of(r.err)) verdicts += line.starts_with("xmsgrun: ");
    EXPECT_EQ(verdicts, 1u) << nodes << " nodes: only the rank that left is named:\n" << r.err;
    expect_no_leftovers(r.out);
  }
}

// Programs that never join PMIx keep the old rule: exit 0 is success, whenever it comes.
TEST(JobControl, ProgramsOutsidePmixMayExitZero) {
  Result host = run({"-n", "2", "hostname"});
  EXPECT_EQ(host.status, 0) << host.err;
  EXPECT_EQ(lines_of(host.out).size(), 2u) << host.out;
  EXPECT_EQ(host.err, "");
  Result early = run({"-n", "3", "--nodes", "2", "/bin/sh", "-c",
                      "if [ \"$PMIX_RANK\" = 1 ]; then exit 0; fi; sleep 0.5; echo done"});
  EXPECT_EQ(early.status, 0) << early.err;
  EXPECT_EQ(lines_of(early.out).size(), 2u) << early.out;
  Result failing = run({"-n", "2", "/bin/sh", "-c", "exit 3"});
  EXPECT_EQ(failing.status, 3) << failing.err;
  EXPECT_TRUE(std::regex_search(failing.err, std::regex("xmsgrun: rank [01] \\(pid [0-9]+\\) exited with status 3\n")))
      << failing.err;
  EXPECT_EQ(failing.err.find("finaliz"), std::string::npos) << failing.err;
}

TEST(JobControl, TimeoutEndsTheJob) {
  Result r = run({"-n", "2", "--nodes", "2", "--timeout", "3", JOB_ACTIONS, "sleep", "60"});
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_NE(r.err.find("timed out after 3 s"), std::string::npos) << r.err;
  EXPECT_EQ(ranks_in(r.out).size(), 2u) << r.out;
  expect_no_leftovers(r.out);
}

TEST(JobControl, MpiexecTimeoutEndsTheJobLikeTimeout) {
  // Ranks that would sleep for days; MPIEXEC_TIMEOUT alone ends them.
  Result r = run({"-n", "2", JOB_ACTIONS, "sleep", "1000000"}, {"MPIEXEC_TIMEOUT=2"});
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_NE(r.err.find("xmsgrun: job timed out after 2 s (MPIEXEC_TIMEOUT); ending it"), std::string::npos) << r.err;
  EXPECT_EQ(ranks_in(r.out).size(), 2u) << r.out;
  expect_no_leftovers(r.out);
}

TEST(JobControl, ExplicitTimeoutWinsOverMpiexecTimeout) {
  // A long or even malformed MPIEXEC_TIMEOUT is not read when --timeout is given.
  for (const char* env : {"MPIEXEC_TIMEOUT=3600", "MPIEXEC_TIMEOUT=soon"}) {
    Result r = run({"-n", "1", "--timeout", "2", JOB_ACTIONS, "sleep", "1000000"}, {env});
    EXPECT_EQ(r.status, 124) << env << ": " << r.err;
    EXPECT_NE(r.err.find("timed out after 2 s (--timeout)"), std::string::npos) << env << ": " << r.err;
    expect_no_leftovers(r.out);
  }
}

TEST(JobControl, TerminateIsForwardedToRanks) {
  Launch l({"-n", "3", "--nodes", "2", JOB_ACTIONS, "sleep", "60"});
  ASSERT_TRUE(l.read_until([](const std::string& o) { return ranks_in(o).size() == 3; }, 20000))
      << l.out();
  ::kill(l.pid(), SIGTERM);
  Result r = l.wait();
  EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
  EXPECT_NE(r.err.find("received signal 15"), std::string::npos) << r.err;
  expect_no_leftovers(r.out);
}

TEST(JobControl, KillMinusNineOfTheLauncherLeavesNothing) {
  Launch l({"-n", "4", "--nodes", "2", JOB_ACTIONS, "shm", "60"});
  ASSERT_TRUE(l.read_until(
      [](const std::string& o) {
        size_t n = 0;
        for (size_t p = o.find("(ok) and"); p != std::string::npos; p = o.find("(ok) and", p + 1)) ++n;
        return n == 4;
      },
      20000))
      << l.out();
  auto ranks = ranks_in(l.out());
  ASSERT_EQ(ranks.size(), 4u);
  const std::string job = ranks.front().job;
  // The ranks really created what must be cleaned up.
  EXPECT_EQ(shm_files_of(job).size(), 4u);
  EXPECT_EQ(::access((tmp_root() + "/" + job).c_str(), F_OK), 0);
  std::vector<int> pids = children_of(l.pid());  // the node servers
  EXPECT_EQ(pids.size(), 2u);
  for (auto& r : ranks) pids.push_back(r.pid);

  ::kill(l.pid(), SIGKILL);
  Result r = l.wait();
  EXPECT_EQ(r.status, 128 + SIGKILL);
  expect_no_leftovers(pids, job);
}

TEST(JobControl, LostNodeServerEndsTheJob) {
  Launch l({"-n", "4", "--nodes", "2", JOB_ACTIONS, "shm", "60"});
  ASSERT_TRUE(l.read_until(
      [](const std::string& o) {
        size_t n = 0;
        for (size_t p = o.find("(ok) and"); p != std::string::npos; p = o.find("(ok) and", p + 1)) ++n;
        return n == 4;
      },
      20000))
      << l.out();
  auto ranks = ranks_in(l.out());
  ASSERT_EQ(ranks.size(), 4u);
  std::vector<int> pids = children_of(l.pid());
  ASSERT_EQ(pids.size(), 2u);
  const int victim = pids.front();
  for (auto& r : ranks) pids.push_back(r.pid);

  ::kill(victim, SIGKILL);
  Result r = l.wait();
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("xmsgrun: node server [01] \\(pid " +
                                                  std::to_string(victim) +
                                                  "\\) killed by signal 9")))
      << r.err;
  expect_no_leftovers(pids, ranks.front().job);
}

// ---------------------------------------------------------------------------------------------
// The tcp job secret: in a 0600 file of the node's private job directory, never in the PMIx
// store (which any local user can read: OpenPMIx 4 trusts the uid a TCP client claims).

struct SecretFile {
  int rank;
  std::string path;
  std::string pmix;  // "absent" or "present"
};

std::vector<SecretFile> secret_files_in(const std::string& out) {
  std::vector<SecretFile> files;
  static const std::regex re("job_actions: rank ([0-9]+) secret file (\\S+) pmix (\\S+)");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it)
    files.push_back({std::stoi((*it)[1]), (*it)[2], (*it)[3]});
  return files;
}

// 0: `path` cannot be read nor its directory listed by user nobody; otherwise what went wrong.
int nobody_reads(const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    const uid_t uid = 65534;  // nobody, nogroup on Debian
    const gid_t gid = 65534;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0)
      ::_exit(10);
    if (::geteuid() != uid) ::_exit(11);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) ::_exit(1);
    if (errno != EACCES) ::_exit(2);
    const std::string dir = path.substr(0, path.rfind('/'));
    if (DIR* d = ::opendir(dir.c_str())) {
      ::closedir(d);
      ::_exit(3);
    }
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

TEST(Secret, IsAPrivateFileNeverInPmixAndGoesWithTheJob) {
  Launch l({"-n", "3", "--nodes", "2", JOB_ACTIONS, "secret"}, {}, true);
  ASSERT_TRUE(l.read_until([](const std::string& o) { return secret_files_in(o).size() == 3; }, 20000))
      << l.out();
  const auto files = secret_files_in(l.out());
  std::set<std::string> paths;
  std::string secret;
  for (const auto& f : files) {
    SCOPED_TRACE("rank " + std::to_string(f.rank) + ": " + f.path);
    EXPECT_EQ(f.pmix, "absent") << "xmsg.job_secret is readable through PMIx";
    paths.insert(f.path);
    struct stat st {};
    ASSERT_EQ(::lstat(f.path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(st.st_uid, ::geteuid());
    const std::string dir = f.path.substr(0, f.path.rfind('/'));
    EXPECT_TRUE(dir.ends_with("/job")) << dir;
    ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_EQ(st.st_uid, ::geteuid());
    std::ifstream in(f.path);
    std::string content((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(content.size(), 32u);
    EXPECT_EQ(content.find_first_not_of("0123456789abcdef"), std::string::npos) << content;
    if (secret.empty()) secret = content;
    EXPECT_EQ(content, secret) << "nodes hold different secrets";
  }
  EXPECT_EQ(paths.size(), 2u) << "one file per node expected";
  if (::geteuid() == 0) {
    for (const auto& path : paths) EXPECT_EQ(nobody_reads(path), 0) << "user nobody and " << path;
  } else {
    std::printf("[ SKIPPED  ] the unprivileged-reader part needs root (to become nobody)\n");
  }
  l.close_stdin();
  Result r = l.wait();
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& path : paths) EXPECT_NE(::access(path.c_str(), F_OK), 0) << path << " survived the job";
  expect_no_leftovers(r.out);
}

TEST(Secret, FileGoesWhenTheLauncherIsKilled) {
  Launch l({"-n", "2", "--nodes", "2", JOB_ACTIONS, "secret"}, {}, true);
  ASSERT_TRUE(l.read_until([](const std::string& o) { return secret_files_in(o).size() == 2; }, 20000))
      << l.out();
  const auto files = secret_files_in(l.out());
  for (const auto& f : files) ASSERT_EQ(::access(f.path.c_str(), F_OK), 0) << f.path;
  auto ranks = ranks_in(l.out());
  ASSERT_EQ(ranks.size(), 2u);
  std::vector<int> pids = children_of(l.pid());
  for (auto& r : ranks) pids.push_back(r.pid);
  ::kill(l.pid(), SIGKILL);
  l.wait();
  expect_no_leftovers(pids, ranks.front().job);
  for (const auto& f : files) EXPECT_NE(::access(f.path.c_str(), F_OK), 0) << f.path << " survived kill -9";
}

// ---------------------------------------------------------------------------------------------
// Output, input, environment, binding.

TEST(Io, TagOutputPrefixesEveryLineWithTheRank) {
  Result r = run({"-n", "3", "--tag-output", JOB_ACTIONS, "env", "HOME"});
  ASSERT_EQ(r.status, 0) << r.err;
  int tagged = 0;
  for (const auto& line : lines_of(r.out)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, std::regex("\\[([0-9])\\] (job_actions: )?rank ([0-9]) .*")))
        << line;
    EXPECT_EQ(m[1], m[3]) << line;
    ++tagged;
  }
  EXPECT_EQ(tagged, 6);
  expect_no_leftovers(r.out);
}

TEST(Io, LinesOfDifferentRanksNeverMix) {
  Result r = run({"-n", "4", "--nodes", "2", JOB_ACTIONS, "lines", "500"});
  ASSERT_EQ(r.status, 0) << r.err;
  static const std::regex line_re("rank ([0-9]) line ([0-9]+) ([a-z])\\3{299} end");
  std::map<int, int> next;
  for (const auto& line : lines_of(r.out)) {
    if (line.starts_with("job_actions:")) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << "mangled line: " << line.substr(0, 80);
    int rank = std::stoi(m[1]);
    EXPECT_EQ(std::stoi(m[2]), next[rank]++) << "rank " << rank << " lines out of order";
  }
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(next[rank], 500) << rank;
  expect_no_leftovers(r.out);
}

TEST(Io, StdinGoesToRankZeroOnly) {
  Launch l({"-n", "3", "--nodes", "2", JOB_ACTIONS, "stdin"}, {}, true);
  l.write_stdin("first line\nsecond line\n");
  l.close_stdin();
  Result r = l.wait();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rank 0 read: first line\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 0 read: second line\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1 stdin eof"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 2 stdin eof"), std::string::npos) << r.out;
  expect_no_leftovers(r.out);
}

TEST(Io, ExportedVariablesReachEveryRank) {
  Result a = run({"-n", "2", "--nodes", "2", "-x", "XMSG_TEST_FROM_ENV", JOB_ACTIONS, "env",
                  "XMSG_TEST_FROM_ENV"},
                 {"XMSG_TEST_FROM_ENV=outer value"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("rank 0 XMSG_TEST_FROM_ENV=outer value\n"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("rank 1 XMSG_TEST_FROM_ENV=outer value\n"), std::string::npos) << a.out;
  expect_no_leftovers(a.out);

  Result b = run({"-n", "2", "-x", "XMSG_TEST_SET=a=b", JOB_ACTIONS, "env", "XMSG_TEST_SET"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("rank 0 XMSG_TEST_SET=a=b\n"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("rank 1 XMSG_TEST_SET=a=b\n"), std::string::npos) << b.out;
  expect_no_leftovers(b.out);
}

// Any TMPDIR works, however long (it used to be ignored, silently, from 40 characters on).
TEST(Io, LongTmpdirIsUsed) {
  std::string dir = tmp_root() + "/xmsgrun-test-long-tmpdir-" + std::to_string(::getpid()) + "-";
  while (dir.size() < 200) dir += 'x';
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << dir;
  Result r = run({"-n", "2", "--nodes", "2", JOB_ACTIONS, "env", "XMSG_JOB_TMPDIR"}, {"TMPDIR=" + dir});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* rank : {"rank 0 ", "rank 1 "})
    EXPECT_NE(r.out.find(std::string(rank) + "XMSG_JOB_TMPDIR=" + dir + "/xmsg."), std::string::npos) << r.out;
  auto ranks = ranks_in(r.out);
  ASSERT_EQ(ranks.size(), 2u) << r.out;
  EXPECT_NE(::access((dir + "/" + ranks.front().job).c_str(), F_OK), 0) << "job directory left in " << dir;
  EXPECT_EQ(::rmdir(dir.c_str()), 0) << dir << " is not empty after the job";
}

TEST(Binding, ReportAndApplyBindings) {
  Result bound = run({"-n", "2", "--bind-to", "core", "--report-bindings", JOB_ACTIONS, "affinity"});
  ASSERT_EQ(bound.status, 0) << bound.err;
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(std::regex_search(bound.err, std::regex("xmsgrun: rank " + std::to_string(r) +
                                                        " on node 0 \\([^)]*\\): bound to core")))
        << bound.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(bound.out, m, std::regex("rank " + std::to_string(r) + " cpus ([0-9]+)")))
        << bound.out;
    EXPECT_GE(std::stoi(m[1]), 1);
  }
  expect_no_leftovers(bound.out);

  Result unbound = run({"-n", "2", "--bind-to", "none", "--report-bindings", JOB_ACTIONS, "affinity"});
  ASSERT_EQ(unbound.status, 0) << unbound.err;
  EXPECT_NE(unbound.err.find("rank 1 on node 0"), std::string::npos) << unbound.err;
  EXPECT_NE(unbound.err.find("not bound"), std::string::npos) << unbound.err;
  expect_no_leftovers(unbound.out);
}

// The default binds round-robin also when ranks outnumber cores: every rank bound to one
// core, rank r and rank r + CPUs on the same core (r mod cores; CPUs is a multiple of cores),
// and each rank's affinity narrower than the machine when it has more than one core.
TEST(Binding, DefaultBindsRoundRobinWhenOversubscribed) {
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const int n = 2 * cpus + 1;
  Result r = run({"-n", std::to_string(n), "--report-bindings", JOB_ACTIONS, "affinity"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<int, std::string> core_of;
  static const std::regex bound_re("xmsgrun: rank ([0-9]+) on node 0 \\([^)]*\\): bound to core ([0-9]+)");
  for (std::sregex_iterator it(r.err.begin(), r.err.end(), bound_re), end; it != end; ++it)
    core_of[std::stoi((*it)[1])] = (*it)[2];
  ASSERT_EQ(core_of.size(), static_cast<size_t>(n)) << r.err;
  std::set<std::string> cores;
  for (int rank = 0; rank < n; ++rank) {
    cores.insert(core_of[rank]);
    EXPECT_EQ(core_of[rank], core_of[rank % cpus]) << "rank " << rank << "\n" << r.err;
  }
  static const std::regex cpus_re("rank ([0-9]+) cpus ([0-9]+)");
  int ranks_seen = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), cpus_re), end; it != end; ++it, ++ranks_seen) {
    if (cores.size() > 1) {
      EXPECT_LT(std::stoi((*it)[2]), cpus) << r.out;
    }
  }
  EXPECT_EQ(ranks_seen, n) << r.out;
  expect_no_leftovers(r.out);
}

// ---------------------------------------------------------------------------------------------
// --netns: each virtual node in its own network namespace.

// "[rank] netns <name>" lines -> namespace name per rank.
std::map<int, std::string> namespaces_in(const std::string& out) {
  std::map<int, std::string> ns;
  static const std::regex re("\\[([0-9]+)\\] netns (\\S+)");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it)
    ns[std::stoi((*it)[1])] = (*it)[2];
  return ns;
}

std::string netns_suffix(const std::string& name) {  // "xn<suffix>-<node>"
  return name.substr(2, name.rfind('-') - 2);
}

void expect_no_namespaces(const std::string& suffix) {
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!xmsg::launcher::NetnsTopology::leftovers(suffix).empty() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto left = xmsg::launcher::NetnsTopology::leftovers(suffix);
  EXPECT_TRUE(left.empty()) << "left behind: " << left.front();
  xmsg::launcher::NetnsTopology::sweep(suffix);  // never leave the host dirty, even on failure
}

TEST(Netns, ExchangeAcrossNamespaces) {
  std::string why;
  if (!xmsg::launcher::NetnsTopology::supported(why)) GTEST_SKIP() << "--netns unsupported: " << why;
  Result r = run({"-n", "4", "--nodes", "2", "--netns", "--tag-output", "/bin/sh", "-c",
                  std::string("echo \"netns $(ip netns identify)\"; exec ") + BOOTSTRAP_CHECK +
                      " --xmsgrun --nodes 2"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(ranks_in(r.out).size(), 4u) << r.out;
  auto ns = namespaces_in(r.out);
  ASSERT_EQ(ns.size(), 4u) << r.out;
  EXPECT_EQ(ns[0], ns[1]);
  EXPECT_EQ(ns[2], ns[3]);
  EXPECT_NE(ns[0], ns[2]);
  EXPECT_TRUE(ns[0].starts_with("xn") && ns[0].ends_with("-0")) << ns[0];
  EXPECT_TRUE(ns[2].ends_with("-1")) << ns[2];
  expect_no_leftovers(r.out);
  expect_no_namespaces(netns_suffix(ns[0]));
}

TEST(Netns, KillMinusNineOfTheLauncherRemovesNamespaces) {
  std::string why;
  if (!xmsg::launcher::NetnsTopology::supported(why)) GTEST_SKIP() << "--netns unsupported: " << why;
  Launch l({"-n", "2", "--nodes", "2", "--netns", "--tag-output", "/bin/sh", "-c",
            std::string("echo \"netns $(ip netns identify)\"; exec ") + JOB_ACTIONS + " sleep 60"});
  ASSERT_TRUE(l.read_until(
      [](const std::string& o) { return ranks_in(o).size() == 2 && namespaces_in(o).size() == 2; },
      20000))
      << l.out();
  auto ranks = ranks_in(l.out());
  std::string suffix = netns_suffix(namespaces_in(l.out()).begin()->second);
  EXPECT_FALSE(xmsg::launcher::NetnsTopology::leftovers(suffix).empty());
  std::vector<int> pids = children_of(l.pid());
  for (auto& r : ranks) pids.push_back(r.pid);
  ::kill(l.pid(), SIGKILL);
  l.wait();
  expect_no_leftovers(pids, ranks.front().job);
  expect_no_namespaces(suffix);
}

// ---------------------------------------------------------------------------------------------
// Bad use.

TEST(BadUse, MissingProgramExitsTwo) {
  Result r = run({"-n", "2", "xmsg-no-such-program"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("xmsg-no-such-program"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(BadUse, NonExecutableProgramExitsTwo) {
  Result r = run({"-n", "2", "/etc/passwd"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not an executable"), std::string::npos) << r.err;
}

TEST(BadUse, RankCountMissingOrBelowOneExitsTwo) {
  Result missing = run({JOB_ACTIONS, "sleep", "0"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("-n"), std::string::npos) << missing.err;
  Result zero = run({"-n", "0", JOB_ACTIONS, "sleep", "0"});
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.err.find("-n must be >= 1"), std::string::npos) << zero.err;
}

TEST(BadUse, BadMpiexecTimeoutExitsTwoNamingIt) {
  for (const char* value : {"soon", "0", "-3", "2.5"}) {
    Result r = run({"-n", "2", JOB_ACTIONS, "sleep", "1000000"}, {std::string("MPIEXEC_TIMEOUT=") + value});
    EXPECT_EQ(r.status, 2) << value << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("xmsgrun: MPIEXEC_TIMEOUT='") + value +
                         "' is not a positive whole number of seconds"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << "no rank may start: " << r.out;
  }
}

TEST(BadUse, UnknownOptionExitsTwoWithUsage) {
  Result r = run({"-n", "2", "--no-such-option", JOB_ACTIONS});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Usage"), std::string::npos) << r.err;
}

}  // namespace
