// World: one per process between xmsg_init and xmsg_finalize. Owns the bootstrap, the
// transports (one per peer, chosen by TransportSelector), the communicators, the matching
// engine and the requests, and runs the protocols on top of the transports' MessageSink
// callbacks. Single-threaded by contract (see xmsg.h).
//
// Where each part lives (docs/protocols.md describes the protocols and their messages):
//   World.cpp            set-up, request lifetime, progress, wait, status, finalize
//   point_to_point.cpp   send and receive entry points, matching, on_message's dispatch
//   eager.cpp            the eager protocol's receive side (copy out, landing in place)
//   rendezvous.cpp       RTS / read / CTS + DATA / FIN
//   split_copy.cpp       the rendezvous whose copy sender and receiver share
//   send_queue.cpp       per-peer queues of what the transport could not take yet
//   communicators.cpp    communicator creation and release
//   peer_failure.cpp     what a failed peer does to requests and calls
#pragma once

#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/transport/protocol.hpp>
#include <xmsg/transport/transport.hpp>
#include <xmsg/xmsg.h>

#include "Comm.hpp"
#include "IntrusiveList.hpp"
#include "MatchingEngine.hpp"
#include "Request.hpp"

#include <array>
#include <memory>
#include <sched.h>
#include <string>
#include <vector>

namespace xmsg::rt {

using transport::cpu_relax;

class World final : public transport::MessageSink {
 public:
  World();  // throws std::exception with a message on failure
  ~World() override;

  // Set while initialised. Hidden: the C API reads it on every call, and a hidden variable is
  // one PC-relative load where an exported one costs a GOT load first.
  [[gnu::visibility("hidden")]] static World* current;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bootstrap::Bootstrap& bootstrap() { return *boot_; }
  // One-sided access (remote_memory.cpp): the transports with at least one peer, and the one
  // serving world rank `peer` (nullptr for this rank itself).
  const std::vector<transport::Transport*>& active_transports() const { return active_; }
  transport::Transport* transport_of(int peer) const { return peers_[static_cast<size_t>(peer)].transport; }

  // Communicators (handles index comms_). The first few (WORLD, SELF, the first user
  // communicators) are also held right here: one load instead of three on every call's path.
  Comm* comm(int handle) {
    if (static_cast<unsigned>(handle) < kDirectComms) return direct_comms_[static_cast<unsigned>(handle)];
    return handle >= 0 && handle < static_cast<int>(comms_.size()) && comms_[handle] && comms_[handle]->valid
               ? comms_[handle].get()
               : nullptr;
  }
  // Collective over `parent`: the ranks with the same color form a new communicator.
  int create_comm(Comm& parent, int color, int key, int* handle, const char* func);
  // Collective over the n ranks of `parent` listed in `ranks` (checked by the caller: distinct,
  // in range, this rank among them), which become ranks 0..n-1 of the new communicator. `tag`
  // (in [0, XMSG_TAG_UB]) keeps concurrent calls between overlapping sets of ranks apart.
  int create_group_comm(Comm& parent, int n, const int* ranks, int tag, int* handle, const char* func);
  int free_comm(int handle);
  // With a yield hook (threads of this process may create communicators at the same time):
  // agrees a context id among `members` (world ranks, members[0] leads) after the creation's
  // own exchange, so that no two creations in progress on one rank can agree the same id
  // (communicators.cpp, "Context ids under threads"). `key` orders this rank's creations.
  int agree_cid_threaded(const Comm& parent, const std::vector<int>& members, int wire_tag, uint64_t key,
                         uint32_t* cid, const char* func);

  // Point-to-point on a context; ranks are world ranks (peer -1 = any source on receives).
  // `func` names the API function for error messages.
  int send(uint32_t context, const Comm* comm, int dest, int tag, const void* buf, uint64_t len, const char* func) {
    // Inline for the common case (an eager message to a live peer, nothing queued before it,
    // taken by the transport at once): the C API's call lands straight in the transport.
    if (dest != rank_) {
      Peer& p = peers_[dest];
      if (len <= p.eager_limit && p.queue.empty() && !dead_[dest] &&
          p.transport->try_send(dest, header(context, tag, transport::MessageKind::kEager, len),
                                {static_cast<const std::byte*>(buf), len}))
        return XMSG_SUCCESS;
    }
    return send_slow(context, comm, dest, tag, buf, len, func);
  }
  // `synchronous`: the send completes only once the receiver matched it (MPI_Ssend): it always
  // takes the rendezvous, whose FIN comes after the match, however short the message.
  int isend(uint32_t context, const Comm* comm, int dest, int tag, const void* buf, uint64_t len, Request** out,
            const char* func, bool synchronous = false);
  // `layout` non-null: a packed receive of `capacity` stream bytes (buf unused).
  int irecv(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity, Request** out,
            const char* func, const xmsgi_layout* layout = nullptr);
  // isend / irecv of the packed stream of a non-contiguous buffer (runtime/src/packed.cpp).
  int isend_packed(uint32_t context, const Comm* comm, int dest, int tag, const xmsgi_layout* layout, uint64_t len,
                   Request** out, const char* func, bool synchronous);
  // Blocking receive (fills `status` if non-null). From a peer whose transport can show its
  // next message in place (shm mailbox) and with nothing posted or queued that could take it
  // first, it waits on that message alone and copies it out directly: no request, no matching
  // queues. Anything else takes irecv + wait.
  int recv(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
           xmsg_status_t* status, const char* func);
  // A request that is complete from the start (operations on XMSG_PROC_NULL).
  void irecv_completed_proc_null(Request** out) {
    Request* r = new_request(ReqType::kRecv);
    r->status_source = XMSG_PROC_NULL;
    r->done = true;
    *out = r;
  }
  // Probe: found=false when nothing matches (iprobe); fills status (world source).
  int iprobe(uint32_t context, const Comm* comm, int source, int tag, bool* found, xmsg_status_t* status,
             const char* func);

  // Completion.
  int wait(Request* r, const char* func);  // blocks; does not release
  int progress();
  // Any transport's cheap input_ready(): between full progress() calls a blocked waiter spins
  // on this instead.
  bool input_ready() const {
    for (const transport::Transport* t : active_)
      if (t->input_ready()) return true;
    return false;
  }
  void fill_status(const Request* r, xmsg_status_t* status) const;
  // Error of a completed request, with its detailed message recorded.
  int report(const Request* r, const char* func);
  int cancel(Request* r);
  // xmsgi_request_orphan (packed.cpp).
  void orphan(Request* r);
  void release(Request* r);
  void free_request(Request* r);  // user's xmsg_request_free

  // Idle handling while waiting: spin, then yield when oversubscribed.
  struct Idle {
    unsigned spins = 0;
    void reset() { spins = 0; }
    // No pause instruction at first: it costs ~100 cycles of reaction time on the fast path.
    // A waiter with nothing to do also moves on what the layer above runs (the MPI layer's
    // collective schedules) while it has any: see xmsgi_set_idle_hook.
    // True when something else may have run the progress engine meanwhile (a hook ran, or
    // another thread was let in): a waiter that watches one transport lane for its message
    // (recv_in_place) must look at the matching queues again.
    bool pause(const World& w) {
      bool others = false;
      if (yield_hook) [[unlikely]] others = yield_hook() != 0;
      if (idle_hook) [[unlikely]] {
        idle_hook();
        others = true;
      }
      if (++spins > w.spin_limit_) sched_yield();
      else if (spins > 1024) {
        cpu_relax();
        // A real-time rank that never yields keeps its own PMIx thread (bound to the same
        // core, same priority) and the launcher off the CPU for good: fences never complete.
        if (w.realtime_ && (spins & (kRealtimeYieldEvery - 1)) == 0) sched_yield();
      }
      return others;
    }
  };

  static inline void (*idle_hook)() = nullptr;
  static inline int (*yield_hook)() = nullptr;  // xmsgi_set_yield_hook

  bool peer_dead(int world_rank) const { return dead_[world_rank]; }
  const std::string& dead_reason(int world_rank) const { return dead_reason_[world_rank]; }
  int peer_failed_error(const char* func, const Comm* comm, int world_rank) const;
  int world_to_comm(const Comm* comm, int world_rank) const {
    return comm ? comm->comm_of[world_rank] : world_rank;
  }

  void finalize();

  // MessageSink
  void on_message(const transport::WireHeader& h, std::span<const std::byte> payload) override;
  void on_peer_failure(int peer, const std::string& reason) override;
  transport::EagerLanding claim_eager(const transport::WireHeader& h) override;
  void on_eager_landed(void* token) override;
  void on_read_done(Request* r, bool ok, const std::string& reason);
  void on_split_read_done(Request* r, bool ok);

 private:
  struct Peer {
    transport::Transport* transport = nullptr;
    uint64_t eager_limit = 0;
    uint64_t fragment = 0;
    bool remote_read = false;
    bool remote_write = false;
    uint64_t split_min = 0;  // rendezvous of at least this size split the copy (0: never)
    uint64_t peek_payload = 0;  // receives up to this capacity may take the peer's next message in place
    bool pending = false;  // listed in pending_peers_
    IntrusiveList<Request, &Request::link> queue;  // sends waiting for transport space, in order
  };
  using InflightList = IntrusiveList<Request, &Request::inflight_link>;

  // Registers a communicator of the given world ranks (in rank order) under context id `cid`.
  int add_comm(uint32_t cid, const std::vector<int>& world_ranks);
  int send_slow(uint32_t context, const Comm* comm, int dest, int tag, const void* buf, uint64_t len,
                const char* func);
  Request* new_request(ReqType type);
  void complete(Request* r, int error);
  void enqueue(int peer, Request* r);
  bool push(int peer, Request* r);  // tries to put r's next piece on the wire; true when r left the queue
  int flush_pending();
  // A control message (transport/include/xmsg/transport/protocol.hpp) to `peer`, queued behind
  // whatever waits for that peer when the transport cannot take it now.
  template <class Message>
  void send_control(int peer, transport::MessageKind kind, const Message& message, uint8_t flags = 0) {
    send_control_bytes(peer, kind, flags, transport::protocol::bytes_of(message));
  }
  void send_control_bytes(int peer, transport::MessageKind kind, uint8_t flags, std::span<const std::byte> payload);

  // Arrivals, one handler per kind of message (on_message dispatches).
  void on_arrival(const transport::WireHeader& h, std::span<const std::byte> payload);  // eager, RTS
  void on_cts(const transport::WireHeader& h, const transport::protocol::RendezvousCts& cts);
  void on_data(const transport::WireHeader& h, std::span<const std::byte> fragment);
  void on_fin(const transport::WireHeader& h, const transport::protocol::RendezvousFin& fin);
  void on_split_cts(const transport::WireHeader& h, const transport::protocol::SplitCts& cts);
  void on_split_fin(const transport::WireHeader& h, const transport::protocol::SplitFin& fin);

  // Rendezvous.
  bool try_send_rts(int peer, Request* r);  // true when the RTS left (r is then in flight)
  void start_rendezvous_receive(Request* r, int source, int tag, uint64_t length,
                                const transport::protocol::RendezvousRts& rts, bool sender_packed);
  // Packed messages (packed.cpp): a rendezvous where either side is a packed stream; the
  // pieces each protocol step moves.
  void start_packed_receive(Request* r, int source, bool sender_packed);
  void read_packed_chunks(Request* r);
  void on_packed_chunk_read(Request* r, bool ok);
  bool try_send_packed_piece(int peer, const transport::WireHeader& h, const Request* r, uint64_t offset,
                             uint64_t n);
  void unpack_eager(Request* r, std::span<const std::byte> payload);
  bool split_copy_applies(int source, uint64_t n, uint64_t length) const {
    const Peer& p = peers_[source];
    return p.split_min && p.remote_read && p.remote_write && n >= p.split_min && n == length &&
           !(n < split_busy_below_ && awaits_read_by(source));
  }
  // A rendezvous send of ours to `peer` is still in flight: that peer's core is (or will be)
  // copying our data, so splitting its message to us only adds a round trip (osu_bibw, 64-128
  // KiB: 28-29 GB/s split against 34-42 not split) -- while one core's copy (source and
  // destination) fits its L2. Larger, the split still halves each core's working set (osu_bibw
  // 1 MiB, 2 MiB L2: 43-45 GB/s split, 22-23 not split).
  bool awaits_read_by(int peer) const;
  uint64_t split_busy_below_ = 0;
  void ask_for_stream(Request* r, int source);  // CTS: the sender streams from offset 0
  void start_split_receive(Request* r, int source);
  void finish_split_receive(Request* r);
  void on_split_write_done(Request* s, bool ok);
  void deliver_eager(Request* r, const transport::WireHeader& h, std::span<const std::byte> payload);
  void match_or_post(Request* r);
  void fail_request(Request* r, int peer);
  // Waits for the next message from `source` in its transport's peek() and takes it when it is
  // an eager message for (context, tag). False when something else happened first (the caller
  // then falls back to the general path, which sees whatever arrived).
  bool recv_in_place(uint32_t context, const Comm* comm, int source, int tag, void* buf, uint64_t capacity,
                     xmsg_status_t* status, const char* func, int* rc);
  int truncation_error(const char* func, const Comm* comm, int source, int tag, uint64_t length,
                       uint64_t capacity) const;
  transport::WireHeader header(uint32_t context, int tag, transport::MessageKind kind, uint64_t length) const {
    return {static_cast<uint32_t>(rank_), context, tag, kind, 0, 0, length};
  }

  std::unique_ptr<bootstrap::Bootstrap> boot_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<transport::Transport*> active_;  // transports with at least one peer
  std::vector<Peer> peers_;
  std::vector<int> pending_peers_;
  // Bytes, not vector<bool>: every send tests its peer's entry, and a bit takes a dozen
  // instructions to extract where a byte takes one.
  std::vector<uint8_t> dead_;
  int dead_count_ = 0;
  std::vector<std::string> dead_reason_;
  std::vector<std::unique_ptr<Comm>> comms_;
  static constexpr unsigned kDirectComms = 8;
  std::array<Comm*, kDirectComms> direct_comms_{};  // comms_[h] while valid, for h < kDirectComms
  std::vector<Comm*> comm_by_cid_;
  uint32_t next_cid_ = 2;
  // Context ids under threads: the keys of the creations in progress on this rank, and whether
  // one of them holds the right to offer next_cid_ (agree_cid_threaded).
  std::vector<uint64_t> creating_keys_;
  bool cid_offer_held_ = false;
  MatchingEngine matching_;
  RequestPool pool_;
  InflightList inflight_;
  uint64_t seq_ = 0;
  unsigned spin_limit_ = ~0u;
  // SCHED_FIFO or SCHED_RR: a spinning waiter still yields now and then (Idle::pause).
  bool realtime_ = false;
  static constexpr unsigned kRealtimeYieldEvery = 4096;  // polls; a power of two
  static constexpr int kQuickPolls = 32;
  static constexpr int kInPlaceLooks = 256;
  bool force_cts_ = false;
  bool finalized_ = false;
};

}  // namespace xmsg::rt
