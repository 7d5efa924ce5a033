// The other local user of the runtime's unit tests: a forked child that runs as user nobody.
#pragma once

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

// Runs `body` in a child as user nobody; its exit status (0: it did what it should). Callers
// skip first unless they run as root and nobody exists.
inline int as_nobody(const std::function<int()>& body) {
  const passwd* nobody = ::getpwnam("nobody");
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(3);
    ::_exit(body());
  }
  int status = -1;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
