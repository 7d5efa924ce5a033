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
