#include "Coordinator.hpp"

#include "Channel.hpp"
#include "Cleanup.hpp"
#include "Netns.hpp"
#include "NodeServer.hpp"
#include "OutputForwarder.hpp"

#include <pmix_common.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace xmsg::launcher {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kFailureGraceMs = 250;   // a failed job: SIGTERM, then SIGKILL this much later
constexpr int kSignalGraceMs = 2000;   // a forwarded SIGINT/SIGTERM: time ranks get to exit
constexpr int kDrainMs = 200;          // output still arriving after the last rank exited
constexpr int kOutputGraceMs = 1000;   // a job that ended badly: how long a reader taking nothing is waited for

// For the --stats file only: rank output and messages go through the OutputForwarder.
void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else {
      return;  // reader gone: output is dropped, the job goes on
    }
  }
}

struct NodeProcess {
  pid_t pid = -1;
  Channel channel;
  bool exited = false;
};

struct FenceRound {
  std::set<int> arrived;
  std::map<int, uint64_t> local_ids;  // node -> its id
  std::map<int, std::string> blobs;   // node -> contribution (node order = concatenation order)
  pmix_status_t status = PMIX_SUCCESS;
};

struct DmodexRoute {
  int node;
  uint64_t id;
};

// What crossed one node server's channel (--stats). Counted here, on the coordinator's one
// thread, as the frames pass: the node servers' own threads never touch it. Bytes are PMIx
// payload (fence contributions, modex blobs), not the frame headers around them.
struct NodeTraffic {
  uint64_t fences = 0;                       // completed fence rounds this node took part in
  uint64_t fences_with_data = 0;             // ... whose result carried any bytes
  uint64_t fence_bytes_sent = 0;             // this node's contributions
  uint64_t fence_bytes_received = 0;         // results handed back (every node's contribution)
  uint64_t fence_bytes_received_remote = 0;  // of those, the other nodes' contributions
  uint64_t dmodex_asked = 0;                 // requests for a rank on another node
  uint64_t dmodex_answered = 0;              // requests of other nodes it answered
  uint64_t dmodex_failed = 0;                // its requests that came back with an error
  uint64_t dmodex_bytes_sent = 0;            // answers it sent
  uint64_t dmodex_bytes_received = 0;        // answers it received
  std::optional<Clock::time_point> first_fence_done;
};

class Coordinator {
 public:
  explicit Coordinator(JobPlan plan) : plan_(std::move(plan)), output_(plan_.options.tag_output) {}
  int run();

 private:
  bool start();
  void loop();
  void shutdown();
  void say(const std::string& line) { output_.message("xmsgrun: " + line); }
  void time_out();
  void finish_output();
  void handle_node_message(int node, Msg type, const std::string& payload);
  void handle_fence(int node, uint64_t id, const std::string& participants, pmix_status_t status,
                    std::string blob);
  void handle_signals();
  void node_gone(int node, int wait_status);
  void rank_exited(int rank, pid_t pid, int status, bool unfinalized);
  void fail(int code, const std::string& message, int grace_ms);
  void send_all(const std::string& frame);
  void close_write_ends() {
    for (auto& p : pipes_) {
      if (p.out >= 0) ::close(p.out);
      if (p.err >= 0) ::close(p.err);
      p = RankPipes{};
    }
  }
  std::set<int> nodes_of(const std::string& participants) const;
  std::optional<Clock::time_point> next_deadline() const;
  void write_stats();

  JobPlan plan_;
  OutputForwarder output_;
  std::vector<NodeProcess> nodes_;
  std::vector<RankPipes> pipes_;  // write ends, open only until the node servers are forked
  std::unique_ptr<NetnsTopology> netns_;
  int signal_fd_ = -1;
  int ranks_done_ = 0;
  std::vector<bool> rank_done_;
  bool ending_ = false;
  int exit_code_ = 0;
  std::optional<Clock::time_point> timeout_at_;
  std::optional<Clock::time_point> force_kill_at_;  // after a forwarded signal
  std::map<std::string, std::deque<FenceRound>> fences_;
  std::map<uint64_t, DmodexRoute> routes_;
  uint64_t next_route_ = 1;
  // --stats
  Clock::time_point started_ = Clock::now();
  std::vector<NodeTraffic> traffic_;  // per node
  std::optional<Clock::time_point> first_job_fence_;  // first fence over every node completed
  std::optional<Clock::time_point> last_fence_;
  uint64_t fence_rounds_ = 0;
  int stats_fd_ = -1;
};

int Coordinator::run() {
  if (!start()) {
    shutdown();
    finish_output();
    return exit_code_;
  }
  loop();
  shutdown();
  write_stats();
  finish_output();
  return exit_code_;
}

bool Coordinator::start() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  ::signal(SIGPIPE, SIG_IGN);

  rank_done_.assign(static_cast<size_t>(plan_.nranks()), false);
  traffic_.assign(static_cast<size_t>(plan_.nnodes()), NodeTraffic{});
  if (!plan_.options.stats_path.empty()) {
    // Opened before anything runs, so a bad path fails the job at once, not after it.
    stats_fd_ = ::open(plan_.options.stats_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (stats_fd_ < 0) {
      say("--stats: cannot open " + plan_.options.stats_path + ": " + std::strerror(errno));
      exit_code_ = 1;
      return false;
    }
  }
  if (::mkdir(plan_.base_dir.c_str(), 0700) != 0) {
    say("cannot create " + plan_.base_dir + ": " + std::strerror(errno));
    exit_code_ = 1;
    return false;
  }

  auto& pipes = pipes_;
  pipes.assign(static_cast<size_t>(plan_.nranks()), RankPipes{});
  for (int r = 0; r < plan_.nranks(); ++r) {
    int o[2], e[2];
    if (::pipe2(o, O_CLOEXEC) != 0) {
      say(std::string("cannot create output pipes: ") + std::strerror(errno));
      exit_code_ = 1;
      return false;
    }
    output_.add_stream(r, 1, o[0]);
    pipes[static_cast<size_t>(r)].out = o[1];
    if (::pipe2(e, O_CLOEXEC) != 0) {
      say(std::string("cannot create output pipes: ") + std::strerror(errno));
      exit_code_ = 1;
      return false;
    }
    output_.add_stream(r, 2, e[0]);
    pipes[static_cast<size_t>(r)].err = e[1];
  }

  if (plan_.options.netns) {
    try {
      netns_ = std::make_unique<NetnsTopology>(plan_.nnodes());
    } catch (const NetnsError& e) {
      say(std::string("--netns: ") + e.what());
      exit_code_ = 1;
      return false;
    }
    plan_.netns = netns_.get();
  }

  std::vector<int> node_side(static_cast<size_t>(plan_.nnodes()), -1);
  nodes_.resize(static_cast<size_t>(plan_.nnodes()));
  for (int k = 0; k < plan_.nnodes(); ++k) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      say(std::string("socketpair failed: ") + std::strerror(errno));
      exit_code_ = 1;
      return false;
    }
    nodes_[static_cast<size_t>(k)].channel = Channel(sv[0]);
    node_side[static_cast<size_t>(k)] = sv[1];
  }

  for (int k = 0; k < plan_.nnodes(); ++k) {
    pid_t pid = ::fork();
    if (pid == 0) {
      // Keep only this node's socket and its ranks' write ends; a stray copy of another
      // node's descriptor would hide that node's end-of-file from the coordinator.
      for (auto& n : nodes_) n.channel.close();
      output_.close_streams_in_child();
      for (int j = 0; j < plan_.nnodes(); ++j)
        if (j != k) ::close(node_side[static_cast<size_t>(j)]);
      for (int r = 0; r < plan_.nranks(); ++r)
        if (plan_.node_of(r) != k) {
          ::close(pipes[static_cast<size_t>(r)].out);
          ::close(pipes[static_cast<size_t>(r)].err);
        }
      ::close(signal_fd_);
      if (stats_fd_ >= 0) ::close(stats_fd_);
      run_node_server(plan_, k, node_side[static_cast<size_t>(k)], pipes);
    }
    if (pid < 0) {
      say(std::string("fork failed: ") + std::strerror(errno));
      exit_code_ = 1;
      return false;
    }
    nodes_[static_cast<size_t>(k)].pid = pid;
  }
  for (int fd : node_side) ::close(fd);
  close_write_ends();
  // After the last fork: the node servers must not inherit the writers' locks. Without the
  // writers the job still runs, as it would have before them.
  if (!output_.start())
    say(std::string("cannot start the output writer threads (") + std::strerror(errno) +
        "): output is written directly, and a reader that stops reading also stops xmsgrun");

  if (plan_.options.report_bindings)
    for (int r = 0; r < plan_.nranks(); ++r) {
      int k = plan_.node_of(r);
      say("rank " + std::to_string(r) + " on node " + std::to_string(k) + " (" +
          plan_.hostnames[k] + "): " +
          (plan_.bindings[static_cast<size_t>(r)].bound
               ? "bound to " + plan_.bindings[static_cast<size_t>(r)].description
               : std::string("not bound")));
    }
  if (plan_.options.timeout_seconds > 0)
    timeout_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(plan_.options.timeout_seconds));
  return true;
}

std::optional<Clock::time_point> Coordinator::next_deadline() const {
  std::optional<Clock::time_point> d;
  for (const auto& t : {timeout_at_, force_kill_at_})
    if (t && (!d || *t < *d)) d = t;
  return d;
}

void Coordinator::loop() {
  std::optional<Clock::time_point> drain_until;
  for (;;) {
    bool all_nodes_gone = true;
    for (auto& n : nodes_) all_nodes_gone &= n.exited;
    if (ranks_done_ == plan_.nranks() || all_nodes_gone) {
      if (!output_.streams_open()) return;
      // The drain bound is for pipes that a leftover process still holds open. Time spent
      // waiting for a slow reader does not count: output is not dropped while it reads (after
      // a failure, timeout or signal: unless it has taken nothing for kOutputGraceMs).
      const auto now = Clock::now();
      bool waiting_for_reader = output_.held_back() &&
                                (!ending_ || !output_.stalled(milliseconds(kOutputGraceMs)));
      if (!drain_until || (waiting_for_reader && *drain_until < now + milliseconds(kDrainMs)))
        drain_until = now + milliseconds(kDrainMs);
      if (now >= *drain_until) return;
    }

    std::vector<pollfd> fds;
    fds.push_back({signal_fd_, POLLIN, 0});
    for (auto& n : nodes_)
      fds.push_back({n.channel.fd(), static_cast<short>(n.channel.open() ? (POLLIN | (n.channel.wants_write() ? POLLOUT : 0)) : 0), 0});
    const size_t output_at = fds.size();
    output_.append_poll_fds(fds);

    auto deadline = next_deadline();
    if (drain_until && (!deadline || *drain_until < *deadline)) deadline = drain_until;
    int timeout = -1;
    if (deadline)
      timeout = static_cast<int>(std::max<long>(
          0, std::chrono::duration_cast<milliseconds>(*deadline - Clock::now()).count() + 1));
    int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) {
      say(std::string("poll failed: ") + std::strerror(errno));
      fail(1, "", 0);
      return;
    }

    size_t i = 1;
    for (size_t k = 0; k < nodes_.size(); ++k, ++i) {
      auto& node = nodes_[k];
      if (!node.channel.open() || !fds[i].revents) continue;
      if (fds[i].revents & POLLOUT) node.channel.flush();
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        bool open = node.channel.read_available();
        Msg type;
        std::string payload;
        while (node.channel.next(type, payload)) handle_node_message(static_cast<int>(k), type, payload);
        if (!open) node.channel.close();
      }
    }
    output_.handle_poll(&fds[output_at]);
    if (fds[0].revents) handle_signals();

    auto now = Clock::now();
    if (timeout_at_ && now >= *timeout_at_) time_out();
    if (force_kill_at_ && now >= *force_kill_at_) {
      force_kill_at_.reset();
      send_all(MessageWriter(Msg::Terminate).put_i32(0).take());
    }
  }
}

std::set<int> Coordinator::nodes_of(const std::string& participants) const {
  std::set<int> out;
  if (participants.find('*') != std::string::npos) {
    for (int k = 0; k < plan_.nnodes(); ++k) out.insert(k);
    return out;
  }
  size_t pos = 0;
  while (pos < participants.size()) {
    size_t comma = participants.find(',', pos);
    if (comma == std::string::npos) comma = participants.size();
    int rank = std::stoi(participants.substr(pos, comma - pos));
    int node = plan_.node_of(rank);
    if (node >= 0) out.insert(node);
    pos = comma + 1;
  }
  return out;
}

void Coordinator::handle_fence(int node, uint64_t id, const std::string& participants,
                               pmix_status_t status, std::string blob) {
  // Fences over the same participants complete in order: a node's n-th contribution joins the
  // n-th round.
  auto& rounds = fences_[participants];
  FenceRound* round = nullptr;
  for (auto& r : rounds)
    if (!r.arrived.count(node)) {
      round = &r;
      break;
    }
  if (!round) round = &rounds.emplace_back();
  round->arrived.insert(node);
  round->local_ids[node] = id;
  traffic_[static_cast<size_t>(node)].fence_bytes_sent += blob.size();
  round->blobs[node] = std::move(blob);
  if (status != PMIX_SUCCESS && round->status == PMIX_SUCCESS) round->status = status;

  if (round->arrived != nodes_of(participants)) return;
  std::string all;
  for (auto& [k, b] : round->blobs) all += b;
  const auto now = Clock::now();
  for (auto& [k, local_id] : round->local_ids) {
    auto& t = traffic_[static_cast<size_t>(k)];
    ++t.fences;
    if (!all.empty()) ++t.fences_with_data;
    t.fence_bytes_received += all.size();
    t.fence_bytes_received_remote += all.size() - round->blobs[k].size();
    if (!t.first_fence_done) t.first_fence_done = now;
    nodes_[static_cast<size_t>(k)].channel.send(
        MessageWriter(Msg::FenceDone).put_u64(local_id).put_i32(round->status).put_str(all).take());
  }
  ++fence_rounds_;
  last_fence_ = now;
  if (!first_job_fence_ && static_cast<int>(round->arrived.size()) == plan_.nnodes()) first_job_fence_ = now;
  for (auto it = rounds.begin(); it != rounds.end(); ++it)
    if (&*it == round) {
      rounds.erase(it);
      break;
    }
}

void Coordinator::time_out() {
  timeout_at_.reset();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", plan_.options.timeout_seconds);
  const std::string& from = plan_.options.timeout_from;
  fail(124, std::string("job timed out after ") + buf + " s (" + (from.empty() ? "--timeout" : from) + "); ending it",
       kFailureGraceMs);
}

void Coordinator::handle_node_message(int node, Msg type, const std::string& payload) {
  MessageReader in(payload);
  switch (type) {
    case Msg::RankExit: {
      int rank = in.i32();
      pid_t pid = in.i32();
      int status = in.i32();
      bool unfinalized = in.i32() != 0;
      rank_exited(rank, pid, status, unfinalized);
      break;
    }
    case Msg::RankAbort: {
      int rank = in.i32();
      pid_t pid = in.i32();
      int status = in.i32();
      std::string msg = in.str();
      fail(status != 0 ? status : 1,
           "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) +
               ") called abort with status " + std::to_string(status) + ": " + msg,
           kFailureGraceMs);
      break;
    }
    case Msg::FenceEnter: {
      uint64_t id = in.u64();
      std::string participants = in.str();
      pmix_status_t status = in.i32();
      std::string blob = in.str();
      handle_fence(node, id, participants, status, std::move(blob));
      break;
    }
    case Msg::DmodexAsk: {
      uint64_t id = in.u64();
      int rank = in.i32();
      int owner = plan_.node_of(rank);
      auto& asker = nodes_[static_cast<size_t>(node)].channel;
      ++traffic_[static_cast<size_t>(node)].dmodex_asked;
      if (owner < 0 || !nodes_[static_cast<size_t>(owner)].channel.open() ||
          rank_done_[static_cast<size_t>(rank)]) {
        ++traffic_[static_cast<size_t>(node)].dmodex_failed;
        asker.send(MessageWriter(Msg::DmodexAnswer).put_u64(id).put_i32(PMIX_ERR_NOT_FOUND).put_str("").take());
        break;
      }
      uint64_t route = next_route_++;
      routes_[route] = {node, id};
      nodes_[static_cast<size_t>(owner)].channel.send(
          MessageWriter(Msg::DmodexAsk).put_u64(route).put_i32(rank).take());
      break;
    }
    case Msg::DmodexAnswer: {
      uint64_t route = in.u64();
      pmix_status_t status = in.i32();
      std::string blob = in.str();
      auto it = routes_.find(route);
      if (it == routes_.end()) break;
      DmodexRoute r = it->second;
      routes_.erase(it);
      auto& owner = traffic_[static_cast<size_t>(node)];
      ++owner.dmodex_answered;
      owner.dmodex_bytes_sent += blob.size();
      auto& asker = traffic_[static_cast<size_t>(r.node)];
      asker.dmodex_bytes_received += blob.size();
      if (status != PMIX_SUCCESS) ++asker.dmodex_failed;
      nodes_[static_cast<size_t>(r.node)].channel.send(
          MessageWriter(Msg::DmodexAnswer).put_u64(r.id).put_i32(status).put_str(blob).take());
      break;
    }
    case Msg::NodeFailed: fail(1, in.str(), 0); break;
    default: break;
  }
}

void Coordinator::rank_exited(int rank, pid_t pid, int status, bool unfinalized) {
  if (rank < 0 || rank >= plan_.nranks() || rank_done_[static_cast<size_t>(rank)]) return;
  rank_done_[static_cast<size_t>(rank)] = true;
  ++ranks_done_;
  std::string who = "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    fail(128 + sig,
         who + " killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")",
         kFailureGraceMs);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    fail(WEXITSTATUS(status),
         who + " exited with status " + std::to_string(WEXITSTATUS(status)) +
             (unfinalized ? " without finalizing" : ""),
         kFailureGraceMs);
  } else if (unfinalized) {
    // As mpirun's "exited without calling MPI_Finalize": the job ends at once. Its peers may be
    // waiting for it where nothing else would ever tell them (a fence, a peer on another node
    // they have no connection to yet).
    fail(1,
         who + " exited with status 0 without finalizing (it called PMIx_Init but not "
               "PMIx_Finalize / MPI_Finalize); ending the job",
         kFailureGraceMs);
  }
}

void Coordinator::fail(int code, const std::string& message, int grace_ms) {
  // Only the first cause of an ending is reported; what follows is its consequence.
  if (ending_) return;
  ending_ = true;
  exit_code_ = code;
  // What the failed rank printed last is already in its pipes: show it before the verdict.
  output_.read_available();
  if (!message.empty()) say(message);
  send_all(MessageWriter(Msg::Terminate).put_i32(grace_ms).take());
}

void Coordinator::send_all(const std::string& frame) {
  for (auto& n : nodes_)
    if (n.channel.open()) n.channel.send(frame);
}

void Coordinator::handle_signals() {
  signalfd_siginfo si;
  while (::read(signal_fd_, &si, sizeof si) == sizeof si) {
    int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) continue;
    if (ending_) {
      // A second interrupt: no more grace.
      send_all(MessageWriter(Msg::Terminate).put_i32(0).take());
      continue;
    }
    ending_ = true;
    exit_code_ = 128 + sig;
    say(std::string("received signal ") + std::to_string(sig) + " (" + ::strsignal(sig) +
        "), forwarding it to the ranks");
    send_all(MessageWriter(Msg::Signal).put_i32(sig).take());
    force_kill_at_ = Clock::now() + milliseconds(kSignalGraceMs);
  }
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    for (size_t k = 0; k < nodes_.size(); ++k)
      if (nodes_[k].pid == pid) node_gone(static_cast<int>(k), status);
  }
}

void Coordinator::node_gone(int node, int wait_status) {
  auto& n = nodes_[static_cast<size_t>(node)];
  n.exited = true;
  // Drain what it said before dying (its ranks' exits, an abort).
  if (n.channel.open()) {
    bool open = n.channel.read_available();
    Msg type;
    std::string payload;
    while (n.channel.next(type, payload)) handle_node_message(node, type, payload);
    (void)open;
    n.channel.close();
  }
  bool lost_ranks = false;
  for (int r = plan_.first_rank[node]; r < plan_.first_rank[node + 1]; ++r)
    if (!rank_done_[static_cast<size_t>(r)]) {
      rank_done_[static_cast<size_t>(r)] = true;  // they die with their server (death signal)
      ++ranks_done_;
      lost_ranks = true;
    }
  if (lost_ranks) {
    std::string how = WIFSIGNALED(wait_status)
                          ? std::string("killed by signal ") + std::to_string(WTERMSIG(wait_status))
                          : "exited with status " + std::to_string(WEXITSTATUS(wait_status));
    fail(1, "node server " + std::to_string(node) + " (pid " + std::to_string(n.pid) + ") " + how,
         kFailureGraceMs);
  }
}

void Coordinator::shutdown() {
  for (auto& n : nodes_) {
    if (n.pid <= 0 || n.exited) continue;
    n.channel.send(MessageWriter(Msg::Shutdown).take());
    n.channel.drain_blocking();
  }
  // Node servers clean up their own directories; give them a bounded time, then make sure.
  auto deadline = Clock::now() + milliseconds(3000);
  for (auto& n : nodes_) {
    if (n.pid <= 0 || n.exited) continue;
    for (;;) {
      int status;
      pid_t r = ::waitpid(n.pid, &status, WNOHANG);
      if (r == n.pid || r < 0) break;
      if (Clock::now() >= deadline) {
        ::kill(n.pid, SIGKILL);
        ::waitpid(n.pid, &status, 0);
        break;
      }
      pollfd p{signal_fd_, POLLIN, 0};
      ::poll(&p, 1, 10);
      signalfd_siginfo si;
      while (::read(signal_fd_, &si, sizeof si) == sizeof si) {
      }
    }
    n.exited = true;
  }
  // Removing the tree needs descriptors: free ours first (a start that failed for lack of
  // them still has to clean up).
  close_write_ends();
  output_.end_streams();
  remove_tree(plan_.base_dir);
  remove_job_shm(plan_.job_id);
  // Namespaces go last: a namespace lives on while processes are inside it.
  if (netns_) netns_->teardown();
}

// What is still queued for stdout/stderr once the job is over. A reader that reads gets all
// of it, however long it takes (as for any writer to a pipe), unless --timeout runs out first;
// after a failure, timeout or signal, one that has taken nothing for kOutputGraceMs loses the
// rest, and so does one still not reading when a signal arrives (then the exit status says so,
// if it was 0).
void Coordinator::finish_output() {
  output_.end_streams();
  while (!output_.written()) {
    if (timeout_at_ && Clock::now() >= *timeout_at_) time_out();
    if (ending_ && output_.stalled(milliseconds(kOutputGraceMs))) break;
    std::vector<pollfd> fds{{signal_fd_, POLLIN, 0}};
    output_.append_poll_fds(fds);
    if (::poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
    output_.handle_poll(&fds[1]);
    int interrupted = 0;
    signalfd_siginfo si;
    while (fds[0].revents && ::read(signal_fd_, &si, sizeof si) == sizeof si)
      if (si.ssi_signo != SIGCHLD) interrupted = static_cast<int>(si.ssi_signo);
    if (interrupted) {
      if (exit_code_ == 0) exit_code_ = 128 + interrupted;
      break;
    }
  }
  output_.stop();
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void Coordinator::write_stats() {
  if (stats_fd_ < 0) return;
  const auto now = Clock::now();
  auto seconds = [&](const std::optional<Clock::time_point>& t) -> std::string {
    if (!t) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", std::chrono::duration<double>(*t - started_).count());
    return buf;
  };
  NodeTraffic total;
  std::string per_node;
  auto fields = [](const NodeTraffic& t) {
    return "\"fences\": " + std::to_string(t.fences) +
           ", \"fences_with_data\": " + std::to_string(t.fences_with_data) +
           ", \"fence_bytes_sent\": " + std::to_string(t.fence_bytes_sent) +
           ", \"fence_bytes_received\": " + std::to_string(t.fence_bytes_received) +
           ", \"fence_bytes_received_remote\": " + std::to_string(t.fence_bytes_received_remote) +
           ", \"dmodex_asked\": " + std::to_string(t.dmodex_asked) +
           ", \"dmodex_answered\": " + std::to_string(t.dmodex_answered) +
           ", \"dmodex_failed\": " + std::to_string(t.dmodex_failed) +
           ", \"dmodex_bytes_sent\": " + std::to_string(t.dmodex_bytes_sent) +
           ", \"dmodex_bytes_received\": " + std::to_string(t.dmodex_bytes_received);
  };
  for (int k = 0; k < plan_.nnodes(); ++k) {
    const NodeTraffic& t = traffic_[static_cast<size_t>(k)];
    total.fences += t.fences;
    total.fences_with_data += t.fences_with_data;
    total.fence_bytes_sent += t.fence_bytes_sent;
    total.fence_bytes_received += t.fence_bytes_received;
    total.fence_bytes_received_remote += t.fence_bytes_received_remote;
    total.dmodex_asked += t.dmodex_asked;
    total.dmodex_answered += t.dmodex_answered;
    total.dmodex_failed += t.dmodex_failed;
    total.dmodex_bytes_sent += t.dmodex_bytes_sent;
    total.dmodex_bytes_received += t.dmodex_bytes_received;
    per_node += std::string(k ? ",\n" : "") + "    {\"node\": " + std::to_string(k) +
                ", \"hostname\": " + json_string(plan_.hostnames[k]) +
                ", \"ranks\": " + std::to_string(plan_.first_rank[k + 1] - plan_.first_rank[k]) + ", " +
                fields(t) + ", \"first_fence_done_s\": " + seconds(t.first_fence_done) + "}";
  }
  std::string out = "{\n  \"nspace\": " + json_string(plan_.nspace) +
                    ",\n  \"ranks\": " + std::to_string(plan_.nranks()) +
                    ",\n  \"nodes\": " + std::to_string(plan_.nnodes()) +
                    ",\n  \"exit_status\": " + std::to_string(exit_code_) +
                    ",\n  \"startup_s\": " + seconds(first_job_fence_) +
                    ",\n  \"last_fence_s\": " + seconds(last_fence_) +
                    ",\n  \"wall_s\": " + seconds(now) +
                    ",\n  \"fence_rounds\": " + std::to_string(fence_rounds_) +
                    ",\n  \"per_node\": [\n" + per_node + "\n  ],\n  \"totals\": {" + fields(total) +
                    "}\n}\n";
  write_all(stats_fd_, out);
  if (::close(stats_fd_) != 0) say("--stats: cannot write " + plan_.options.stats_path + ": " + std::strerror(errno));
  stats_fd_ = -1;
}

}  // namespace

int run_job(JobPlan plan) {
  Coordinator c(std::move(plan));
  return c.run();
}

}  // namespace xmsg::launcher
