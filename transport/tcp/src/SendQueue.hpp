// Bytes accepted by try_send that the kernel has not taken yet, kept in fixed-size blocks so a
// large message never needs one giant allocation, and handed back to the kernel with writev.
// A block may also borrow memory the caller keeps valid until it is sent (a range of an exposed
// rendezvous buffer a peer asked to read): such bytes are never copied.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <vector>

namespace xmsg::transport::tcp {

class SendQueue {
 public:
  static constexpr size_t kBlockBytes = 64 * 1024;

  void append(std::span<const std::byte> bytes);
  // Queues `bytes` by reference: they must stay valid until consumed or clear().
  void append_borrowed(std::span<const std::byte> bytes);
  size_t bytes() const { return bytes_; }
  // Bytes copied into the queue's own blocks (what the memory bound applies to).
  size_t copied_bytes() const { return bytes_ - borrowed_bytes_; }
  bool empty() const { return bytes_ == 0; }
  // Fills up to `max` iovecs with the front of the queue; returns how many.
  int gather(struct iovec* iov, int max) const;
  void consume(size_t n);
  void clear();

 private:
  struct Block {
    std::unique_ptr<std::byte[]> data;  // null for a borrowed block
    const std::byte* borrowed = nullptr;
    size_t begin = 0, end = 0;
    const std::byte* bytes() const { return data ? data.get() : borrowed; }
  };
  Block new_block();
  std::deque<Block> blocks_;
  std::vector<Block> spare_;  // one or two recycled blocks spare the allocator in steady state
  size_t bytes_ = 0;
  size_t borrowed_bytes_ = 0;
};

}  // namespace xmsg::transport::tcp
