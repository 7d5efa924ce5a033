#include "QueuePair.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <random>

#include "SharedReceiveQueue.hpp"
#include "VerbsError.hpp"
#include "VerbsObjects.hpp"
#include "XrcDomain.hpp"

namespace xmsg::verbs {

namespace {

// Transport timeout 2^18 * 4.096 us ~ 1 s per try, 6 retries: a dead peer (whose QPs are gone, so
// nothing answers) surfaces as an error completion within seconds, never a hang. Not 7: soft-RoCE
// treats retry_cnt 7 as "retry forever" (seen here: a peer whose QPs vanished never failed). RNR retry is
// unlimited (7): it only fires when a live receiver has let its SRQ run dry, and the SRQ refill,
// not RNR, is what keeps receivers ready; giving up there would break a healthy connection.
constexpr std::uint8_t kTimeout = 18;
constexpr std::uint8_t kRetryCount = 6;
constexpr std::uint8_t kRnrRetry = 7;
constexpr std::uint8_t kMinRnrTimer = 12;
constexpr int kMaxReadsInFlight = 16;

std::uint32_t random_psn() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  return rng() & 0xffffff;
}

// Why a QP could not be created, in the terms a user can act on.
std::string creation_hint(const Device& device, int send_depth, int err) {
  const auto& attr = device.attributes();
  if (send_depth > attr.max_qp_wr) {
    return " (" + std::to_string(send_depth) + " send entries asked, the device allows max_qp_wr " +
           std::to_string(attr.max_qp_wr) + ": lower XMSG_VERBS_SEND_DEPTH)";
  }
  if (err == ENOMEM || err == ENOSPC || err == EAGAIN) {
    return " (out of QPs or memory? the device allows max_qp " + std::to_string(attr.max_qp) +
           "; XRC mode needs far fewer QPs than RC)";
  }
  return "";
}

}  // namespace

std::string_view qp_kind_name(QpKind kind) { return to_string(kind); }

QueuePair::QueuePair(Device& device, QpKind kind, ibv_qp* qp, std::string peer)
    : device_(device), kind_(kind), qp_(qp), peer_(std::move(peer)), psn_(random_psn()) {}

QueuePair::~QueuePair() {
  if (qp_ != nullptr) ibv_destroy_qp(qp_);
}

void QueuePair::fail(const std::string& what, int err) const {
  throw_verbs_error(what + " of the " + std::string(qp_kind_name(kind_)) + " QP " +
                        (qp_ != nullptr ? std::to_string(qp_->qp_num) + " " : std::string()) + "to " + peer_,
                    device_.label(), err);
}

std::unique_ptr<QueuePair> QueuePair::create_rc(ProtectionDomain& pd, CompletionQueue& cq, SharedReceiveQueue& srq,
                                                int send_depth, std::string peer) {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq.get();
  attr.recv_cq = cq.get();
  attr.srq = srq.get();
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = static_cast<std::uint32_t>(send_depth);
  attr.cap.max_send_sge = 1;
  attr.cap.max_inline_data = 64;
  ibv_qp* qp = ibv_create_qp(pd.get(), &attr);
  if (qp == nullptr && errno == EINVAL) {
    attr.cap.max_inline_data = 0;  // some devices refuse inline data
    qp = ibv_create_qp(pd.get(), &attr);
  }
  if (qp == nullptr) {
    const int err = errno;
    throw_verbs_error("creating the RC QP to " + peer + creation_hint(pd.device(), send_depth, err),
                      pd.device().label(), err);
  }
  return std::unique_ptr<QueuePair>(new QueuePair(pd.device(), QpKind::rc, qp, std::move(peer)));
}

std::unique_ptr<QueuePair> QueuePair::create_xrc_ini(ProtectionDomain& pd, CompletionQueue& cq, int send_depth,
                                                     std::string peer) {
  ibv_qp_init_attr_ex attr{};
  attr.qp_type = IBV_QPT_XRC_SEND;
  attr.send_cq = cq.get();
  attr.cap.max_send_wr = static_cast<std::uint32_t>(send_depth);
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_wr = 0;  // an XRC_SEND QP with a receive queue is EINVAL on ConnectX
  attr.cap.max_recv_sge = 0;
  attr.comp_mask = IBV_QP_INIT_ATTR_PD;
  attr.pd = pd.get();
  ibv_qp* qp = ibv_create_qp_ex(pd.device().context(), &attr);
  if (qp == nullptr) {
    const int err = errno;
    throw_verbs_error("creating the XRC INI QP to " + peer + creation_hint(pd.device(), send_depth, err),
                      pd.device().label(), err);
  }
  return std::unique_ptr<QueuePair>(new QueuePair(pd.device(), QpKind::xrc_ini, qp, std::move(peer)));
}

std::unique_ptr<QueuePair> QueuePair::create_xrc_tgt(XrcDomain& xrcd, std::string peer) {
  ibv_qp_init_attr_ex attr{};
  attr.qp_type = IBV_QPT_XRC_RECV;  // no send queue, no CQ: it belongs to the domain
  attr.comp_mask = IBV_QP_INIT_ATTR_XRCD;
  attr.xrcd = xrcd.get();
  ibv_qp* qp = ibv_create_qp_ex(xrcd.device().context(), &attr);
  if (qp == nullptr) {
    const int err = errno;
    throw_verbs_error("creating the XRC TGT QP for " + peer + creation_hint(xrcd.device(), 0, err),
                      xrcd.device().label(), err);
  }
  return std::unique_ptr<QueuePair>(new QueuePair(xrcd.device(), QpKind::xrc_tgt, qp, std::move(peer)));
}

void QueuePair::to_init() {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = device_.address().port;
  // Remote atomics where the device has them: a window's fetch-and-op arrives on this QP.
  const int atomic = device_.attributes().atomic_cap != IBV_ATOMIC_NONE ? IBV_ACCESS_REMOTE_ATOMIC : 0;
  attr.qp_access_flags = kind_ == QpKind::xrc_ini ? 0 : (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | atomic);
  const int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  if (int rc = ibv_modify_qp(qp_, &attr, mask); rc != 0) fail("moving to INIT", rc);
}

void QueuePair::to_rtr(const RemoteEndpoint& remote) {
  const PortAddress& local = device_.address();
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = std::min(local.path_mtu, remote.path_mtu);
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.ah_attr.port_num = local.port;
  attr.ah_attr.dlid = remote.lid;
  attr.ah_attr.sl = 0;
  if (local.is_roce()) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid.data(), 16);
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
  }
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  if (kind_ != QpKind::xrc_ini) {
    attr.max_dest_rd_atomic = static_cast<std::uint8_t>(std::min(kMaxReadsInFlight, device_.attributes().max_qp_rd_atom));
    attr.min_rnr_timer = kMinRnrTimer;
    mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  }
  if (int rc = ibv_modify_qp(qp_, &attr, mask); rc != 0) fail("moving to RTR (remote QP " + std::to_string(remote.qpn) + ")", rc);
}

void QueuePair::to_rts() {
  if (kind_ == QpKind::xrc_tgt) fail("moving to RTS (a TGT QP is receive-only and stays in RTR)", EINVAL);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = kTimeout;
  attr.retry_cnt = kRetryCount;
  attr.rnr_retry = kRnrRetry;
  attr.sq_psn = psn_;
  attr.max_rd_atomic = static_cast<std::uint8_t>(std::min(kMaxReadsInFlight, device_.attributes().max_qp_init_rd_atom));
  const int mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                   IBV_QP_MAX_QP_RD_ATOMIC;
  if (int rc = ibv_modify_qp(qp_, &attr, mask); rc != 0) fail("moving to RTS", rc);
}

void QueuePair::connect(const RemoteEndpoint& remote) {
  to_init();
  to_rtr(remote);
  if (kind_ != QpKind::xrc_tgt) to_rts();
}

void QueuePair::post_send(ibv_send_wr& wr) {
  if (kind_ == QpKind::xrc_tgt) fail("posting a send on", EINVAL);
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_, &wr, &bad); rc != 0) fail("ibv_post_send", rc);
}

}  // namespace xmsg::verbs
