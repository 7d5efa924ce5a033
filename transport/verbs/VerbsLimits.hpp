// VerbsLimits: the receive-side sizes the verbs transport really uses, shared with xmsg_plan so
// that the planner's memory figures are the transport's, not a guess.
//
// One SRQ per rank in both modes. Its depth does NOT grow with the number of peers: every QP of
// the rank (RC QPs, or the node's TGT QPs naming this rank's XRC SRQ) feeds the same SRQ, which
// is refilled as it drains (SRQ limit event at a low watermark), with RNR retry as the backstop.
// Receive memory per rank is therefore srq_depth x eager_buffer_bytes whatever N and ppn are;
// what RC pays for scale is QPs (and their send queues), not receive buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xmsg::verbs {

struct VerbsLimits {
  static constexpr int kDefaultSrqDepth = 256;               // XMSG_VERBS_SRQ_DEPTH
  static constexpr std::size_t kDefaultEagerBufferBytes = 8192;  // XMSG_VERBS_EAGER_BUFFER (header included)
  static constexpr int kDefaultSendDepth = 64;                // XMSG_VERBS_SEND_DEPTH, per QP
  // Lazy wire-up: how long a connection request may wait for its reply. Long, because a peer
  // deep in computation answers only when it next calls into xmsg; a dead peer is noticed at once
  // (its socket is gone).
  static constexpr int kDefaultConnectTimeoutSeconds = 60;    // XMSG_VERBS_CONNECT_TIMEOUT

  int srq_depth = kDefaultSrqDepth;
  std::size_t eager_buffer_bytes = kDefaultEagerBufferBytes;
  int send_depth = kDefaultSendDepth;
  int connect_timeout_seconds = kDefaultConnectTimeoutSeconds;

  std::uint64_t recv_memory_bytes() const {
    return static_cast<std::uint64_t>(srq_depth) * eager_buffer_bytes;
  }
  // Refill when this many receives remain posted (the SRQ limit).
  int srq_low_watermark() const { return srq_depth / 4 > 0 ? srq_depth / 4 : 1; }

  // Reads the XMSG_VERBS_* variables over the defaults; throws std::invalid_argument naming the
  // variable when a value is not a number in range.
  static VerbsLimits from_environment();
  // Throws std::invalid_argument naming the field when out of range.
  void validate() const;
};

}  // namespace xmsg::verbs
