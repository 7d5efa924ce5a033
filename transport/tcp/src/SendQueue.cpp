#include "SendQueue.hpp"

#include <algorithm>
#include <cstring>

namespace xmsg::transport::tcp {

SendQueue::Block SendQueue::new_block() {
  if (!spare_.empty()) {
    Block b = std::move(spare_.back());
    spare_.pop_back();
    b.begin = b.end = 0;
    return b;
  }
  return Block{std::make_unique<std::byte[]>(kBlockBytes), nullptr, 0, 0};
}

void SendQueue::append(std::span<const std::byte> bytes) {
  bytes_ += bytes.size();
  while (!bytes.empty()) {
    if (blocks_.empty() || !blocks_.back().data || blocks_.back().end == kBlockBytes) blocks_.push_back(new_block());
    Block& b = blocks_.back();
    size_t take = std::min(bytes.size(), kBlockBytes - b.end);
    std::memcpy(b.data.get() + b.end, bytes.data(), take);
    b.end += take;
    bytes = bytes.subspan(take);
  }
}

void SendQueue::append_borrowed(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  bytes_ += bytes.size();
  borrowed_bytes_ += bytes.size();
  blocks_.push_back(Block{nullptr, bytes.data(), 0, bytes.size()});
}

int SendQueue::gather(struct iovec* iov, int max) const {
  int n = 0;
  for (const Block& b : blocks_) {
    if (n == max) break;
    iov[n].iov_base = const_cast<std::byte*>(b.bytes()) + b.begin;
    iov[n].iov_len = b.end - b.begin;
    ++n;
  }
  return n;
}

void SendQueue::consume(size_t n) {
  bytes_ -= n;
  while (n > 0) {
    Block& b = blocks_.front();
    size_t take = std::min(n, b.end - b.begin);
    b.begin += take, n -= take;
    if (!b.data) borrowed_bytes_ -= take;
    if (b.begin == b.end) {
      if (b.data && spare_.size() < 2) spare_.push_back(std::move(b));
      blocks_.pop_front();
    }
  }
}

void SendQueue::clear() {
  blocks_.clear();
  bytes_ = 0;
  borrowed_bytes_ = 0;
}

}  // namespace xmsg::transport::tcp
