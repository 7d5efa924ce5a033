#include "PeerMonitor.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace xmsg::transport::shm {

namespace {
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool proc_says_dead(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return true;
  auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  char state = line[close + 2];
  return state == 'Z' || state == 'X';
}
}  // namespace

PeerMonitor::~PeerMonitor() { clear(); }

void PeerMonitor::clear() {
  for (auto& p : peers_)
    if (p.pidfd >= 0) ::close(p.pidfd);
  peers_.clear();
  polled_.clear();
}

void PeerMonitor::watch(int rank, pid_t pid) {
  const int fd = open_pidfd(pid);
  peers_.push_back({rank, pid, fd, false});
  polled_.push_back({fd, POLLIN, 0});
}

std::vector<std::pair<int, std::string>> PeerMonitor::check() {
  std::vector<std::pair<int, std::string>> dead;
  if (::poll(polled_.data(), polled_.size(), 0) < 0)
    for (auto& fd : polled_) fd.revents = 0;  // EINTR or ENOMEM: look again next time
  for (size_t i = 0; i < peers_.size(); ++i) {
    Watched& p = peers_[i];
    if (p.reported) continue;
    const bool gone = p.pidfd >= 0 ? (polled_[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0 : proc_says_dead(p.pid);
    if (gone) {
      p.reported = true;
      polled_[i].fd = -1;
      dead.emplace_back(p.rank, "rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) +
                                    ") exited while the job was still running");
    }
  }
  return dead;
}

}  // namespace xmsg::transport::shm
