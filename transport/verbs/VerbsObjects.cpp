#include "VerbsObjects.hpp"

#include <fcntl.h>

#include <cerrno>

#include "Device.hpp"
#include "VerbsError.hpp"

namespace xmsg::verbs {

ProtectionDomain::ProtectionDomain(Device& device) : device_(device) {
  pd_ = ibv_alloc_pd(device.context());
  if (pd_ == nullptr) throw_verbs_error("ibv_alloc_pd", device.label(), errno);
}

ProtectionDomain::~ProtectionDomain() {
  if (pd_ != nullptr) ibv_dealloc_pd(pd_);
}

CompletionQueue::CompletionQueue(Device& device, int depth, bool with_channel) : device_(device), depth_(depth) {
  if (depth < 1 || depth > device.attributes().max_cqe) {
    throw VerbsError("completion queue depth " + std::to_string(depth) + " is outside 1.." +
                     std::to_string(device.attributes().max_cqe) + " on " + device.label());
  }
  // Without a channel (a device or provider that has none) the CQ is polled only.
  channel_ = with_channel ? ibv_create_comp_channel(device.context()) : nullptr;
  if (channel_ != nullptr) {
    const int flags = ::fcntl(channel_->fd, F_GETFL);
    if (flags < 0 || ::fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
      ibv_destroy_comp_channel(channel_);
      channel_ = nullptr;
    }
  }
  cq_ = ibv_create_cq(device.context(), depth, nullptr, channel_, 0);
  if (cq_ == nullptr && channel_ != nullptr) {
    ibv_destroy_comp_channel(channel_);
    channel_ = nullptr;
    cq_ = ibv_create_cq(device.context(), depth, nullptr, nullptr, 0);
  }
  if (cq_ == nullptr) throw_verbs_error("ibv_create_cq depth " + std::to_string(depth), device.label(), errno);
}

CompletionQueue::~CompletionQueue() {
  if (cq_ != nullptr) {
    drain_events();
    ibv_destroy_cq(cq_);
  }
  if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
}

bool CompletionQueue::arm() { return channel_ != nullptr && ibv_req_notify_cq(cq_, 0) == 0; }

void CompletionQueue::drain_events() {
  if (channel_ == nullptr) return;
  unsigned taken = 0;
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(channel_, &cq, &context) == 0) ++taken;  // EAGAIN ends it
  if (taken > 0) ibv_ack_cq_events(cq_, taken);
}

int CompletionQueue::poll(std::span<ibv_wc> completions) {
  const int n = ibv_poll_cq(cq_, static_cast<int>(completions.size()), completions.data());
  if (n < 0) throw_verbs_error("ibv_poll_cq", device_.label(), -n);
  return n;
}

MemoryRegion::MemoryRegion(ProtectionDomain& pd, void* address, std::size_t length, int access) {
  mr_ = ibv_reg_mr(pd.get(), address, length, access);
  if (mr_ == nullptr) {
    throw_verbs_error("ibv_reg_mr of " + std::to_string(length) + " bytes", pd.device().label(), errno);
  }
}

MemoryRegion::~MemoryRegion() {
  if (mr_ != nullptr) ibv_dereg_mr(mr_);
}

std::string describe_completion(const ibv_wc& wc) {
  return "status " + std::to_string(static_cast<int>(wc.status)) + " (" + ibv_wc_status_str(wc.status) +
         "), opcode " + std::to_string(static_cast<int>(wc.opcode)) + ", qp " + std::to_string(wc.qp_num) +
         ", vendor error " + std::to_string(wc.vendor_err);
}

}  // namespace xmsg::verbs
