#include "PmixServer.hpp"

#include "PmixClientOwner.hpp"
#include "Topology.hpp"

#include <pmix.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace xmsg::launcher {

namespace {

// Upcalls are plain C functions without a context pointer for most operations.
PmixServer* g_server = nullptr;

std::string status_text(pmix_status_t st) { return PMIx_Error_string(st); }

// Waits on the calling (main) thread for op callbacks fired on the PMIx thread.
struct OpWaiter {
  std::mutex m;
  std::condition_variable cv;
  int remaining = 0;
  pmix_status_t status = PMIX_SUCCESS;

  static void done(pmix_status_t st, void* cbdata) {
    auto* w = static_cast<OpWaiter*>(cbdata);
    std::lock_guard lk(w->m);
    if (st != PMIX_SUCCESS && w->status == PMIX_SUCCESS) w->status = st;
    if (--w->remaining == 0) w->cv.notify_all();
  }
  void wait() {
    std::unique_lock lk(m);
    cv.wait(lk, [&] { return remaining == 0; });
  }
};

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[],
                       size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  AbortUpcall ev;
  ev.rank = static_cast<int>(proc->rank);
  ev.status = status;
  ev.message = msg ? msg : "";  // freed when we return
  ev.cbfunc = cbfunc;
  ev.cbdata = cbdata;
  g_server->push(std::move(ev));
  return PMIX_SUCCESS;
}

// A client finished PMIx_Init's handshake. OpenPMIx 4.2 calls this without a callback
// (client_connected2 would be preferred when set; the plain one is enough).
// An error here makes the library close the connection before the client is one of its peers
// (ptl_base_connection_hdlr.c), so a refused client leaves no trace: its going is no rank's.
pmix_status_t on_client_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  if (!g_server->client_is_ours(*proc)) return PMIX_ERR_NO_PERMISSIONS;
  g_server->set_client_state(static_cast<int>(proc->rank), ClientState::kConnected);
  return PMIX_OPERATION_SUCCEEDED;
}

// A client called PMIx_Finalize. It is blocked until the library answers, which it does as
// soon as we return PMIX_OPERATION_SUCCEEDED: recording the state here, not through an event,
// means the node server's reaper can never see the rank's exit before its finalize (the
// client gives up waiting after a timeout, so a queued event could lose that race). In
// OpenPMIx 4.2 this upcall comes only from a client's finalize request, never for a lost
// connection (ptl_base_sendrecv.c: lost_connection does not call it).
pmix_status_t on_client_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  g_server->set_client_state(static_cast<int>(proc->rank), ClientState::kFinalized);
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                       size_t ninfo, char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                       void* cbdata) {
  FenceUpcall ev;
  if (nprocs == 1 && procs[0].rank == PMIX_RANK_WILDCARD) {
    ev.participants = "*";
  } else {
    std::vector<uint32_t> ranks;
    for (size_t i = 0; i < nprocs; ++i) ranks.push_back(procs[i].rank);
    std::sort(ranks.begin(), ranks.end());
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (i) ev.participants.push_back(',');
      ev.participants.append(ranks[i] == PMIX_RANK_WILDCARD ? std::string("*")
                                                            : std::to_string(ranks[i]));
    }
  }
  for (size_t i = 0; i < ninfo; ++i)
    if (PMIX_CHECK_KEY(&info[i], PMIX_LOCAL_COLLECTIVE_STATUS) &&
        info[i].value.type == PMIX_STATUS)
      ev.local_status = info[i].value.data.status;
  if (data && ndata) ev.blob.assign(data, ndata);
  // The library hands ownership of the contribution to the host.
  std::free(data);
  ev.cbfunc = cbfunc;
  ev.cbdata = cbdata;
  g_server->push(std::move(ev));
  return PMIX_SUCCESS;
}

pmix_status_t on_direct_modex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                              pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  DirectModexUpcall ev;
  ev.rank = static_cast<int>(proc->rank);
  ev.cbfunc = cbfunc;
  ev.cbdata = cbdata;
  g_server->push(std::move(ev));
  return PMIX_SUCCESS;
}

void on_local_modex(pmix_status_t status, char* data, size_t sz, void* cbdata) {
  LocalModexReady ev;
  ev.request = reinterpret_cast<uintptr_t>(cbdata);
  ev.status = status;
  if (data && sz) ev.blob.assign(data, sz);  // the library frees `data` when we return
  g_server->push(std::move(ev));
}

void release_blob(void* cbdata) { delete static_cast<std::string*>(cbdata); }

// PMIx_server_register_resources with nothing to register is a no-op pushed through the
// library's event loop: its callback runs after what was queued before it. Each round is
// issued from the previous one's callback, on the PMIx thread, so it queues behind what that
// pass of the loop activated (a socket's end of file, then the fence completion that
// lost_connection() thread-shifts): three rounds cover both.
struct Settle {
  std::mutex m;
  std::condition_variable cv;
  int rounds_left = 3;
  bool done = false;

  static void step(pmix_status_t, void* cbdata) {
    auto* held = static_cast<std::shared_ptr<Settle>*>(cbdata);
    Settle& s = **held;
    {
      std::lock_guard lk(s.m);
      if (--s.rounds_left > 0 &&
          PMIx_server_register_resources(nullptr, 0, step, cbdata) == PMIX_SUCCESS)
        return;
      s.done = true;
      s.cv.notify_all();
    }
    delete held;
  }
};

void load_string(pmix_info_t* info, const char* key, const std::string& value) {
  PMIX_INFO_LOAD(info, key, value.c_str(), PMIX_STRING);
}

}  // namespace

PmixServer::PmixServer(const std::string& hostname, const std::string& tmpdir,
                       const Topology* topology)
    : hostname_(hostname) {
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) throw std::runtime_error("eventfd failed");
  g_server = this;

  static pmix_server_module_t module;
  std::memset(&module, 0, sizeof module);
  module.client_connected = on_client_connected;
  module.client_finalized = on_client_finalized;
  module.abort = on_abort;
  module.fence_nb = on_fence;
  module.direct_modex = on_direct_modex;

  pmix_info_t info[6];
  size_t ninfo = 5;
  bool no = false;
  load_string(&info[0], PMIX_SERVER_TMPDIR, tmpdir);
  load_string(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir);
  load_string(&info[2], PMIX_HOSTNAME, hostname);
  // No rendezvous files for tools or system-wide servers: only our clients connect.
  PMIX_INFO_LOAD(&info[3], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[4], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
  pmix_topology_t topo{};
  if (topology) {
    topo.source = const_cast<char*>("hwloc");
    topo.topology = topology->get();
    PMIX_INFO_LOAD(&info[ninfo], PMIX_TOPOLOGY2, &topo, PMIX_TOPO);
    ++ninfo;
  }
  pmix_status_t st = PMIx_server_init(&module, info, ninfo);
  for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&info[i]);
  if (st != PMIX_SUCCESS) throw std::runtime_error("PMIx_server_init failed: " + status_text(st));
}

PmixServer::~PmixServer() {
  // PMIx_server_finalize is deliberately not called: in 4.2.2 it crashes in a fraction of runs
  // after clients were killed, and the node server exits right after (its tmpdir is removed).
  if (event_fd_ >= 0) ::close(event_fd_);
}

void PmixServer::push(ServerEvent ev) {
  {
    std::lock_guard lk(mutex_);
    events_.push_back(std::move(ev));
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(event_fd_, &one, sizeof one);
}

ClientState PmixServer::client_state(int rank) const {
  std::lock_guard lk(clients_mutex_);
  auto it = clients_.find(rank);
  return it == clients_.end() ? ClientState::kNever : it->second;
}

void PmixServer::set_client_state(int rank, ClientState state) {
  std::lock_guard lk(clients_mutex_);
  clients_[rank] = state;
}

void PmixServer::hold_connection(const ClientAccepted& accepted, pid_t pid) {
  const int fd = take_client_socket(pid, accepted.client.inode);
  if (fd < 0) return;
  std::lock_guard lk(clients_mutex_);
  held_[accepted.rank].push_back({fd, accepted.client.server_end});
}

PmixServer::Released PmixServer::release_connections(int rank, std::chrono::milliseconds limit) {
  std::vector<HeldConnection> held;
  {
    std::lock_guard lk(clients_mutex_);
    auto it = held_.find(rank);
    if (it == held_.end()) return {};
    held = std::move(it->second);
    held_.erase(it);
  }
  Released out;
  out.any = !held.empty();
  // The end of file may reach the library's socket a little later (under load the loopback
  // delivery can be deferred), so settle() alone would not order two releases.
  const auto until = std::chrono::steady_clock::now() + limit;
  for (const HeldConnection& c : held) {
    ::close(c.client_end);
    while (!out.timed_out && server_end_open(c.server_end)) {
      if (std::chrono::steady_clock::now() >= until) out.timed_out = true;
      else ::usleep(50);
    }
  }
  return out;
}

bool PmixServer::settle(std::chrono::milliseconds limit) {
  auto s = std::make_shared<Settle>();
  auto* held = new std::shared_ptr<Settle>(s);  // the callbacks' reference, freed by the last
  if (PMIx_server_register_resources(nullptr, 0, Settle::step, held) != PMIX_SUCCESS) {
    delete held;
    return false;
  }
  std::unique_lock lk(s->m);
  return s->cv.wait_for(lk, limit, [&] { return s->done; });
}

namespace {
struct Answer {
  pmix_op_cbfunc_t cbfunc;
  void* cbdata;
  static void run(pmix_status_t, void* self) {
    auto* a = static_cast<Answer*>(self);
    a->cbfunc(PMIX_SUCCESS, a->cbdata);
    delete a;
  }
};
}  // namespace

void PmixServer::answer_on_pmix_thread(pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (!cbfunc) return;
  auto* a = new Answer{cbfunc, cbdata};
  if (PMIx_server_register_resources(nullptr, 0, Answer::run, a) != PMIX_SUCCESS) {
    delete a;
    cbfunc(PMIX_SUCCESS, cbdata);
  }
}

std::vector<ServerEvent> PmixServer::take_events() {
  uint64_t v;
  [[maybe_unused]] ssize_t n = ::read(event_fd_, &v, sizeof v);
  std::lock_guard lk(mutex_);
  return std::exchange(events_, {});
}

void PmixServer::register_job(const JobPlan& plan, int node) {
  std::string hosts, ppn_spec;
  for (int k = 0; k < plan.nnodes(); ++k) {
    if (k) {
      hosts.push_back(',');
      ppn_spec.push_back(';');
    }
    hosts.append(plan.hostnames[k]);
    for (int r = plan.first_rank[k]; r < plan.first_rank[k + 1]; ++r) {
      if (r > plan.first_rank[k]) ppn_spec.push_back(',');
      ppn_spec.append(std::to_string(r));
    }
  }
  char* node_regex = nullptr;
  char* proc_regex = nullptr;
  pmix_status_t st = PMIx_generate_regex(hosts.c_str(), &node_regex);
  if (st != PMIX_SUCCESS) throw std::runtime_error("PMIx_generate_regex: " + status_text(st));
  st = PMIx_generate_ppn(ppn_spec.c_str(), &proc_regex);
  if (st != PMIX_SUCCESS) throw std::runtime_error("PMIx_generate_ppn: " + status_text(st));

  uint32_t size = static_cast<uint32_t>(plan.nranks());
  uint32_t nnodes = static_cast<uint32_t>(plan.nnodes());
  // No job secret here: any local user can read this store (write_secret_file, JobPlan.hpp).
  const size_t njob = 5;
  std::vector<pmix_info_t> info(njob + static_cast<size_t>(plan.nnodes()));
  PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[1], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[2], PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[3], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
  PMIX_INFO_LOAD(&info[4], PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
  std::free(node_regex);
  std::free(proc_regex);
  // The maps alone let the library derive everything about local ranks, but a remote rank's
  // node id is only found through the description of its node.
  for (int k = 0; k < plan.nnodes(); ++k) {
    std::string peers;
    for (int r = plan.first_rank[k]; r < plan.first_rank[k + 1]; ++r) {
      if (r > plan.first_rank[k]) peers.push_back(',');
      peers.append(std::to_string(r));
    }
    uint32_t id = static_cast<uint32_t>(k);
    uint32_t local_size = static_cast<uint32_t>(plan.first_rank[k + 1] - plan.first_rank[k]);
    pmix_data_array_t* node = nullptr;
    PMIX_DATA_ARRAY_CREATE(node, 4, PMIX_INFO);
    auto* ninfo = static_cast<pmix_info_t*>(node->array);
    load_string(&ninfo[0], PMIX_HOSTNAME, plan.hostnames[k]);
    PMIX_INFO_LOAD(&ninfo[1], PMIX_NODEID, &id, PMIX_UINT32);
    load_string(&ninfo[2], PMIX_LOCAL_PEERS, peers);
    PMIX_INFO_LOAD(&ninfo[3], PMIX_LOCAL_SIZE, &local_size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[njob + static_cast<size_t>(k)], PMIX_NODE_INFO_ARRAY, node, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(node);
  }
  // And a remote rank's node id only through per-rank data, which must then be complete
  // (rank first), or the library stops deriving the rest.
  for (int r = 0; r < plan.nranks(); ++r) {
    int k = plan.node_of(r);
    pmix_rank_t rank = static_cast<pmix_rank_t>(r);
    uint32_t id = static_cast<uint32_t>(k), appnum = 0;
    uint16_t local_rank = static_cast<uint16_t>(r - plan.first_rank[k]);
    pmix_data_array_t* proc = nullptr;
    PMIX_DATA_ARRAY_CREATE(proc, 8, PMIX_INFO);
    auto* pinfo = static_cast<pmix_info_t*>(proc->array);
    PMIX_INFO_LOAD(&pinfo[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&pinfo[1], PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&pinfo[2], PMIX_APP_RANK, &rank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&pinfo[3], PMIX_APPNUM, &appnum, PMIX_UINT32);
    PMIX_INFO_LOAD(&pinfo[4], PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16);
    PMIX_INFO_LOAD(&pinfo[5], PMIX_NODE_RANK, &local_rank, PMIX_UINT16);
    PMIX_INFO_LOAD(&pinfo[6], PMIX_NODEID, &id, PMIX_UINT32);
    load_string(&pinfo[7], PMIX_HOSTNAME, plan.hostnames[k]);
    info.emplace_back();
    PMIX_INFO_LOAD(&info.back(), PMIX_PROC_DATA, proc, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(proc);
  }

  int nlocal = plan.first_rank[node + 1] - plan.first_rank[node];
  OpWaiter w;
  w.remaining = 1;
  st = PMIx_server_register_nspace(plan.nspace.c_str(), nlocal, info.data(), info.size(),
                                   OpWaiter::done, &w);
  if (st == PMIX_SUCCESS) w.wait();  // info must stay alive until the callback
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  if (st == PMIX_OPERATION_SUCCEEDED) st = PMIX_SUCCESS;
  if (st != PMIX_SUCCESS || w.status != PMIX_SUCCESS)
    throw std::runtime_error("PMIx_server_register_nspace: " +
                             status_text(st != PMIX_SUCCESS ? st : w.status));

  OpWaiter wc;
  wc.remaining = nlocal;
  for (int r = plan.first_rank[node]; r < plan.first_rank[node + 1]; ++r) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, plan.nspace.c_str(), static_cast<pmix_rank_t>(r));
    st = PMIx_server_register_client(&proc, ::getuid(), ::getgid(), nullptr, OpWaiter::done, &wc);
    if (st == PMIX_OPERATION_SUCCEEDED) {
      OpWaiter::done(PMIX_SUCCESS, &wc);
    } else if (st != PMIX_SUCCESS) {
      OpWaiter::done(st, &wc);
    }
  }
  wc.wait();
  if (wc.status != PMIX_SUCCESS)
    throw std::runtime_error("PMIx_server_register_client: " + status_text(wc.status));
}

void PmixServer::setup_fork(const std::string& nspace, int rank, std::vector<std::string>& env) {
  // The library reallocs the array it is given: hand it a heap copy, never environ.
  char** arr = static_cast<char**>(std::calloc(env.size() + 1, sizeof(char*)));
  for (size_t i = 0; i < env.size(); ++i) arr[i] = ::strdup(env[i].c_str());
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
  pmix_status_t st = PMIx_server_setup_fork(&proc, &arr);
  env.clear();
  for (char** p = arr; p && *p; ++p) {
    env.emplace_back(*p);
    std::free(*p);
  }
  std::free(arr);
  if (st != PMIX_SUCCESS) throw std::runtime_error("PMIx_server_setup_fork: " + status_text(st));
  if (!port_) port_ = pmix_port_in(env);
}

// Only the job's user: OpenPMIx believes the uid a TCP client claims, the kernel's socket
// table does not (PmixClientOwner.hpp). Processes of the job's user are trusted anyway: they
// can read the job secret's file.
bool PmixServer::client_is_ours(const pmix_proc_t& proc) {
  const uint16_t port = port_;
  std::string why;
  if (!port) {
    why = "the server's port is unknown (no tcp URI for clients)";
  } else {
    auto client = connecting_pmix_client(port, seen_, last_fd_);
    if (auto* c = std::get_if<ConnectingClient>(&client)) {
      seen_.insert(c->server_inode);
      last_fd_ = c->server_fd;
      if (c->uid == ::getuid()) {
        push(ClientAccepted{static_cast<int>(proc.rank), *c});
        return true;
      }
      why = "its socket (" + c->address + ") belongs to uid " + std::to_string(c->uid) +
            ", not to the job's user (uid " + std::to_string(::getuid()) + ")";
    } else if (auto* n = std::get_if<NotIdentified>(&client)) {
      // Refusing would leave a rank of the job waiting in PMIx_Init for ever (its client
      // library does not give up): admit it, unchecked, and say so once.
      if (!unidentified_said_)
        std::fprintf(stderr, "xmsgrun: PMIx server on %s cannot tell who its clients are (%s); admitting them unchecked\n",
                     hostname_.c_str(), n->why.c_str());
      unidentified_said_ = true;
      return true;
    } else {
      why = std::get<std::string>(client);
    }
  }
  std::fprintf(stderr, "xmsgrun: PMIx server on %s refused a client claiming rank %u of %s: %s\n",
               hostname_.c_str(), proc.rank, proc.nspace, why.c_str());
  return false;
}

void PmixServer::ask_local_modex(const std::string& nspace, int rank, uint64_t request) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
  pmix_status_t st = PMIx_server_dmodex_request(&proc, on_local_modex,
                                                reinterpret_cast<void*>(static_cast<uintptr_t>(request)));
  if (st != PMIX_SUCCESS) {
    LocalModexReady ev;
    ev.request = request;
    ev.status = st;
    push(std::move(ev));
  }
}

void PmixServer::complete_modex(pmix_modex_cbfunc_t cbfunc, void* cbdata, pmix_status_t status,
                                std::string blob) {
  if (!cbfunc) return;
  auto* holder = new std::string(std::move(blob));
  cbfunc(status, holder->data(), holder->size(), cbdata, release_blob, holder);
}

}  // namespace xmsg::launcher
