// One-sided access to peers' memory for the MPI layer's windows (xmsg_internal.h,
// xmsgi_remote_*): the transports' expose / read_remote / write_remote, offered only where a
// transport advertises both remote_read and remote_write, since then neither needs the peer's
// CPU (CMA, RDMA), and atomic_remote where it advertises remote_atomics. The runtime's part is
// choosing the transport per peer and counting completions; docs/rma.md says how windows use it.
#include "World.hpp"
#include "xmsg_internal.h"

#include <xmsg/bootstrap/parameters.hpp>

#include <cstring>
#include <string>

using xmsg::rt::World;
namespace transport = xmsg::transport;

namespace {

bool one_sided(const transport::Transport* t) {
  const transport::Capabilities c = t->capabilities();
  return c.remote_read && c.remote_write;
}

const xmsgi_remote_key* slot_for(const xmsgi_remote_keys* keys, std::string_view name) {
  for (const xmsgi_remote_key& k : keys->slot)
    if (k.transport[0] != '\0' && name == std::string_view(k.transport, strnlen(k.transport, sizeof k.transport))) return &k;
  return nullptr;
}

// One transfer's completion: counts it off and records the first failure.
struct Completion final : transport::ReadCompletion {
  xmsgi_remote_done* done;
  explicit Completion(xmsgi_remote_done* d) : done(d) {}
  void on_read_done(bool ok, const std::string& reason) override {
    if (!ok && done->error == 0) {
      done->error = XMSG_ERR_TRANSPORT;
      std::snprintf(done->reason, sizeof done->reason, "%s", reason.c_str());
    }
    --done->pending;
    delete this;
  }
};

// The peer's transport and its key, or an error recorded for `func`.
int resolve(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, const char* func, transport::Transport** t,
            const xmsgi_remote_key** key, int* world_rank) {
  int size = 0;
  if (int rc = xmsgi_check_comm(comm, func, nullptr, &size)) return rc;
  if (rank < 0 || rank >= size) return xmsgi_error(XMSG_ERR_RANK, "%s: rank %d out of range [0, %d)", func, rank, size);
  if (keys == nullptr) return xmsgi_error(XMSG_ERR_ARG, "%s: keys is NULL", func);
  *world_rank = World::current->comm(comm)->world_of[static_cast<size_t>(rank)];
  *t = World::current->transport_of(*world_rank);
  *key = *t && one_sided(*t) ? slot_for(keys, (*t)->name()) : nullptr;
  if (*key == nullptr)
    return xmsgi_error(XMSG_ERR_ARG, "%s: rank %d cannot be reached one-sidedly (no transport with remote "
                                             "read and write exposed its memory)", func, rank);
  return XMSG_SUCCESS;
}

// The transport whose device atomics reach world rank `peer` (itself and ranks another
// transport carries included) and that exposed the memory `keys` describe.
transport::Transport* atomics_transport(int peer, const xmsgi_remote_keys* keys) {
  for (transport::Transport* t : World::current->active_transports())
    if (t->capabilities().remote_atomics && one_sided(t) && t->atomics_reach(peer) && slot_for(keys, t->name()))
      return t;
  return nullptr;
}

}  // namespace

int xmsgi_remote_enabled(void) { return xmsg::params::flag("XMSG_RMA_REMOTE") ? 1 : 0; }

int xmsgi_remote_expose(void* buf, uint64_t bytes, xmsgi_remote_keys* out) {
  if (!World::current) return xmsgi_error(XMSG_ERR_NOT_INITIALIZED, "xmsgi_remote_expose: library not initialised");
  if (out == nullptr) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_remote_expose: out is NULL");
  *out = {};
  return xmsgi_guard("xmsgi_remote_expose", [&] {
    int used = 0;
    for (transport::Transport* t : World::current->active_transports()) {
      if (!one_sided(t) || used == XMSGI_REMOTE_SLOTS) continue;
      const transport::MemoryHandle h = t->expose(buf, bytes, transport::Access::read_write);
      xmsgi_remote_key& k = out->slot[used++];
      std::snprintf(k.transport, sizeof k.transport, "%.*s", static_cast<int>(t->name().size()), t->name().data());
      k.address = h.address;
      k.length = h.length;
      k.key = h.key;
    }
    return XMSG_SUCCESS;
  });
}

void xmsgi_remote_release(const xmsgi_remote_keys* keys) {
  if (!World::current || keys == nullptr) return;
  for (transport::Transport* t : World::current->active_transports()) {
    if (const xmsgi_remote_key* k = slot_for(keys, t->name()))
      t->release({k->address, k->length, k->key}, transport::Access::read_write);
  }
}

const char* xmsgi_remote_transport(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys) {
  if (!World::current || keys == nullptr) return nullptr;
  const xmsg::rt::Comm* c = World::current->comm(comm);
  if (c == nullptr || rank < 0 || rank >= static_cast<int>(c->world_of.size())) return nullptr;
  const transport::Transport* t = World::current->transport_of(c->world_of[static_cast<size_t>(rank)]);
  if (t == nullptr || !one_sided(t) || slot_for(keys, t->name()) == nullptr) return nullptr;
  return t->name().data();  // every transport's name is a string literal
}

namespace {

// A write from or a read into `local`: n bytes at `offset` of what `rank` exposed.
int transfer(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, uint64_t offset, bool write, void* local,
             uint64_t n, xmsgi_remote_done* done, const char* func) {
  transport::Transport* t = nullptr;
  const xmsgi_remote_key* k = nullptr;
  int peer = -1;
  if (int rc = resolve(comm, rank, keys, func, &t, &k, &peer)) return rc;
  if (done == nullptr) return xmsgi_error(XMSG_ERR_ARG, "%s: done is NULL", func);
  if (local == nullptr && n > 0) return xmsgi_error(XMSG_ERR_BUFFER, "%s: %s is NULL", func, write ? "src" : "dst");
  return xmsgi_guard(func, [&] {
    auto* completion = new Completion(done);  // before the count: an allocation failure leaves it as it was
    ++done->pending;
    const transport::MemoryHandle remote{k->address, k->length, k->key};
    if (write) t->write_remote(peer, remote, offset, {static_cast<const std::byte*>(local), n}, *completion);
    else t->read_remote(peer, remote, offset, {static_cast<std::byte*>(local), n}, *completion);
    return XMSG_SUCCESS;
  });
}

}  // namespace

int xmsgi_remote_write(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, uint64_t offset, const void* src,
                       uint64_t n, xmsgi_remote_done* done) {
  return transfer(comm, rank, keys, offset, true, const_cast<void*>(src), n, done, "xmsgi_remote_write");
}

int xmsgi_remote_read(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, uint64_t offset, void* dst,
                      uint64_t n, xmsgi_remote_done* done) {
  return transfer(comm, rank, keys, offset, false, dst, n, done, "xmsgi_remote_read");
}

const char* xmsgi_remote_atomics(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys) {
  if (!World::current || keys == nullptr || !xmsg::params::flag("XMSG_RMA_DEVICE_ATOMICS")) return nullptr;
  const xmsg::rt::Comm* c = World::current->comm(comm);
  if (c == nullptr || rank < 0 || rank >= static_cast<int>(c->world_of.size())) return nullptr;
  const transport::Transport* t = atomics_transport(c->world_of[static_cast<size_t>(rank)], keys);
  return t ? t->name().data() : nullptr;  // every transport's name is a string literal
}

int xmsgi_remote_atomic(xmsg_comm_t comm, int rank, const xmsgi_remote_keys* keys, uint64_t offset,
                        int compare_swap, uint64_t operand, uint64_t compare, uint64_t* result,
                        xmsgi_remote_done* done) {
  const char* func = "xmsgi_remote_atomic";
  if (!World::current) return xmsgi_error(XMSG_ERR_NOT_INITIALIZED, "%s: library not initialised", func);
  if (done == nullptr || result == nullptr || keys == nullptr)
    return xmsgi_error(XMSG_ERR_ARG, "%s: %s is NULL", func, done == nullptr ? "done" : result ? "keys" : "result");
  const xmsg::rt::Comm* c = World::current->comm(comm);
  if (c == nullptr || rank < 0 || rank >= static_cast<int>(c->world_of.size()))
    return xmsgi_error(XMSG_ERR_RANK, "%s: rank %d is not a rank of the communicator", func, rank);
  // XMSG_RMA_DEVICE_ATOMICS was asked once, when the caller chose this path (xmsgi_remote_atomics).
  const int peer = c->world_of[static_cast<size_t>(rank)];
  transport::Transport* t = atomics_transport(peer, keys);
  if (t == nullptr)
    return xmsgi_error(XMSG_ERR_ARG, "%s: rank %d is not reached by a transport with device atomics", func, rank);
  const xmsgi_remote_key* k = slot_for(keys, t->name());
  return xmsgi_guard(func, [&] {
    auto* completion = new Completion(done);
    ++done->pending;
    t->atomic_remote(peer, {k->address, k->length, k->key}, offset,
                     compare_swap ? transport::RemoteAtomic::compare_swap : transport::RemoteAtomic::fetch_add,
                     operand, compare, result, *completion);
    return XMSG_SUCCESS;
  });
}
