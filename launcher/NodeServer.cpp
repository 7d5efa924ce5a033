#include "NodeServer.hpp"

#include <xmsg/bootstrap/parameters.hpp>

#include "Cleanup.hpp"
#include "Netns.hpp"
#include "PmixServer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
  void spawn_ranks();
  void handle_server_events();
  void handle_channel();
  void handle_signals();
  void reap();
  void terminate(int grace_ms);
  void kill_alive(int sig);
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

void NodeServer::run() {
  coordinator_ = ::getppid();
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
    report_failure(e.what());
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
      if (a->cbfunc) a->cbfunc(PMIX_SUCCESS, a->cbdata);
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
    auto it = alive_.find(pid);
    if (it == alive_.end()) continue;
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
    channel_.send(MessageWriter(Msg::RankExit)
                      .put_i32(rank)
                      .put_i32(pid)
                      .put_i32(status)
                      .put_i32(unfinalized ? 1 : 0)
                      .take());
  }
}

void NodeServer::kill_alive(int sig) {
  for (auto& [pid, rank] : alive_) ::kill(pid, sig);
}

void NodeServer::terminate(int grace_ms) {
  if (grace_ms <= 0) {
    kill_alive(SIGKILL);
    return;
  }
  kill_alive(SIGTERM);
  auto deadline = Clock::now() + std::chrono::milliseconds(grace_ms);
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
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    FILE* f = std::fopen(path, "r");
    if (!f) continue;
    char line[512];
    const size_t n = std::fread(line, 1, sizeof line - 1, f);
    std::fclose(f);
    line[n] = '\0';
    const char* close_paren = std::strrchr(line, ')');
    int ppid = 0;
    char state = 0;
    if (close_paren && std::sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 && ppid == self) out.push_back(pid);
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
