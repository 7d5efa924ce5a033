// ReceiveQueue: one rank's multi-producer, single-consumer message ring in shared memory.
//
// Every local sender writes into the receiver's ring; the receiver polls one cache line (the
// cell at its head). A message occupies whole 64-byte cells:
//   first cell:  [u32 ready][u32 payload bytes][WireHeader 24 B][payload, first 32 B]
//   more cells:  [payload, 64 B each]
// Producers reserve cells with one CAS on `tail`, write, then publish with a release store of
// `ready = position + 1` (mod 2^32) into the first cell. The consumer takes the cell at its
// head when ready equals head + 1. A stale word must never pass for that:
//   * the ready word of a first cell from an earlier lap holds an earlier position + 1 (the
//     ring size divides 2^32, so it differs until 2^32 positions later, by which time every
//     cell has been rewritten);
//   * a continuation cell's first word is payload, so the consumer overwrites it after use
//     (before handing the cells back through `head`), as it does for the cells a skip record
//     covers, with a value never congruent to position + 1 modulo the ring size (not 0: that
//     is the ready value of position 2^32 - 1). A ring with a single producer (two ranks on
//     a node) does it the other way round: before publishing a record the producer marks the
//     cell just past it as not ready when that cell last held payload, and the consumer never
//     writes to the cells it reads. Measured on this VM, 2 ranks, window-64 bandwidth: 4-64 KiB
//     +18-54% when cache-line hand-offs are cheap; when they are slow 8-16 KiB -7%, 32-64 KiB
//     +12-32% (docs/shm.md).
// Payloads of kAlignedFrom bytes or more start at the second cell, cache-line aligned.
// A message never wraps: when it would cross the ring's end, the producer reserves the cells up
// to the end as a skip record plus the message at the start, so the payload handed to the sink
// is always contiguous. One ring serves every size up to max_payload(), so per-sender FIFO is
// simply the ring's order.
#pragma once

#include <xmsg/transport/transport.hpp>

#include "RingCopy.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

namespace xmsg::transport::shm {

inline constexpr size_t kCell = 64;
inline constexpr size_t kFirstCellPayload = kCell - 8 - sizeof(WireHeader);  // 32
inline constexpr uint8_t kSkipKind = 0;  // not a MessageKind: padding up to the ring's end

struct alignas(kCell) Cell {
  std::atomic<uint32_t> ready;
  uint32_t bytes;  // payload bytes of this record (the header's length is the whole message's);
                   // of a skip record: the cells it covers
  WireHeader header;
  std::byte payload[kFirstCellPayload];
};
static_assert(sizeof(Cell) == kCell);
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free);

// Lives at the start of the segment; cells follow.
struct QueueControl {
  alignas(kCell) std::atomic<uint64_t> tail;  // next free position, producers CAS it
  alignas(kCell) std::atomic<uint64_t> head;  // consumer's published position (for free space)
  alignas(kCell) uint64_t magic;
  uint64_t cells;      // power of two
  int64_t owner_pid;
  uint64_t owner_rank;
  // A rank's ring only (0 in mailboxes): the rest of what peers learn about its segment at
  // wire-up, before anything is mapped (SegmentIdentity: sent by the owner, or read with pread).
  uint64_t mailboxes;    // size of the segment's mailbox pool
  uint32_t local_ranks;  // the node's ranks as the owner counts them (selection must agree)
  uint32_t unused;
  uint64_t probe_addr;   // a word in the owner's memory for the CMA probe, and its value
  uint64_t probe_value;
};
static_assert(sizeof(QueueControl) == 3 * kCell);

inline constexpr uint64_t kQueueMagic = 0x786d73677368'6d31ULL;  // "xmsgshm1"

// From this size on the payload starts at the second cell instead of right after the header,
// so both copies (into and out of the ring) run on whole cache lines.
inline constexpr uint64_t kAlignedFrom = 1024;

// Offset of the payload from the first cell's payload field.
inline size_t payload_skip(uint64_t payload) { return payload >= kAlignedFrom ? kFirstCellPayload : 0; }

inline size_t cells_for(uint64_t payload) {
  if (payload >= kAlignedFrom) return 1 + (payload + kCell - 1) / kCell;
  return payload <= kFirstCellPayload ? 1 : 1 + (payload - kFirstCellPayload + kCell - 1) / kCell;
}

inline size_t segment_bytes(uint64_t cells) { return sizeof(QueueControl) + cells * kCell; }

// A producer's view of one peer's ring (mapped from the peer's segment).
class QueueProducer {
 public:
  // Unmapped (the peer's segment is mapped at the first send to it): always full, so try_push
  // fails before writing anything and the send path needs no test of its own.
  QueueProducer() = default;
  // `sole_producer`: no other process ever writes this ring (a node with two ranks), so the
  // reservation can be a plain store instead of a locked compare-and-swap.
  // `marks_next` (only with a sole producer): before publishing a record the producer marks
  // the cell just past it as not ready when that cell held payload on the previous lap, so the
  // consumer never writes to the cells it reads (see QueueConsumer's `producer_marks`).
  QueueProducer(QueueControl* control, Cell* cells, uint64_t ncells, bool sole_producer = false,
                bool marks_next = false)
      : control_(control), cells_(cells), mask_(ncells - 1), ncells_(ncells), sole_(sole_producer),
        marks_(sole_producer && marks_next) {
    // Zeroed cells are as safe as first cells: 0 is the ready value of position 2^32 - 1 only.
    if (marks_) was_first_.assign((ncells + 63) / 64, ~uint64_t(0));
  }

  uint64_t max_payload() const { return max_payload_of(ncells_); }
  static uint64_t max_payload_of(uint64_t ncells) { return (ncells / 4 - 1) * kCell; }

  // True once the consumer has taken every record that ends at or before ring position `end`
  // (as returned by try_push). Reads the consumer's head line only while the answer is no.
  bool consumed(uint64_t end) {
    if (end <= cached_head_) return true;
    cached_head_ = control_->head.load(std::memory_order_acquire);
    return end <= cached_head_;
  }

  // Copies header + the two payload pieces (concatenated) into the ring. False when full.
  // On success `*end` (if given) is the ring position just past the record.
  bool try_push(const WireHeader& header, const std::byte* p1, size_t n1, const std::byte* p2 = nullptr,
                size_t n2 = 0, uint64_t* end_out = nullptr) {
    return try_push_filled(
        header, n1 + n2,
        [&](std::byte* dst) {
          copy_into_record(dst, p1, n1);
          copy_into_record(dst + n1, p2, n2);
        },
        end_out);
  }

  // Reserves a record of `n` payload bytes and lets `fill(dst)` write them in place (the
  // datatype engine packs straight into the ring this way). False when full; fill not called.
  template <class Fill>
  bool try_push_filled(const WireHeader& header, size_t n, Fill&& fill, uint64_t* end_out = nullptr) {
    const size_t need = cells_for(n);
    uint64_t pos = control_->tail.load(std::memory_order_relaxed);
    uint64_t pad;
    for (;;) {
      const uint64_t offset = pos & mask_;
      pad = offset + need > ncells_ ? ncells_ - offset : 0;
      const uint64_t end = pos + pad + need;
      const uint64_t limit = end + marks_;  // the marked cell must be free too
      if (limit - cached_head_ > ncells_) {
        cached_head_ = control_->head.load(std::memory_order_acquire);
        if (limit - cached_head_ > ncells_) return false;
      }
      if (sole_) {
        control_->tail.store(end, std::memory_order_relaxed);
        break;
      }
      if (control_->tail.compare_exchange_weak(pos, end, std::memory_order_acquire,
                                               std::memory_order_relaxed))
        break;
    }
    if (pad) {
      if (marks_) note_record(pos, pad);
      Cell& skip = cells_[pos & mask_];
      skip.header.kind = static_cast<MessageKind>(kSkipKind);
      skip.bytes = static_cast<uint32_t>(pad);
      skip.ready.store(static_cast<uint32_t>(pos + 1), std::memory_order_release);
      pos += pad;
    }
    Cell& first = cells_[pos & mask_];
    fill(first.payload + payload_skip(n));  // contiguous up to the record's end
    // The first cell is the line a caught-up consumer keeps reading: written once, after the
    // payload, it changes hands once per record instead of once for the header and once more
    // for the rest (window-64 bandwidth, near hand-offs: 4 KiB median 50.2 -> 54.1 GB/s).
    first.header = header;
    first.bytes = static_cast<uint32_t>(n);
    if (marks_) {
      // Tested before note_record: the bit still tells what the cell was on the previous lap.
      const uint64_t next = (pos + need) & mask_;
      if (!(was_first_[next >> 6] >> (next & 63) & 1))
        cells_[next].ready.store(static_cast<uint32_t>(pos + need + 2), std::memory_order_relaxed);
      note_record(pos, need);
    }
    first.ready.store(static_cast<uint32_t>(pos + 1), std::memory_order_release);
    if (end_out) *end_out = pos + need;
    return true;
  }

 private:
  // Read-only stand-in for an unmapped ring: with no cells every record looks too large for
  // the free space, so try_push returns before its reservation.
  static inline QueueControl unmapped_{};

  QueueControl* control_ = &unmapped_;
  Cell* cells_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t ncells_ = 0;
  // Cells [pos, pos + n) now hold one record: its first cell's ready word can never pass for a
  // later position, its other cells hold payload that could.
  void note_record(uint64_t pos, uint64_t n) {
    const uint64_t first = pos & mask_;  // records never wrap, so [first, first + n) is in the ring
    was_first_[first >> 6] |= uint64_t(1) << (first & 63);
    for (uint64_t c = first + 1, last = first + n; c < last;) {
      const uint64_t bit = c & 63, take = std::min<uint64_t>(64 - bit, last - c);
      was_first_[c >> 6] &= ~((take == 64 ? ~uint64_t(0) : ((uint64_t(1) << take) - 1)) << bit);
      c += take;
    }
  }

  uint64_t cached_head_ = 0;
  bool sole_ = false;
  bool marks_ = false;
  std::vector<uint64_t> was_first_;  // per cell: on its latest lap it held a first cell
};

// The owner's side of its own ring.
class QueueConsumer {
 public:
  QueueConsumer() = default;
  // `producer_marks`: the ring's only producer marks the cell after each record (see
  // QueueProducer), so consumed cells are handed back untouched.
  QueueConsumer(QueueControl* control, Cell* cells, uint64_t ncells, bool producer_marks = false)
      : control_(control), cells_(cells), mask_(ncells - 1), ncells_(ncells), marked_(producer_marks) {}

  // True when the cell at head is published (cheap check, one cache line).
  bool ready() const {
    return cells_[head_ & mask_].ready.load(std::memory_order_acquire) == static_cast<uint32_t>(head_ + 1);
  }

  // Delivers at most `budget` messages to `fn(header, payload_ptr, payload_len)`.
  template <class Fn>
  int poll(Fn&& fn, int budget) {
    int n = 0;
    while (n < budget) {
      Cell& c = cells_[head_ & mask_];
      if (c.ready.load(std::memory_order_acquire) != static_cast<uint32_t>(head_ + 1)) break;
      const WireHeader h = c.header;
      uint64_t used;
      if (static_cast<uint8_t>(h.kind) == kSkipKind) [[unlikely]] {
        used = c.bytes;
      } else {
        const uint64_t bytes = c.bytes;
        used = cells_for(bytes);
        const std::byte* payload = c.payload + payload_skip(bytes);
        prefetch_record(payload, bytes);
        fn(h, payload, bytes);
        ++n;
      }
      if (marked_) {
        // Nothing to clear: the producer keeps stale payload from passing for a record.
      } else if (used > kInvalidateNow || pending_end_) [[unlikely]] {
        retire(used);
      } else {
        invalidate(head_ + 1, head_ + used);
      }
      head_ += used;
      // While cells wait to be invalidated the published head stays before them.
      if (pending_end_ == 0) [[likely]]
        control_->head.store(head_, std::memory_order_release);
    }
    return n;
  }

  // Call when poll() found nothing: the peer is not waiting for us now.
  void idle() {
    idle_since_record_ = true;
    if (pending_end_) [[unlikely]]
      finish_pending();
  }

 private:
  // Overwriting the first word of many continuation cells right after reading them, before the
  // receiver answers, puts one cache-line ownership transfer per cell on the critical path
  // (1-16 KiB ping-pong 10-20% slower here). After an idle period (a ping-pong) the cells of a
  // long record are therefore invalidated at the next idle() or the next long record, and the
  // published head stays before them until then, so no producer reuses them meanwhile. While
  // streaming (no idle() in between) that only delays the work: invalidate at once. Leaving the
  // cells untouched instead (producer-side checks) measured slower still: 4 KiB streaming lost
  // a third, as the producer then finds the lines shared with the consumer on the next lap.
  static constexpr uint64_t kInvalidateNow = 9;  // a few stores sit in the store buffer for free

  void invalidate(uint64_t from, uint64_t to) {
    for (uint64_t p = from; p < to; ++p)
      cells_[p & mask_].ready.store(static_cast<uint32_t>(p + 2), std::memory_order_relaxed);
  }
  [[gnu::noinline]] void retire(uint64_t used) {
    const bool streaming = !idle_since_record_;
    idle_since_record_ = false;
    if (pending_end_) finish_pending();
    if (used <= kInvalidateNow || streaming) {
      invalidate(head_ + 1, head_ + used);
    } else {
      pending_begin_ = head_ + 1;
      pending_end_ = head_ + used;
    }
  }
  [[gnu::noinline]] void finish_pending() {
    invalidate(pending_begin_, pending_end_);
    pending_end_ = 0;
    control_->head.store(head_, std::memory_order_release);
  }

  QueueControl* control_ = nullptr;
  Cell* cells_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t ncells_ = 0;
  uint64_t head_ = 0;
  uint64_t pending_begin_ = 0;  // cells [begin, end) still to invalidate; end 0: none
  uint64_t pending_end_ = 0;
  bool idle_since_record_ = true;
  bool marked_ = false;
};

}  // namespace xmsg::transport::shm
