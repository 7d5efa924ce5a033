#include "VerbsObjects.hpp"

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

CompletionQueue::CompletionQueue(Device& device, int depth) : device_(device), depth_(depth) {
  if (depth < 1 || depth > device.attributes().max_cqe) {
    throw VerbsError("completion queue depth " + std::to_string(depth) + " is outside 1.." +
                     std::to_string(device.attributes().max_cqe) + " on " + device.label());
  }
  cq_ = ibv_create_cq(device.context(), depth, nullptr, nullptr, 0);
  if (cq_ == nullptr) throw_verbs_error("ibv_create_cq depth " + std::to_string(depth), device.label(), errno);
}

CompletionQueue::~CompletionQueue() {
  if (cq_ != nullptr) ibv_destroy_cq(cq_);
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
