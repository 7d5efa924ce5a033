// NodeCollectiveRegion: the shared-memory segment through which the ranks of one communicator
// that all live on one node run small collectives (runtime/collectives/shm_collectives.cpp).
// Named like every xmsg segment, /dev/shm/xmsg-<job_id>-coll-..., 0600, so the launcher's
// cleanup of /xmsg-<job_id>-* removes it after a kill -9; its creator unlinks it as soon as
// every member has mapped it.
//
// Layout: a header line, then per rank one control block (the rank's `posted` and `done`
// sequence numbers, alone on their own 128-byte pair of cache lines so adjacent-line
// prefetch never makes two writers share) and two data slots (collective number s uses slot
// s % 2, so a writer may run one collective ahead of its slowest reader).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace xmsg::transport::shm {

class Segment;

class NodeCollectiveRegion {
 public:
  static constexpr size_t kStride = 128;

  struct alignas(kStride) RankControl {
    // Number of the last collective in which this rank arrived / published its slot.
    std::atomic<uint64_t> posted;
    // Number of the last collective this rank finished (it reads no slot of it any more).
    std::atomic<uint64_t> done;
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be address-free");

  NodeCollectiveRegion();
  NodeCollectiveRegion(NodeCollectiveRegion&&) noexcept;
  NodeCollectiveRegion& operator=(NodeCollectiveRegion&&) noexcept;
  ~NodeCollectiveRegion();

  // Creates (replacing a stale object of that name), zeroes and maps the region. Throws
  // TransportError with a message naming the segment.
  static NodeCollectiveRegion create(const std::string& name, int ranks, size_t slot_bytes);
  // Maps a region a peer created; throws TransportError when it is missing or its header does
  // not describe `ranks` ranks with `slot_bytes` slots.
  static NodeCollectiveRegion open(const std::string& name, int ranks, size_t slot_bytes);
  // Segment name for a communicator: unique per job, context id and creating world rank
  // (disjoint communicators made by one split share a context id, never a creator).
  static std::string name_for(const std::string& job_id, uint32_t context, int creator_world_rank);
  static size_t bytes_for(int ranks, size_t slot_bytes);

  // Removes the name from /dev/shm; the mappings stay valid.
  void unlink();

  bool mapped() const { return base_ != nullptr; }
  int ranks() const { return ranks_; }
  size_t slot_bytes() const { return slot_bytes_; }
  RankControl& control(int rank) const {
    return *reinterpret_cast<RankControl*>(base_ + kStride * (1 + static_cast<size_t>(rank)));
  }
  // The slot `rank` writes in collective number `seq`.
  std::byte* slot(int rank, uint64_t seq) const {
    return slots_ + (2 * static_cast<size_t>(rank) + (seq & 1)) * slot_bytes_;
  }

 private:
  std::unique_ptr<Segment> segment_;
  std::byte* base_ = nullptr;
  std::byte* slots_ = nullptr;
  int ranks_ = 0;
  size_t slot_bytes_ = 0;

  void bind(std::unique_ptr<Segment> segment, int ranks, size_t slot_bytes);
};

}  // namespace xmsg::transport::shm
