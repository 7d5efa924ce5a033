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

namespace {

// WireHeader.flags of CTS/FIN in the split-copy rendezvous.
constexpr uint8_t kSplitFlag = 1;

}  // namespace

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
    spin_limit_ = (cpus > 0 && boot_->local_size() > cpus) ? spin : ~0u;
  }

  const auto eager = static_cast<uint64_t>(params::integer("XMSG_EAGER_LIMIT"));
  const auto fragment = static_cast<uint64_t>(params::integer("XMSG_RNDV_FRAGMENT"));
  force_cts_ = params::flag("XMSG_RNDV_NO_READ");
  const auto split = static_cast<uint64_t>(params::integer("XMSG_RNDV_SPLIT"));
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
    transports_[i]->connect(assigned[i]);
    if (!assigned[i].empty()) active_.push_back(transports_[i].get());
  }

  for (int p = 0; p < size_; ++p) {
    if (!peers_[p].transport) continue;
    auto caps = peers_[p].transport->capabilities();
    peers_[p].eager_limit = std::min<uint64_t>(eager, caps.max_eager_payload);
    peers_[p].fragment = std::max<uint64_t>(1, std::min<uint64_t>(fragment, caps.max_eager_payload));
    peers_[p].remote_read = caps.remote_read && !force_cts_;
    peers_[p].remote_write = caps.remote_write && !force_cts_;
    peers_[p].split_min = split;
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

void World::release(Request* r) { pool_.put(r); }

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

int World::peer_failed_error(const char* func, const Comm* comm, int w) const {
  return xmsgi_error(XMSG_ERR_PEER_FAILED, "%s: peer rank %d (world rank %d) failed: %s", func,
                     comm && comm->contains_world(w) ? comm->comm_of[w] : w, w, dead_reason_[w].c_str());
}

// ---- sending ---------------------------------------------------------------------------

int World::send_slow(uint32_t context, const Comm* comm, int dest, int tag, const void* buf, uint64_t len,
                     const char* func) {
  if (dest == rank_) {
    on_message(header(context, tag, MessageKind::kEager, len), {static_cast<const std::byte*>(buf), len});
    return XMSG_SUCCESS;
  }
  Peer& p = peers_[dest];
  if (len <= p.eager_limit && p.queue.empty()) {
    // Fast path: no request, no allocation. Waits for ring space by draining our own ring.
    const WireHeader h = header(context, tag, MessageKind::kEager, len);
    const std::span<const std::byte> payload{static_cast<const std::byte*>(buf), len};
    if (dead_[dest]) return peer_failed_error(func, comm, dest);
    if (p.transport->try_send(dest, h, payload)) return XMSG_SUCCESS;
    Idle idle;
    for (;;) {
      if (progress() > 0) idle.reset();
      if (dead_[dest]) return peer_failed_error(func, comm, dest);
      if (p.transport->try_send(dest, h, payload)) return XMSG_SUCCESS;
      idle.pause(*this);
    }
  }
  Request* r = nullptr;
  int rc = isend(context, comm, dest, tag, buf, len, &r, func);
  if (rc != XMSG_SUCCESS) return rc;
  wait(r, func);
  rc = report(r, func);
  release(r);
  return rc;
}

int World::isend(uint32_t context, const Comm* comm, int dest, int tag, const void* buf, uint64_t len,
                 Request** out, const char* func, bool synchronous) {
  Request* r = new_request(ReqType::kSend);
  r->context = context;
  r->comm = comm;
  r->peer = dest;
  r->tag = tag;
  r->buf = const_cast<void*>(buf);
  r->bytes = len;
  *out = r;
  if (dest == rank_) {
    on_message(header(context, tag, MessageKind::kEager, len), {static_cast<const std::byte*>(buf), len});
    complete(r, XMSG_SUCCESS);
    return XMSG_SUCCESS;
  }
  if (dead_[dest]) {
    release(r);
    *out = nullptr;
    return peer_failed_error(func, comm, dest);
  }
  Peer& p = peers_[dest];
  if (len <= p.eager_limit && !synchronous) {
    r->stage = SendStage::kEager;
    if (p.queue.empty() &&
        p.transport->try_send(dest, header(context, tag, MessageKind::kEager, len),
                              {static_cast<const std::byte*>(buf), len})) {
      complete(r, XMSG_SUCCESS);
      return XMSG_SUCCESS;
    }
  } else {
    r->stage = SendStage::kRts;
    r->handle = p.transport->expose(buf, len);
    if (p.queue.empty() && send_rts(dest, r)) return XMSG_SUCCESS;
  }
  enqueue(dest, r);
  return XMSG_SUCCESS;
}

bool World::send_rts(int peer, Request* r) {
  struct {
    uint64_t req;
    transport::MemoryHandle handle;
  } rts{reinterpret_cast<uint64_t>(r), r->handle};
  if (!peers_[peer].transport->try_send(peer, header(r->context, r->tag, MessageKind::kRendezvousRts, r->bytes),
                                        std::as_bytes(std::span(&rts, 1))))
    return false;
  r->stage = SendStage::kNone;
  r->events = 1;  // the receiver's FIN
  r->inflight = true;
  inflight_.push_back(r);
  return true;
}

void World::enqueue(int peer, Request* r) {
  Peer& p = peers_[peer];
  p.queue.push_back(r);
  if (!p.pending) {
    p.pending = true;
    pending_peers_.push_back(peer);
  }
}

void World::send_control(int peer, MessageKind kind, uint8_t flags, const uint64_t* words, uint32_t n) {
  WireHeader h = header(0, 0, kind, n * 8);
  h.flags = flags;
  Peer& p = peers_[peer];
  if (dead_[peer]) return;
  if (p.queue.empty() && p.transport->try_send(peer, h, std::as_bytes(std::span(words, n)))) return;
  Request* r = new_request(ReqType::kControl);
  r->stage = SendStage::kControl;
  r->peer = peer;
  r->control_header = h;
  for (uint32_t i = 0; i < n; ++i) r->control_payload[i] = words[i];
  r->control_len = n * 8;
  enqueue(peer, r);
}

bool World::push(int peer, Request* r) {
  Peer& p = peers_[peer];
  switch (r->stage) {
    case SendStage::kEager:
      if (!p.transport->try_send(peer, header(r->context, r->tag, MessageKind::kEager, r->bytes),
                                 {static_cast<const std::byte*>(r->buf), r->bytes}))
        return false;
      p.queue.remove(r);
      complete(r, XMSG_SUCCESS);
      return true;
    case SendStage::kRts:
      // send_rts links r into inflight_ through a different Link, so unlink from the queue first
      // only once the RTS is out.
      {
        struct {
          uint64_t req;
          transport::MemoryHandle handle;
        } rts{reinterpret_cast<uint64_t>(r), r->handle};
        if (!p.transport->try_send(peer, header(r->context, r->tag, MessageKind::kRendezvousRts, r->bytes),
                                   std::as_bytes(std::span(&rts, 1))))
          return false;
        p.queue.remove(r);
        r->stage = SendStage::kNone;
        r->events = 1;
        r->inflight = true;
        inflight_.push_back(r);
        return true;
      }
    case SendStage::kStream: {
      // Data fragments name the receiver's request in (context, tag); they arrive in order.
      const uint64_t id = r->remote_req;
      while (r->offset < r->bytes) {
        const uint64_t n = std::min(p.fragment, r->bytes - r->offset);
        WireHeader h = header(static_cast<uint32_t>(id >> 32), static_cast<int32_t>(id & 0xffffffffu),
                              MessageKind::kRendezvousData, r->bytes);
        if (!p.transport->try_send(peer, h, {static_cast<const std::byte*>(r->buf) + r->offset, n})) return false;
        r->offset += n;
      }
      p.queue.remove(r);
      p.transport->release(r->handle);
      complete(r, XMSG_SUCCESS);
      return true;
    }
    case SendStage::kControl:
      if (!p.transport->try_send(peer, r->control_header,
                                 std::as_bytes(std::span(r->control_payload, r->control_len / 8))))
        return false;
      p.queue.remove(r);
      release(r);
      return true;
    case SendStage::kNone:
      break;
  }
  p.queue.remove(r);
  return true;
}

int World::flush_pending() {
  int n = 0;
  for (size_t i = 0; i < pending_peers_.size();) {
    const int peer = pending_peers_[i];
    Peer& p = peers_[peer];
    while (Request* r = p.queue.front()) {
      if (!push(peer, r)) break;
      ++n;
    }
    if (p.queue.empty()) {
      p.pending = false;
      pending_peers_[i] = pending_peers_.back();
      pending_peers_.pop_back();
    } else {
      ++i;
    }
  }
  return n;
}

int World::progress() {
  int n = 0;
  for (transport::Transport* t : active_) n += t->progress(*this);
  if (!pending_peers_.empty()) n += flush_pending();
  return n;
}

// ---- receiving -------------------------------------------------------------------------

int World::recv(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
                xmsg_status_t* status, const char* func) {
  // In place only if no earlier-posted receive or queued message could claim the source's next
  // message first (MPI's matching order), and only while spinning is the policy: the loop below
  // polls one lane and calls the full progress less often. A larger buffer expects a message the
  // transport cannot show in place: posting the receive before it arrives is faster then (the
  // message is copied straight into the buffer instead of being found after the fact).
  if (source >= 0 && source != rank_ && spin_limit_ == ~0u && capacity <= peers_[source].peek_payload &&
      !dead_[source]) {
    ContextQueues& q = matching_.context(context);
    if (q.posted_from(source).empty() && q.wildcard().empty() && !q.find_unexpected(source, tag)) {
      int rc;
      if (recv_in_place(context, comm, source, tag, buf, capacity, status, func, &rc)) return rc;
    }
  }
  Request* r = nullptr;
  if (int rc = irecv(context, comm, source, tag, buf, capacity, &r, func)) return rc;
  wait(r, func);
  fill_status(r, status);
  const int rc = report(r, func);
  release(r);
  return rc;
}

bool World::recv_in_place(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
                          xmsg_status_t* status, const char* func, int* rc) {
  transport::Transport* t = peers_[source].transport;
  Idle idle;
  for (;;) {
    std::span<const std::byte> payload;
    bool other_input = false;
    // A full progress call costs a few dozen looks: once per kInPlaceLooks, so it rarely
    // stands between the message landing and the waiter seeing it.
    if (const WireHeader* h = t->wait_peek(source, kInPlaceLooks, &payload, &other_input)) {
      if (h->kind != MessageKind::kEager || h->context != context || !tag_matches(tag, h->tag)) return false;
      const uint64_t length = payload.size();
      const uint64_t n = std::min(length, capacity);  // capacity <= peek_payload
      const int mtag = h->tag;
      t->take_peeked(source, buf, n);
      *rc = length > capacity ? truncation_error(func, comm, source, mtag, length, capacity) : XMSG_SUCCESS;
      if (status) {
        status->source = world_to_comm(comm, source);
        status->tag = mtag;
        status->error = *rc;
        status->cancelled = 0;
        status->bytes = static_cast<int64_t>(n);
      }
      return true;
    }
    // Something else arrived on this transport (the source's ring, another lane): post the
    // receive before it is delivered, so a message for us lands in the buffer directly.
    if (other_input) return false;
    // The rest of the world (other transports, queued sends, liveness); whatever it delivers
    // may be ours or may change the matching order.
    if (progress() > 0 || dead_[source]) return false;
    idle.pause(*this);
  }
}

int World::irecv(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
                 Request** out, const char* func) {
  if (source >= 0 && dead_[source]) {
    *out = nullptr;
    return peer_failed_error(func, comm, source);
  }
  if (source < 0 && comm && dead_count_ > 0) {
    for (int w : comm->world_of)
      if (dead_[w]) {
        *out = nullptr;
        return peer_failed_error(func, comm, w);
      }
  }
  Request* r = new_request(ReqType::kRecv);
  r->context = context;
  r->comm = comm;
  r->peer = source;
  r->tag = tag;
  r->buf = buf;
  r->bytes = capacity;
  *out = r;
  match_or_post(r);
  return XMSG_SUCCESS;
}

void World::match_or_post(Request* r) {
  ContextQueues& q = matching_.context(r->context);
  if (Unexpected* u = q.find_unexpected(r->peer, r->tag)) {
    q.remove_unexpected(u);
    if (u->kind == MessageKind::kEager) {
      const uint64_t n = std::min(u->length, r->bytes);
      if (n) std::memcpy(r->buf, u->data, n);
      r->status_source = u->source;
      r->status_tag = u->tag;
      r->status_bytes = n;
      r->message_length = u->length;
      complete(r, u->length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
    } else {
      start_rendezvous_receive(r, u->source, u->tag, u->length, u->remote_req, u->handle);
    }
    std::free(u->data);
    delete u;
    return;
  }
  r->seq = ++seq_;
  q.post(r);
}

void World::deliver_eager(Request* r, const WireHeader& h, std::span<const std::byte> payload) {
  const uint64_t n = std::min<uint64_t>(payload.size(), r->bytes);
  if (n) std::memcpy(r->buf, payload.data(), n);
  r->status_source = static_cast<int>(h.source);
  r->status_tag = h.tag;
  r->status_bytes = n;
  r->message_length = payload.size();
  complete(r, payload.size() > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
}

transport::EagerLanding World::claim_eager(const WireHeader& h) {
  Request* r = matching_.context(h.context).take_posted(static_cast<int>(h.source), h.tag);
  if (!r) return {};
  r->status_source = static_cast<int>(h.source);
  r->status_tag = h.tag;
  r->status_bytes = std::min(h.length, r->bytes);
  r->message_length = h.length;
  // In flight until it lands, so a peer failure meanwhile fails it (on_peer_failure).
  r->inflight = true;
  inflight_.push_back(r);
  return {r, {static_cast<std::byte*>(r->buf), r->status_bytes}};
}

void World::on_eager_landed(void* token) {
  auto* r = static_cast<Request*>(token);
  complete(r, r->message_length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
}

void World::start_rendezvous_receive(Request* r, int source, int tag, uint64_t length, uint64_t remote_req,
                                     const transport::MemoryHandle& handle) {
  const uint64_t n = std::min(length, r->bytes);
  r->status_source = source;
  r->status_tag = tag;
  r->status_bytes = n;
  r->message_length = length;
  r->remote_req = remote_req;
  r->handle = handle;
  Peer& p = peers_[source];
  if (n == 0) {
    send_control(source, MessageKind::kRendezvousFin, remote_req, 0);
    complete(r, length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
    return;
  }
  r->inflight = true;
  inflight_.push_back(r);
  if (p.remote_read && p.remote_write && p.split_min && n >= p.split_min && n == length) {
    // Split copy: the sender writes the second half into our buffer while we read the first.
    r->split_at = (n / 2) & ~uint64_t{4095};
    r->events = 2;  // our read, the sender's FIN for its write
    r->split_error = XMSG_SUCCESS;
    const transport::MemoryHandle mine = p.transport->expose(r->buf, n);
    const uint64_t words[4] = {remote_req, reinterpret_cast<uint64_t>(r), mine.address, r->split_at};
    send_control(source, MessageKind::kRendezvousCts, kSplitFlag, words, 4);
    r->read_done.req = r;
    r->read_done.world = this;
    r->read_done.callback = [](World* w, Request* req, bool ok, const std::string&) { w->on_split_read_done(req, ok); };
    p.transport->read_remote(source, handle, 0, {static_cast<std::byte*>(r->buf), r->split_at}, r->read_done);
    return;
  }
  if (p.remote_read) {
    r->read_done.req = r;
    r->read_done.world = this;
    r->read_done.callback = [](World* w, Request* req, bool ok, const std::string& why) {
      w->on_read_done(req, ok, why);
    };
    p.transport->read_remote(source, handle, 0, {static_cast<std::byte*>(r->buf), n}, r->read_done);
    return;
  }
  r->offset = 0;
  send_control(source, MessageKind::kRendezvousCts, remote_req, reinterpret_cast<uint64_t>(r));
}

void World::on_split_read_done(Request* r, bool ok) {
  if (!ok && r->split_error == XMSG_SUCCESS)
    r->split_error = dead_[r->status_source] ? XMSG_ERR_PEER_FAILED : XMSG_ERR_TRANSPORT;
  if (--r->events == 0) finish_split_receive(r);
}

void World::finish_split_receive(Request* r) {
  send_control(r->status_source, MessageKind::kRendezvousFin, r->remote_req, 0);
  complete(r, r->split_error);
}

void World::on_split_write_done(Request* s, bool ok) {
  const uint64_t words[2] = {s->remote_req, ok ? 1u : 0u};
  send_control(s->peer, MessageKind::kRendezvousFin, kSplitFlag, words, 2);
  if (--s->events == 0) {
    peers_[s->peer].transport->release(s->handle);
    complete(s, XMSG_SUCCESS);
  }
}

void World::on_read_done(Request* r, bool ok, const std::string&) {
  const int source = r->status_source;
  if (ok) {
    send_control(source, MessageKind::kRendezvousFin, r->remote_req, 0);
    complete(r, r->message_length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
    return;
  }
  if (dead_[source]) {
    fail_request(r, source);
    return;
  }
  // The remote read was refused (e.g. CMA not permitted): let the sender stream the data.
  peers_[source].remote_read = false;
  r->offset = 0;
  send_control(source, MessageKind::kRendezvousCts, r->remote_req, reinterpret_cast<uint64_t>(r));
}

void World::on_message(const WireHeader& h, std::span<const std::byte> payload) {
  switch (h.kind) {
    case MessageKind::kEager:
    case MessageKind::kRendezvousRts: {
      ContextQueues& q = matching_.context(h.context);
      const int source = static_cast<int>(h.source);
      if (Request* r = q.take_posted(source, h.tag)) {
        if (h.kind == MessageKind::kEager) {
          deliver_eager(r, h, payload);
        } else {
          uint64_t req;
          transport::MemoryHandle handle;
          std::memcpy(&req, payload.data(), 8);
          std::memcpy(&handle, payload.data() + 8, sizeof handle);
          start_rendezvous_receive(r, source, h.tag, h.length, req, handle);
        }
        return;
      }
      auto* u = new Unexpected;
      u->source = source;
      u->tag = h.tag;
      u->kind = h.kind;
      u->length = h.length;
      if (h.kind == MessageKind::kEager) {
        if (!payload.empty()) {
          u->data = static_cast<std::byte*>(std::malloc(payload.size()));
          std::memcpy(u->data, payload.data(), payload.size());
        }
      } else {
        std::memcpy(&u->remote_req, payload.data(), 8);
        std::memcpy(&u->handle, payload.data() + 8, sizeof u->handle);
      }
      q.add_unexpected(u);
      return;
    }
    case MessageKind::kRendezvousCts: {
      if (h.flags & kSplitFlag) {
        uint64_t w[4];
        std::memcpy(w, payload.data(), 32);
        auto* s = reinterpret_cast<Request*>(w[0]);
        s->remote_req = w[1];
        s->split_at = w[3];
        ++s->events;
        s->read_done.req = s;
        s->read_done.world = this;
        s->read_done.callback = [](World* wd, Request* req, bool ok, const std::string&) {
          wd->on_split_write_done(req, ok);
        };
        const transport::MemoryHandle dst{w[2], s->bytes, 0};
        peers_[h.source].transport->write_remote(
            static_cast<int>(h.source), dst, s->split_at,
            {static_cast<const std::byte*>(s->buf) + s->split_at, s->bytes - s->split_at}, s->read_done);
        return;
      }
      uint64_t ids[2];
      std::memcpy(ids, payload.data(), 16);
      auto* s = reinterpret_cast<Request*>(ids[0]);
      s->remote_req = ids[1];
      s->offset = 0;
      s->stage = SendStage::kStream;
      if (s->inflight) {
        inflight_.remove(s);
        s->inflight = false;
      }
      enqueue(static_cast<int>(h.source), s);
      return;
    }
    case MessageKind::kRendezvousData: {
      auto* r = reinterpret_cast<Request*>((static_cast<uint64_t>(h.context) << 32) |
                                           static_cast<uint32_t>(h.tag));
      if (r->offset < r->bytes) {
        const uint64_t n = std::min<uint64_t>(payload.size(), r->bytes - r->offset);
        std::memcpy(static_cast<std::byte*>(r->buf) + r->offset, payload.data(), n);
      }
      r->offset += payload.size();
      if (r->offset >= r->message_length)
        complete(r, r->message_length > r->bytes ? XMSG_ERR_TRUNCATE : XMSG_SUCCESS);
      return;
    }
    case MessageKind::kRendezvousFin: {
      if (h.flags & kSplitFlag) {
        // The sender wrote its part of a split copy (or could not: then we read it ourselves).
        uint64_t w[2];
        std::memcpy(w, payload.data(), 16);
        auto* r = reinterpret_cast<Request*>(w[0]);
        if (w[1] == 0) {
          struct Sync final : transport::ReadCompletion {
            bool ok = false;
            void on_read_done(bool o, const std::string&) override { ok = o; }
          } sync;
          const uint64_t n = r->status_bytes;
          peers_[h.source].transport->read_remote(static_cast<int>(h.source), r->handle, r->split_at,
                                                  {static_cast<std::byte*>(r->buf) + r->split_at, n - r->split_at},
                                                  sync);
          if (!sync.ok && r->split_error == XMSG_SUCCESS) r->split_error = XMSG_ERR_TRANSPORT;
        }
        if (--r->events == 0) finish_split_receive(r);
        return;
      }
      uint64_t id;
      std::memcpy(&id, payload.data(), 8);
      auto* s = reinterpret_cast<Request*>(id);
      if (--s->events == 0) {
        peers_[h.source].transport->release(s->handle);
        complete(s, XMSG_SUCCESS);
      }
      return;
    }
    case MessageKind::kControl:
      return;
  }
}

// ---- failures --------------------------------------------------------------------------

void World::fail_request(Request* r, int peer) {
  r->status_source = peer;
  complete(r, XMSG_ERR_PEER_FAILED);
}

void World::on_peer_failure(int peer, const std::string& reason) {
  if (dead_[peer]) return;
  dead_[peer] = 1;
  ++dead_count_;
  dead_reason_[peer] = reason;
  matching_.for_each([&](uint32_t ctx, ContextQueues& q) {
    while (Request* r = q.posted_from(peer).front()) {
      q.unpost(r);
      fail_request(r, peer);
    }
    const uint32_t cid = ctx / 2;
    const Comm* c = cid < comm_by_cid_.size() ? comm_by_cid_[cid] : nullptr;
    if (!c || c->contains_world(peer)) {
      while (Request* r = q.wildcard().front()) {
        q.unpost(r);
        fail_request(r, peer);
      }
    }
  });
  Peer& p = peers_[peer];
  while (Request* r = p.queue.pop_front()) {
    if (r->type == ReqType::kControl) release(r);
    else fail_request(r, peer);
  }
  for (Request* r = inflight_.front(); r;) {
    Request* next = InflightList::next(r);
    const int other = r->type == ReqType::kSend ? r->peer : r->status_source;
    if (other == peer) fail_request(r, peer);
    r = next;
  }
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

int World::iprobe(uint32_t context, const Comm* comm, int source, int tag, bool* found, xmsg_status_t* status,
                  const char* func) {
  progress();
  if (Unexpected* u = matching_.context(context).find_unexpected(source, tag)) {
    *found = true;
    if (status) {
      status->source = world_to_comm(comm, u->source);
      status->tag = u->tag;
      status->error = XMSG_SUCCESS;
      status->cancelled = 0;
      status->bytes = static_cast<int64_t>(u->length);
    }
    return XMSG_SUCCESS;
  }
  *found = false;
  if (source >= 0 && dead_[source]) return peer_failed_error(func, comm, source);
  return XMSG_SUCCESS;
}

// ---- communicators ---------------------------------------------------------------------

int World::create_comm(Comm& parent, int color, int key, int* handle, const char* func) {
  struct Entry {
    int32_t color;
    int32_t key;
    uint32_t next_cid;
  };
  const int tag = XMSGI_TAG_RESERVED + 1;
  const uint32_t ctx = parent.coll_context();
  std::vector<Entry> all(parent.size);
  Entry mine{color, key, next_cid_};
  int rc = XMSG_SUCCESS;
  auto wait_one = [&](Request* r) {
    wait(r, func);
    int e = report(r, func);
    release(r);
    return e;
  };
  // Gather at parent rank 0, then send everyone the full table: O(size), done once per split.
  if (parent.rank == 0) {
    all[0] = mine;
    for (int i = 1; i < parent.size && rc == XMSG_SUCCESS; ++i) {
      Request* r = nullptr;
      rc = irecv(ctx, &parent, parent.world_of[i], tag, &all[i], sizeof(Entry), &r, func);
      if (rc == XMSG_SUCCESS) rc = wait_one(r);
    }
    for (int i = 1; i < parent.size && rc == XMSG_SUCCESS; ++i)
      rc = send(ctx, &parent, parent.world_of[i], tag, all.data(), all.size() * sizeof(Entry), func);
  } else {
    rc = send(ctx, &parent, parent.world_of[0], tag, &mine, sizeof mine, func);
    if (rc == XMSG_SUCCESS) {
      Request* r = nullptr;
      rc = irecv(ctx, &parent, parent.world_of[0], tag, all.data(), all.size() * sizeof(Entry), &r, func);
      if (rc == XMSG_SUCCESS) rc = wait_one(r);
    }
  }
  if (rc != XMSG_SUCCESS) return rc;
  uint32_t cid = 0;
  for (const Entry& e : all) cid = std::max(cid, e.next_cid);
  next_cid_ = cid + 1;
  if (color == XMSG_UNDEFINED) {
    *handle = XMSG_COMM_NULL;
    return XMSG_SUCCESS;
  }
  std::vector<std::pair<std::pair<int, int>, int>> members;  // ((key, parent rank), world rank)
  for (int i = 0; i < parent.size; ++i)
    if (all[i].color == color) members.push_back({{all[i].key, i}, parent.world_of[i]});
  std::sort(members.begin(), members.end());
  std::vector<int> world_ranks;
  for (const auto& m : members) world_ranks.push_back(m.second);
  *handle = add_comm(cid, world_ranks);
  return XMSG_SUCCESS;
}

namespace {

// Tags of xmsg_comm_create_group on the parent's collective context: a slice of the reserved
// range above the one create_comm uses, indexed by the user's tag. The slice is smaller than
// the user's tag range, so two tags may share a wire tag; what keeps calls apart is then what
// also keeps them apart with distinct tags in a single-threaded process: every receive names
// its source (a member of this very call, which has no other create_group in progress with
// this rank), and one sender's messages arrive in the order sent. The user's tag also travels
// in the message: members that disagree on it but share a wire tag are reported, not matched.
constexpr int kGroupTagBase = XMSGI_TAG_RESERVED + 0x100;
constexpr int kGroupTagSlots = XMSG_TAG_UB - kGroupTagBase + 1;
static_assert(kGroupTagSlots > 0);

int group_wire_tag(int tag) { return kGroupTagBase + tag % kGroupTagSlots; }

// Identifies the (n, ranks) a member passed, so the first member can tell a member that passed
// a different list.
uint64_t ranks_digest(int n, const int* ranks) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over n and the ranks
  auto mix = [&h](uint32_t v) {
    for (int b = 0; b < 4; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<uint32_t>(n));
  for (int i = 0; i < n; ++i) mix(static_cast<uint32_t>(ranks[i]));
  return h;
}

}  // namespace

int World::create_group_comm(Comm& parent, int n, const int* ranks, int tag, int* handle, const char* func) {
  // Members report to the first listed rank (the new rank 0), which agrees the context id as
  // the largest next_cid_ among them and answers each. Non-members take no part: the id is
  // free at every member, and a communicator a non-member holds with some member has an id
  // below that member's next_cid_, so no traffic can share the new contexts.
  struct Report {
    int32_t tag;
    int32_t n;
    uint64_t digest;
    uint32_t next_cid;
    int32_t pad;
  };
  struct Answer {
    uint32_t cid;
    int32_t error;       // XMSG_SUCCESS, or why the call fails at every member
    int32_t culprit;     // parent rank that disagreed with ranks[0] (XMSG_ERR_TAG, XMSG_ERR_ARG)
    int32_t their_tag;   // the tag it passed (XMSG_ERR_TAG)
    int32_t leader_tag;  // the tag ranks[0] passed
  };
  const int wire_tag = group_wire_tag(tag);
  const uint32_t ctx = parent.coll_context();
  const Report mine{tag, n, ranks_digest(n, ranks), next_cid_, 0};
  const bool leader = parent.rank == ranks[0];
  Answer answer{next_cid_, XMSG_SUCCESS, -1, 0, tag};
  int rc = XMSG_SUCCESS;
  std::string why;  // message of the first local failure
  auto note = [&](int e) {
    if (e != XMSG_SUCCESS && rc == XMSG_SUCCESS) {
      rc = e;
      why = xmsg_last_error_message();
    }
  };
  if (leader) {
    // Hear every member, also after a failure, so no report is left behind to match a later
    // call; then answer every member, so none waits on this rank.
    for (int i = 1; i < n; ++i) {
      Report theirs{};
      Request* r = nullptr;
      int e = irecv(ctx, &parent, parent.world_of[ranks[i]], wire_tag, &theirs, sizeof theirs, &r, func);
      if (e == XMSG_SUCCESS) {
        wait(r, func);
        e = report(r, func);
        release(r);
      }
      note(e);
      if (e != XMSG_SUCCESS) continue;
      answer.cid = std::max(answer.cid, theirs.next_cid);
      if (answer.error != XMSG_SUCCESS) continue;
      if (theirs.tag != tag) {
        answer.error = XMSG_ERR_TAG;
        answer.culprit = ranks[i];
        answer.their_tag = theirs.tag;
      } else if (theirs.n != n || theirs.digest != mine.digest) {
        answer.error = XMSG_ERR_ARG;
        answer.culprit = ranks[i];
      }
    }
    if (rc != XMSG_SUCCESS) answer.error = rc;
    for (int i = 1; i < n; ++i)
      note(send(ctx, &parent, parent.world_of[ranks[i]], wire_tag, &answer, sizeof answer, func));
  } else {
    const int first = parent.world_of[ranks[0]];
    note(send(ctx, &parent, first, wire_tag, &mine, sizeof mine, func));
    if (rc == XMSG_SUCCESS) {
      Request* r = nullptr;
      int e = irecv(ctx, &parent, first, wire_tag, &answer, sizeof answer, &r, func);
      if (e == XMSG_SUCCESS) {
        wait(r, func);
        e = report(r, func);
        release(r);
      }
      note(e);
    }
  }
  if (rc != XMSG_SUCCESS) return xmsgi_error(rc, "%s", why.c_str());
  switch (answer.error) {
    case XMSG_SUCCESS:
      break;
    case XMSG_ERR_TAG:
      return xmsgi_error(XMSG_ERR_TAG,
                         "%s: rank %d of comm passed tag %d where rank %d (ranks[0]) passed tag %d: every listed "
                         "rank must pass the same tag",
                         func, answer.culprit, answer.their_tag, ranks[0], answer.leader_tag);
    case XMSG_ERR_ARG:
      return xmsgi_error(XMSG_ERR_ARG,
                         "%s: rank %d of comm passed a different n or ranks[] than rank %d (ranks[0]): every listed "
                         "rank must pass the same list",
                         func, answer.culprit, ranks[0]);
    default:
      return xmsgi_error(answer.error, "%s: rank %d (ranks[0]) could not hear from every listed rank: %s", func,
                         ranks[0], xmsg_error_string(answer.error));
  }
  next_cid_ = answer.cid + 1;
  std::vector<int> world_ranks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) world_ranks[static_cast<size_t>(i)] = parent.world_of[ranks[i]];
  *handle = add_comm(answer.cid, world_ranks);
  return XMSG_SUCCESS;
}

int World::add_comm(uint32_t cid, const std::vector<int>& world_ranks) {
  auto c = std::make_unique<Comm>();
  c->cid = cid;
  c->size = static_cast<int>(world_ranks.size());
  c->comm_of.assign(size_, -1);
  for (int i = 0; i < c->size; ++i) {
    c->world_of.push_back(world_ranks[static_cast<size_t>(i)]);
    c->comm_of[world_ranks[static_cast<size_t>(i)]] = i;
  }
  c->rank = c->comm_of[rank_];
  c->note_order();
  if (comm_by_cid_.size() <= cid) comm_by_cid_.resize(cid + 1, nullptr);
  comm_by_cid_[cid] = c.get();
  if (comms_.size() < kDirectComms) direct_comms_[comms_.size()] = c.get();
  comms_.push_back(std::move(c));
  return static_cast<int>(comms_.size() - 1);
}

int World::free_comm(int handle) {
  // The object stays (pending requests may still point at it); the handle becomes invalid.
  comms_[handle]->valid = false;
  if (static_cast<unsigned>(handle) < kDirectComms) direct_comms_[static_cast<unsigned>(handle)] = nullptr;
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
