// dev_shm_watch none|each PATTERN... -- XMSGRUN ARGS...
// Runs XMSGRUN (an xmsgrun command line) while watching /dev/shm with inotify and prints every
// name created there by that job (xmsg-xmsg.<xmsgrun's pid>.*: other jobs may run beside it)
// that contains one of the PATTERNs. A name that exists for a microsecond still counts, which a
// look at /dev/shm while the job runs would miss.
//   none  passes when COMMAND exits 0 and no such name was ever created;
//   each  passes when COMMAND exits 0 and every PATTERN matched some name (so the check can
//         tell the two settings apart).
// Exit 0 on pass, 1 on fail, 2 on bad usage.
#include <sys/inotify.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

std::set<std::string> seen;  // names created that match a pattern
std::string job_prefix;      // "xmsg-xmsg.<pid>.": the job's own names

void drain(int fd, const std::vector<std::string>& patterns) {
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return;
    for (char* p = buf; p < buf + n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(p);
      if (e->len > 0) {
        const std::string name(e->name);
        if (name.rfind(job_prefix, 0) != 0) {
          p += sizeof(inotify_event) + e->len;
          continue;
        }
        for (const auto& pat : patterns)
          if (name.find(pat) != std::string::npos && seen.insert(name).second)
            std::printf("dev_shm_watch: created /dev/shm/%s\n", name.c_str());
      }
      p += sizeof(inotify_event) + e->len;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: dev_shm_watch none|each PATTERN... -- XMSGRUN ARGS...\n");
    return 2;
  }
  const std::string mode = argv[1];
  if (mode != "none" && mode != "each") {
    std::fprintf(stderr, "dev_shm_watch: mode '%s' is neither none nor each\n", argv[1]);
    return 2;
  }
  std::vector<std::string> patterns;
  int i = 2;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) patterns.emplace_back(argv[i]);
  if (i + 1 >= argc || patterns.empty()) {
    std::fprintf(stderr, "dev_shm_watch: need PATTERN... -- COMMAND...\n");
    return 2;
  }
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0 || ::inotify_add_watch(fd, "/dev/shm", IN_CREATE | IN_MOVED_TO) < 0) {
    std::fprintf(stderr, "dev_shm_watch: cannot watch /dev/shm: %s\n", std::strerror(errno));
    return 1;
  }
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child == 0) {
    ::execvp(argv[i + 1], argv + i + 1);
    std::fprintf(stderr, "dev_shm_watch: cannot run %s: %s\n", argv[i + 1], std::strerror(errno));
    ::_exit(127);
  }
  job_prefix = "xmsg-xmsg." + std::to_string(child) + ".";
  int status = 0;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 50);
    drain(fd, patterns);
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
  }
  drain(fd, patterns);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code != 0) {
    std::printf("dev_shm_watch: FAILED: the command exited %d\n", code);
    return 1;
  }
  if (mode == "none" && !seen.empty()) {
    std::printf("dev_shm_watch: FAILED: %zu matching name(s) appeared in /dev/shm\n", seen.size());
    return 1;
  }
  if (mode == "each")
    for (const auto& pat : patterns) {
      bool hit = false;
      for (const auto& name : seen) hit = hit || name.find(pat) != std::string::npos;
      if (!hit) {
        std::printf("dev_shm_watch: FAILED: no name containing '%s' appeared\n", pat.c_str());
        return 1;
      }
    }
  std::printf("dev_shm_watch: ok (%s): %zu matching name(s) created\n", mode.c_str(), seen.size());
  return 0;
}
