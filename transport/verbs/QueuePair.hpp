// QueuePair: one RC, XRC INI (send only) or XRC TGT (receive only) queue pair and its state
// transitions RESET -> INIT -> RTR (-> RTS). The attributes per state follow the table in the
// project's XRC notes:
//   INIT: STATE, PKEY_INDEX, PORT, ACCESS_FLAGS (RC and TGT: remote read/write, and atomic where the device has atomics; INI: none)
//   RTR:  STATE, AV, PATH_MTU, DEST_QPN, RQ_PSN (+ MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER for RC, TGT)
//   RTS:  STATE, TIMEOUT, SQ_PSN, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC (RC and INI; a TGT stays
//         in RTR)
// Every error names the device and the peer the QP connects to.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "ConnectionPlan.hpp"
#include "Device.hpp"

namespace xmsg::verbs {

class CompletionQueue;
class ProtectionDomain;
class SharedReceiveQueue;
class XrcDomain;

// The far end of a connection, as its owner published it.
struct RemoteEndpoint {
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  std::uint16_t lid = 0;
  std::array<std::uint8_t, 16> gid{};
  ibv_mtu path_mtu = IBV_MTU_1024;
};

class QueuePair {
 public:
  // RC QP whose receives come from `srq`; completions of both directions on `cq`.
  static std::unique_ptr<QueuePair> create_rc(ProtectionDomain& pd, CompletionQueue& cq, SharedReceiveQueue& srq,
                                              int send_depth, std::string peer);
  // XRC INI: send queue only (max_recv_wr = 0).
  static std::unique_ptr<QueuePair> create_xrc_ini(ProtectionDomain& pd, CompletionQueue& cq, int send_depth,
                                                   std::string peer);
  // XRC TGT: belongs to the XRC domain, no send queue, no CQ.
  static std::unique_ptr<QueuePair> create_xrc_tgt(XrcDomain& xrcd, std::string peer);

  ~QueuePair();
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  QpKind kind() const { return kind_; }
  std::uint32_t qpn() const { return qp_->qp_num; }
  // The starting PSN this side uses (and publishes).
  std::uint32_t psn() const { return psn_; }
  ibv_qp* get() const { return qp_; }
  const std::string& peer() const { return peer_; }

  void to_init();
  void to_rtr(const RemoteEndpoint& remote);
  void to_rts();
  // INIT + RTR (+ RTS unless a TGT) in one go.
  void connect(const RemoteEndpoint& remote);

  // Posts one work request (chain); throws naming the device and the peer.
  void post_send(ibv_send_wr& wr);

 private:
  QueuePair(Device& device, QpKind kind, ibv_qp* qp, std::string peer);
  [[noreturn]] void fail(const std::string& what, int err) const;

  Device& device_;
  QpKind kind_;
  ibv_qp* qp_ = nullptr;
  std::string peer_;
  std::uint32_t psn_ = 0;
};

std::string_view qp_kind_name(QpKind kind);

}  // namespace xmsg::verbs
