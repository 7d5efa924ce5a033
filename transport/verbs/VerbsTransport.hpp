// VerbsTransport: the Transport interface over the verbs resources (docs/verbs.md).
//
// connect():  create PD, CQ, SRQ (+ XRC domain), then one of two wire-ups (XMSG_VERBS_CONNECT):
//   lazy   (default) put one WireUpCard -> fence without data. No QP exists yet. The first send
//          (or READ) to a peer reads its card, creates the INI QP towards its node (RC: an RC
//          QP towards it) and asks the peer over the ConnectionManager for the TGT (RC) QP; the
//          peer creates and connects it while progressing. XRC: one such handshake per remote
//          node, later ranks of that node need only their card (SRQ number).
//   eager  plan (ConnectionPlan) -> every planned QP -> put one WireUpRecord -> fence with data
//          -> move each QP to RTR/RTS from its counterpart's record -> fence.
// try_send(): copies header + payload into a registered send slot and posts a SEND (XRC: naming
//             the destination rank's SRQ number). False when no slot or send-queue room is free.
//             try_send_packed() lets the datatype engine pack into the slot instead.
// progress(): one CQ poll: receives go to the sink and their buffer straight back to the SRQ,
//             send completions free slots, READ completions finish rendezvous reads, error
//             completions become on_peer_failure naming the device and the peer.
#pragma once

#include <xmsg/transport/transport.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ConnectionManager.hpp"
#include "ConnectionPlan.hpp"
#include "Device.hpp"
#include "QueuePair.hpp"
#include "RegistrationCache.hpp"
#include "SharedReceiveQueue.hpp"
#include "VerbsLimits.hpp"
#include "VerbsObjects.hpp"
#include "WireUpCard.hpp"
#include "WireUpRecord.hpp"
#include "XrcDomain.hpp"

namespace xmsg::bootstrap {
class Bootstrap;
}

namespace xmsg::verbs {

// XMSG_VERBS_MODE=auto|xrc|rc against what the device can do; throws naming the variable or
// "no XRC-capable device".
PlanMode choose_mode(const Device& device, const char* env_value);

// How the transport connects its QPs (XMSG_VERBS_CONNECT; class comment above).
enum class WireUpScheme : std::uint8_t { lazy, eager };
std::string_view to_string(WireUpScheme scheme);
// XMSG_VERBS_CONNECT=lazy|eager (unset or empty: lazy); throws std::invalid_argument naming the
// variable.
WireUpScheme choose_wireup_scheme(const char* env_value);


class VerbsTransport final : public xmsg::transport::Transport, private ConnectionManager::Handler {
 public:
  VerbsTransport(xmsg::bootstrap::Bootstrap& bootstrap, Device device, PlanMode mode, VerbsLimits limits,
                 WireUpScheme scheme = WireUpScheme::lazy);
  ~VerbsTransport() override;

  std::string_view name() const override { return "verbs"; }
  xmsg::transport::Capabilities capabilities() const override;
  // options.carries_same_node_pairs: every rank is planned as its own node.
  void connect(std::span<const int> peers, const xmsg::transport::ConnectOptions& options) override;
  bool try_send(int peer, const xmsg::transport::WireHeader& header, std::span<const std::byte> payload) override;
  bool try_send_packed(int peer, const xmsg::transport::WireHeader& header, size_t n,
                       xmsg::transport::PayloadWriter& writer) override;
  int progress(xmsg::transport::MessageSink& sink) override;
  // The CQ's completion channel and a wake-up eventfd; arms the CQ on the first call after a
  // progress() (see wait_fds in the .cpp).
  size_t wait_fds(std::span<int> fds) const override;
  xmsg::transport::MemoryHandle expose(const void* buffer, size_t length,
                                       xmsg::transport::Access access = xmsg::transport::Access::read) override;
  void release(const xmsg::transport::MemoryHandle& handle,
               xmsg::transport::Access access = xmsg::transport::Access::read) override;
  void read_remote(int peer, const xmsg::transport::MemoryHandle& source, uint64_t offset, std::span<std::byte> dst,
                   xmsg::transport::ReadCompletion& done) override;
  void write_remote(int peer, const xmsg::transport::MemoryHandle& destination, uint64_t offset,
                    std::span<const std::byte> src, xmsg::transport::ReadCompletion& done) override;
  // The device's 64-bit fetch-and-add and compare-and-swap; to this rank itself through a QP
  // connected to itself (loopback_route), to ranks of its node through atomics_route, so that
  // every rank's ops on a window are the device's.
  void atomic_remote(int peer, const xmsg::transport::MemoryHandle& target, uint64_t offset,
                     xmsg::transport::RemoteAtomic op, uint64_t operand, uint64_t compare, uint64_t* result,
                     xmsg::transport::ReadCompletion& done) override;
  bool atomics_reach(int peer) const override;
  void disconnect() override;

  PlanMode mode() const { return mode_; }
  WireUpScheme scheme() const { return scheme_; }
  // QPs this rank has created so far (lazy: grows with the peers it talks to).
  std::size_t qps_created() const {
    std::size_t n = 0;
    for (const auto& state : qps_) n += state.qp ? 1 : 0;
    return n;
  }
  // How often the SRQ fell to its low watermark (the rank progressed too rarely for its senders).
  std::uint64_t srq_limit_events() const { return srq_limit_events_; }
  const Device& device() const { return device_; }

 private:
  // try_send's body: claims a send slot, writes the header, lets `fill` write the n payload bytes
  // behind it and posts the SEND.
  template <class Fill>
  bool send_into_slot(int peer, const xmsg::transport::WireHeader& header, std::size_t n, Fill&& fill);
  // Lazy wire-up: where a QP's own connection stands. Eager QPs are `up` from connect() on.
  enum class LinkState : std::uint8_t { requesting, up, failed };
  struct QpState {
    std::unique_ptr<QueuePair> qp;
    int outstanding = 0;  // send-queue entries posted and not completed
    LinkState state = LinkState::up;
    std::uint32_t remote_qpn = 0;  // lazy: the QP this one is connected to
    int responder = -1;            // lazy INI/RC: the rank asked for the counterpart
    std::string failure;           // lazy: why the link failed
    std::chrono::steady_clock::time_point requested;
  };
  struct Route {
    int qp_index = -1;
    int node = -1;
    std::uint32_t remote_srqn = 0;  // XRC only
    bool failed = false;
    bool probe_posted = false;
  };
  bool atomics() const { return device_.attributes().atomic_cap != IBV_ATOMIC_NONE; }
  // Whether verbs carries `peer`'s messages (eager: every route; lazy: the peers connect() got),
  // as opposed to a route only atomics use.
  bool carried(int peer) const {
    return peer != rank_ && (scheme_ == WireUpScheme::eager ||
                             (peer >= 0 && peer < static_cast<int>(is_peer_.size()) && is_peer_[static_cast<std::size_t>(peer)]));
  }
  // What one RDMA work request does: READ, WRITE or an atomic with its operands.
  struct RdmaWork {
    ibv_wr_opcode opcode;
    std::uint64_t compare_add = 0;
    std::uint64_t swap = 0;
  };
  // A remote read, write or atomic (read_remote / write_remote / atomic_remote), split into
  // chunks the device takes.
  // Up to one eager buffer moves through a send slot (no registration of the caller's memory:
  // a small put or get costs a memcpy, not an ibv_reg_mr); larger ones register it.
  struct RdmaOp {
    xmsg::transport::ReadCompletion* done = nullptr;
    int peer = -1;
    int chunks = 0;
    bool ok = true;
    bool write = false;
    ibv_wr_opcode opcode = IBV_WR_RDMA_READ;
    int slot = -1;  // the send slot it moves through; -1: `local` is registered
    std::string reason;
    const void* local = nullptr;  // read: the destination; write: the source
    std::size_t local_length = 0;
  };
  struct PendingRdma {
    std::uint64_t op_id;
    int peer;
    RdmaWork work;
    std::uint64_t local_address;
    std::uint32_t length;
    std::uint32_t lkey;
    std::uint64_t remote_address;
    std::uint32_t rkey;
  };

  void create_local_resources(std::size_t peer_count);
  void connect_eager(std::span<const int> peers, bool own_nodes);
  void connect_lazy(std::span<const int> peers);
  // Lazy: the route to `peer`, made on first use (reads its card, starts its link). Null when
  // `peer` is not a verbs peer of this rank.
  Route* route_to(int peer);
  bool route_ready(const Route& route) const {
    return qps_[static_cast<std::size_t>(route.qp_index)].state == LinkState::up;
  }
  // same_node: a rank of this node is fine (atomics_route); otherwise that is an error.
  const WireUpCard* card_of(int peer, std::string& error, bool same_node = false);
  int open_link(int key, int responder, const WireUpCard& card);
  void fail_link(int qp_index, const std::string& reason);
  // A link that could not be made: no QP, state failed; its index in qps_.
  int add_failed_link(std::string reason);
  int add_qp(std::unique_ptr<QueuePair> qp);
  RemoteEndpoint endpoint(const ConnectionMessage& message) const;
  ConnectionMessage message_template(ConnectionMessageKind kind, int to_rank) const;
  ConnectionMessage on_request(const ConnectionMessage& request) override;
  void on_reply(int qp_index, const ConnectionMessage& reply) override;
  void on_failure(int qp_index, const std::string& reason) override;

  ConnectionPlan identity_plan(int size) const;
  ConnectionPlan provisional_plan() const;
  std::vector<int> true_layout();
  const WireUpRecord& record_of(int rank);
  RemoteEndpoint endpoint(const WireUpRecord& record, int qp_position, int publisher) const;
  std::string peer_label(int rank) const;
  void fail_peer(int peer, const std::string& reason, xmsg::transport::MessageSink* sink);
  // read_remote, write_remote and atomic_remote: checks, then the op and its chunks, posted as
  // room allows.
  void start_rdma(int peer, const xmsg::transport::MemoryHandle& remote, uint64_t offset, std::byte* local,
                  std::size_t length, const RdmaWork& work, xmsg::transport::ReadCompletion& done);
  // The route of this rank's atomics on its own memory: a QP connected to itself, made on
  // first use (RC; XRC: an INI QP to a TGT QP of its own domain).
  Route* loopback_route();
  // The route of atomics to `peer`: its own route where verbs carries it, the loopback for this
  // rank, and for a rank of this node (lazy scheme) an RC QP asked of it through the connection
  // manager, or in XRC mode the loopback INI QP naming that rank's SRQ.
  Route* atomics_route(int peer);
  bool post_rdma(const PendingRdma& chunk);
  // A completion of kind kRdma (also during disconnect): the chunk is off the send queue.
  void on_rdma_completion(std::uint64_t op_id, const ibv_wc& wc, xmsg::transport::MessageSink* sink);
  void finish_rdma_chunk(std::uint64_t op_id, bool ok, const std::string& reason);
  void teardown();
  // Up to completions.size() completions: those wait_fds() polled first, then the CQ's.
  int poll_completions(std::span<ibv_wc> completions);
  void drain_async_events(xmsg::transport::MessageSink& sink);
  void probe_quiet_peers();

  xmsg::bootstrap::Bootstrap& boot_;
  Device device_;
  PlanMode mode_;
  VerbsLimits limits_;
  WireUpScheme scheme_;
  int rank_;
  int my_node_ = -1;
  bool connected_ = false;

  // Destroyed in reverse: QPs before SRQ before XRCD before CQ before MRs before PD.
  std::unique_ptr<ProtectionDomain> pd_;
  std::unique_ptr<RegistrationCache> registrations_;
  std::vector<std::byte> send_slab_;
  std::unique_ptr<MemoryRegion> send_mr_;
  std::unique_ptr<CompletionQueue> cq_;
  // wait_fds(): whether the CQ is armed since the last progress(), the completions it polled
  // while arming (progress() takes them first), and the eventfd it makes readable for them.
  mutable bool armed_ = false;
  mutable std::vector<ibv_wc> stashed_;
  int wake_fd_ = -1;
  std::unique_ptr<XrcDomain> xrcd_;  // XRC only
  std::unique_ptr<SharedReceiveQueue> srq_;
  std::vector<QpState> qps_;  // eager: in ConnectionPlan::qps_of(rank) order; lazy: as created
  std::unique_ptr<ConnectionManager> cm_;  // lazy only
  std::uint64_t cookie_ = 0;               // lazy: the cookie of this rank's card
  std::vector<std::uint8_t> is_peer_;      // lazy: per world rank, carried by verbs
  std::map<int, WireUpCard> cards_;        // lazy: cards of the peers talked to
  std::map<int, int> links_;               // lazy: XRC remote node / RC peer -> its INI/RC QP
  std::map<int, int> tgt_of_sender_;       // lazy XRC: remote sender rank -> TGT QP made for it

  std::optional<ConnectionPlan> plan_;
  std::vector<std::optional<WireUpRecord>> records_;
  std::map<int, Route> routes_;
  std::vector<int> free_send_slots_;
  std::vector<std::pair<int, int>> send_slot_owner_;  // slot -> (peer, qp index)
  std::map<std::uint64_t, RdmaOp> rdma_ops_;
  std::deque<PendingRdma> pending_rdma_;
  std::uint64_t next_rdma_id_ = 1;
  std::vector<std::pair<int, std::string>> failures_to_report_;
  std::map<std::uint32_t, int> qp_index_by_qpn_;
  std::uint64_t progress_calls_ = 0;
  std::uint64_t srq_limit_events_ = 0;  // the SRQ fell to its low watermark (receiver lagging)
  // Per world rank: a completion proved the peer alive since the last probe round.
  std::vector<std::uint8_t> heard_;
  std::chrono::steady_clock::time_point last_probe_round_;
  std::chrono::steady_clock::time_point last_connection_poll_;
  int probes_posted_ = 0;
  int probe_budget_ = 0;  // CQ entries left for probes
  int rdma_posted_ = 0;  // READs and WRITEs on the send queues (the CQ holds kMaxRdmaPosted of them)
};

}  // namespace xmsg::verbs
