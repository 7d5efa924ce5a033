// The PMIx client bootstrap. Works under any PMIx server: xmsgrun, Open MPI's mpirun, Slurm.
//
// Everything about the job is read once at start-up (PMIx caches job-level data in the client,
// so those gets are local); per-rank node ids are fetched lazily because they can be many.
#include <xmsg/bootstrap/address_space.hpp>
#include <xmsg/bootstrap/bootstrap.hpp>

#include <pmix.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace xmsg::bootstrap {
namespace {

std::string status_text(pmix_status_t rc) {
  return std::string(PMIx_Error_string(rc)) + " (" + std::to_string(rc) + ")";
}

// Hosts store integers with different widths (pmix.md): accept any integer type.
bool value_to_long(const pmix_value_t* v, long& out) {
  switch (v->type) {
    case PMIX_INT: out = v->data.integer; return true;
    case PMIX_INT8: out = v->data.int8; return true;
    case PMIX_INT16: out = v->data.int16; return true;
    case PMIX_INT32: out = v->data.int32; return true;
    case PMIX_INT64: out = static_cast<long>(v->data.int64); return true;
    case PMIX_UINT: out = static_cast<long>(v->data.uint); return true;
    case PMIX_UINT8: out = v->data.uint8; return true;
    case PMIX_UINT16: out = v->data.uint16; return true;
    case PMIX_UINT32: out = static_cast<long>(v->data.uint32); return true;
    case PMIX_UINT64: out = static_cast<long>(v->data.uint64); return true;
    case PMIX_SIZE: out = static_cast<long>(v->data.size); return true;
    case PMIX_PROC_RANK: out = static_cast<long>(v->data.rank); return true;
    default: return false;
  }
}

// --- Address space (RLIMIT_AS, `ulimit -v`) ----------------------------------------------------
// OpenPMIx 4.2's client starts a progress thread in PMIx_Init (a stack of RLIMIT_STACK, often
// 8 MiB, plus a 64 MiB malloc arena when there is room for one) and does not check every
// allocation afterwards: with too little address space left it either fails with a bare
// "ERROR (-1)" or crashes later. So a rank under a limit checks its room first and says what
// is missing, and every start-up error names the limit.


std::string address_space_note() {
  const unsigned long limit = address_space_limit_kb();
  if (!limit) return "";
  return " (address space: pid " + std::to_string(::getpid()) + " maps " +
         std::to_string(address_space_used_kb()) + " kB of its ulimit -v " + std::to_string(limit) + " kB)";
}

size_t default_thread_stack_bytes() {
  pthread_attr_t attr;
  size_t stack = 8u << 20;
  if (::pthread_getattr_default_np(&attr) == 0) {
    ::pthread_attr_getstacksize(&attr, &stack);
    ::pthread_attr_destroy(&attr);
  }
  return stack;
}

// Measured with OpenPMIx 4.2.2: PMIx_Init maps its thread's stack plus 1.2 MB (no arena fits
// under a tight limit), and a job's start-up fences add little. 4 MiB on top of the stack
// leaves the library room; below that it fails or crashes (a 2-rank MPI job: fine at 22 MB,
// a crash or "the server did not provide" errors at 20 MB, PMIx_Init failing at 19 MB).
void check_room_for_pmix_init() {
  const unsigned long limit = address_space_limit_kb();
  if (!limit) return;
  const unsigned long used = address_space_used_kb(), stack_kb = default_thread_stack_bytes() / 1024;
  const unsigned long needed = stack_kb + 4 * 1024;
  if (used + needed <= limit) return;
  throw BootstrapError("PMIx_Init: out of address space: pid " + std::to_string(::getpid()) +
                       " maps " + std::to_string(used) + " kB of its ulimit -v " + std::to_string(limit) +
                       " kB and PMIx needs about " + std::to_string(needed) +
                       " kB more (a progress thread with a " + std::to_string(stack_kb) +
                       " kB stack, ulimit -s, and its buffers); raise ulimit -v to at least " +
                       std::to_string(used + needed) + " kB");
}

std::string sanitize(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap() {
    check_room_for_pmix_init();
    pmix_status_t rc = PMIx_Init(&self_, nullptr, 0);
    if (rc != PMIX_SUCCESS) throw BootstrapError("PMIx_Init failed: " + status_text(rc) + address_space_note());
    initialized_ = true;
    try {
      read_job();
    } catch (const BootstrapError& e) {
      // Under a tight limit these gets fail for want of memory, not of data.
      throw BootstrapError(e.what() + address_space_note());
    }
  }

  ~PmixBootstrap() override {
    try {
      finalize();
    } catch (...) {
    }
  }

  int rank() const override { return static_cast<int>(self_.rank); }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  int node_id() const override { return node_id_; }
  int num_nodes() const override { return num_nodes_; }
  std::string hostname() const override { return hostname_; }
  std::string job_id() const override { return job_id_; }
  std::vector<int> local_peers() const override { return local_peers_; }

  int node_of(int rank) const override {
    check_rank("node_of", rank);
    if (rank == this->rank()) return node_id_;
    std::lock_guard lock(mutex_);
    if (auto it = node_cache_.find(rank); it != node_cache_.end()) return it->second;
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, self_.nspace, static_cast<pmix_rank_t>(rank));
    long node = 0;
    if (!try_get_int(p, PMIX_NODEID, node)) node = node_index_of_host(rank, p);
    node_cache_.emplace(rank, static_cast<int>(node));
    return static_cast<int>(node);
  }

  void put(std::string_view key, std::span<const std::byte> value) override {
    check_key("put", key);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    // PMIx_Put copies the bytes; the cast only satisfies the C struct's non-const pointer.
    v.data.bo.bytes = value.empty() ? nullptr : const_cast<char*>(reinterpret_cast<const char*>(value.data()));
    v.data.bo.size = value.size();
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, std::string(key).c_str(), &v);
    if (rc != PMIX_SUCCESS)
      throw BootstrapError("PMIx_Put('" + std::string(key) + "', " + std::to_string(value.size()) + " bytes) failed: " + status_text(rc));
  }

  void commit() override {
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) throw BootstrapError("PMIx_Commit failed: " + status_text(rc));
  }

  void fence(bool collect_data) override {
    pmix_info_t info;
    bool flag = collect_data;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(&job_, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
      throw BootstrapError("PMIx_Fence failed: " + status_text(rc) +
                           (rc == PMIX_ERR_PARTIAL_SUCCESS ? " (a peer aborted or died)" : ""));
  }

  void fence_while(bool collect_data, const std::function<void()>& progress) override {
    struct Pending {
      std::atomic<bool> done{false};
      pmix_status_t status = PMIX_SUCCESS;  // written before done is released
    };
    auto pending = std::make_shared<Pending>();
    // The callback may run after a failed wait below returns: it owns a reference.
    auto* ref = new std::shared_ptr<Pending>(pending);
    pmix_info_t info;
    bool flag = collect_data;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence_nb(
        &job_, 1, &info, 1,
        [](pmix_status_t status, void* cbdata) {
          auto* p = static_cast<std::shared_ptr<Pending>*>(cbdata);
          (*p)->status = status;
          (*p)->done.store(true, std::memory_order_release);
          delete p;
        },
        ref);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
      delete ref;
      if (rc == PMIX_OPERATION_SUCCEEDED) return;  // completed at once, callback not called
      throw BootstrapError("PMIx_Fence_nb failed: " + status_text(rc));
    }
    while (!pending->done.load(std::memory_order_acquire)) progress();
    if (pending->status != PMIX_SUCCESS)
      throw BootstrapError("PMIx_Fence failed: " + status_text(pending->status) +
                           (pending->status == PMIX_ERR_PARTIAL_SUCCESS ? " (a peer aborted or died)" : ""));
  }

  std::vector<std::byte> get(int rank, std::string_view key) override {
    check_rank("get", rank);
    check_key("get", key);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, self_.nspace, static_cast<pmix_rank_t>(rank));
    pmix_value_t* v = nullptr;
    pmix_status_t rc = PMIx_Get(&p, std::string(key).c_str(), nullptr, 0, &v);
    if (rc != PMIX_SUCCESS || v == nullptr)
      throw BootstrapError("PMIx_Get(rank " + std::to_string(rank) + ", '" + std::string(key) + "') failed: " + status_text(rc));
    std::vector<std::byte> out;
    if (v->type == PMIX_BYTE_OBJECT) {
      auto* b = reinterpret_cast<const std::byte*>(v->data.bo.bytes);
      out.assign(b, b + v->data.bo.size);
    } else if (v->type == PMIX_STRING && v->data.string) {
      auto* b = reinterpret_cast<const std::byte*>(v->data.string);
      out.assign(b, b + std::strlen(v->data.string));
    } else {
      PMIX_VALUE_RELEASE(v);
      throw BootstrapError("PMIx_Get(rank " + std::to_string(rank) + ", '" + std::string(key) + "'): value is not a byte object");
    }
    PMIX_VALUE_RELEASE(v);
    return out;
  }

  std::optional<std::string> job_value(std::string_view key) override {
    return try_get_string(job_, std::string(key).c_str());
  }

  [[noreturn]] void abort(int code, std::string_view message) override {
    std::string msg(message);
    PMIx_Abort(code == 0 ? 1 : code, msg.c_str(), nullptr, 0);
    // PMIx_Abort returns when the server could not be told; end this rank regardless.
    std::fprintf(stderr, "xmsg: rank %d aborted: %s\n", rank(), msg.c_str());
    std::_Exit(code == 0 ? 1 : code);
  }

  void finalize() override {
    if (!initialized_) return;
    initialized_ = false;
    PMIx_Finalize(nullptr, 0);
  }

 private:
  void read_job() {
    PMIX_LOAD_PROCID(&job_, self_.nspace, PMIX_RANK_WILDCARD);

    size_ = static_cast<int>(get_int(job_, PMIX_JOB_SIZE));
    local_rank_ = static_cast<int>(get_int(self_, PMIX_LOCAL_RANK));
    local_size_ = static_cast<int>(get_int(job_, PMIX_LOCAL_SIZE));
    node_id_ = static_cast<int>(get_int(self_, PMIX_NODEID));
    long nodes = 0;
    num_nodes_ = try_get_int(job_, PMIX_NUM_NODES, nodes) ? static_cast<int>(nodes) : 1;
    hostname_ = try_get_string(self_, PMIX_HOSTNAME).value_or("");
    if (hostname_.empty()) {
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      hostname_ = host;
    }
    auto peers = try_get_string(job_, PMIX_LOCAL_PEERS);
    if (!peers) throw BootstrapError("PMIx_Get(PMIX_LOCAL_PEERS) failed: the server did not provide local peers");
    for (size_t pos = 0; pos < peers->size();) {
      size_t end = peers->find(',', pos);
      if (end == std::string::npos) end = peers->size();
      local_peers_.push_back(std::stoi(peers->substr(pos, end - pos)));
      pos = end + 1;
    }
    job_id_ = sanitize(self_.nspace);
  }

  void check_rank(const char* op, int rank) const {
    if (rank < 0 || rank >= size_)
      throw BootstrapError(std::string(op) + ": rank " + std::to_string(rank) + " out of range [0, " + std::to_string(size_) + ")");
  }
  static void check_key(const char* op, std::string_view key) {
    if (key.empty() || key.size() >= PMIX_MAX_KEYLEN)
      throw BootstrapError(std::string(op) + ": key '" + std::string(key) + "' must be 1.." + std::to_string(PMIX_MAX_KEYLEN - 1) + " characters");
  }

  bool try_get_int(const pmix_proc_t& p, const char* key, long& out) const {
    pmix_value_t* v = nullptr;
    if (PMIx_Get(&p, key, nullptr, 0, &v) != PMIX_SUCCESS || v == nullptr) return false;
    bool ok = value_to_long(v, out);
    PMIX_VALUE_RELEASE(v);
    return ok;
  }
  long get_int(const pmix_proc_t& p, const char* key) const {
    long out = 0;
    if (!try_get_int(p, key, out))
      throw BootstrapError(std::string("PMIx_Get(") + key + ") failed for rank " +
                           (p.rank == PMIX_RANK_WILDCARD ? std::string("*") : std::to_string(p.rank)) +
                           ": the server did not provide it as an integer");
    return out;
  }
  std::optional<std::string> try_get_string(const pmix_proc_t& p, const char* key) const {
    pmix_info_t info;
    bool optional = true;  // job-level data is local after init: don't ask the server for it
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_value_t* v = nullptr;
    pmix_status_t rc = PMIx_Get(&p, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || v == nullptr) return std::nullopt;
    std::optional<std::string> out;
    if (v->type == PMIX_STRING && v->data.string) out = v->data.string;
    else if (v->type == PMIX_BYTE_OBJECT) out = std::string(v->data.bo.bytes, v->data.bo.size);
    PMIX_VALUE_RELEASE(v);
    return out;
  }

  // OpenPMIx 4.2.2 clients answer PMIX_NODEID only for ranks on their own node (they look for it
  // among node-level keys, where the library never stores it). A peer's hostname and the job's
  // node list (in node-id order) are always there, so the node id is the hostname's position.
  long node_index_of_host(int rank, const pmix_proc_t& p) const {
    auto host = try_get_string(p, PMIX_HOSTNAME);
    if (!host) {
      pmix_value_t* v = nullptr;  // not optional: may need the server
      if (PMIx_Get(&p, PMIX_HOSTNAME, nullptr, 0, &v) == PMIX_SUCCESS && v && v->type == PMIX_STRING && v->data.string)
        host = v->data.string;
      if (v) PMIX_VALUE_RELEASE(v);
    }
    if (node_list_.empty()) {
      auto list = try_get_string(job_, PMIX_NODE_LIST);
      for (size_t pos = 0; list && pos < list->size();) {
        size_t end = list->find(',', pos);
        if (end == std::string::npos) end = list->size();
        node_list_.push_back(list->substr(pos, end - pos));
        pos = end + 1;
      }
    }
    for (size_t i = 0; host && i < node_list_.size(); ++i)
      if (node_list_[i] == *host) return static_cast<long>(i);
    throw BootstrapError("node_of: cannot tell the node of rank " + std::to_string(rank) +
                         ": the server gave neither PMIX_NODEID nor a hostname listed in PMIX_NODE_LIST");
  }

  pmix_proc_t self_{}, job_{};
  mutable std::vector<std::string> node_list_;
  bool initialized_ = false;
  int size_ = 1, local_rank_ = 0, local_size_ = 1, node_id_ = 0, num_nodes_ = 1;
  std::string hostname_, job_id_;
  std::vector<int> local_peers_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<int, int> node_cache_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmix_bootstrap() { return std::make_unique<PmixBootstrap>(); }

}  // namespace xmsg::bootstrap
