#include "RegistrationCache.hpp"

namespace xmsg::verbs {

const MemoryRegion& RegistrationCache::acquire(const void* address, std::size_t length, int access) {
  const Key key{reinterpret_cast<std::uintptr_t>(address), length, access};
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    ++it->second.users;
    ++hits_;
    return *it->second.mr;
  }
  Entry entry;
  entry.mr = std::make_unique<MemoryRegion>(pd_, const_cast<void*>(address), length, access);
  entry.users = 1;
  ++registrations_;
  return *entries_.emplace(key, std::move(entry)).first->second.mr;
}

bool RegistrationCache::release(const void* address, std::size_t length, int access) {
  auto it = entries_.find(Key{reinterpret_cast<std::uintptr_t>(address), length, access});
  if (it == entries_.end()) return false;
  if (--it->second.users == 0) entries_.erase(it);
  return true;
}

}  // namespace xmsg::verbs
