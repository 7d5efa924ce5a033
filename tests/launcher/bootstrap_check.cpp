// A multi-rank check of the bootstrap as seen from inside a job: job shape, locality, and the
// key-value exchange (0 B, 1 B and 64 KiB blobs from every rank, read back and verified).
//   bootstrap_check [--no-collect] [--nodes K] [--xmsgrun] [--blob BYTES]
//     --no-collect  fence(false) before the gets, so every get is a direct modex
//     --blob BYTES  the third blob's size instead of 64 KiB (a large modex)
//     --nodes K     also check that there are K nodes with the block-wise split and host names
//     --xmsgrun     also check what only xmsgrun provides (XMSG_JOB_TMPDIR, the job secret in a
//                   0600 file XMSG_JOB_SECRET_FILE there, and no job secret in the PMIx store)
// Prints one "bootstrap_check: rank R of N ... ok" line per rank; exits 1 on the first mismatch.
#include <xmsg/bootstrap/bootstrap.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_rank = -1;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bootstrap_check: rank %d: %s\n", g_rank, what.c_str());
  std::exit(1);
}

void expect(bool ok, const std::string& what) {
  if (!ok) die(what);
}

std::vector<std::byte> blob_for(int rank, int key_index, size_t size) {
  std::vector<std::byte> v(size);
  for (size_t i = 0; i < size; ++i)
    v[i] = static_cast<std::byte>((rank * 131 + key_index * 17 + i * 7 + (i >> 8)) & 0xff);
  return v;
}

struct Blob {
  const char* key;
  size_t size;
};
Blob kBlobs[] = {{"check.empty", 0}, {"check.one", 1}, {"check.large", 64 * 1024}};

}  // namespace

int main(int argc, char** argv) {
  bool collect = true, xmsgrun = false;
  int expect_nodes = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-collect") collect = false;
    else if (a == "--xmsgrun") xmsgrun = true;
    else if (a == "--nodes" && i + 1 < argc) expect_nodes = std::atoi(argv[++i]);
    else if (a == "--blob" && i + 1 < argc) kBlobs[2].size = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "bootstrap_check: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }

  try {
    auto b = xmsg::bootstrap::make_bootstrap();
    g_rank = b->rank();
    const int n = b->size();
    expect(n >= 1 && g_rank >= 0 && g_rank < n, "rank/size out of range");
    expect(b->num_nodes() >= 1 && b->node_id() >= 0 && b->node_id() < b->num_nodes(),
           "node id " + std::to_string(b->node_id()) + " of " + std::to_string(b->num_nodes()));
    expect(b->node_of(g_rank) == b->node_id(), "node_of(self) != node_id()");
    auto peers = b->local_peers();
    expect(static_cast<int>(peers.size()) == b->local_size(), "local_peers size != local_size");
    expect(std::is_sorted(peers.begin(), peers.end()), "local_peers not ascending");
    auto self = std::find(peers.begin(), peers.end(), g_rank);
    expect(self != peers.end(), "local_peers lacks this rank");
    expect(self - peers.begin() == b->local_rank(), "local_rank is not my index in local_peers");
    for (int p : peers) expect(b->node_of(p) == b->node_id(), "local peer on another node");
    expect(!b->hostname().empty(), "empty hostname");
    std::string job = b->job_id();
    expect(!job.empty() && job.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                 "0123456789_.-") == std::string::npos,
           "job_id '" + job + "' is not file-name safe");

    if (expect_nodes > 0) {
      expect(b->num_nodes() == expect_nodes, "num_nodes " + std::to_string(b->num_nodes()) +
                                                 " != " + std::to_string(expect_nodes));
      int base = n / expect_nodes, extra = n % expect_nodes, first = 0;
      for (int k = 0; k < expect_nodes; ++k) {
        int count = base + (k < extra ? 1 : 0);
        for (int r = first; r < first + count; ++r)
          expect(b->node_of(r) == k, "rank " + std::to_string(r) + " not on node " + std::to_string(k));
        first += count;
      }
      if (expect_nodes > 1) {
        std::string suffix = "-n" + std::to_string(b->node_id());
        std::string h = b->hostname();
        expect(h.size() > suffix.size() && h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0,
               "hostname '" + h + "' does not end in " + suffix);
      }
    }
    std::string secret;
    if (xmsgrun) {
      // Any local user can read the PMIx store (PMIx_Get on the job): the secret is not there.
      auto published = b->job_value("xmsg.job_secret");
      expect(!published.has_value(), "the job secret is published in PMIx as xmsg.job_secret");
      const char* dir = std::getenv("XMSG_JOB_TMPDIR");
      expect(dir != nullptr, "XMSG_JOB_TMPDIR not set");
      struct stat st {};
      expect(::lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700 &&
                 st.st_uid == ::geteuid(),
             std::string("XMSG_JOB_TMPDIR ") + dir + " is not a 0700 directory of this user");
      const char* file = std::getenv("XMSG_JOB_SECRET_FILE");
      expect(file != nullptr, "XMSG_JOB_SECRET_FILE not set");
      expect(std::string(file) == std::string(dir) + "/secret",
             std::string("XMSG_JOB_SECRET_FILE ") + file + " is not in XMSG_JOB_TMPDIR");
      expect(::lstat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 &&
                 st.st_uid == ::geteuid(),
             std::string("XMSG_JOB_SECRET_FILE ") + file + " is not a 0600 file of this user");
      if (FILE* f = std::fopen(file, "r")) {
        char buf[64];
        size_t got = std::fread(buf, 1, sizeof buf, f);
        secret.assign(buf, got);
        std::fclose(f);
      }
      expect(secret.size() == 32 && secret.find_first_not_of("0123456789abcdef") == std::string::npos,
             "the secret file holds '" + secret + "', not 32 hex characters");
      // Every node's file holds the same secret.
      b->put_string("check.secret", secret);
    }

    for (int k = 0; k < 3; ++k) b->put(kBlobs[k].key, blob_for(g_rank, k, kBlobs[k].size));
    b->commit();
    b->fence(collect);
    for (int peer = 0; peer < n; ++peer)
      for (int k = 0; k < 3; ++k) {
        auto got = b->get(peer, kBlobs[k].key);
        expect(got == blob_for(peer, k, kBlobs[k].size),
               std::string("wrong value of ") + kBlobs[k].key + " from rank " + std::to_string(peer) +
                   " (" + std::to_string(got.size()) + " bytes)");
      }
    if (xmsgrun)
      for (int peer = 0; peer < n; ++peer)
        expect(b->get_string(peer, "check.secret") == secret,
               "rank " + std::to_string(peer) + " read another job secret");
    // Nobody finalizes while a peer may still fetch from it (direct modex of a finalized
    // rank can hang in OpenPMIx 4.2.2).
    b->fence(false);
    std::printf("bootstrap_check: rank %d of %d on node %d of %d (%s, local %d/%d) %s pid %d job %s ok\n",
                g_rank, n, b->node_id(), b->num_nodes(), b->hostname().c_str(), b->local_rank(),
                b->local_size(), collect ? "collect" : "direct-modex", static_cast<int>(::getpid()),
                job.c_str());
    b->finalize();
  } catch (const std::exception& e) {
    die(e.what());
  }
  return 0;
}
