// Bytes accepted by try_send that the kernel has not taken yet, kept in fixed-size blocks so a
// large message never needs one giant allocation, and handed back to the kernel with writev.
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
  size_t bytes() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }
  // Fills up to `max` iovecs with the front of the queue; returns how many.
  int gather(struct iovec* iov, int max) const;
  void consume(size_t n);
  void clear();

 private:
  struct Block {
    std::unique_ptr<std::byte[]> data;
    size_t begin = 0, end = 0;
  };
  Block new_block();
  std::deque<Block> blocks_;
  std::vector<Block> spare_;  // one or two recycled blocks spare the allocator in steady state
  size_t bytes_ = 0;
};

}  // namespace xmsg::transport::tcp
