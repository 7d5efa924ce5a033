#include "DescriptorTaking.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace xmsg::transport::shm {

namespace {
// Yama's ptrace_scope: 0 is classic ptrace (same uid suffices); 1 allows only descendants,
// which sibling ranks are not; 2 and 3 need CAP_SYS_PTRACE or nobody. No file: no Yama.
int yama_ptrace_scope() {
  const int fd = ::open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[8] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  return n > 0 ? text[0] - '0' : 0;
}
}  // namespace

int take_descriptor(int pidfd, int remote_fd) {
#if defined(SYS_pidfd_getfd)
  if (pidfd < 0 || remote_fd < 0) {
    errno = EBADF;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, remote_fd, 0));
#else
  (void)pidfd;
  (void)remote_fd;
  errno = ENOSYS;
  return -1;
#endif
}

bool descriptors_takable(int fd) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  if (yama_ptrace_scope() != 0 || ::prctl(PR_GET_DUMPABLE) != 1) return false;
  const int self = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  if (self < 0) return false;
  const int copy = take_descriptor(self, fd);
  ::close(self);
  if (copy < 0) return false;
  ::close(copy);
  return true;
#else
  (void)fd;
  return false;
#endif
}

}  // namespace xmsg::transport::shm
