// Mailbox: the per-pair fast path for small messages, and the layout of a rank's segment.
//
// Besides its shared ReceiveQueue, every rank's segment holds one small single-producer ring
// (a "mailbox") per local rank that may send to it. A message whose payload fits in the first
// cell (<= 32 bytes) goes to the sender's own mailbox: no compare-and-swap (the sender owns the
// lane), and the few cells of a mailbox stay in the two cores' caches, whereas the shared ring
// walks through a megabyte and costs cold misses on its first lap. Cells use the same format
// as the ring (ready word written last), so the producer/consumer code is the ring's.
//
// MPI's per-sender order across the two lanes, with no sequence numbers:
//   * a sender uses its mailbox only when the receiver has consumed every ring record it sent
//     (QueueProducer::consumed on the position after its last ring record);
//   * before the receiver delivers a ring record from sender S it drains S's mailbox: anything
//     there was published before the ring record (release/acquire on the ready words), and
//     nothing newer can be there yet, because the sender waits for the ring record to be
//     consumed before using the mailbox again.
#pragma once

#include "ReceiveQueue.hpp"

namespace xmsg::transport::shm {

// 8 KiB per sender: a window of 64 small messages (OSU's bandwidth test) fits with room to
// spare, and a lap is short enough to stay cache resident.
inline constexpr uint64_t kMailboxCells = 128;

// Every mailbox record is exactly one first cell, so the ring's general machinery (skip
// records, stale continuation cells, a shared tail) has nothing to do here; these two classes
// are the ring's protocol for that one case (same cell format, ready = position + 1), about a
// third of the instructions per message on the latency path. The ready word of a cell from an
// earlier lap holds an earlier position + 1, and kMailboxCells divides 2^32, so it never passes
// for the current one.
class MailboxProducer {
 public:
  MailboxProducer() = default;
  MailboxProducer(QueueControl* control, Cell* cells) : control_(control), cells_(cells) {}

  // False when the mailbox is full. Reads the consumer's head line only then, so the lines the
  // receiver writes stay out of the sender's path while the mailbox has room.
  bool try_push(const WireHeader& header, const std::byte* payload, size_t n) {
    if (tail_ - cached_head_ >= kMailboxCells) {
      cached_head_ = control_->head.load(std::memory_order_acquire);
      if (tail_ - cached_head_ >= kMailboxCells) return false;
    }
    Cell& c = cells_[tail_ & (kMailboxCells - 1)];
    c.header = header;
    copy_upto32(c.payload, payload, n);
    c.bytes = static_cast<uint32_t>(n);
    ++tail_;
    c.ready.store(static_cast<uint32_t>(tail_), std::memory_order_release);
    return true;
  }

 private:
  QueueControl* control_ = nullptr;
  Cell* cells_ = nullptr;
  uint64_t tail_ = 0;  // the only producer: the position lives here, not in shared memory
  uint64_t cached_head_ = 0;
};

class MailboxConsumer {
 public:
  MailboxConsumer() = default;
  MailboxConsumer(QueueControl* control, Cell* cells) : control_(control), cells_(cells) {}

  bool ready() const { return peek() != nullptr; }

  // The published cell at the head, or nullptr; it stays there until take().
  const Cell* peek() const {
    const Cell& c = cells_[head_ & (kMailboxCells - 1)];
    return c.ready.load(std::memory_order_acquire) == static_cast<uint32_t>(head_ + 1) ? &c : nullptr;
  }
  void take() {
    ++head_;
    // The producer reads this only when the mailbox looks full.
    control_->head.store(head_, std::memory_order_release);
  }

  // Delivers at most `budget` messages to `fn(header, payload_ptr, payload_len)`.
  template <class Fn>
  int poll(Fn&& fn, int budget) {
    int n = 0;
    for (; n < budget; ++n) {
      const Cell* c = peek();
      if (!c) break;
      fn(c->header, c->payload, c->bytes);
      take();
    }
    return n;
  }

 private:
  QueueControl* control_ = nullptr;
  const Cell* cells_ = nullptr;
  uint64_t head_ = 0;
};

// [QueueControl][ring cells][mailbox 0: QueueControl + kMailboxCells cells]...
// Mailbox i belongs to the i-th rank (by world rank) among the node's local ranks; every local
// rank knows the same set (its shm peers plus itself), so the index agrees on both sides.
struct SegmentLayout {
  uint64_t ring_cells = 0;
  uint64_t mailboxes = 0;

  static constexpr size_t kMailboxBytes = sizeof(QueueControl) + kMailboxCells * kCell;

  size_t bytes() const { return segment_bytes(ring_cells) + mailboxes * kMailboxBytes; }

  static QueueControl* ring_control(void* base) { return static_cast<QueueControl*>(base); }
  static Cell* ring_cells_of(void* base) {
    return reinterpret_cast<Cell*>(static_cast<std::byte*>(base) + sizeof(QueueControl));
  }
  QueueControl* mailbox_control(void* base, uint64_t i) const {
    return reinterpret_cast<QueueControl*>(static_cast<std::byte*>(base) + segment_bytes(ring_cells) +
                                           i * kMailboxBytes);
  }
  Cell* mailbox_cells(void* base, uint64_t i) const {
    return reinterpret_cast<Cell*>(reinterpret_cast<std::byte*>(mailbox_control(base, i)) + sizeof(QueueControl));
  }
};

}  // namespace xmsg::transport::shm
