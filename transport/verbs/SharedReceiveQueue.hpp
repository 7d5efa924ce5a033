// SharedReceiveQueue: the rank's one receive queue and the eager buffers posted to it. Every
// connection of the rank feeds it: in RC mode all RC QPs (a basic SRQ); in XRC mode every TGT QP
// of the node whose sender names this SRQ's number (an XRC SRQ, which needs its CQ and the XRC
// domain at creation). The depth never grows with the peer count (see VerbsLimits).
//
// Receive buffers are slots of one registered slab; a completion's wr_id is the slot index.
// The owner consumes a slot and repost()s it, so the queue stays full; arm_limit() asks the
// device for an IBV_EVENT_SRQ_LIMIT_REACHED event when fewer than `watermark` remain posted.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "VerbsObjects.hpp"

namespace xmsg::verbs {

class XrcDomain;

class SharedReceiveQueue {
 public:
  // Basic SRQ (RC mode).
  SharedReceiveQueue(ProtectionDomain& pd, int depth, std::size_t buffer_bytes);
  // XRC SRQ (XRC mode); completions go to `cq`.
  SharedReceiveQueue(ProtectionDomain& pd, XrcDomain& xrcd, CompletionQueue& cq, int depth, std::size_t buffer_bytes);
  ~SharedReceiveQueue();
  SharedReceiveQueue(const SharedReceiveQueue&) = delete;
  SharedReceiveQueue& operator=(const SharedReceiveQueue&) = delete;

  ibv_srq* get() const { return srq_; }
  bool is_xrc() const { return xrc_; }
  // XRC: the number senders put in each work request. Basic SRQ: 0.
  std::uint32_t srq_num() const { return srq_num_; }
  int depth() const { return depth_; }
  std::size_t buffer_bytes() const { return buffer_bytes_; }
  // Receives currently posted (depth minus those completed and not yet reposted).
  int posted() const { return posted_; }

  // The bytes of slot `wr_id` (as found in a receive completion).
  std::span<std::byte> slot(std::uint64_t wr_id) const;
  // Marks slot `wr_id` consumed by a completion and posts it again.
  void repost(std::uint64_t wr_id);
  // Marks a completion without reposting (e.g. while draining at teardown).
  void consumed() { --posted_; }
  void arm_limit(int watermark);

 private:
  void create_slab();
  void post(std::uint64_t wr_id);
  std::string label() const;

  ProtectionDomain& pd_;
  bool xrc_ = false;
  int depth_ = 0;
  std::size_t buffer_bytes_ = 0;
  int posted_ = 0;
  std::uint32_t srq_num_ = 0;
  ibv_srq* srq_ = nullptr;
  std::byte* slab_ = nullptr;
  std::unique_ptr<MemoryRegion> mr_;
};

}  // namespace xmsg::verbs
