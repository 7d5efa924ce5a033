// VerbsTransport: the Transport interface over the verbs resources (docs/verbs.md).
//
// connect():  plan (ConnectionPlan) -> create PD, CQ, SRQ (+ XRC domain), every planned QP ->
//             put one WireUpRecord -> fence -> move each QP to RTR/RTS from its counterpart's
//             record -> fence. XRC-only steps are marked; the rest is shared with RC.
// try_send(): copies header + payload into a registered send slot and posts a SEND (XRC: naming
//             the destination rank's SRQ number). False when no slot or send-queue room is free.
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

#include "ConnectionPlan.hpp"
#include "Device.hpp"
#include "QueuePair.hpp"
#include "RegistrationCache.hpp"
#include "SharedReceiveQueue.hpp"
#include "VerbsLimits.hpp"
#include "VerbsObjects.hpp"
#include "WireUpRecord.hpp"
#include "XrcDomain.hpp"

namespace xmsg::bootstrap {
class Bootstrap;
}

namespace xmsg::verbs {

// XMSG_VERBS_MODE=auto|xrc|rc against what the device can do; throws naming the variable or
// "no XRC-capable device".
PlanMode choose_mode(const Device& device, const char* env_value);

// True when XMSG_TRANSPORTS makes verbs carry pairs of one node too (its first entry is
// "verbs"): then every rank is planned as its own node. Every rank sees the same variable, so
// every rank plans the same layout.
bool verbs_carries_same_node_pairs(const char* xmsg_transports);

class VerbsTransport final : public xmsg::transport::Transport {
 public:
  VerbsTransport(xmsg::bootstrap::Bootstrap& bootstrap, Device device, PlanMode mode, VerbsLimits limits);
  ~VerbsTransport() override;

  std::string_view name() const override { return "verbs"; }
  xmsg::transport::Capabilities capabilities() const override;
  void connect(std::span<const int> peers) override;
  bool try_send(int peer, const xmsg::transport::WireHeader& header, std::span<const std::byte> payload) override;
  int progress(xmsg::transport::MessageSink& sink) override;
  xmsg::transport::MemoryHandle expose(const void* buffer, size_t length) override;
  void release(const xmsg::transport::MemoryHandle& handle) override;
  void read_remote(int peer, const xmsg::transport::MemoryHandle& source, uint64_t offset, std::span<std::byte> dst,
                   xmsg::transport::ReadCompletion& done) override;
  void disconnect() override;

  PlanMode mode() const { return mode_; }
  // How often the SRQ fell to its low watermark (the rank progressed too rarely for its senders).
  std::uint64_t srq_limit_events() const { return srq_limit_events_; }
  const Device& device() const { return device_; }

 private:
  struct QpState {
    std::unique_ptr<QueuePair> qp;
    int outstanding = 0;  // send-queue entries posted and not completed
  };
  struct Route {
    int qp_index = -1;
    std::uint32_t remote_srqn = 0;  // XRC only
    bool failed = false;
    bool probe_posted = false;
  };
  struct ReadOp {
    xmsg::transport::ReadCompletion* done = nullptr;
    int peer = -1;
    int chunks = 0;
    bool ok = true;
    std::string reason;
    const void* dst = nullptr;
    std::size_t dst_length = 0;
  };
  struct PendingRead {
    std::uint64_t op_id;
    int peer;
    std::uint64_t local_address;
    std::uint32_t length;
    std::uint32_t lkey;
    std::uint64_t remote_address;
    std::uint32_t rkey;
  };

  ConnectionPlan identity_plan(int size) const;
  ConnectionPlan provisional_plan() const;
  std::vector<int> true_layout();
  const WireUpRecord& record_of(int rank);
  RemoteEndpoint endpoint(const WireUpRecord& record, int qp_position, int publisher) const;
  std::string peer_label(int rank) const;
  void fail_peer(int peer, const std::string& reason, xmsg::transport::MessageSink* sink);
  bool post_read(const PendingRead& read);
  void finish_read_chunk(std::uint64_t op_id, bool ok, const std::string& reason);
  void teardown();
  void drain_async_events(xmsg::transport::MessageSink& sink);
  void probe_quiet_peers();

  xmsg::bootstrap::Bootstrap& boot_;
  Device device_;
  PlanMode mode_;
  VerbsLimits limits_;
  int rank_;
  bool connected_ = false;

  // Destroyed in reverse: QPs before SRQ before XRCD before CQ before MRs before PD.
  std::unique_ptr<ProtectionDomain> pd_;
  std::unique_ptr<RegistrationCache> registrations_;
  std::vector<std::byte> send_slab_;
  std::unique_ptr<MemoryRegion> send_mr_;
  std::unique_ptr<CompletionQueue> cq_;
  std::unique_ptr<XrcDomain> xrcd_;  // XRC only
  std::unique_ptr<SharedReceiveQueue> srq_;
  std::vector<QpState> qps_;  // in ConnectionPlan::qps_of(rank) order

  std::optional<ConnectionPlan> plan_;
  std::vector<std::optional<WireUpRecord>> records_;
  std::map<int, Route> routes_;
  std::vector<int> free_send_slots_;
  std::vector<std::pair<int, int>> send_slot_owner_;  // slot -> (peer, qp index)
  std::map<std::uint64_t, ReadOp> reads_;
  std::deque<PendingRead> pending_reads_;
  std::uint64_t next_read_id_ = 1;
  std::vector<std::pair<int, std::string>> failures_to_report_;
  std::map<std::uint32_t, int> qp_index_by_qpn_;
  std::uint64_t progress_calls_ = 0;
  std::uint64_t srq_limit_events_ = 0;  // the SRQ fell to its low watermark (receiver lagging)
  // Per world rank: a completion proved the peer alive since the last probe round.
  std::vector<std::uint8_t> heard_;
  std::chrono::steady_clock::time_point last_probe_round_;
  int probes_posted_ = 0;
  int probe_budget_ = 0;  // CQ entries left for probes
  int reads_posted_ = 0;  // READs on the send queues (the CQ holds kMaxReadsPosted of them)
};

}  // namespace xmsg::verbs
