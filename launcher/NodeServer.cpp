#include "NodeServer.hpp"

#include <xmsg/bootstrap/address_space.hpp>
#include <xmsg/bootstrap/parameters.hpp>

#include "Cleanup.hpp"
#include "Netns.hpp"
#include "PmixServer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

extern char** environ;

namespace xmsg::launcher {

namespace {

using Clock = std::chrono::steady_clock;

// kill_alive: how long a rank sent KILL, or TERM, is waited for before the next is signalled,
// and how long the PMIx thread may take to settle on a rank's exit.
constexpr std::chrono::milliseconds kKillWait{1000};
constexpr std::chrono::milliseconds kTermWait{200};
constexpr std::chrono::milliseconds kForwardedGrace{1000};  // within xmsgrun's 2 s before KILL
constexpr std::chrono::milliseconds kSettleLimit{1000};

// --- Address space (RLIMIT_AS, `ulimit -v`) ---------------------------------------------------
// OpenPMIx 4.2 does not survive running out of it: an unchecked malloc in its receive handler
// segfaults, and a failed pthread_create of its listener thread goes unnoticed (it tests
// `0 > pthread_create(...)`), so the server runs but never accepts a rank, which then waits in
// PMIx_Init forever. So the node server keeps its own need small and checks it has room before
// it starts the PMIx server, instead of finding out from a crash or a hang.

// 0 when unlimited. Read once: the signal handler below must not call getrlimit.
unsigned long g_as_limit_kb = 0;

using bootstrap::address_space_used_kb;

void read_address_space_limit() { g_as_limit_kb = bootstrap::address_space_limit_kb(); }

// Says already what address_space_note() would add.
struct OutOfAddressSpace : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string address_space_note() {
  if (!g_as_limit_kb) return "";
  return " (address space: " + std::to_string(address_space_used_kb()) + " kB in use of ulimit -v " +
         std::to_string(g_as_limit_kb) + " kB)";
}

// Each thread that mallocs would get its own arena, and each arena reserves 64 MiB of address
// space; each thread stack takes RLIMIT_STACK (often 8 MiB). Unused, both cost nothing but
// address space, which is exactly what `ulimit -v` limits: with them the node server maps about
// 196 MB, without them 53 MB (64 ranks). Once an arena cannot be reserved glibc hands every
// malloc of that thread a page of its own, and a 64-rank server runs out quickly. One arena
// for the PMIx thread and ours costs nothing measurable (it takes the lock uncontended almost
// always); 2 MiB is glibc's own default stack when RLIMIT_STACK is unlimited.
void shrink_address_space_needs() {
  ::mallopt(M_ARENA_MAX, 1);
  constexpr size_t kThreadStack = 2u << 20;
  pthread_attr_t attr;
  if (::pthread_getattr_default_np(&attr) != 0) return;
  size_t stack = 0;
  if (::pthread_attr_getstacksize(&attr, &stack) == 0 && stack > kThreadStack &&
      ::pthread_attr_setstacksize(&attr, kThreadStack) == 0)
    ::pthread_setattr_default_np(&attr);
  ::pthread_attr_destroy(&attr);
}

// Room the PMIx server needs beyond what the node server maps before starting it, measured
// with OpenPMIx 4.2.2 and the two changes above: PMIx_server_init 4.7 MB (its two threads'
// stacks and buffers), then 17-21 kB per rank for an MPI hello world, about 140 kB per rank
// when each rank publishes 64 KiB (the server keeps every rank's modex data). The check asks
// for 8 MiB + 64 kB per rank: it turns the common case into a message, and a job whose ranks
// publish much more still fails later, in the crash handler below.
unsigned long pmix_server_needs_kb(int local_ranks) {
  return 8 * 1024 + 64 * static_cast<unsigned long>(local_ranks);
}

// Written by the crash handler, which can only use what is ready: "xmsgrun: node K (host): ".
char g_crash_prefix[160];

void append(char* buf, size_t cap, size_t& len, const char* s) {
  while (*s && len + 1 < cap) buf[len++] = *s++;
  buf[len] = '\0';
}

void append_number(char* buf, size_t cap, size_t& len, unsigned long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v && n < static_cast<int>(sizeof digits));
  while (n > 0 && len + 1 < cap) buf[len++] = digits[--n];
  buf[len] = '\0';
}

// Says, before the node server dies of a fault, what it had mapped against `ulimit -v`: inside
// OpenPMIx this is how running out of address space ends (see above). It then dies of the
// signal all the same, so the coordinator reports it and cleans up as for any node server.
void on_fatal_signal(int sig) {
  char msg[512];
  size_t len = 0;
  msg[0] = '\0';
  append(msg, sizeof msg, len, g_crash_prefix);
  append(msg, sizeof msg, len, "the node server crashed (signal ");
  append_number(msg, sizeof msg, len, static_cast<unsigned long>(sig));
  append(msg, sizeof msg, len, ")");
  if (g_as_limit_kb) {
    append(msg, sizeof msg, len, " with ");
    append_number(msg, sizeof msg, len, address_space_used_kb());
    append(msg, sizeof msg, len, " kB of address space in use of ulimit -v ");
    append_number(msg, sizeof msg, len, g_as_limit_kb);
    append(msg, sizeof msg, len,
           " kB: most likely out of address space (its PMIx library does not check every "
           "allocation); raise ulimit -v or run fewer ranks per node");
  }
  append(msg, sizeof msg, len, "\n");
  [[maybe_unused]] ssize_t w = ::write(2, msg, len);
  ::raise(sig);  // SA_RESETHAND restored the default action; also ends a sent (not faulting) signal
}

void install_crash_handler(const std::string& prefix) {
  std::snprintf(g_crash_prefix, sizeof g_crash_prefix, "%s", prefix.c_str());
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  // SIGABRT: our own allocations end in std::bad_alloc, uncaught on the PMIx thread.
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

struct PendingModex {
  pmix_modex_cbfunc_t cbfunc;
  void* cbdata;
};

class NodeServer {
 public:
  NodeServer(const JobPlan& plan, int node, int channel_fd, const std::vector<RankPipes>& pipes)
      : plan_(plan), node_(node), channel_(channel_fd), pipes_(pipes) {}

  [[noreturn]] void run();

 private:
  void prepare_signals();
  void check_address_space_room() const;
  void spawn_ranks();
  void handle_server_events();
  void handle_channel();
  void handle_signals();
  void reap();
  void on_exit(pid_t pid, int status);  // a rank `pid` ended with `status`
  void await_exit(pid_t pid, Clock::time_point deadline);
  void note_rank_crash(int rank, int status);
  void terminate(int grace_ms);
  void kill_alive(int sig, std::optional<Clock::time_point> term_until = std::nullopt);
  void hold_ranks();
  void end_orphans();
  [[noreturn]] void finish(int code);
  void report_failure(const std::string& what);
  bool local(int rank) const {
    return rank >= plan_.first_rank[node_] && rank < plan_.first_rank[node_ + 1];
  }

  const JobPlan& plan_;
  int node_;
  Channel channel_;
  std::vector<RankPipes> pipes_;
  std::unique_ptr<PmixServer> server_;
  int signal_fd_ = -1;
  std::map<pid_t, int> alive_;  // pid -> rank
  std::set<int> dead_ranks_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, PendingModex> pending_;        // fences and direct modex we asked for
  std::map<uint64_t, int> asks_for_peers_;          // coordinator request -> local rank
  std::optional<Clock::time_point> kill_deadline_;
  pid_t coordinator_ = -1;
  // Set when the coordinator's channel closed without a Shutdown or its death signal came:
  // getppid() may still name it for a moment (the kernel closes a dying process's files before
  // it reparents its children), so that alone cannot tell.
  bool coordinator_gone_ = false;
  int host_netns_fd_ = -1;  // to step out of the node's namespace for a crash sweep
  bool rank_crash_noted_ = false;
  bool pmix_unsettled_ = false;  // PmixServer::settle ran into its limit once
};

void NodeServer::prepare_signals() {
  // The coordinator blocked these before forking us; they arrive through a signalfd.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  // Terminal interrupts reach every process of the foreground group: the coordinator forwards
  // them, this process must not die of them.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
}

void NodeServer::report_failure(const std::string& what) {
  channel_.send(MessageWriter(Msg::NodeFailed)
                    .put_str("node " + std::to_string(node_) + " (" + plan_.hostnames[node_] +
                             "): " + what)
                    .take());
  channel_.drain_blocking();
}

void NodeServer::check_address_space_room() const {
  if (!g_as_limit_kb) return;
  const int ranks = plan_.first_rank[node_ + 1] - plan_.first_rank[node_];
  const unsigned long used = address_space_used_kb(), needed = pmix_server_needs_kb(ranks);
  if (used + needed <= g_as_limit_kb) return;
  throw OutOfAddressSpace("out of address space: ulimit -v is " + std::to_string(g_as_limit_kb) +
                           " kB, the node server maps " + std::to_string(used) +
                           " kB and needs about " + std::to_string(needed) +
                           " kB more for its PMIx server and " + std::to_string(ranks) +
                           (ranks == 1 ? " rank" : " ranks") + "; raise ulimit -v to at least " +
                           std::to_string(used + needed) + " kB (every rank needs its own room too)");
}

void NodeServer::run() {
  coordinator_ = ::getppid();
  read_address_space_limit();
  shrink_address_space_needs();
  // Whatever a rank starts (a wrapper script's commands, a daemon that double-forks) is
  // reparented to us, not to init, when its parent goes, so it can end with the job.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  prepare_signals();
  if (::getppid() != coordinator_) finish(1);

  try {
    if (plan_.netns) {
      host_netns_fd_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
      // Before PMIx_server_init: the server and its ranks all live inside the node.
      plan_.netns->enter(node_);
    }
    ::mkdir(plan_.node_dir(node_).c_str(), 0700);
    if (::mkdir(plan_.job_tmpdir(node_).c_str(), 0700) != 0 ||
        ::mkdir(plan_.pmix_tmpdir(node_).c_str(), 0700) != 0)
      throw std::runtime_error("cannot create " + plan_.node_dir(node_) + ": " +
                               std::strerror(errno));
    // Before any rank exists: the secret the tcp transport authenticates ranks with, readable
    // by this user only (never published through PMIx, whose store any local user can read).
    write_secret_file(plan_, node_);
    check_private_dir(plan_.pmix_tmpdir(node_));
    check_address_space_room();
    install_crash_handler("xmsgrun: node " + std::to_string(node_) + " (" + plan_.hostnames[node_] + "): ");
    auto t0 = Clock::now();
    server_ = std::make_unique<PmixServer>(plan_.hostnames[node_], plan_.pmix_tmpdir(node_),
                                           plan_.topology);
    auto t1 = Clock::now();
    server_->register_job(plan_, node_);
    auto t2 = Clock::now();
    spawn_ranks();
    auto t3 = Clock::now();
    if (params::flag("XMSG_LAUNCHER_TRACE")) {
      auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
      std::fprintf(stderr, "xmsgrun[trace]: node %d: PMIx_server_init %.1f ms, register %.1f ms, spawn %.1f ms\n",
                   node_, ms(t1 - t0), ms(t2 - t1), ms(t3 - t2));
    }
  } catch (const std::exception& e) {
    report_failure(e.what() + (dynamic_cast<const OutOfAddressSpace*>(&e) ? "" : address_space_note()));
    kill_alive(SIGKILL);
    finish(1);
  }

  for (;;) {
    pollfd fds[3] = {{channel_.fd(), static_cast<short>(POLLIN | (channel_.wants_write() ? POLLOUT : 0)), 0},
                     {server_->event_fd(), POLLIN, 0},
                     {signal_fd_, POLLIN, 0}};
    int timeout = -1;
    if (kill_deadline_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_deadline_ - Clock::now());
      timeout = static_cast<int>(std::max<long>(0, left.count()));
    }
    int n = ::poll(fds, 3, timeout);
    if (n < 0 && errno != EINTR) finish(1);
    if (fds[2].revents) handle_signals();
    if (fds[1].revents) handle_server_events();
    if (fds[0].revents & POLLOUT) channel_.flush();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) handle_channel();
    if (kill_deadline_ && Clock::now() >= *kill_deadline_) {
      kill_deadline_.reset();
      kill_alive(SIGKILL);
    }
  }
}

void NodeServer::spawn_ranks() {
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) base_env.emplace_back(*e);

  std::vector<char*> argv;
  for (const auto& a : plan_.options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t self = ::getpid();

  for (int r = plan_.first_rank[node_]; r < plan_.first_rank[node_ + 1]; ++r) {
    std::vector<std::string> env = base_env;
    server_->setup_fork(plan_.nspace, r, env);
    auto set = [&](const std::string& name, const std::string& value) {
      std::string prefix = name + "=";
      std::erase_if(env, [&](const std::string& s) { return s.starts_with(prefix); });
      env.push_back(prefix + value);
    };
    set("XMSG_JOB_TMPDIR", plan_.job_tmpdir(node_));
    // Every virtual node runs on this host: all the job's ranks share its CPUs (a value the
    // user gave, inherited or with -x, wins).
    if (std::none_of(env.begin(), env.end(), [](const std::string& s) { return s.starts_with("XMSG_HOST_RANKS="); }))
      set("XMSG_HOST_RANKS", std::to_string(plan_.nranks()));
    for (const auto& [k, v] : plan_.options.exports) set(k, v);
    // After the -x variables: an inherited or exported value must not point ranks elsewhere.
    set("XMSG_JOB_SECRET_FILE", plan_.secret_file(node_));
    std::vector<char*> envp;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);

    const RankBinding& binding = plan_.bindings[static_cast<size_t>(r)];
    int in_fd = r == 0 ? 0 : devnull;
    int out_fd = pipes_[static_cast<size_t>(r)].out, err_fd = pipes_[static_cast<size_t>(r)].err;
    pid_t pid = ::fork();
    if (pid == 0) {
      // Child of a multi-threaded process: async-signal-safe calls only until exec.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != self) ::_exit(1);
      if (in_fd != 0) ::dup2(in_fd, 0);
      ::dup2(out_fd, 1);
      ::dup2(err_fd, 2);
      if (binding.bound) ::sched_setaffinity(0, sizeof binding.cpus, &binding.cpus);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD}) ::sigaction(sig, &dfl, nullptr);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execve(plan_.options.program_path.c_str(), argv.data(), envp.data());
      const char msg[] = "xmsgrun: exec failed\n";
      [[maybe_unused]] ssize_t w = ::write(2, msg, sizeof msg - 1);
      ::_exit(127);
    }
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    alive_[pid] = r;
    ::close(out_fd);
    ::close(err_fd);
  }
  if (devnull >= 0) ::close(devnull);
}

void NodeServer::handle_server_events() {
  for (auto& ev : server_->take_events()) {
    if (auto* f = std::get_if<FenceUpcall>(&ev)) {
      uint64_t id = next_id_++;
      pending_[id] = {f->cbfunc, f->cbdata};
      channel_.send(MessageWriter(Msg::FenceEnter)
                        .put_u64(id)
                        .put_str(f->participants)
                        .put_i32(f->local_status)
                        .put_str(f->blob)
                        .take());
    } else if (auto* d = std::get_if<DirectModexUpcall>(&ev)) {
      uint64_t id = next_id_++;
      pending_[id] = {d->cbfunc, d->cbdata};
      channel_.send(MessageWriter(Msg::DmodexAsk).put_u64(id).put_i32(d->rank).take());
    } else if (auto* c = std::get_if<ClientAccepted>(&ev)) {
      // Not if the rank is gone already (reaped): nothing would ever release it.
      for (const auto& [pid, rank] : alive_)
        if (rank == c->rank) server_->hold_connection(*c, pid);
    } else if (auto* a = std::get_if<AbortUpcall>(&ev)) {
      pid_t pid = 0;
      for (auto& [p, r] : alive_)
        if (r == a->rank) pid = p;
      channel_.send(MessageWriter(Msg::RankAbort)
                        .put_i32(a->rank)
                        .put_i32(pid)
                        .put_i32(a->status)
                        .put_str(a->message)
                        .take());
      server_->answer_on_pmix_thread(a->cbfunc, a->cbdata);
      // The rank exits once answered: its exit is settled (on_exit) before the job's end,
      // which the coordinator starts on RankAbort, kills the others (kill_alive).
      if (pid > 0 && !pmix_unsettled_) await_exit(pid, Clock::now() + kKillWait);
    } else if (auto* m = std::get_if<LocalModexReady>(&ev)) {
      if (asks_for_peers_.erase(m->request))
        channel_.send(MessageWriter(Msg::DmodexAnswer)
                          .put_u64(m->request)
                          .put_i32(m->status)
                          .put_str(m->blob)
                          .take());
    }
  }
}

void NodeServer::handle_channel() {
  bool open = channel_.read_available();
  Msg type;
  std::string payload;
  while (channel_.next(type, payload)) {
    MessageReader in(payload);
    switch (type) {
      case Msg::FenceDone:
      case Msg::DmodexAnswer: {
        uint64_t id = in.u64();
        pmix_status_t st = in.i32();
        std::string blob = in.str();
        auto it = pending_.find(id);
        if (it == pending_.end()) break;
        PendingModex p = it->second;
        pending_.erase(it);
        PmixServer::complete_modex(p.cbfunc, p.cbdata, st, std::move(blob));
        break;
      }
      case Msg::DmodexAsk: {
        uint64_t request = in.u64();
        int rank = in.i32();
        if (!local(rank) || dead_ranks_.count(rank)) {
          // A rank that is gone never answers: PMIx_server_dmodex_request would wait forever.
          channel_.send(MessageWriter(Msg::DmodexAnswer)
                            .put_u64(request)
                            .put_i32(PMIX_ERR_NOT_FOUND)
                            .put_str("")
                            .take());
        } else {
          asks_for_peers_[request] = rank;
          server_->ask_local_modex(plan_.nspace, rank, request);
        }
        break;
      }
      case Msg::Signal: kill_alive(in.i32()); break;
      case Msg::Terminate: terminate(in.i32()); break;
      case Msg::Shutdown: finish(0);
      default: break;
    }
  }
  if (!open) {
    // The coordinator is gone (its death signal may still be on its way): end everything.
    coordinator_gone_ = true;
    kill_alive(SIGKILL);
    finish(1);
  }
}

void NodeServer::handle_signals() {
  signalfd_siginfo si;
  bool parent_gone = false;
  while (::read(signal_fd_, &si, sizeof si) == sizeof si) {
    if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP) parent_gone = true;
  }
  reap();
  if (parent_gone) {
    coordinator_gone_ = true;
    kill_alive(SIGKILL);
    finish(1);
  }
}

void NodeServer::reap() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    on_exit(pid, status);
  }
}

void NodeServer::on_exit(pid_t pid, int status) {
  auto it = alive_.find(pid);
  if (it == alive_.end()) return;
  int rank = it->second;
  alive_.erase(it);
  dead_ranks_.insert(rank);
  for (auto a = asks_for_peers_.begin(); a != asks_for_peers_.end();) {
    if (a->second == rank) {
      channel_.send(MessageWriter(Msg::DmodexAnswer)
                        .put_u64(a->first)
                        .put_i32(PMIX_ERR_NOT_FOUND)
                        .put_str("")
                        .take());
      a = asks_for_peers_.erase(a);
    } else {
      ++a;
    }
  }
  // A rank that called PMIx_Init and leaves without PMIx_Finalize is a failure whatever its
  // status (as under mpirun): its peers may wait for it forever.
  const bool unfinalized = server_ && server_->client_state(rank) == ClientState::kConnected;
  // The library learns of the rank's end only now (release_connections), and it has run what
  // that set off before the next rank's end and before the coordinator hears of this one
  // and has the other ranks killed (kill_alive). A PMIx thread that does not settle within
  // the limit is not waited for again.
  if (server_) {
    const auto released =
        server_->release_connections(rank, pmix_unsettled_ ? std::chrono::milliseconds(0) : kSettleLimit);
    if (released.timed_out) pmix_unsettled_ = true;
    if (unfinalized && !pmix_unsettled_) pmix_unsettled_ = !server_->settle(kSettleLimit);
  }
  note_rank_crash(rank, status);
  channel_.send(MessageWriter(Msg::RankExit)
                    .put_i32(rank)
                    .put_i32(pid)
                    .put_i32(status)
                    .put_i32(unfinalized ? 1 : 0)
                    .take());
}

// A rank's own PMIx library (and glibc's thread start) fail the same way as ours when the
// address space runs out; the signal alone would not tell the user that the limit is the
// likely cause. Said once per node, before the coordinator reports the rank.
void NodeServer::note_rank_crash(int rank, int status) {
  if (!g_as_limit_kb || rank_crash_noted_ || !WIFSIGNALED(status)) return;
  if (WTERMSIG(status) != SIGSEGV && WTERMSIG(status) != SIGBUS) return;
  rank_crash_noted_ = true;
  std::fprintf(stderr,
               "xmsgrun: node %d (%s): rank %d crashed (signal %d) under ulimit -v %lu kB: most "
               "likely out of address space (OpenPMIx does not check every allocation); raise "
               "ulimit -v\n",
               node_, plan_.hostnames[node_].c_str(), rank, WTERMSIG(status), g_as_limit_kb);
}

// A process's state letter and parent from /proc/<pid>/stat (state 0: no such process).
struct ProcStat {
  char state = 0;
  pid_t ppid = 0;
};
static ProcStat proc_stat(pid_t pid) {
  ProcStat st;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return st;
  char line[1024];
  const size_t n = std::fread(line, 1, sizeof line - 1, f);
  std::fclose(f);
  line[n] = '\0';
  // The command may hold spaces and parentheses: the fields start after the last ')'.
  const char* close_paren = std::strrchr(line, ')');
  int ppid = 0;
  char state = 0;
  if (close_paren && std::sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2) st = ProcStat{state, ppid};
  return st;
}

// OpenPMIx 4.2 (lost_connection in ptl_base_sendrecv.c) completes a fence of this node's
// ranks (one whose participants are all local: it never reaches our fence upcall) each time a
// participant's connection closes and the rest have called in, without marking it done; when
// two connections close before its thread-shifted completion ran (one pass of its event loop)
// it completes and frees the fence twice, and this process dies of heap corruption
// ("malloc(): unsorted double linked list corrupted" when a rank had left and the job's end
// killed the others: 11 node servers in ~2000 launcher tests under load). So lethal signals go
// to one rank at a time: the rank's exit, and the PMIx thread settled on it (on_exit), before
// the next. KILL takes about 0.1 ms a rank. TERM (and the other signals that end a rank by
// default) is waited for until `term_until` at most, so that ranks that handle it still get
// it in time. Before the first, every rank is held (hold_ranks), so that none ends by itself
// in the middle of that order. (A rank whose connection the PMIx server holds, most of them,
// reaches the library only through on_exit anyway: PmixServer::release_connections. The order
// still covers the rest: a wrapper script's child that is the PMIx client.)
void NodeServer::kill_alive(int sig, std::optional<Clock::time_point> term_until) {
  // Forwarded terminal and hang-up signals end ranks too (unless they handle them).
  const bool ends_ranks = sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
  const bool held = (sig == SIGKILL || ends_ranks) && server_ && !pmix_unsettled_;
  if (held) hold_ranks();
  std::vector<pid_t> pids;
  for (auto& [pid, rank] : alive_) pids.push_back(pid);
  const auto until = term_until.value_or(Clock::now() + kForwardedGrace);
  for (pid_t pid : pids) {
    reap();  // ranks that ended by themselves are settled before the next one goes
    if (!alive_.count(pid)) continue;
    ::kill(pid, sig);
    if (held) ::kill(pid, SIGCONT);  // a held rank takes the signal (or its handler) now
    if (!held || pmix_unsettled_) continue;
    await_exit(pid, sig == SIGKILL ? Clock::now() + kKillWait : std::min(Clock::now() + kTermWait, until));
  }
}

// Ranks that die by themselves while the job's end begins (several crashing at once: the
// first one's exit ended the job; the others may still be on their way) would escape
// kill_alive's order, and a rank closes its PMIx connection before it can be reaped (the
// kernel closes a process's files before it becomes a zombie). So first every rank is
// stopped (SIGSTOP), and we wait, up to kKillWait, until each is stopped or gone; those that
// died meanwhile are reaped, which settles the PMIx thread on each (on_exit). A stopped rank
// cannot end by itself any more; kill_alive continues each one as it signals it.
void NodeServer::hold_ranks() {
  for (const auto& [pid, rank] : alive_) ::kill(pid, SIGSTOP);
  const auto deadline = Clock::now() + kKillWait;
  for (;;) {
    reap();
    bool moving = false;
    for (const auto& [pid, rank] : alive_) {
      const ProcStat st = proc_stat(pid);
      if (st.state != 0 && st.state != 'T' && st.state != 't') {
        moving = true;  // not yet stopped, or exiting (a zombie not yet reaped)
        break;
      }
    }
    if (!moving || Clock::now() >= deadline) return;
    ::usleep(100);
  }
}

// Reaps rank `pid` (on_exit) if it ends before `deadline`.
void NodeServer::await_exit(pid_t pid, Clock::time_point deadline) {
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      on_exit(pid, status);
      return;
    }
    if (Clock::now() >= deadline) return;
    ::usleep(50);
  }
}

void NodeServer::terminate(int grace_ms) {
  if (grace_ms <= 0) {
    kill_alive(SIGKILL);
    return;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(grace_ms);
  kill_alive(SIGTERM, deadline);
  if (!kill_deadline_ || deadline < *kill_deadline_) kill_deadline_ = deadline;
}

// Our children that are not ranks: descendants of ranks reparented to us (we are their
// subreaper). Read from /proc because nothing told us their pids.
static std::vector<pid_t> orphans_of(pid_t self) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  while (dirent* e = proc ? ::readdir(proc) : nullptr) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    if (proc_stat(pid).ppid == self) out.push_back(pid);
  }
  if (proc) ::closedir(proc);
  return out;
}

// Every process our ranks started ends with the job: TERM, half a second to go, then KILL.
void NodeServer::end_orphans() {
  const pid_t self = ::getpid();
  auto reap_all = [] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  };
  std::vector<pid_t> left = orphans_of(self);
  if (left.empty()) return;
  for (pid_t pid : left) ::kill(pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  while (Clock::now() < deadline) {
    reap_all();
    if (orphans_of(self).empty()) return;
    ::usleep(10000);
  }
  // KILLed ones may leave children of their own, reparented to us in turn.
  for (int round = 0; round < 100; ++round) {
    left = orphans_of(self);
    if (left.empty()) return;
    for (pid_t pid : left) ::kill(pid, SIGKILL);
    ::usleep(10000);
    reap_all();
  }
}

void NodeServer::finish(int code) {
  // Wait for our ranks so nothing outlives the node (they were SIGKILLed on abnormal ends).
  while (!alive_.empty()) {
    int status;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) break;
    alive_.erase(pid);
  }
  end_orphans();
  remove_tree(plan_.node_dir(node_));
  ::rmdir(plan_.base_dir.c_str());  // the last node out removes the job directory
  remove_job_shm(plan_.job_id);
  if (plan_.netns && (coordinator_gone_ || ::getppid() != coordinator_)) {
    // The coordinator died without tearing the namespaces down: do it from the host's
    // namespace (links live there). Several node servers may race here; sweeping is idempotent.
    if (host_netns_fd_ >= 0) ::setns(host_netns_fd_, CLONE_NEWNET);
    NetnsTopology::sweep(plan_.netns->suffix());
  }
  channel_.drain_blocking();
  ::_exit(code);
}

}  // namespace

void run_node_server(const JobPlan& plan, int node, int channel_fd,
                     const std::vector<RankPipes>& pipes) {
  NodeServer server(plan, node, channel_fd, pipes);
  server.run();
}

}  // namespace xmsg::launcher
