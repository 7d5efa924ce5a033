// RegistrationCache: memory registrations shared by concurrent users of the same buffer.
//
// Rendezvous registers the sender's buffer (remote read) and the receiver's (local write).
// Registering is expensive, so identical ranges in use at the same time share one MR (a
// collective often exposes one buffer to many peers). An entry is deregistered when its last
// user releases it: keeping idle registrations would need munmap/free interception to notice
// that a virtual address now maps different pages (the classic stale-cache bug), which the
// runtime does not have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "VerbsObjects.hpp"

namespace xmsg::verbs {

class RegistrationCache {
 public:
  explicit RegistrationCache(ProtectionDomain& pd) : pd_(pd) {}

  // Registers (or shares) [address, address+length) with `access`.
  const MemoryRegion& acquire(const void* address, std::size_t length, int access);
  // Drops one use; returns false when no such registration is held.
  bool release(const void* address, std::size_t length, int access);

  std::size_t entries() const { return entries_.size(); }
  std::uint64_t registrations() const { return registrations_; }  // ibv_reg_mr calls made
  std::uint64_t hits() const { return hits_; }                    // uses served by sharing

 private:
  using Key = std::tuple<std::uintptr_t, std::size_t, int>;
  struct Entry {
    std::unique_ptr<MemoryRegion> mr;
    int users = 0;
  };
  ProtectionDomain& pd_;
  std::map<Key, Entry> entries_;
  std::uint64_t registrations_ = 0;
  std::uint64_t hits_ = 0;
};

}  // namespace xmsg::verbs
