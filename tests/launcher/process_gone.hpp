// For launcher tests that check a job left no process behind.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace xmsg::test {

// /proc/<pid>/stat, or "" when the process is gone: it may go while the file is read, and then
// read() fails with ESRCH (an ifstream's buffer throws for that).
inline std::string proc_stat(int pid) {
  std::string content;
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) content.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return n < 0 ? std::string() : content;
}

// `pid` no longer runs: gone, or a zombie whose parent is gone and which waits for init to
// reap it.
inline bool process_gone(int pid) {
  if (::kill(pid, 0) != 0) return true;
  const std::string content = proc_stat(pid);
  auto close_paren = content.rfind(')');
  return close_paren != std::string::npos && content.size() > close_paren + 2 && content[close_paren + 2] == 'Z';
}

}  // namespace xmsg::test
