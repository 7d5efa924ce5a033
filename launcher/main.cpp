// xmsgrun: launches an xmsg job (any PMIx client program) on this machine.
#include "Binding.hpp"
#include "Coordinator.hpp"
#include "JobPlan.hpp"
#include "Netns.hpp"
#include "Options.hpp"
#include "Topology.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  using namespace xmsg::launcher;
  // One malloc arena for every thread: glibc gives each new thread that allocates an arena of
  // its own, 64 MiB of reserved address space apiece, and the output writers alone took two
  // (xmsgrun's VmSize 180 MB, under a tight `ulimit -v` a failed job start). The launcher's
  // threads allocate rarely; sharing the main heap costs them nothing measurable.
  ::mallopt(M_ARENA_MAX, 1);
  std::vector<std::string> args(argv + 1, argv + argc);
  ParseOutcome parsed = parse_options(args, real_environment());
  if (parsed.kind == ParseOutcome::Kind::Help) {
    std::fputs(parsed.message.c_str(), stdout);
    return 0;
  }
  if (parsed.kind == ParseOutcome::Kind::Error) {
    std::fprintf(stderr, "xmsgrun: %s\n", parsed.message.c_str());
    return 2;
  }

  // A closed stdin/stdout/stderr would be reused by our pipes and sockets and end up as a
  // rank's standard stream: park /dev/null there instead.
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
      return 1;
  // Two pipe ends per rank stay open here; large jobs may need more descriptors than the soft
  // limit (ranks inherit the raised limit, as under other launchers).
  rlimit nofile{};
  rlim_t needed = static_cast<rlim_t>(parsed.options.nranks) * 4 + 64;
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < needed) {
    nofile.rlim_cur = std::min(needed, nofile.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }

  // When xmsgrun itself runs under another PMIx launcher, its server variables must not leak
  // into our ranks (PMIx_server_setup_fork adds ours; stale extra URIs would confuse clients).
  std::vector<std::string> stale;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.starts_with("PMIX_") && !kv.starts_with("PMIX_MCA_")) stale.push_back(kv.substr(0, kv.find('=')));
  }
  for (const auto& name : stale) ::unsetenv(name.c_str());
  // The hash store starts faster than the shared-memory one for jobs of this size.
  ::setenv("PMIX_MCA_gds", "hash", 0);

  if (parsed.options.netns) {
    std::string why;
    if (!NetnsTopology::supported(why)) {
      std::fprintf(stderr, "xmsgrun: --netns: %s\n", why.c_str());
      return 1;
    }
  }

  try {
    Topology topology;
    JobPlan plan = make_plan(parsed.options);
    plan.topology = &topology;
    compute_bindings(plan, topology);
    return run_job(std::move(plan));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xmsgrun: %s\n", e.what());
    return 1;
  }
}
