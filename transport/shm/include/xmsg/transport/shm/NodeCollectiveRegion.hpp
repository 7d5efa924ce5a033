// NodeCollectiveRegion: the shared-memory segment through which the ranks of one communicator
// that all live on one node run small collectives (runtime/collectives/shm_collectives.cpp).
// A NodeSharedObject: nameless unless XMSG_SHM_NAMELESS=off (the creator hands its descriptor
// to the members, share()), else
// named like every xmsg segment, /dev/shm/xmsg-<job_id>-coll-..., 0600, so the launcher's
// cleanup of /xmsg-<job_id>-* removes it after a kill -9, and its creator unlinks it as soon
// as every member has mapped it (done_sharing).
//
// Layout: a header, then per rank one control block and two data slots. Collective number s
// uses half s % 2 of everything a rank writes, so a writer may run one collective ahead of its
// slowest reader. A control block holds, per half, one cache line with the rank's `posted`
// counter and up to kInlineBytes of data (a reader that sees the counter has the data in the
// same line: one cache-line transfer instead of two), then a line with its `done` counter,
// then one with its pid (so peers can read its buffers with process_vm_readv, CMA) and a
// `stage` counter for collectives with a second phase; blocks are 256 bytes apart so
// adjacent-line prefetch never makes two writers share.
//
// Large data streams through a pipeline per rank after the slots: `pipe_chunks` chunks of
// `pipe_chunk_bytes` (page-aligned), one cache line per chunk with its `stamp` (which chunk of
// which collective it holds), and per rank one `consumed` counter per writer (the stamp of the
// last chunk it finished reading from that writer). The pipelines of a region share a budget
// of 64 MiB: create() and open() lower the chunk count asked for to what fits (never below 2),
// and pipe_chunks() says what the region has.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

#include <xmsg/transport/shm/NodeSharedObject.hpp>

namespace xmsg::transport::shm {

// Copies `len` bytes at `remote_addr` in process `pid` into `dst` (process_vm_readv); false
// with `err` set when the kernel refuses (ptrace policy, dead process, unmapped range).
bool read_process_memory(pid_t pid, uint64_t remote_addr, void* dst, size_t len, std::string& err);
// Copies `len` bytes from `src` to `remote_addr` in process `pid` (process_vm_writev; the
// kernel allows it wherever it allows the read); false with `err` set when it refuses.
bool write_process_memory(pid_t pid, uint64_t remote_addr, const void* src, size_t len, std::string& err);

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
    // Written once when the rank maps the region; `self` is where this very field lives in the
    // rank's own address space, so a peer can check that CMA reads from it work.
    alignas(64) std::atomic<int64_t> pid;
    std::atomic<uint64_t> self;
    // The NUMA node the rank ran on when it mapped the region (getcpu(2)), -1 when unknown;
    // written before `pid`, read after it.
    std::atomic<int64_t> numa_node;
    // Number of the last collective in which this rank finished its first phase (allreduce:
    // its chunk of the result is final).
    std::atomic<uint64_t> stage;
  };
  // A slot may instead hold its data as lines that each carry their own stamp (the writer's
  // posted word for that collective): a reader polls every line it needs at once, so their
  // transfers overlap, where data beside a separate posted line costs one transfer after another.
  static constexpr size_t kStampedPayload = 56;
  struct alignas(64) StampedLine {
    std::atomic<uint64_t> stamp;
    std::byte data[kStampedPayload];
  };
  static_assert(sizeof(PostLine) == 64 && sizeof(RankControl) == kStride && sizeof(StampedLine) == 64);
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be address-free");

  NodeCollectiveRegion();
  NodeCollectiveRegion(NodeCollectiveRegion&&) noexcept;
  NodeCollectiveRegion& operator=(NodeCollectiveRegion&&) noexcept;
  ~NodeCollectiveRegion();

  // Creates (replacing a stale object of that name), zeroes and maps the region; `ticket` is
  // what the members need to join. Throws TransportError with a message naming the segment.
  static NodeCollectiveRegion create(const std::string& name, int ranks, size_t slot_bytes, size_t pipe_chunk_bytes,
                                     int pipe_chunks, bool nameless_wanted, JoinTicket* ticket);
  // Maps a region a peer created; throws TransportError when it cannot be joined or its header
  // does not describe `ranks` ranks with `slot_bytes` slots.
  static NodeCollectiveRegion join(const std::string& name, int ranks, size_t slot_bytes, size_t pipe_chunk_bytes,
                                   int pipe_chunks, const JoinTicket& ticket, const NodeSharedObject::Pause& pause);
  // Segment name for a communicator: unique per job, context id and creating world rank
  // (disjoint communicators made by one split share a context id, never a creator).
  static std::string name_for(const std::string& job_id, uint32_t context, int creator_world_rank);
  static size_t bytes_for(int ranks, size_t slot_bytes, size_t pipe_chunk_bytes, int pipe_chunks);

  // The creator, after sending the ticket: hands the region to `joiners` members as they join
  // (NodeSharedObject::share); throws TransportError when some never come.
  void share(int joiners, const NodeSharedObject::Pause& pause);
  // The creator, once every member joined or gave up: the name (if any) and the descriptor go;
  // the mappings stay valid.
  void done_sharing();

  bool mapped() const { return base_ != nullptr; }
  int ranks() const { return ranks_; }
  size_t slot_bytes() const { return slot_bytes_; }
  size_t pipe_chunk_bytes() const { return pipe_chunk_bytes_; }
  int pipe_chunks() const { return pipe_chunks_; }
  std::atomic<uint64_t>& chunk_stamp(int rank, int chunk) const {
    return *reinterpret_cast<std::atomic<uint64_t>*>(pipe(rank) + 64 * static_cast<size_t>(chunk));
  }
  std::atomic<uint64_t>& consumed(int reader, int writer) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(pipe(reader) + 64 * static_cast<size_t>(pipe_chunks_))[writer];
  }
  std::byte* chunk(int rank, int chunk) const {
    return pipe(rank) + pipe_meta_bytes_ + static_cast<size_t>(chunk) * pipe_chunk_bytes_;
  }
  RankControl& control(int rank) const {
    return *reinterpret_cast<RankControl*>(base_ + kStride * (1 + static_cast<size_t>(rank)));
  }
  std::atomic<uint64_t>& posted(int rank, uint64_t seq) const { return control(rank).half[seq & 1].posted; }
  std::atomic<uint64_t>& done(int rank) const { return control(rank).done; }
  std::atomic<uint64_t>& stage(int rank) const { return control(rank).stage; }
  // Publishes this process's pid and NUMA node in `rank`'s block (see RankControl::pid).
  void publish_identity(int rank) const;
  // `rank`'s NUMA node as it published it (-1: unknown or not yet published).
  int numa_node_of(int rank) const;
  // True when a CMA read of `rank`'s published pid field in its own process works.
  bool can_read_from(int rank) const;
  // Where `rank` puts `bytes` of data in collective number `seq`: beside its posted counter
  // when they fit there, else its slot.
  std::byte* data(int rank, uint64_t seq, size_t bytes) const {
    if (bytes <= kInlineBytes) return control(rank).half[seq & 1].data;
    return slots_ + (2 * static_cast<size_t>(rank) + (seq & 1)) * slot_bytes_;
  }
  // `rank`'s slot for collective `seq` as stamped lines (slot_bytes() / 64 of them).
  StampedLine* stamped(int rank, uint64_t seq) const {
    return reinterpret_cast<StampedLine*>(slots_ + (2 * static_cast<size_t>(rank) + (seq & 1)) * slot_bytes_);
  }

 private:
  NodeSharedObject object_;
  std::byte* base_ = nullptr;
  std::byte* slots_ = nullptr;
  int ranks_ = 0;
  size_t slot_bytes_ = 0;
  std::byte* pipes_ = nullptr;
  size_t pipe_chunk_bytes_ = 0;
  int pipe_chunks_ = 0;
  size_t pipe_meta_bytes_ = 0;

  std::byte* pipe(int rank) const {
    return pipes_ + static_cast<size_t>(rank) * (pipe_meta_bytes_ + static_cast<size_t>(pipe_chunks_) * pipe_chunk_bytes_);
  }
  void bind(NodeSharedObject object, int ranks, size_t slot_bytes, size_t pipe_chunk_bytes, int pipe_chunks);
};

}  // namespace xmsg::transport::shm
