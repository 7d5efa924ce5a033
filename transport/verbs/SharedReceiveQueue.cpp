#include "SharedReceiveQueue.hpp"

#include <cerrno>
#include <cstdlib>

#include "Device.hpp"
#include "VerbsError.hpp"
#include "XrcDomain.hpp"

namespace xmsg::verbs {

namespace {

void check_shape(const Device& device, int depth, std::size_t buffer_bytes) {
  if (depth < 1 || depth > device.attributes().max_srq_wr) {
    throw VerbsError("SRQ depth " + std::to_string(depth) + " is outside 1.." +
                     std::to_string(device.attributes().max_srq_wr) + " on " + device.label());
  }
  if (buffer_bytes < 64 || buffer_bytes % 64 != 0) {
    throw VerbsError("SRQ buffer size " + std::to_string(buffer_bytes) + " must be a positive multiple of 64 on " +
                     device.label());
  }
}

}  // namespace

SharedReceiveQueue::SharedReceiveQueue(ProtectionDomain& pd, int depth, std::size_t buffer_bytes)
    : pd_(pd), xrc_(false), depth_(depth), buffer_bytes_(buffer_bytes) {
  check_shape(pd.device(), depth, buffer_bytes);
  ibv_srq_init_attr attr{};
  attr.attr.max_wr = static_cast<std::uint32_t>(depth);
  attr.attr.max_sge = 1;
  srq_ = ibv_create_srq(pd.get(), &attr);
  if (srq_ == nullptr) throw_verbs_error("ibv_create_srq depth " + std::to_string(depth), pd.device().label(), errno);
  try {
    create_slab();
  } catch (...) {
    ibv_destroy_srq(srq_);
    throw;
  }
}

SharedReceiveQueue::SharedReceiveQueue(ProtectionDomain& pd, XrcDomain& xrcd, CompletionQueue& cq, int depth,
                                       std::size_t buffer_bytes)
    : pd_(pd), xrc_(true), depth_(depth), buffer_bytes_(buffer_bytes) {
  check_shape(pd.device(), depth, buffer_bytes);
  ibv_srq_init_attr_ex attr{};
  attr.attr.max_wr = static_cast<std::uint32_t>(depth);
  attr.attr.max_sge = 1;
  attr.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
  attr.srq_type = IBV_SRQT_XRC;
  attr.xrcd = xrcd.get();
  attr.cq = cq.get();
  attr.pd = pd.get();
  srq_ = ibv_create_srq_ex(pd.device().context(), &attr);
  if (srq_ == nullptr) {
    throw_verbs_error("ibv_create_srq_ex (XRC) depth " + std::to_string(depth), pd.device().label(), errno);
  }
  try {
    if (int rc = ibv_get_srq_num(srq_, &srq_num_); rc != 0) throw_verbs_error("ibv_get_srq_num", pd.device().label(), rc);
    create_slab();
  } catch (...) {
    ibv_destroy_srq(srq_);
    throw;
  }
}

void SharedReceiveQueue::create_slab() {
  const std::size_t bytes = static_cast<std::size_t>(depth_) * buffer_bytes_;
  const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
  slab_ = static_cast<std::byte*>(std::aligned_alloc(4096, rounded));
  if (slab_ == nullptr) throw VerbsError("cannot allocate " + std::to_string(rounded) + " bytes of receive buffers for " + label());
  try {
    mr_ = std::make_unique<MemoryRegion>(pd_, slab_, rounded, IBV_ACCESS_LOCAL_WRITE);
    for (int i = 0; i < depth_; ++i) post(static_cast<std::uint64_t>(i));
  } catch (...) {
    mr_.reset();
    std::free(slab_);
    slab_ = nullptr;
    throw;
  }
}

SharedReceiveQueue::~SharedReceiveQueue() {
  // The SRQ goes before the memory its receives point at.
  if (srq_ != nullptr) ibv_destroy_srq(srq_);
  mr_.reset();
  std::free(slab_);
}

std::span<std::byte> SharedReceiveQueue::slot(std::uint64_t wr_id) const {
  if (wr_id >= static_cast<std::uint64_t>(depth_)) {
    throw VerbsError("receive completion names slot " + std::to_string(wr_id) + " of " + label() + " (depth " +
                     std::to_string(depth_) + ")");
  }
  return {slab_ + wr_id * buffer_bytes_, buffer_bytes_};
}

void SharedReceiveQueue::post(std::uint64_t wr_id) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(slab_ + wr_id * buffer_bytes_);
  sge.length = static_cast<std::uint32_t>(buffer_bytes_);
  sge.lkey = mr_->lkey();
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq_, &wr, &bad); rc != 0) throw_verbs_error("ibv_post_srq_recv on " + label(), pd_.device().label(), rc);
  ++posted_;
}

void SharedReceiveQueue::repost(std::uint64_t wr_id) {
  (void)slot(wr_id);  // range check
  --posted_;
  post(wr_id);
}

void SharedReceiveQueue::arm_limit(int watermark) {
  ibv_srq_attr attr{};
  attr.srq_limit = static_cast<std::uint32_t>(watermark);
  if (int rc = ibv_modify_srq(srq_, &attr, IBV_SRQ_LIMIT); rc != 0) {
    throw_verbs_error("arming the SRQ limit of " + label(), pd_.device().label(), rc);
  }
}

std::string SharedReceiveQueue::label() const {
  return xrc_ ? "XRC SRQ " + std::to_string(srq_num_) : std::string("SRQ");
}

}  // namespace xmsg::verbs
