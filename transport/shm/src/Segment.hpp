// Segment: a POSIX shared-memory object, 0600, named /dev/shm/xmsg-<job_id>-<suffix>.
#pragma once

#include <cstddef>
#include <string>

namespace xmsg::transport::shm {

class Segment {
 public:
  Segment() = default;
  // Creates (exclusively; a stale object of the same name is replaced) and maps `bytes`.
  static Segment create(const std::string& name, size_t bytes);
  // An object that never has a name (memfd_create(2)), reserved and mapped like create()'s;
  // peers take it by its descriptor (kept open: descriptor()). `label` is for messages.
  static Segment create_nameless(const std::string& label, size_t bytes);
  // Maps an existing object created by a peer. `populate`: fill the page tables now (no minor
  // fault per 4 KiB on first use, at the price of the whole range in this process's Rss).
  static Segment open(const std::string& name, size_t bytes, bool populate = true);
  // Maps `bytes` at `offset` (a multiple of the page size) of an object a peer created and
  // that `fd` holds open; the name is only for messages. Throws TransportError.
  static Segment map(int fd, const std::string& name, size_t offset, size_t bytes, bool populate);

  Segment(Segment&& o) noexcept { *this = std::move(o); }
  Segment& operator=(Segment&& o) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment();

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  const std::string& name() const { return name_; }
  // The open object of create_nameless() until close_descriptor(); -1 otherwise.
  int descriptor() const { return fd_; }
  void close_descriptor();
  // Removes the name from /dev/shm; mappings stay valid. Idempotent.
  void unlink();

 private:
  std::string name_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool owner_linked_ = false;
  int fd_ = -1;
};

}  // namespace xmsg::transport::shm
