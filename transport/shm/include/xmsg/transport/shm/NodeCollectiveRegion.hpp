// NodeCollectiveRegion: the shared-memory segment through which the ranks of one communicator
// that all live on one node run small collectives (runtime/collectives/shm_collectives.cpp).
// Named like every xmsg segment, /dev/shm/xmsg-<job_id>-coll-..., 0600, so the launcher's
// cleanup of /xmsg-<job_id>-* removes it after a kill -9; its creator unlinks it as soon as
// every member has mapped it.
//
// Layout: a header, then per rank one control block and two data slots. Collective number s
// uses half s % 2 of everything a rank writes, so a writer may run one collective ahead of its
// slowest reader. A control block holds, per half, one cache line with the rank's `posted`
// counter and up to kInlineBytes of data (a reader that sees the counter has the data in the
// same line: one cache-line transfer instead of two), then a line with its `done` counter;
// blocks are 256 bytes apart so adjacent-line prefetch never makes two writers share.
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
  static constexpr size_t kStride = 256;
  static constexpr size_t kInlineBytes = 56;

  struct alignas(64) PostLine {
    // Number of the last collective of this half in which the rank arrived / published data.
    std::atomic<uint64_t> posted;
    std::byte data[kInlineBytes];
  };
  struct alignas(kStride) RankControl {
    PostLine half[2];
    // Number of the last collective this rank finished (it reads nothing of it any more).
    alignas(64) std::atomic<uint64_t> done;
  };
  static_assert(sizeof(PostLine) == 64 && sizeof(RankControl) == kStride);
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
  std::atomic<uint64_t>& posted(int rank, uint64_t seq) const { return control(rank).half[seq & 1].posted; }
  std::atomic<uint64_t>& done(int rank) const { return control(rank).done; }
  // Where `rank` puts `bytes` of data in collective number `seq`: beside its posted counter
  // when they fit there, else its slot.
  std::byte* data(int rank, uint64_t seq, size_t bytes) const {
    if (bytes <= kInlineBytes) return control(rank).half[seq & 1].data;
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
