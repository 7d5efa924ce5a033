// Bootstrap: how a rank learns who it is and finds its peers.
//
// Everything above this layer (transports, runtime) exchanges addresses through the key-value
// store below and never includes a PMIx header. Two implementations exist:
//   * PmixBootstrap  - a PMIx client; runs under xmsgrun, Open MPI's mpirun, Slurm's srun.
//   * SingletonBootstrap - a program started without any launcher is a 1-rank job.
// make_bootstrap() picks one: PMIx when the environment names a PMIx server, singleton otherwise
// (OpenPMIx has no automatic singleton mode, so the choice is made before PMIx_Init).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace xmsg::bootstrap {

// Thrown for every bootstrap failure; what() names the operation, the key or rank involved and
// the PMIx status string where there is one.
class BootstrapError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  // Identity of this process and shape of the job.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;   // index among the ranks of this node
  virtual int local_size() const = 0;   // number of ranks on this node
  virtual int node_id() const = 0;      // 0 .. num_nodes()-1
  virtual int num_nodes() const = 0;
  virtual std::string hostname() const = 0;
  virtual std::string job_id() const = 0;  // unique per job (PMIx namespace), safe in file names

  // Ranks that share this node, ascending (includes this rank).
  virtual std::vector<int> local_peers() const = 0;
  // Node id of any rank in the job.
  virtual int node_of(int rank) const = 0;

  // Key-value store. Keys are short ASCII names; values are opaque bytes (may be empty).
  // put() stages a value, commit() makes staged values visible to a fence or to direct modex,
  // fence(collect) is a job-wide barrier that with collect=true also gathers every rank's
  // committed values so later get()s are local.
  virtual void put(std::string_view key, std::span<const std::byte> value) = 0;
  virtual void commit() = 0;
  virtual void fence(bool collect_data) = 0;
  // The same fence, but `progress` keeps running until every rank has arrived: a rank waiting
  // here still serves peers that need it to finish (accept their connection, let them read its
  // buffers). The default (no launcher to wait for) calls fence() alone.
  virtual void fence_while(bool collect_data, const std::function<void()>& progress) {
    (void)progress;
    fence(collect_data);
  }
  // Value that `rank` put under `key`; throws BootstrapError when it does not exist.
  virtual std::vector<std::byte> get(int rank, std::string_view key) = 0;
  // Job-level value published by the launcher (e.g. "xmsg.job_secret"); nullopt when absent.
  virtual std::optional<std::string> job_value(std::string_view key) = 0;

  // Ends the whole job: the launcher prints `message` and exits with `code`. Does not return.
  [[noreturn]] virtual void abort(int code, std::string_view message) = 0;

  // Leaves the job cleanly (PMIx_Finalize). Called once; the destructor calls it if needed.
  virtual void finalize() = 0;

  // Convenience for string values.
  void put_string(std::string_view key, std::string_view value) {
    put(key, std::as_bytes(std::span(value.data(), value.size())));
  }
  std::string get_string(int rank, std::string_view key) {
    auto v = get(rank, key);
    return std::string(reinterpret_cast<const char*>(v.data()), v.size());
  }
};

// True when the environment names a PMIx server to connect to.
bool pmix_server_present();

// PMIx client when a server is present, else a singleton. Throws BootstrapError on failure.
std::unique_ptr<Bootstrap> make_bootstrap();
std::unique_ptr<Bootstrap> make_pmix_bootstrap();
std::unique_ptr<Bootstrap> make_singleton_bootstrap();

}  // namespace xmsg::bootstrap
