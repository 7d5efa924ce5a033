// For launcher tests that check a job left no process behind.
#pragma once

#include <signal.h>

#include <fstream>
#include <iterator>
#include <string>

namespace xmsg::test {

// `pid` no longer runs: gone, or a zombie whose parent is gone and which waits for init to
// reap it.
inline bool process_gone(int pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content((std::istreambuf_iterator<char>(stat)), {});
  auto close_paren = content.rfind(')');
  return close_paren != std::string::npos && content.size() > close_paren + 2 && content[close_paren + 2] == 'Z';
}

}  // namespace xmsg::test
