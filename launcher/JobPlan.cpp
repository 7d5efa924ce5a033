#include "JobPlan.hpp"

#include <unistd.h>

#include <cstdio>
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
  // PMIx puts a Unix socket under the base directory: keep the path short (sun_path is 108 bytes).
  std::string root = (tmp && *tmp && std::string(tmp).size() < 40) ? tmp : "/tmp";
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
