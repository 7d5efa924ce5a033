// ReceiveQueue: one rank's multi-producer, single-consumer message ring in shared memory.
//
// Every local sender writes into the receiver's ring; the receiver polls one cache line (the
// cell at its head). A message occupies whole 64-byte cells:
//   first cell:  [u32 ready][u32 payload bytes][WireHeader 24 B][payload, first 32 B]
//   more cells:  [payload, 64 B each]
// Producers reserve cells with one CAS on `tail`, write, then publish with a release store of
// `ready = position + 1` (mod 2^32) into the first cell. Every cell is rewritten or zeroed on
// every lap and the ring size divides 2^32, so a stale value never equals the expected one; the consumer zeroes the first word of continuation
// cells it consumed so stale payload bytes can never look like a published first cell.
// A message never wraps: when it would cross the ring's end, the producer reserves the cells up
// to the end as a skip record plus the message at the start, so the payload handed to the sink
// is always contiguous. One ring serves every size up to max_payload(), so per-sender FIFO is
// simply the ring's order.
#pragma once

#include <xmsg/transport/transport.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace xmsg::transport::shm {

inline constexpr size_t kCell = 64;
inline constexpr size_t kFirstCellPayload = kCell - 8 - sizeof(WireHeader);  // 32
inline constexpr uint8_t kSkipKind = 0;  // not a MessageKind: padding up to the ring's end

struct alignas(kCell) Cell {
  std::atomic<uint32_t> ready;
  uint32_t bytes;  // payload bytes of this record (the header's length is the whole message's)
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
};

inline constexpr uint64_t kQueueMagic = 0x786d73677368'6d31ULL;  // "xmsgshm1"

inline size_t cells_for(uint64_t payload) {
  return payload <= kFirstCellPayload ? 1 : 1 + (payload - kFirstCellPayload + kCell - 1) / kCell;
}

inline size_t segment_bytes(uint64_t cells) { return sizeof(QueueControl) + cells * kCell; }

// A producer's view of one peer's ring (mapped from the peer's segment).
class QueueProducer {
 public:
  QueueProducer() = default;
  // `sole_producer`: no other process ever writes this ring (a node with two ranks), so the
  // reservation can be a plain store instead of a locked compare-and-swap.
  QueueProducer(QueueControl* control, Cell* cells, uint64_t ncells, bool sole_producer = false)
      : control_(control), cells_(cells), mask_(ncells - 1), ncells_(ncells), sole_(sole_producer) {}

  uint64_t max_payload() const { return (ncells_ / 4 - 1) * kCell + kFirstCellPayload; }

  // Copies header + the two payload pieces (concatenated) into the ring. False when full.
  bool try_push(const WireHeader& header, const std::byte* p1, size_t n1, const std::byte* p2 = nullptr,
                size_t n2 = 0) {
    const size_t need = cells_for(n1 + n2);
    uint64_t pos = control_->tail.load(std::memory_order_relaxed);
    uint64_t pad;
    for (;;) {
      const uint64_t offset = pos & mask_;
      pad = offset + need > ncells_ ? ncells_ - offset : 0;
      const uint64_t end = pos + pad + need;
      if (end - cached_head_ > ncells_) {
        cached_head_ = control_->head.load(std::memory_order_acquire);
        if (end - cached_head_ > ncells_) return false;
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
      Cell& skip = cells_[pos & mask_];
      skip.header.kind = static_cast<MessageKind>(kSkipKind);
      skip.bytes = static_cast<uint32_t>(pad);
      skip.ready.store(static_cast<uint32_t>(pos + 1), std::memory_order_release);
      pos += pad;
    }
    Cell& first = cells_[pos & mask_];
    first.header = header;
    first.bytes = static_cast<uint32_t>(n1 + n2);
    std::byte* dst = first.payload;  // contiguous: first cell's tail then following cells
    if (n1) std::memcpy(dst, p1, n1);
    if (n2) std::memcpy(dst + n1, p2, n2);
    first.ready.store(static_cast<uint32_t>(pos + 1), std::memory_order_release);
    return true;
  }

 private:
  QueueControl* control_ = nullptr;
  Cell* cells_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t ncells_ = 0;
  uint64_t cached_head_ = 0;
  bool sole_ = false;
};

// The owner's side of its own ring.
class QueueConsumer {
 public:
  QueueConsumer() = default;
  QueueConsumer(QueueControl* control, Cell* cells, uint64_t ncells)
      : control_(control), cells_(cells), mask_(ncells - 1), ncells_(ncells) {}

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
      if (static_cast<uint8_t>(h.kind) == kSkipKind) {
        used = c.bytes;
      } else {
        const uint64_t bytes = c.bytes;
        used = cells_for(bytes);
        fn(h, c.payload, bytes);
        ++n;
      }
      for (uint64_t i = 1; i < used; ++i)
        cells_[(head_ + i) & mask_].ready.store(0, std::memory_order_relaxed);
      head_ += used;
      control_->head.store(head_, std::memory_order_release);
    }
    return n;
  }

 private:
  QueueControl* control_ = nullptr;
  Cell* cells_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t ncells_ = 0;
  uint64_t head_ = 0;
};

}  // namespace xmsg::transport::shm
