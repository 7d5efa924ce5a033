// C API: job lifetime and communicators.
#include "World.hpp"

#include <xmsg/bootstrap/parameters.hpp>
#include "xmsg_internal.h"

#include <cstdio>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

using xmsg::rt::Comm;
using xmsg::rt::World;

namespace {
bool g_finalized = false;

int not_initialized(const char* func) {
  return xmsgi_error(XMSG_ERR_NOT_INITIALIZED, "%s: called %s xmsg_init", func,
                     g_finalized ? "after xmsg_finalize, not between" : "before");
}
}  // namespace

extern "C" int xmsg_init(int* argc, char*** argv) {
  (void)argc, (void)argv;
  if (World::current) return xmsgi_error(XMSG_ERR_ARG, "xmsg_init: already initialized");
  if (g_finalized) return xmsgi_error(XMSG_ERR_ARG, "xmsg_init: xmsg cannot be initialized again after xmsg_finalize");
  try {
    World::current = new World();
  } catch (const std::exception& e) {
    return xmsgi_error(XMSG_ERR_TRANSPORT, "xmsg_init: %s", e.what());
  }
  return XMSG_SUCCESS;
}

extern "C" int xmsg_finalize(void) {
  World* w = World::current;
  if (!w) return not_initialized("xmsg_finalize");
  int rc = XMSG_SUCCESS;
  try {
    w->finalize();
  } catch (const std::exception& e) {
    rc = xmsgi_error(XMSG_ERR_TRANSPORT, "xmsg_finalize: %s", e.what());
  }
  delete w;
  World::current = nullptr;
  g_finalized = true;
  return rc;
}

extern "C" int xmsg_initialized(int* flag) {
  if (!flag) return xmsgi_error(XMSG_ERR_ARG, "xmsg_initialized: flag is NULL");
  *flag = World::current != nullptr || g_finalized;
  return XMSG_SUCCESS;
}

extern "C" int xmsg_finalized(int* flag) {
  if (!flag) return xmsgi_error(XMSG_ERR_ARG, "xmsg_finalized: flag is NULL");
  *flag = g_finalized;
  return XMSG_SUCCESS;
}

extern "C" int xmsg_abort(xmsg_comm_t comm, int code, const char* message) {
  return xmsgi_guard("xmsg_abort", [&]() -> int {
    (void)comm;
    World* w = World::current;
    if (!w) {
      std::fprintf(stderr, "xmsg_abort(%d): %s\n", code, message ? message : "");
      std::_Exit(code ? code : 1);
    }
    w->bootstrap().abort(code, message ? message : "xmsg_abort");
    return XMSG_ERR_INTERNAL;  // not reached: abort() does not return
  });
}

extern "C" double xmsg_wtime(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int xmsgi_check_comm(xmsg_comm_t comm, const char* func, int* rank, int* size) {
  World* w = World::current;
  if (!w) return not_initialized(func);
  Comm* c = w->comm(comm);
  if (!c) {
    if (comm == XMSG_COMM_NULL) return xmsgi_error(XMSG_ERR_COMM, "%s: comm is XMSG_COMM_NULL", func);
    return xmsgi_error(XMSG_ERR_COMM, "%s: comm %d is not a valid communicator (never created or freed)", func, comm);
  }
  if (rank) *rank = c->rank;
  if (size) *size = c->size;
  return XMSG_SUCCESS;
}

extern "C" int xmsg_comm_rank(xmsg_comm_t comm, int* rank) {
  if (int rc = xmsgi_check_comm(comm, "xmsg_comm_rank", rank, nullptr)) return rc;
  if (!rank) return xmsgi_error(XMSG_ERR_ARG, "xmsg_comm_rank: rank is NULL");
  return XMSG_SUCCESS;
}

extern "C" int xmsg_comm_size(xmsg_comm_t comm, int* size) {
  if (int rc = xmsgi_check_comm(comm, "xmsg_comm_size", nullptr, size)) return rc;
  if (!size) return xmsgi_error(XMSG_ERR_ARG, "xmsg_comm_size: size is NULL");
  return XMSG_SUCCESS;
}

extern "C" int xmsg_comm_dup(xmsg_comm_t comm, xmsg_comm_t* newcomm) {
  return xmsgi_guard("xmsg_comm_dup", [&]() -> int {
    int rank = 0;
    if (int rc = xmsgi_check_comm(comm, "xmsg_comm_dup", &rank, nullptr)) return rc;
    if (!newcomm) return xmsgi_error(XMSG_ERR_ARG, "xmsg_comm_dup: newcomm is NULL");
    World* w = World::current;
    return w->create_comm(*w->comm(comm), 0, rank, newcomm, "xmsg_comm_dup");
  });
}

extern "C" int xmsg_comm_split(xmsg_comm_t comm, int color, int key, xmsg_comm_t* newcomm) {
  return xmsgi_guard("xmsg_comm_split", [&]() -> int {
    if (int rc = xmsgi_check_comm(comm, "xmsg_comm_split", nullptr, nullptr)) return rc;
    if (!newcomm) return xmsgi_error(XMSG_ERR_ARG, "xmsg_comm_split: newcomm is NULL");
    if (color < 0 && color != XMSG_UNDEFINED)
      return xmsgi_error(XMSG_ERR_ARG, "xmsg_comm_split: color %d is negative (use XMSG_UNDEFINED to opt out)", color);
    World* w = World::current;
    return w->create_comm(*w->comm(comm), color, key, newcomm, "xmsg_comm_split");
  });
}

namespace {

// Checks of xmsg_comm_create_group's arguments that need no communication, so a bad call
// fails at once on the rank that made it (the others may then wait for it, as MPI allows).
int create_group(xmsg_comm_t comm, int n, const int ranks[], int tag, xmsg_comm_t* newcomm, const char* func,
                 const char* ranks_name) {
  int rank = 0, size = 0;
  if (int rc = xmsgi_check_comm(comm, func, &rank, &size)) return rc;
  if (!newcomm) return xmsgi_error(XMSG_ERR_ARG, "%s: newcomm is NULL", func);
  if (n < 1 || n > size)
    return xmsgi_error(XMSG_ERR_ARG, "%s: n %d out of range [1, %d] (the size of comm)", func, n, size);
  if (!ranks) return xmsgi_error(XMSG_ERR_ARG, "%s: %s is NULL", func, ranks_name);
  if (tag < 0 || tag > XMSG_TAG_UB)
    return xmsgi_error(XMSG_ERR_TAG, "%s: tag %d out of range [0, XMSG_TAG_UB=%d]", func, tag, XMSG_TAG_UB);
  std::vector<int> seen(static_cast<size_t>(size), -1);  // comm rank -> index in ranks[]
  for (int i = 0; i < n; ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= size)
      return xmsgi_error(XMSG_ERR_RANK, "%s: %s[%d] = %d out of range [0, %d)", func, ranks_name, i, r, size);
    if (seen[static_cast<size_t>(r)] >= 0)
      return xmsgi_error(XMSG_ERR_ARG, "%s: %s[%d] = %d repeats %s[%d]: ranks must be distinct", func, ranks_name, i,
                         r, ranks_name, seen[static_cast<size_t>(r)]);
    seen[static_cast<size_t>(r)] = i;
  }
  if (seen[static_cast<size_t>(rank)] < 0)
    return xmsgi_error(XMSG_ERR_RANK, "%s: the calling rank %d is not in %s (only the listed ranks call it)", func,
                       rank, ranks_name);
  World* w = World::current;
  return w->create_group_comm(*w->comm(comm), n, ranks, tag, newcomm, func);
}

}  // namespace

extern "C" int xmsg_comm_create_group(xmsg_comm_t comm, int n, const int ranks[], int tag, xmsg_comm_t* newcomm) {
  return xmsgi_guard("xmsg_comm_create_group", [&]() -> int {
    return create_group(comm, n, ranks, tag, newcomm, "xmsg_comm_create_group", "ranks");
  });
}

extern "C" int xmsg_comm_create_from_world(int n, const int world_ranks[], int tag, xmsg_comm_t* newcomm) {
  return xmsgi_guard("xmsg_comm_create_from_world", [&]() -> int {
    return create_group(XMSG_COMM_WORLD, n, world_ranks, tag, newcomm, "xmsg_comm_create_from_world", "world_ranks");
  });
}

extern "C" int xmsg_comm_free(xmsg_comm_t* comm) {
  if (!comm) return xmsgi_error(XMSG_ERR_ARG, "xmsg_comm_free: comm is NULL");
  if (int rc = xmsgi_check_comm(*comm, "xmsg_comm_free", nullptr, nullptr)) return rc;
  if (*comm == XMSG_COMM_WORLD || *comm == XMSG_COMM_SELF)
    return xmsgi_error(XMSG_ERR_COMM, "xmsg_comm_free: XMSG_COMM_WORLD and XMSG_COMM_SELF cannot be freed");
  xmsgi_coll_comm_freed(*comm);
  World::current->free_comm(*comm);
  *comm = XMSG_COMM_NULL;
  return XMSG_SUCCESS;
}

int xmsgi_comm_node_ids(xmsg_comm_t comm, int* node_ids) {
  int size = 0;
  if (int rc = xmsgi_check_comm(comm, "xmsgi_comm_node_ids", nullptr, &size)) return rc;
  if (!node_ids) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_comm_node_ids: node_ids is NULL");
  World* w = World::current;
  Comm* c = w->comm(comm);
  for (int i = 0; i < size; ++i) node_ids[i] = w->bootstrap().node_of(c->world_of[i]);
  return XMSG_SUCCESS;
}

int xmsgi_comm_world_rank(xmsg_comm_t comm, int rank, int* world_rank) {
  int size = 0;
  if (int rc = xmsgi_check_comm(comm, "xmsgi_comm_world_rank", nullptr, &size)) return rc;
  if (rank < 0 || rank >= size)
    return xmsgi_error(XMSG_ERR_RANK, "xmsgi_comm_world_rank: rank %d out of range [0, %d)", rank, size);
  if (!world_rank) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_comm_world_rank: world_rank is NULL");
  *world_rank = World::current->comm(comm)->world_of[rank];
  return XMSG_SUCCESS;
}

int xmsgi_progress(void) { return World::current ? World::current->progress() : 0; }

int xmsgi_progress_interval_us(void) {
  if (!xmsg::params::flag("XMSG_PROGRESS_THREAD")) return 0;
  return static_cast<int>(xmsg::params::integer("XMSG_PROGRESS_INTERVAL"));
}

int xmsgi_thread_multiple_allowed(void) { return xmsg::params::flag("XMSG_THREAD_MULTIPLE") ? 1 : 0; }

int64_t xmsgi_schedule_scratch_cache(void) { return xmsg::params::integer("XMSG_COLL_SCRATCH_CACHE"); }

int xmsgi_wait_fds(int* fds, int max) {
  if (!World::current || !fds || max <= 0) return 0;
  size_t n = 0;
  for (xmsg::transport::Transport* t : World::current->active_transports())
    n += t->wait_fds(std::span<int>(fds + n, static_cast<size_t>(max) - n));
  return static_cast<int>(n);
}

int xmsgi_single_copy_allowed(void) { return xmsg::params::flag("XMSG_SHM_CMA") ? 1 : 0; }

const char* xmsgi_job_id(void) {
  static std::string id;
  if (World::current && id.empty()) id = World::current->bootstrap().job_id();
  return id.c_str();
}

int xmsgi_comm_context(xmsg_comm_t comm, uint32_t* context) {
  if (int rc = xmsgi_check_comm(comm, "xmsgi_comm_context", nullptr, nullptr)) return rc;
  *context = World::current->comm(comm)->cid;
  return XMSG_SUCCESS;
}

void xmsgi_set_idle_hook(void (*hook)(void)) { World::idle_hook = hook; }
void xmsgi_set_yield_hook(int (*hook)(void)) { World::yield_hook = hook; }

const char* xmsgi_hostname(void) {
  static std::string name;
  if (!World::current) return nullptr;
  name = World::current->bootstrap().hostname();
  return name.c_str();
}

void xmsgi_idle(unsigned* spins) {
  if (!World::current) return;
  World::Idle idle{*spins};
  idle.pause(*World::current);
  *spins = idle.spins;
}

int xmsgi_check_peer(xmsg_comm_t comm, int rank, const char* func) {
  if (int rc = xmsgi_check_comm(comm, func, nullptr, nullptr)) return rc;
  const World* w = World::current;
  const Comm* c = World::current->comm(comm);
  const int world_rank = c->world_of[rank];
  return w->peer_dead(world_rank) ? w->peer_failed_error(func, c, world_rank) : XMSG_SUCCESS;
}
