// Ranks that print in ways line-by-line forwarding finds hard, for output_forwarding_test.
// Every rank joins PMIx, prints "output_actions: rank R pid P job J" to stderr (the test's
// leftover check reads it there, stdout stays exactly what the action prints), then:
//   partial BYTES      rank 0 prints BYTES 'x' without a newline, reads a line from stdin,
//                      then prints "tail\n"
//   progress STEPS     rank 0 prints "step i\r" for i = 1..STEPS, reading a stdin line after
//                      each, then "done\n"
//   interrupt BYTES    rank 0 prints BYTES 'x' without a newline and waits for a stdin line;
//                      then rank 1 prints "hello\n"; then rank 0 waits for another stdin line
//                      and prints "rest\n" (fences order the steps across ranks)
//   long BYTES         every rank prints one line of BYTES times the letter 'a' + rank (in
//                      64 KiB writes, so the rank itself stays small); rank 0 then reads stdin
//                      to its end
//   flood              every rank prints numbered lines until it is ended
//   fence_others ROUNDS BYTES
//                      rank 0 prints BYTES of numbered lines; ranks 1..N-1 meanwhile do ROUNDS
//                      fences among themselves (without rank 0) and then print "rank R:
//                      ROUNDS fences without rank 0 done" to stderr
// Every rank ends with a job-wide fence and PMIx_Finalize.
#include <pmix.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

pmix_proc_t self;

[[noreturn]] void die(const char* what, pmix_status_t rc) {
  std::fprintf(stderr, "output_actions: rank %u: %s: %s\n", self.rank, what, PMIx_Error_string(rc));
  std::exit(1);
}

void fence_all() {
  pmix_proc_t all;
  PMIX_LOAD_PROCID(&all, self.nspace, PMIX_RANK_WILDCARD);
  if (pmix_status_t rc = PMIx_Fence(&all, 1, nullptr, 0); rc != PMIX_SUCCESS) die("fence", rc);
}

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) std::exit(3);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void print(const std::string& s) { write_all(1, s.data(), s.size()); }

// BYTES times `c`, in 64 KiB writes.
void print_run(char c, size_t bytes) {
  std::string chunk(64 * 1024, c);
  while (bytes > 0) {
    size_t n = bytes < chunk.size() ? bytes : chunk.size();
    write_all(1, chunk.data(), n);
    bytes -= n;
  }
}

void read_line() {
  char c;
  while (::read(0, &c, 1) == 1 && c != '\n') {
  }
}

// "rank R line I ...\n" until BYTES are out (0: until the rank is ended).
void print_numbered_lines(size_t bytes) {
  size_t done = 0;
  for (size_t i = 0; bytes == 0 || done < bytes; ++i) {
    char line[128];
    int n = std::snprintf(line, sizeof line, "rank %u line %zu ......................................\n",
                          self.rank, i);
    write_all(1, line, static_cast<size_t>(n));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: output_actions ACTION [args]\n");
    return 2;
  }
  std::string action = argv[1];
  auto arg = [&](int i) { return i < argc ? std::strtoull(argv[i], nullptr, 10) : 0ULL; };
  if (pmix_status_t rc = PMIx_Init(&self, nullptr, 0); rc != PMIX_SUCCESS) die("PMIx_Init", rc);
  uint32_t size = 0;
  {
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t* v = nullptr;
    if (pmix_status_t rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &v); rc != PMIX_SUCCESS)
      die("job size", rc);
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
  }
  std::fprintf(stderr, "output_actions: rank %u pid %d job %s\n", self.rank, static_cast<int>(::getpid()),
               self.nspace);
  std::fflush(stderr);
  const bool first = self.rank == 0;

  if (action == "partial") {
    if (first) {
      print_run('x', arg(2));
      read_line();
      print("tail\n");
    }
  } else if (action == "progress") {
    if (first) {
      for (unsigned long long i = 1; i <= arg(2); ++i) {
        print("step " + std::to_string(i) + "\r");
        read_line();
      }
      print("done\n");
    }
  } else if (action == "interrupt") {
    if (first) {
      print_run('x', arg(2));
      read_line();
    }
    fence_all();
    if (self.rank == 1) print("hello\n");
    fence_all();
    if (first) {
      read_line();
      print("rest\n");
    }
  } else if (action == "long") {
    print_run(static_cast<char>('a' + self.rank % 26), arg(2));
    print("\n");
    if (first)
      while (::read(0, argv[0], 1) == 1) {
      }
  } else if (action == "flood") {
    print_numbered_lines(0);
  } else if (action == "fence_others") {
    if (first) {
      print_numbered_lines(arg(3));
    } else {
      std::vector<pmix_proc_t> others(size - 1);
      for (uint32_t r = 1; r < size; ++r) PMIX_LOAD_PROCID(&others[r - 1], self.nspace, r);
      for (unsigned long long i = 0; i < arg(2); ++i)
        if (pmix_status_t rc = PMIx_Fence(others.data(), others.size(), nullptr, 0); rc != PMIX_SUCCESS)
          die("fence without rank 0", rc);
      std::fprintf(stderr, "rank %u: %llu fences without rank 0 done\n", self.rank, arg(2));
      std::fflush(stderr);
    }
  } else {
    std::fprintf(stderr, "output_actions: unknown action '%s'\n", action.c_str());
    return 2;
  }
  fence_all();
  PMIx_Finalize(nullptr, 0);
  return 0;
}
