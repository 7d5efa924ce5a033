#include <xmsg/transport/shm/NodeCollectiveRegion.hpp>
#include <xmsg/transport/transport.hpp>

#include "CmaCopy.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <sched.h>
#include <unistd.h>

namespace xmsg::transport::shm {
namespace {

constexpr uint64_t kRegionMagic = 0x786d7367'636f6c6cULL;  // "xmsgcoll"

struct Header {
  uint64_t magic;
  uint64_t ranks;
  uint64_t slot_bytes;
  uint64_t pipe_chunk_bytes;
  uint64_t pipe_chunks;
};

constexpr size_t kPage = 4096;

size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

size_t slots_bytes(int ranks, size_t slot_bytes) { return 2 * static_cast<size_t>(ranks) * round_up(slot_bytes, NodeCollectiveRegion::kStride); }

// Stamp lines, then the consumed counters, rounded so chunk data starts on a page.
size_t pipe_meta_bytes(int ranks, int chunks) {
  return round_up(64 * static_cast<size_t>(chunks) + 8 * static_cast<size_t>(ranks), kPage);
}

// The pipelines of one region hold at most this much (unless a single rank's two chunks need
// more): every member maps all of them, so at 512 ranks the default 16 chunks of 64 KiB were
// 512 MiB in every rank's address space. 64 ranks keep their 16 chunks, 128 get 8, 512 get 2.
constexpr size_t kPipeBudgetBytes = size_t{64} << 20;

// Members map the region without populating it once it is this large: each then pays a minor
// fault on the first touch of a page instead of page tables for every rank's slots and
// pipelines (at 512 ranks, 512 x 74 MiB), most of which it never reads.
constexpr size_t kPopulateUpTo = size_t{16} << 20;

int pipe_chunks_within_budget(int ranks, size_t pipe_chunk_bytes, int pipe_chunks) {
  const size_t fit = kPipeBudgetBytes / (static_cast<size_t>(ranks) * pipe_chunk_bytes);
  return std::min(pipe_chunks, static_cast<int>(std::clamp<size_t>(fit, 2, 1024)));
}

}  // namespace

NodeCollectiveRegion::NodeCollectiveRegion() = default;
NodeCollectiveRegion::NodeCollectiveRegion(NodeCollectiveRegion&&) noexcept = default;
NodeCollectiveRegion& NodeCollectiveRegion::operator=(NodeCollectiveRegion&&) noexcept = default;
NodeCollectiveRegion::~NodeCollectiveRegion() = default;

std::string NodeCollectiveRegion::name_for(const std::string& job_id, uint32_t context, int creator_world_rank) {
  return "/xmsg-" + job_id + "-coll-" + std::to_string(context) + "-" + std::to_string(creator_world_rank);
}

size_t NodeCollectiveRegion::bytes_for(int ranks, size_t slot_bytes, size_t pipe_chunk_bytes, int pipe_chunks) {
  const size_t pipes_at = round_up(kStride * (1 + static_cast<size_t>(ranks)) + slots_bytes(ranks, slot_bytes), kPage);
  return pipes_at + static_cast<size_t>(ranks) * (pipe_meta_bytes(ranks, pipe_chunks) +
                                                  static_cast<size_t>(pipe_chunks) * round_up(pipe_chunk_bytes, kPage));
}

NodeCollectiveRegion NodeCollectiveRegion::create(const std::string& name, int ranks, size_t slot_bytes,
                                                  size_t pipe_chunk_bytes, int pipe_chunks, bool nameless_wanted,
                                                  JoinTicket* ticket) {
  slot_bytes = round_up(slot_bytes, kStride);
  pipe_chunk_bytes = round_up(pipe_chunk_bytes, kPage);
  pipe_chunks = pipe_chunks_within_budget(ranks, pipe_chunk_bytes, pipe_chunks);
  NodeSharedObject object = NodeSharedObject::create(
      name, bytes_for(ranks, slot_bytes, pipe_chunk_bytes, pipe_chunks), nameless_wanted);
  if (ticket) *ticket = object.ticket();
  // The object is fresh (posix_fallocate zero-fills it), so the counters start at 0.
  auto* header = static_cast<Header*>(object.data());
  for (int r = 0; r < ranks; ++r)
    new (static_cast<std::byte*>(object.data()) + kStride * (1 + static_cast<size_t>(r))) RankControl();
  header->ranks = static_cast<uint64_t>(ranks);
  header->slot_bytes = slot_bytes;
  header->pipe_chunk_bytes = pipe_chunk_bytes;
  header->pipe_chunks = static_cast<uint64_t>(pipe_chunks);
  std::atomic_ref<uint64_t>(header->magic).store(kRegionMagic, std::memory_order_release);
  NodeCollectiveRegion region;
  region.bind(std::move(object), ranks, slot_bytes, pipe_chunk_bytes, pipe_chunks);
  return region;
}

NodeCollectiveRegion NodeCollectiveRegion::join(const std::string& name, int ranks, size_t slot_bytes,
                                                size_t pipe_chunk_bytes, int pipe_chunks, const JoinTicket& ticket,
                                                const NodeSharedObject::Pause& pause) {
  slot_bytes = round_up(slot_bytes, kStride);
  pipe_chunk_bytes = round_up(pipe_chunk_bytes, kPage);
  pipe_chunks = pipe_chunks_within_budget(ranks, pipe_chunk_bytes, pipe_chunks);
  const size_t bytes = bytes_for(ranks, slot_bytes, pipe_chunk_bytes, pipe_chunks);
  NodeSharedObject object = NodeSharedObject::join(name, bytes, ticket, bytes <= kPopulateUpTo, pause);
  auto* header = static_cast<Header*>(object.data());
  if (std::atomic_ref<uint64_t>(header->magic).load(std::memory_order_acquire) != kRegionMagic ||
      header->ranks != static_cast<uint64_t>(ranks) || header->slot_bytes != slot_bytes ||
      header->pipe_chunk_bytes != pipe_chunk_bytes || header->pipe_chunks != static_cast<uint64_t>(pipe_chunks))
    throw TransportError("shm: " + name + " is not a collective region for " + std::to_string(ranks) + " ranks with " +
                         std::to_string(slot_bytes) + "-byte slots and " + std::to_string(pipe_chunks) +
                         " pipeline chunks of " + std::to_string(pipe_chunk_bytes) + " bytes");
  NodeCollectiveRegion region;
  region.bind(std::move(object), ranks, slot_bytes, pipe_chunk_bytes, pipe_chunks);
  return region;
}

void NodeCollectiveRegion::bind(NodeSharedObject object, int ranks, size_t slot_bytes, size_t pipe_chunk_bytes,
                                int pipe_chunks) {
  base_ = static_cast<std::byte*>(object.data());
  slots_ = base_ + kStride * (1 + static_cast<size_t>(ranks));
  pipes_ = base_ + round_up(kStride * (1 + static_cast<size_t>(ranks)) + slots_bytes(ranks, slot_bytes), kPage);
  ranks_ = ranks;
  slot_bytes_ = slot_bytes;
  pipe_chunk_bytes_ = pipe_chunk_bytes;
  pipe_chunks_ = pipe_chunks;
  pipe_meta_bytes_ = pipe_meta_bytes(ranks, pipe_chunks);
  object_ = std::move(object);
}

bool read_process_memory(pid_t pid, uint64_t remote_addr, void* dst, size_t len, std::string& err) {
  return cma_read(pid, remote_addr, dst, len, err);
}

bool write_process_memory(pid_t pid, uint64_t remote_addr, const void* src, size_t len, std::string& err) {
  return cma_write(pid, remote_addr, src, len, err);
}

void NodeCollectiveRegion::publish_identity(int rank) const {
  RankControl& mine = control(rank);
  unsigned cpu = 0, node = 0;
  mine.numa_node.store(::getcpu(&cpu, &node) == 0 ? static_cast<int64_t>(node) : -1, std::memory_order_relaxed);
  mine.self.store(reinterpret_cast<uint64_t>(&mine.pid), std::memory_order_relaxed);
  mine.pid.store(::getpid(), std::memory_order_release);
}

int NodeCollectiveRegion::numa_node_of(int rank) const {
  const RankControl& theirs = control(rank);
  if (theirs.pid.load(std::memory_order_acquire) <= 0) return -1;
  return static_cast<int>(theirs.numa_node.load(std::memory_order_relaxed));
}

bool NodeCollectiveRegion::can_read_from(int rank) const {
  RankControl& theirs = control(rank);
  const int64_t pid = theirs.pid.load(std::memory_order_acquire);
  const uint64_t self = theirs.self.load(std::memory_order_relaxed);
  return pid > 0 && self != 0 && cma_probe(static_cast<pid_t>(pid), self, static_cast<uint64_t>(pid));
}

void NodeCollectiveRegion::share(int joiners, const NodeSharedObject::Pause& pause) {
  object_.share(joiners, pause);
}

void NodeCollectiveRegion::done_sharing() { object_.done_sharing(); }

}  // namespace xmsg::transport::shm
