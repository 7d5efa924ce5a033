// The PMIx server library of one node server.
//
// OpenPMIx calls the module's upcalls on its own progress thread. They never block and never
// call back into PMIx: each one copies what it was given into an Event, queues it and wakes the
// node server's poll loop through an eventfd. The node server answers later, from its main
// thread, through the callbacks stored in the events (OpenPMIx thread-shifts those itself).
// The one exception: which ranks connected (PMIx_Init) and finalized (PMIx_Finalize) is
// recorded by the upcalls themselves, under a mutex, before they return (see client_state()).
#pragma once

#include "JobPlan.hpp"
#include "PmixClientOwner.hpp"

#include <pmix_server.h>

#include <atomic>
#include <cstdint>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace xmsg::launcher {

class Topology;

struct FenceUpcall {
  std::string participants;  // "*" for the whole namespace, else ascending ranks "0,3,5"
  pmix_status_t local_status = PMIX_SUCCESS;
  std::string blob;          // this server's contribution
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

struct DirectModexUpcall {  // a local client wants data of a rank on another node
  int rank = 0;
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

struct AbortUpcall {
  int rank = 0;
  int status = 0;
  std::string message;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

struct LocalModexReady {  // answer to ask_local_modex()
  uint64_t request = 0;
  pmix_status_t status = PMIX_SUCCESS;
  std::string blob;
};

struct ClientAccepted {  // client_is_ours admitted a rank's client: the node server holds it
  int rank = -1;
  ConnectingClient client;
};

using ServerEvent = std::variant<FenceUpcall, DirectModexUpcall, AbortUpcall, LocalModexReady, ClientAccepted>;

// What a local rank did with PMIx so far.
enum class ClientState {
  kNever,      // never connected: not a PMIx client (hostname, a shell), or not yet
  kConnected,  // called PMIx_Init and has not finalized
  kFinalized,  // called PMIx_Finalize (and was answered)
};

class PmixServer {
 public:
  // PMIx_server_init with every file under `tmpdir`. Throws std::runtime_error.
  // `topology` (may be null) spares the library its own discovery.
  PmixServer(const std::string& hostname, const std::string& tmpdir, const Topology* topology);
  ~PmixServer();
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  int event_fd() const { return event_fd_; }
  std::vector<ServerEvent> take_events();

  // Registers the namespace (whole job map; never the job secret) and this node's clients; blocks until
  // the library has processed them.
  void register_job(const JobPlan& plan, int node);
  // The PMIx variables a client needs, merged into `env`.
  void setup_fork(const std::string& nspace, int rank, std::vector<std::string>& env);
  // Asks the library for a local rank's committed data; answered by a LocalModexReady event.
  void ask_local_modex(const std::string& nspace, int rank, uint64_t request);

  // Hands `blob` to a modex callback; the bytes stay alive until the library releases them.
  static void complete_modex(pmix_modex_cbfunc_t cbfunc, void* cbdata, pmix_status_t status,
                             std::string blob);

  void push(ServerEvent ev);  // used by the upcalls

  // Called from the node server's main thread when it reaps a rank. The upcalls record a
  // finalize before the library answers the client, and the client exits only after that
  // answer, so a rank reaped after a clean PMIx_Finalize always reads kFinalized here.
  ClientState client_state(int rank) const;
  void set_client_state(int rank, ClientState state);  // used by the upcalls

  // Returns once the PMIx thread has run everything that was pending when called and what
  // that queued in turn (a lost client's connection and the fence completions it triggers),
  // or after `limit`. False on the limit. See NodeServer::kill_alive for why.
  bool settle(std::chrono::milliseconds limit);
  // Calls an upcall's op callback on the PMIx thread: the library's op_cbfunc (PMIx_Abort's
  // answer) releases objects the PMIx thread may be using, without a lock.
  void answer_on_pmix_thread(pmix_op_cbfunc_t cbfunc, void* cbdata);

  // Whether the client the library is accepting (on the PMIx thread, in the client_connected
  // upcall) runs as the job's user; says why not on stderr. A client admitted is reported as
  // ClientAccepted, for hold_connection.
  bool client_is_ours(const pmix_proc_t& proc);
  // Takes and keeps the client's end of an admitted connection if it is `pid`'s (the rank's own
  // process: a wrapper script's child may die while the rank lives on, and then its connection
  // must close as usual). Main thread; taking a descriptor is kept off the PMIx thread, which
  // every client's handshake waits for.
  void hold_connection(const ClientAccepted& accepted, pid_t pid);
  // Closes what client_is_ours held of `rank`'s connections, once the node server has reaped
  // the rank, and waits (up to `limit`) until the library has closed its ends. The library
  // learns of a client's death only here, one rank at a time, each followed by settle():
  // OpenPMIx 4.2 frees a local fence twice when two of its participants' connections close in
  // one pass of its event loop, one that had called in and one that had not (NodeServer.cpp,
  // kill_alive), and ranks that die together by themselves would otherwise close theirs at once.
  struct Released {
    bool any = false;        // the rank had held connections
    bool timed_out = false;  // the library had not closed its ends within the limit
  };
  Released release_connections(int rank, std::chrono::milliseconds limit);

 private:
  std::string hostname_;
  std::atomic<uint16_t> port_{0};  // learned in setup_fork, before any client can exist
  int event_fd_ = -1;
  std::mutex mutex_;
  std::vector<ServerEvent> events_;
  mutable std::mutex clients_mutex_;
  std::map<int, ClientState> clients_;  // rank -> state; absent: kNever
  struct HeldConnection {
    int client_end = -1;   // our descriptor of the client's socket
    SocketEnd server_end;  // the library's end
  };
  // PMIx thread only: server ends of the connections accepted, and where the last one was.
  std::set<uint64_t> seen_;
  int last_fd_ = -1;
  bool unidentified_said_ = false;
  std::map<int, std::vector<HeldConnection>> held_;  // rank -> its clients' connections
};

}  // namespace xmsg::launcher
