// A program started with no launcher is a complete one-rank job: its key-value store is a local
// map, fences are no-ops, and abort ends the process with the code and message.
#include <xmsg/bootstrap/bootstrap.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

namespace xmsg::bootstrap {
namespace {

class SingletonBootstrap final : public Bootstrap {
 public:
  SingletonBootstrap() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    hostname_ = host;
    job_id_ = "singleton." + std::to_string(::getpid());
  }

  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  int node_id() const override { return 0; }
  int num_nodes() const override { return 1; }
  std::string hostname() const override { return hostname_; }
  std::string job_id() const override { return job_id_; }
  std::vector<int> local_peers() const override { return {0}; }
  int node_of(int rank) const override {
    if (rank != 0) throw BootstrapError("node_of: rank " + std::to_string(rank) + " is not in this 1-rank job");
    return 0;
  }

  void put(std::string_view key, std::span<const std::byte> value) override {
    staged_[std::string(key)] = std::vector<std::byte>(value.begin(), value.end());
  }
  void commit() override {
    for (auto& [k, v] : staged_) store_[k] = std::move(v);
    staged_.clear();
  }
  void fence(bool) override {}
  std::vector<std::byte> get(int rank, std::string_view key) override {
    if (rank != 0)
      throw BootstrapError("get: rank " + std::to_string(rank) + " is not in this 1-rank job");
    auto it = store_.find(std::string(key));
    if (it == store_.end()) throw BootstrapError("get: key '" + std::string(key) + "' of rank 0 not found (not put and committed)");
    return it->second;
  }
  std::optional<std::string> job_value(std::string_view) override { return std::nullopt; }

  [[noreturn]] void abort(int code, std::string_view message) override {
    std::fprintf(stderr, "xmsg: rank 0 aborted: %.*s\n", static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
    std::_Exit(code == 0 ? 1 : code);
  }
  void finalize() override {}

 private:
  std::string hostname_, job_id_;
  std::map<std::string, std::vector<std::byte>, std::less<>> staged_, store_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_singleton_bootstrap() { return std::make_unique<SingletonBootstrap>(); }

}  // namespace xmsg::bootstrap
