#include <xmsg/transport/shm/NodeCollectiveRegion.hpp>
#include <xmsg/transport/transport.hpp>

#include "Segment.hpp"

#include <cstring>
#include <new>

namespace xmsg::transport::shm {
namespace {

constexpr uint64_t kRegionMagic = 0x786d7367'636f6c6cULL;  // "xmsgcoll"

struct Header {
  uint64_t magic;
  uint64_t ranks;
  uint64_t slot_bytes;
};

size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

}  // namespace

NodeCollectiveRegion::NodeCollectiveRegion() = default;
NodeCollectiveRegion::NodeCollectiveRegion(NodeCollectiveRegion&&) noexcept = default;
NodeCollectiveRegion& NodeCollectiveRegion::operator=(NodeCollectiveRegion&&) noexcept = default;
NodeCollectiveRegion::~NodeCollectiveRegion() = default;

std::string NodeCollectiveRegion::name_for(const std::string& job_id, uint32_t context, int creator_world_rank) {
  return "/xmsg-" + job_id + "-coll-" + std::to_string(context) + "-" + std::to_string(creator_world_rank);
}

size_t NodeCollectiveRegion::bytes_for(int ranks, size_t slot_bytes) {
  return kStride * (1 + static_cast<size_t>(ranks)) + 2 * static_cast<size_t>(ranks) * round_up(slot_bytes, kStride);
}

NodeCollectiveRegion NodeCollectiveRegion::create(const std::string& name, int ranks, size_t slot_bytes) {
  slot_bytes = round_up(slot_bytes, kStride);
  auto segment = std::make_unique<Segment>(Segment::create(name, bytes_for(ranks, slot_bytes)));
  // The object is fresh (ftruncate zero-fills it), so the counters start at 0.
  auto* header = static_cast<Header*>(segment->data());
  for (int r = 0; r < ranks; ++r)
    new (static_cast<std::byte*>(segment->data()) + kStride * (1 + static_cast<size_t>(r))) RankControl();
  header->ranks = static_cast<uint64_t>(ranks);
  header->slot_bytes = slot_bytes;
  std::atomic_ref<uint64_t>(header->magic).store(kRegionMagic, std::memory_order_release);
  NodeCollectiveRegion region;
  region.bind(std::move(segment), ranks, slot_bytes);
  return region;
}

NodeCollectiveRegion NodeCollectiveRegion::open(const std::string& name, int ranks, size_t slot_bytes) {
  slot_bytes = round_up(slot_bytes, kStride);
  auto segment = std::make_unique<Segment>(Segment::open(name, bytes_for(ranks, slot_bytes)));
  auto* header = static_cast<Header*>(segment->data());
  if (std::atomic_ref<uint64_t>(header->magic).load(std::memory_order_acquire) != kRegionMagic ||
      header->ranks != static_cast<uint64_t>(ranks) || header->slot_bytes != slot_bytes)
    throw TransportError("shm: /dev/shm" + name + " is not a collective region for " + std::to_string(ranks) +
                         " ranks with " + std::to_string(slot_bytes) + "-byte slots");
  NodeCollectiveRegion region;
  region.bind(std::move(segment), ranks, slot_bytes);
  return region;
}

void NodeCollectiveRegion::bind(std::unique_ptr<Segment> segment, int ranks, size_t slot_bytes) {
  base_ = static_cast<std::byte*>(segment->data());
  slots_ = base_ + kStride * (1 + static_cast<size_t>(ranks));
  ranks_ = ranks;
  slot_bytes_ = slot_bytes;
  segment_ = std::move(segment);
}

void NodeCollectiveRegion::unlink() {
  if (segment_) segment_->unlink();
}

}  // namespace xmsg::transport::shm
