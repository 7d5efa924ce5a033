#include "JobPlan.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <random>
#include <stdexcept>

namespace xmsg::launcher {

int JobPlan::node_of(int rank) const {
  for (int k = 0; k < nnodes(); ++k)
    if (rank < first_rank[k + 1]) return k;
  return -1;
}

std::string file_name_safe(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

void check_private_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    throw std::runtime_error("cannot stat job directory " + dir + ": " + std::strerror(errno));
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (!S_ISDIR(st.st_mode))
    throw std::runtime_error("job directory " + dir + " is not a directory (a symlink?)");
  if (st.st_uid != ::geteuid())
    throw std::runtime_error("job directory " + dir + " is owned by uid " + std::to_string(st.st_uid) +
                             ", not by this user (uid " + std::to_string(::geteuid()) + ")");
  if ((st.st_mode & 077) != 0)
    throw std::runtime_error("job directory " + dir + " has mode " + mode +
                             ": other users may enter it (0700 expected)");
}

void write_secret_file(const JobPlan& plan, int node) {
  check_private_dir(plan.base_dir);
  check_private_dir(plan.node_dir(node));
  check_private_dir(plan.job_tmpdir(node));
  const std::string path = plan.secret_file(node);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  // The umask may only have taken bits away; make the mode exact.
  bool ok = ::fchmod(fd, 0600) == 0;
  size_t off = 0;
  while (ok && off < plan.secret.size()) {
    ssize_t n = ::write(fd, plan.secret.data() + off, plan.secret.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<size_t>(n);
  }
  int err = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(path.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
  }
}

namespace {

std::string random_hex(size_t nbytes) {
  std::random_device rd;  // getrandom(2) underneath
  std::string out;
  char buf[3];
  for (size_t i = 0; i < nbytes; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(rd() & 0xff));
    out += buf;
  }
  return out;
}

}  // namespace

JobPlan make_plan(const Options& options) {
  JobPlan p;
  p.options = options;
  p.nspace = "xmsg." + std::to_string(::getpid()) + "." + random_hex(4);
  p.job_id = file_name_safe(p.nspace);
  p.secret = random_hex(16);
  const char* tmp = std::getenv("TMPDIR");
  // Any length works: OpenPMIx 4 talks over TCP and puts no Unix socket (108-byte sun_path)
  // under its tmpdir; a path too long for the kernel fails the mkdir with a message naming it.
  // (This used to fall back to /tmp, silently, for a TMPDIR of 40 characters or more.)
  std::string root = (tmp && *tmp) ? tmp : "/tmp";
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  p.base_dir = root + "/" + p.job_id;

  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  for (int k = 0; k < options.nnodes; ++k)
    p.hostnames.push_back(options.nnodes == 1 ? std::string(host)
                                              : std::string(host) + "-n" + std::to_string(k));
  int base = options.nranks / options.nnodes, extra = options.nranks % options.nnodes;
  p.first_rank.push_back(0);
  for (int k = 0; k < options.nnodes; ++k)
    p.first_rank.push_back(p.first_rank.back() + base + (k < extra ? 1 : 0));
  p.bindings.resize(static_cast<size_t>(options.nranks));
  return p;
}

}  // namespace xmsg::launcher
