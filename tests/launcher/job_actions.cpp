// Ranks that misbehave on purpose, for xmsgrun's job-control tests. Every rank first joins the
// job (bootstrap + fence), prints "job_actions: rank R pid P job J", then does ACTION:
//   abort R CODE    rank R calls Bootstrap::abort(CODE, ...); the others wait in a fence
//   exit R CODE     rank R exits with CODE; the others wait in a fence
//   kill R          rank R sends itself SIGKILL; the others wait in a fence
//   kill-odd        every odd rank sends itself SIGKILL at once (right after one fence); the
//                   even ranks wait in a fence
//   kill-pair       rank 0 prints "job_actions: rank 0 ready to kill rank 1 (pid P)" and
//                   waits for SIGUSR1, then SIGKILLs rank 1 (waiting in a fence) and itself;
//                   tests/launcher/ranks_die_together.sh kills both itself instead
//   sleep SECONDS   every rank sleeps (timeout, signals, kill -9 of xmsgrun)
//   shm SECONDS     every rank creates /dev/shm/xmsg-<job>-rank<R> and a file in
//                   XMSG_JOB_TMPDIR, then sleeps (what the launcher must clean up)
//   env VAR         every rank prints "rank R VAR=<value>" (or "rank R VAR unset")
//   stdin           rank 0 echoes stdin lines as "rank 0 read: <line>"; others report whether
//                   their stdin is at end-of-file immediately
//   lines COUNT     every rank prints COUNT long lines quickly (interleaving check)
//   affinity        every rank prints "rank R cpus C": how many CPUs it may run on
//   secret          every rank prints "rank R secret file PATH pmix KEY": XMSG_JOB_SECRET_FILE
//                   and whether xmsg.job_secret is in the PMIx store ("absent" or "present");
//                   then rank 0 reads stdin to its end (the test looks at the file meanwhile)
// Every rank that does not misbehave on purpose finalizes before it exits.
#include <xmsg/bootstrap/bootstrap.hpp>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <span>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: job_actions ACTION [args]\n");
    return 2;
  }
  std::string action = argv[1];
  auto arg = [&](int i) { return i < argc ? std::atoi(argv[i]) : 0; };
  auto b = xmsg::bootstrap::make_bootstrap();
  int rank = b->rank();
  b->fence(false);
  std::printf("job_actions: rank %d pid %d job %s\n", rank, static_cast<int>(::getpid()),
              b->job_id().c_str());
  std::fflush(stdout);

  if (action == "abort" || action == "exit" || action == "kill" || action == "kill-odd" ||
      action == "kill-pair") {
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (action == "kill-pair") {
      ::sigprocmask(SIG_BLOCK, &usr1, nullptr);
      const pid_t self = ::getpid();
      b->put("job_actions.pid", std::as_bytes(std::span(&self, 1)));
      b->commit();
    }
    b->fence(action == "kill-pair");  // every rank has printed its line before one misbehaves
    if (action == "kill-odd" && rank % 2 == 1) ::kill(::getpid(), SIGKILL);
    if (action == "kill-pair" && rank == 0) {
      pid_t victim = 0;
      const auto v = b->get(1, "job_actions.pid");
      if (v.size() == sizeof victim) std::memcpy(&victim, v.data(), sizeof victim);
      std::printf("job_actions: rank 0 ready to kill rank 1 (pid %d)\n", static_cast<int>(victim));
      std::fflush(stdout);
      int sig = 0;
      ::sigwait(&usr1, &sig);
      if (victim > 0) ::kill(victim, SIGKILL);
      ::kill(::getpid(), SIGKILL);
    }
    if (action != "kill-odd" && action != "kill-pair" && rank == arg(2)) {
      if (action == "abort") b->abort(arg(3), "job_actions asked to abort");
      if (action == "exit") std::_Exit(arg(3));
      ::kill(::getpid(), SIGKILL);
    }
    // Never completes: the launcher must end the job. When the fence fails first (a local peer
    // vanished), wait to be killed rather than dying too, so the launcher's report names the
    // rank this action chose and no other.
    try {
      b->fence(false);
    } catch (const xmsg::bootstrap::BootstrapError&) {
      for (;;) ::pause();
    }
    return 0;
  }
  if (action == "sleep") {
    ::sleep(static_cast<unsigned>(arg(2)));
  } else if (action == "shm") {
    std::string shm = "/dev/shm/xmsg-" + b->job_id() + "-rank" + std::to_string(rank);
    int fd = ::open(shm.c_str(), O_CREAT | O_RDWR, 0600);
    const char* dir = std::getenv("XMSG_JOB_TMPDIR");
    std::string file = std::string(dir ? dir : "/nonexistent") + "/rank" + std::to_string(rank);
    int fd2 = ::open(file.c_str(), O_CREAT | O_RDWR, 0600);
    std::printf("job_actions: rank %d created %s (%s) and %s (%s)\n", rank, shm.c_str(),
                fd >= 0 ? "ok" : "failed", file.c_str(), fd2 >= 0 ? "ok" : "failed");
    std::fflush(stdout);
    ::sleep(static_cast<unsigned>(arg(2)));
  } else if (action == "env") {
    const char* v = argc > 2 ? std::getenv(argv[2]) : nullptr;
    if (v) std::printf("rank %d %s=%s\n", rank, argv[2], v);
    else std::printf("rank %d %s unset\n", rank, argc > 2 ? argv[2] : "?");
  } else if (action == "stdin") {
    if (rank == 0) {
      std::string line;
      while (std::getline(std::cin, line)) std::printf("rank 0 read: %s\n", line.c_str());
    } else {
      char c;
      ssize_t n = ::read(0, &c, 1);
      std::printf("rank %d stdin %s\n", rank, n == 0 ? "eof" : "has data");
    }
  } else if (action == "lines") {
    std::string body(300, static_cast<char>('a' + rank % 26));
    for (int i = 0; i < arg(2); ++i) std::printf("rank %d line %d %s end\n", rank, i, body.c_str());
  } else if (action == "affinity") {
    cpu_set_t set;
    CPU_ZERO(&set);
    ::sched_getaffinity(0, sizeof set, &set);
    std::printf("rank %d cpus %d\n", rank, CPU_COUNT(&set));
  } else if (action == "secret") {
    const char* file = std::getenv("XMSG_JOB_SECRET_FILE");
    std::printf("job_actions: rank %d secret file %s pmix %s\n", rank, file ? file : "unset",
                b->job_value("xmsg.job_secret") ? "present" : "absent");
    std::fflush(stdout);
    if (rank == 0) {
      std::string line;
      while (std::getline(std::cin, line)) {
      }
    }
  } else {
    std::fprintf(stderr, "job_actions: unknown action '%s'\n", action.c_str());
    return 2;
  }
  b->fence(false);
  b->finalize();
  return 0;
}
