// PeerMonitor: notices when a local peer process has exited, without ever blocking.
// Uses a pidfd per peer (readable once the process terminated, even while it is an unreaped
// zombie, which kill(pid, 0) would still report as alive); falls back to /proc/<pid>/stat.
#pragma once

#include <poll.h>
#include <string>
#include <sys/types.h>
#include <vector>

namespace xmsg::transport::shm {

class PeerMonitor {
 public:
  PeerMonitor() = default;
  PeerMonitor(const PeerMonitor&) = delete;
  PeerMonitor& operator=(const PeerMonitor&) = delete;
  ~PeerMonitor();

  void watch(int rank, pid_t pid);
  // Ranks newly found dead since the last call (each reported once), with a reason.
  std::vector<std::pair<int, std::string>> check();
  void clear();
  // The pidfd of the `index`th peer watched (-1: none could be opened).
  int pidfd(size_t index) const { return peers_[index].pidfd; }

 private:
  struct Watched {
    int rank;
    pid_t pid;
    int pidfd;
    bool reported;
  };
  std::vector<Watched> peers_;
  // One entry per watched peer, for a single poll(2) over all pidfds: an idle rank with 511 local
  // peers made 511 calls every few milliseconds. A negative fd (no pidfd, or already reported)
  // is skipped by poll.
  std::vector<pollfd> polled_;
};

}  // namespace xmsg::transport::shm
