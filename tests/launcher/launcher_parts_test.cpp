// Unit tests of the launcher's building blocks: the job plan (rank split, identity, paths, the
// secret file), the framed channel between coordinator and node servers, cleanup of job files,
// and how the PMIx server tells which connection it is accepting and whose it is.
#include "Channel.hpp"
#include "Cleanup.hpp"
#include "JobPlan.hpp"
#include "PmixClientOwner.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <variant>

using namespace xmsg::launcher;

namespace {

Options options(int n, int k) {
  Options o;
  o.nranks = n;
  o.nnodes = k;
  return o;
}

TEST(JobPlan, BlockSplitGivesTheFirstNodesOneMore) {
  JobPlan p = make_plan(options(8, 3));
  EXPECT_EQ(p.first_rank, (std::vector<int>{0, 3, 6, 8}));
  int expected[] = {0, 0, 0, 1, 1, 1, 2, 2};
  for (int r = 0; r < 8; ++r) EXPECT_EQ(p.node_of(r), expected[r]) << r;
  EXPECT_EQ(p.node_of(8), -1);
  JobPlan even = make_plan(options(4, 2));
  EXPECT_EQ(even.first_rank, (std::vector<int>{0, 2, 4}));
}

TEST(JobPlan, HostNamesPerVirtualNode) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  JobPlan one = make_plan(options(2, 1));
  EXPECT_EQ(one.hostnames, std::vector<std::string>{host});
  JobPlan three = make_plan(options(3, 3));
  EXPECT_EQ(three.hostnames, (std::vector<std::string>{std::string(host) + "-n0",
                                                       std::string(host) + "-n1",
                                                       std::string(host) + "-n2"}));
}

TEST(JobPlan, IdentityIsUniqueSafeAndSecret) {
  JobPlan a = make_plan(options(1, 1)), b = make_plan(options(1, 1));
  EXPECT_NE(a.nspace, b.nspace);
  EXPECT_NE(a.secret, b.secret);
  EXPECT_EQ(a.job_id, file_name_safe(a.nspace));
  EXPECT_EQ(a.job_id, a.nspace);
  EXPECT_TRUE(a.nspace.starts_with("xmsg." + std::to_string(::getpid()) + "."));
  EXPECT_EQ(a.secret.size(), 32u);
  EXPECT_EQ(a.secret.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_TRUE(a.base_dir.ends_with("/" + a.job_id));
  EXPECT_EQ(a.job_tmpdir(1), a.base_dir + "/n1/job");
  EXPECT_EQ(a.pmix_tmpdir(0), a.base_dir + "/n0/pmix");
}

// The secret file: 0600, exactly the 32 hex characters, only in a private job directory.
TEST(JobPlan, SecretFileIsPrivateAndOnlyInAPrivateDirectory) {
  char tmpl[] = "/tmp/xmsg-launcher-secret-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  JobPlan plan = make_plan(options(2, 2));
  plan.base_dir = root + "/" + plan.job_id;
  ASSERT_EQ(::mkdir(plan.base_dir.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(plan.node_dir(1).c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(plan.job_tmpdir(1).c_str(), 0700), 0);
  const mode_t old_umask = ::umask(0277);  // takes owner bits: the file must still be 0600
  write_secret_file(plan, 1);
  ::umask(old_umask);
  const std::string path = plan.secret_file(1);
  EXPECT_EQ(path, plan.job_tmpdir(1) + "/secret");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  char buf[64];
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(std::max<ssize_t>(n, 0))), plan.secret);
  // Never over an existing file (nor through a symlink planted in its place).
  EXPECT_THROW(write_secret_file(plan, 1), std::runtime_error);
  ::unlink(path.c_str());
  ASSERT_EQ(::symlink("/tmp/elsewhere", path.c_str()), 0);
  EXPECT_THROW(write_secret_file(plan, 1), std::runtime_error);
  ::unlink(path.c_str());
  // A job directory others may enter is refused, naming it and its mode.
  ASSERT_EQ(::chmod(plan.node_dir(1).c_str(), 0755), 0);
  try {
    write_secret_file(plan, 1);
    ADD_FAILURE() << "a 0755 job directory was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(plan.node_dir(1) + " has mode 0755"), std::string::npos) << e.what();
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  ASSERT_EQ(::chmod(plan.node_dir(1).c_str(), 0700), 0);
  EXPECT_THROW(check_private_dir(root + "/missing"), std::runtime_error);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(plan.job_tmpdir(1).c_str(), 65534, 65534), 0);
    try {
      check_private_dir(plan.job_tmpdir(1));
      ADD_FAILURE() << "another user's job directory was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("owned by uid 65534"), std::string::npos) << e.what();
    }
  }
  remove_tree(root);
}

// TMPDIR is used whatever its length (it used to fall back to /tmp from 40 characters on).
TEST(JobPlan, AnyTmpdirIsUsed) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  std::string longdir = "/scratch/" + std::string(120, 'd') + "/";
  ::setenv("TMPDIR", longdir.c_str(), 1);
  JobPlan p = make_plan(options(1, 1));
  EXPECT_EQ(p.base_dir, "/scratch/" + std::string(120, 'd') + "/" + p.job_id);
  ::unsetenv("TMPDIR");
  EXPECT_EQ(make_plan(options(1, 1)).base_dir.rfind("/tmp/", 0), 0u);
  if (old) ::setenv("TMPDIR", saved.c_str(), 1);
}

TEST(JobPlan, FileNameSafe) {
  EXPECT_EQ(file_name_safe("slurm.job:42/step 3"), "slurm.job_42_step_3");
  EXPECT_EQ(file_name_safe("abc-XYZ_0.9"), "abc-XYZ_0.9");
}

TEST(Channel, FramesSurviveLargeSimultaneousWrites) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Channel a(sv[0]), b(sv[1]);
  // Both sides queue more than a socket buffer holds before reading anything: neither may block.
  std::string big(3 * 1024 * 1024 + 7, 'x');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + (i / 4096) % 26);
  a.send(MessageWriter(Msg::FenceEnter).put_u64(7).put_str("*").put_i32(-52).put_str(big).take());
  b.send(MessageWriter(Msg::FenceDone).put_u64(9).put_i32(0).put_str(big).take());
  a.send(MessageWriter(Msg::Shutdown).take());

  int got_a = 0, got_b = 0;
  for (int spins = 0; (got_a < 1 || got_b < 2) && spins < 100000; ++spins) {
    pollfd fds[2] = {{a.fd(), static_cast<short>(POLLIN | (a.wants_write() ? POLLOUT : 0)), 0},
                     {b.fd(), static_cast<short>(POLLIN | (b.wants_write() ? POLLOUT : 0)), 0}};
    ASSERT_GE(::poll(fds, 2, 1000), 0);
    if (fds[0].revents & POLLOUT) a.flush();
    if (fds[1].revents & POLLOUT) b.flush();
    Msg type;
    std::string payload;
    if (fds[0].revents & POLLIN) {
      ASSERT_TRUE(a.read_available());
      while (a.next(type, payload)) {
        ASSERT_EQ(type, Msg::FenceDone);
        MessageReader in(payload);
        EXPECT_EQ(in.u64(), 9u);
        EXPECT_EQ(in.i32(), 0);
        EXPECT_EQ(in.str(), big);
        ++got_a;
      }
    }
    if (fds[1].revents & POLLIN) {
      ASSERT_TRUE(b.read_available());
      while (b.next(type, payload)) {
        MessageReader in(payload);
        if (got_b == 0) {
          ASSERT_EQ(type, Msg::FenceEnter);
          EXPECT_EQ(in.u64(), 7u);
          EXPECT_EQ(in.str(), "*");
          EXPECT_EQ(in.i32(), -52);
          EXPECT_EQ(in.str(), big);
        } else {
          EXPECT_EQ(type, Msg::Shutdown);
          EXPECT_TRUE(payload.empty());
        }
        ++got_b;
      }
    }
  }
  EXPECT_EQ(got_a, 1);
  EXPECT_EQ(got_b, 2);

  // A peer that goes away is seen as end-of-file, not as a hang.
  b.close();
  pollfd p{a.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 1000), 1);
  EXPECT_FALSE(a.read_available());
}

TEST(Channel, TruncatedPayloadIsAnError) {
  std::string frame = MessageWriter(Msg::RankExit).put_i32(1).take();
  MessageReader in(std::string_view(frame).substr(8));
  EXPECT_EQ(in.i32(), 1);
  EXPECT_THROW(in.i32(), std::runtime_error);
  EXPECT_THROW(in.str(), std::runtime_error);
}

TEST(Cleanup, RemovesTheTreeAndOnlyThisJobsShmFiles) {
  char tmpl[] = "/tmp/xmsg-cleanup-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  ASSERT_EQ(::mkdir((dir + "/n0").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((dir + "/n0/job").c_str(), 0700), 0);
  ::close(::open((dir + "/n0/job/file").c_str(), O_CREAT | O_WRONLY, 0600));
  ASSERT_EQ(::symlink("/etc", (dir + "/n0/link").c_str()), 0);
  remove_tree(dir);
  EXPECT_NE(::access(dir.c_str(), F_OK), 0);
  EXPECT_EQ(::access("/etc/hostname", F_OK) == 0, true);  // the symlink was not followed
  remove_tree(dir);  // already gone: fine

  std::string job = "xmsg.cleanup-test." + std::to_string(::getpid());
  std::string mine = "/dev/shm/xmsg-" + job + "-seg0";
  std::string other = "/dev/shm/xmsg-xmsg.other-cleanup-test." + std::to_string(::getpid());
  ::close(::open(mine.c_str(), O_CREAT | O_WRONLY, 0600));
  ::close(::open(other.c_str(), O_CREAT | O_WRONLY, 0600));
  remove_job_shm(job);
  EXPECT_NE(::access(mine.c_str(), F_OK), 0);
  EXPECT_EQ(::access(other.c_str(), F_OK), 0);
  ::unlink(other.c_str());
}

TEST(PmixClientOwner, PortFromTheUriGivenToClients) {
  EXPECT_EQ(pmix_port_in({"PATH=/bin", "PMIX_SERVER_URI41=pmix-server.12;tcp4://127.0.0.1:40123"}), 40123);
  EXPECT_EQ(pmix_port_in({"PMIX_SERVER_URI4=pmix-server.12;tcp6://[::1]:1234"}), 1234);
  EXPECT_EQ(pmix_port_in({"PMIX_SERVER_URI2=pmix-server.12;tcp4://127.0.0.1:0"}), 0);
  EXPECT_EQ(pmix_port_in({"PMIX_NAMESPACE=tcp4://127.0.0.1:5"}), 0);
  EXPECT_EQ(pmix_port_in({}), 0);
}

// A listening socket on a free loopback port, whose address is left in `addr`; -1 on failure.
int loopback_listener(sockaddr_in& addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr = sockaddr_in{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Loopback connections to a listener of this process, in the states a PMIx server's ones are in
// when the library calls client_connected: accepted earlier (seen, answered), not yet handled
// (nothing sent) and being accepted (8 bytes answered).
TEST(PmixClientOwner, FindsTheConnectionBeingAcceptedAndItsOwner) {
  sockaddr_in addr{};
  const int listener = loopback_listener(addr);
  ASSERT_GE(listener, 0);
  const uint16_t port = ntohs(addr.sin_port);
  struct Pair {
    int client = -1, served = -1;
    uint16_t client_port = 0;
  };
  auto connect_one = [&] {
    Pair p;
    p.client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_EQ(::connect(p.client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    p.served = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    sockaddr_in mine{};
    socklen_t l = sizeof mine;
    ::getsockname(p.client, reinterpret_cast<sockaddr*>(&mine), &l);
    p.client_port = ntohs(mine.sin_port);
    return p;
  };
  auto answer = [](const Pair& p) {
    const char eight[8] = {};
    EXPECT_EQ(::send(p.served, eight, sizeof eight, 0), 8);
    char got[8];
    EXPECT_EQ(::recv(p.client, got, sizeof got, MSG_WAITALL), 8);
  };
  auto inode = [](int fd) {
    struct stat st {};
    ::fstat(fd, &st);
    return static_cast<uint64_t>(st.st_ino);
  };
  auto error_of = [](const std::variant<ConnectingClient, NotIdentified, std::string>& r) -> std::string {
    if (auto* n = std::get_if<NotIdentified>(&r)) return "not identified: " + n->why;
    if (auto* e = std::get_if<std::string>(&r)) return *e;
    return "found " + std::get<ConnectingClient>(r).address;
  };
  const Pair earlier = connect_one(), waiting = connect_one();
  answer(earlier);
  std::set<uint64_t> seen{inode(earlier.served)};
  EXPECT_TRUE(std::holds_alternative<NotIdentified>(connecting_pmix_client(port, seen)));

  const Pair current = connect_one();
  answer(current);
  auto found = connecting_pmix_client(port, seen);
  ASSERT_TRUE(std::holds_alternative<ConnectingClient>(found)) << error_of(found);
  const ConnectingClient c = std::get<ConnectingClient>(found);
  EXPECT_EQ(c.uid, ::getuid());
  EXPECT_EQ(c.address, "127.0.0.1:" + std::to_string(current.client_port));
  EXPECT_EQ(c.server_inode, inode(current.served));
  EXPECT_EQ(c.server_fd, current.served);
  // Found as well when the search starts around another descriptor, or far from it.
  for (int near : {earlier.served, current.served + 100}) {
    auto again = connecting_pmix_client(port, seen, near);
    ASSERT_TRUE(std::holds_alternative<ConnectingClient>(again)) << error_of(again);
    EXPECT_EQ(std::get<ConnectingClient>(again).server_fd, current.served);
  }
  // Not once seen: the earlier connection answered 8 bytes too, but was seen, so is no candidate.
  seen.insert(c.server_inode);
  EXPECT_TRUE(std::holds_alternative<NotIdentified>(connecting_pmix_client(port, seen)));
  seen.erase(c.server_inode);

  // Both sources of the owner agree (the soft-RoCE guest's kernel has only /proc/net/tcp).
  const SocketEnd client_end{c.server_end.remote, c.server_end.local};
  for (bool proc_net_only : {false, true}) {
    const auto info = socket_info(client_end, proc_net_only);
    ASSERT_TRUE(info.has_value()) << "proc_net_only " << proc_net_only;
    EXPECT_EQ(info->state, 1) << "established; proc_net_only " << proc_net_only;
    EXPECT_EQ(info->uid, ::getuid());
    EXPECT_EQ(info->inode, c.inode);
  }

  // The client goes before its owner could be asked: not taken for anyone's.
  ::close(current.client);
  ::usleep(20000);
  auto gone = connecting_pmix_client(port, seen);
  EXPECT_TRUE(std::holds_alternative<std::string>(gone)) << error_of(gone);  // refused, not unchecked
  // Its server end waits for our close (CLOSE_WAIT), then is gone.
  EXPECT_TRUE(server_end_open(c.server_end));
  EXPECT_EQ(socket_info(c.server_end, true).value_or(SocketInfo{}).state, 8) << "CLOSE_WAIT in /proc/net/tcp";
  ::close(current.served);
  ::usleep(20000);
  EXPECT_FALSE(server_end_open(c.server_end));

  for (const Pair& p : {earlier, waiting}) {
    ::close(p.client);
    ::close(p.served);
  }
  ::close(listener);
}

// The owner is the kernel's word, not the client's: a socket made by another user is theirs.
TEST(PmixClientOwner, ReportsAnotherUsersSocketAsTheirs) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a socket as another user needs root";
  sockaddr_in addr{};
  const int listener = loopback_listener(addr);
  ASSERT_GE(listener, 0);
  int hold[2];
  ASSERT_EQ(::pipe(hold), 0);
  const uid_t other = 65534;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // another user's client: connects, then waits until the pipe closes
    ::close(hold[1]);
    if (::setresgid(other, other, other) != 0 || ::setresuid(other, other, other) != 0) ::_exit(2);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(3);
    char c;
    while (::read(hold[0], &c, 1) > 0) {
    }
    ::_exit(0);
  }
  ::close(hold[0]);
  const int served = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(served, 0);
  const char eight[8] = {};
  ASSERT_EQ(::send(served, eight, sizeof eight, 0), 8);
  auto found = connecting_pmix_client(ntohs(addr.sin_port), {});
  ::close(hold[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(served);
  ::close(listener);
  ASSERT_TRUE(std::holds_alternative<ConnectingClient>(found));
  EXPECT_EQ(std::get<ConnectingClient>(found).uid, other);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the other user's client failed: " << status;
}

}  // namespace
