// How much address space this process maps against its `ulimit -v` (RLIMIT_AS). The ranks'
// bootstrap and xmsgrun's node servers both check their room before starting PMIx, whose
// OpenPMIx 4.2 does not survive running out of it. Header-only and without dependencies, so
// the launcher uses it without the PMIx client.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace xmsg::bootstrap {

// 0 when unlimited.
inline unsigned long address_space_limit_kb() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<unsigned long>(rl.rlim_cur / 1024);
}

// What this process maps now (the first field of /proc/self/statm, in pages). Only
// async-signal-safe calls: the node server's crash handler uses it too.
inline unsigned long address_space_used_kb() {
  int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[64];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  unsigned long pages = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i)
    pages = pages * 10 + static_cast<unsigned long>(buf[i] - '0');
  return pages * (static_cast<unsigned long>(::sysconf(_SC_PAGESIZE)) / 1024);
}

}  // namespace xmsg::bootstrap
