// Thin RAII owners of the plain verbs objects the transport needs: a protection domain, a
// completion queue and a memory registration. Non-copyable, non-movable: hold them by value in
// the owner or in a unique_ptr, and destroy them in reverse order of creation.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <span>
#include <string>

namespace xmsg::verbs {

class Device;

class ProtectionDomain {
 public:
  explicit ProtectionDomain(Device& device);
  ~ProtectionDomain();
  ProtectionDomain(const ProtectionDomain&) = delete;
  ProtectionDomain& operator=(const ProtectionDomain&) = delete;
  ibv_pd* get() const { return pd_; }
  Device& device() const { return device_; }

 private:
  Device& device_;
  ibv_pd* pd_ = nullptr;
};

// A CQ with, where the device gives one, a completion channel: a descriptor that turns readable
// when a completion arrives after arm(), for a thread that sleeps outside progress().
class CompletionQueue {
 public:
  CompletionQueue(Device& device, int depth, bool with_channel);
  ~CompletionQueue();
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;
  ibv_cq* get() const { return cq_; }
  int depth() const { return depth_; }
  // Polls up to completions.size() entries; returns how many arrived. Throws on a CQ error.
  int poll(std::span<ibv_wc> completions);
  // The channel's descriptor (non-blocking), or -1 without one.
  int channel_fd() const { return channel_ ? channel_->fd : -1; }
  // Asks for an event at the next completion (ibv_req_notify_cq); false when the device refused.
  bool arm();
  // Takes and acknowledges the events that arrived, without waiting.
  void drain_events();

 private:
  Device& device_;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  int depth_ = 0;
};

class MemoryRegion {
 public:
  MemoryRegion(ProtectionDomain& pd, void* address, std::size_t length, int access);
  ~MemoryRegion();
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;
  ibv_mr* get() const { return mr_; }
  std::uint32_t lkey() const { return mr_->lkey; }
  std::uint32_t rkey() const { return mr_->rkey; }
  void* address() const { return mr_->addr; }
  std::size_t length() const { return mr_->length; }

 private:
  ibv_mr* mr_ = nullptr;
};

// What a human reads for a work completion: "status 12 (transport retry counter exceeded)".
std::string describe_completion(const ibv_wc& wc);

}  // namespace xmsg::verbs
