#include "World.hpp"

#include <xmsg/bootstrap/parameters.hpp>
#include <xmsg/transport/registry.hpp>
#include <xmsg/transport/selector.hpp>

#include "xmsg_internal.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <stdexcept>
#include <unistd.h>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;

World* World::current = nullptr;

World::World() : matching_(1) {
  boot_ = bootstrap::make_bootstrap();
  rank_ = boot_->rank();
  size_ = boot_->size();
  matching_ = MatchingEngine(size_);
  peers_.resize(size_);
  dead_.assign(size_, 0);
  dead_reason_.assign(size_, {});

  // Settings are checked before the collective wire-up so a bad value fails every rank alike:
  // all of them, whichever layer reads them later (docs: every page's parameter table).
  params::check_environment();
  if (rank_ == 0)
    for (const auto& unknown : params::unknown_variables(environ))
      std::fprintf(stderr, "xmsg: warning: %s\n", params::describe(unknown).c_str());
  // Waiting: spin while every rank has a core; when oversubscribed, spin briefly then yield.
  const std::string pol = params::choice("XMSG_WAIT_POLICY");
  const unsigned spin = static_cast<unsigned>(params::integer("XMSG_SPIN_COUNT"));
  if (pol == "spin") {
    spin_limit_ = ~0u;
  } else if (pol == "yield") {
    spin_limit_ = spin;
  } else if (pol == "auto") {
    // A rank bound to fewer CPUs than the node has was pinned by its launcher (one core per
    // rank): count the node's CPUs then. An unbound rank sees the CPUs it may use.
    cpu_set_t set;
    long cpus = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && online > cpus) cpus = online;
    // Virtual nodes (xmsgrun --nodes K) share one host's CPUs: count every rank on the host.
    const long ranks_here = params::integer_if_set("XMSG_HOST_RANKS").value_or(boot_->local_size());
    spin_limit_ = (cpus > 0 && std::max<long>(ranks_here, boot_->local_size()) > cpus) ? spin : ~0u;
  }
  // Under a real-time policy (chrt -f/-r) the scheduler never takes the core from a spinning
  // rank to give it to a thread of the same priority, and the rank's PMIx thread and the
  // launcher inherited that priority: a rank that spins without yielding starves them, and the
  // next fence (MPI_Finalize's) never completes. Such waiters yield every few thousand polls,
  // whatever the policy; yielding costs nothing when nobody else is queued.
  const int sched_policy = sched_getscheduler(0);
  realtime_ = sched_policy == SCHED_FIFO || sched_policy == SCHED_RR;

  // Unset, each transport says where its rendezvous starts to win (shm with CMA: above 8 KiB);
  // set, it holds for every transport.
  const std::optional<int64_t> eager_set = params::integer_if_set("XMSG_EAGER_LIMIT");
  constexpr uint64_t kDefaultEagerLimit = 64 * 1024;
  const auto fragment = static_cast<uint64_t>(params::integer("XMSG_RNDV_FRAGMENT"));
  force_cts_ = params::flag("XMSG_RNDV_NO_READ");
  const auto split = static_cast<uint64_t>(params::integer("XMSG_RNDV_SPLIT"));
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  split_busy_below_ = static_cast<uint64_t>(l2 > 0 ? l2 : 1 << 20) / 2;
  // Transports: instantiate the wanted ones in a fixed order (connect() is collective).
  std::vector<std::string> built;
  for (const auto& f : transport::built_transports()) built.emplace_back(f.name);
  const std::string pref = params::text("XMSG_TRANSPORTS");
  transport::TransportSelector selector(pref, built);
  std::vector<std::string> available;
  if (size_ > 1) {
    for (const auto& name : selector.wanted(boot_->num_nodes())) {
      for (const auto& f : transport::built_transports()) {
        if (f.name != name) continue;
        auto t = f.make(*boot_);
        if (t) {
          available.push_back(name);
          transports_.push_back(std::move(t));
        }
      }
    }
  }
  std::vector<std::vector<int>> assigned(transports_.size());
  const int my_node = boot_->node_id();
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    auto choice = selector.choose(boot_->node_of(p) == my_node, available);
    if (!choice)
      throw std::runtime_error("no transport reaches rank " + std::to_string(p) + " (XMSG_TRANSPORTS=" +
                               (pref.empty() ? "<default>" : pref) + ")");
    for (size_t i = 0; i < transports_.size(); ++i)
      if (transports_[i]->name() == *choice) {
        assigned[i].push_back(p);
        peers_[p].transport = transports_[i].get();
      }
  }
  for (size_t i = 0; i < transports_.size(); ++i) {
    transports_[i]->connect(assigned[i], {selector.carries_same_node_pairs(transports_[i]->name())});
    if (!assigned[i].empty()) active_.push_back(transports_[i].get());
  }
  // Oversubscribed with a transport whose every poll is a system call (tcp: a recv per socket),
  // XMSG_SPIN_COUNT polls are tens of microseconds the rank we wait for may need our core for:
  // yield at once (4 ranks on 2 cores over tcp, alltoall 1 B: 300 us with 32 polls, 40 us with
  // none; Open MPI 45 us). Unless the user chose the count.
  if (spin_limit_ != ~0u && !params::raw("XMSG_SPIN_COUNT"))
    for (transport::Transport* t : active_)
      if (t->capabilities().polls_by_syscall) spin_limit_ = 0;

  for (int p = 0; p < size_; ++p) {
    if (!peers_[p].transport) continue;
    auto caps = peers_[p].transport->capabilities();
    const uint64_t eager = eager_set                       ? static_cast<uint64_t>(*eager_set)
                           : caps.preferred_eager_limit > 0 ? caps.preferred_eager_limit
                                                            : kDefaultEagerLimit;
    peers_[p].eager_limit = std::min<uint64_t>(eager, caps.max_eager_payload);
    peers_[p].fragment = std::max<uint64_t>(1, std::min<uint64_t>(fragment, caps.max_eager_payload));
    peers_[p].remote_read = caps.remote_read && !force_cts_;
    peers_[p].remote_write = caps.remote_write && !force_cts_;
    peers_[p].split_min = caps.split_copy ? split : 0;
    peers_[p].peek_payload = caps.peek_payload;
  }

  // WORLD (cid 0) and SELF (cid 1).
  auto world = std::make_unique<Comm>();
  world->cid = 0;
  world->rank = rank_;
  world->size = size_;
  for (int i = 0; i < size_; ++i) world->world_of.push_back(i);
  world->comm_of = world->world_of;
  world->note_order();
  auto self = std::make_unique<Comm>();
  self->cid = 1;
  self->rank = 0;
  self->size = 1;
  self->world_of = {rank_};
  self->comm_of.assign(size_, -1);
  self->comm_of[rank_] = 0;
  self->note_order();
  comm_by_cid_ = {world.get(), self.get()};
  direct_comms_[0] = world.get();
  direct_comms_[1] = self.get();
  comms_.push_back(std::move(world));
  comms_.push_back(std::move(self));
}

World::~World() {
  // Unexpected messages left behind (erroneous or unused traffic) are freed here.
  matching_.for_each([](uint32_t, ContextQueues& q) {
    while (Unexpected* u = q.arrivals().front()) {
      q.remove_unexpected(u);
      std::free(u->data);
      delete u;
    }
  });
}

Request* World::new_request(ReqType type) {
  Request* r = pool_.get();
  r->reset(type);
  return r;
}

void World::release(Request* r) {
  if (r->owned_layout) r->owned_layout.reset();
  pool_.put(r);
}

void World::free_request(Request* r) {
  if (r->done) release(r);
  else r->detached = true;
}

void World::complete(Request* r, int error) {
  if (r->inflight) {
    inflight_.remove(r);
    r->inflight = false;
  }
  r->done = true;
  r->error = error;
  if (r->detached) release(r);
}

int World::progress() {
  int n = 0;
  for (transport::Transport* t : active_) n += t->progress(*this);
  if (!pending_peers_.empty()) n += flush_pending();
  return n;
}

// ---- completion ------------------------------------------------------------------------

int World::wait(Request* r, const char* func) {
  (void)func;
  Idle idle;
  while (!r->done) {
    if (progress() > 0) {
      idle.reset();
      continue;
    }
    idle.pause(*this);
    // While every rank has a core, spin on the transports' few ready lines between full
    // progress() calls: the poll loop shrinks from a whole progress() (~25 ns) to a few loads,
    // so an arriving message is seen sooner. Full calls still come every kQuickPolls rounds
    // for queued sends, liveness and transports that cannot tell.
    if (spin_limit_ == ~0u)
      for (int i = 0; i < kQuickPolls && !input_ready(); ++i) {
      }
  }
  return r->error;
}

void World::fill_status(const Request* r, xmsg_status_t* s) const {
  if (!s) return;
  s->error = r->error;
  s->cancelled = r->cancelled ? 1 : 0;
  if (r->type == ReqType::kRecv && r->status_source == XMSG_PROC_NULL) {
    s->source = XMSG_PROC_NULL;
    s->tag = XMSG_ANY_TAG;
    s->bytes = 0;
  } else if (r->type == ReqType::kRecv) {
    s->source = r->status_source >= 0 ? world_to_comm(r->comm, r->status_source) : XMSG_ANY_SOURCE;
    s->tag = r->status_tag;
    s->bytes = static_cast<int64_t>(r->status_bytes);
  } else {
    s->source = XMSG_ANY_SOURCE;
    s->tag = XMSG_ANY_TAG;
    s->bytes = 0;
  }
}

int World::truncation_error(const char* func, const Comm* comm, int source, int tag, uint64_t length,
                            uint64_t capacity) const {
  return xmsgi_error(XMSG_ERR_TRUNCATE,
                     "%s: message from rank %d (tag %d) has %llu bytes but the receive buffer holds %llu; "
                     "the first %llu bytes were delivered",
                     func, world_to_comm(comm, source), tag, static_cast<unsigned long long>(length),
                     static_cast<unsigned long long>(capacity),
                     static_cast<unsigned long long>(std::min(length, capacity)));
}

int World::report(const Request* r, const char* func) {
  switch (r->error) {
    case XMSG_SUCCESS:
      return XMSG_SUCCESS;
    case XMSG_ERR_TRUNCATE:
      return truncation_error(func, r->comm, r->status_source, r->status_tag, r->message_length, r->bytes);
    case XMSG_ERR_PEER_FAILED:
      return peer_failed_error(func, r->comm, r->status_source);
    default:
      return xmsgi_error(r->error, "%s: %s", func, xmsg_error_string(r->error));
  }
}

int World::cancel(Request* r) {
  if (r->type == ReqType::kRecv && !r->done && r->posted) {
    matching_.context(r->context).unpost(r);
    r->cancelled = true;
    complete(r, XMSG_SUCCESS);
  }
  return XMSG_SUCCESS;
}

// ---- teardown --------------------------------------------------------------------------

void World::finalize() {
  if (finalized_) return;
  finalized_ = true;
  // Everything we queued (here or inside a transport) must reach its peer's transport before we
  // arrive at the fence. Peers that already arrived keep progressing inside it (fence_while), so
  // they still accept our connection or drain our ring. Rendezvous sends are not waited for: a
  // receiver that matched one finishes reading before it finalizes, and one nobody matches (a
  // freed Isend) must not hold the job; the fence's progress keeps serving reads and FINs until
  // every rank is here.
  Idle idle;
  for (;;) {
    bool busy = !pending_peers_.empty();
    for (auto& t : transports_) busy = busy || t->output_pending();
    if (!busy) break;
    if (progress() > 0) idle.reset();
    else idle.pause(*this);
  }
  // After this fence no rank sends again, so tearing down shared memory is safe.
  if (size_ > 1) {
    Idle in_fence;
    boot_->fence_while(false, [&] {
      if (progress() > 0) in_fence.reset();
      else in_fence.pause(*this);
    });
  }
  for (auto& t : transports_) t->disconnect();
  active_.clear();
  transports_.clear();
  boot_->finalize();
}

}  // namespace xmsg::rt
