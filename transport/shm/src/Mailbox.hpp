// Mailbox: the per-pair fast path for small messages, and the layout of a rank's segment.
//
// Besides its shared ReceiveQueue, every rank's segment holds one small single-producer ring
// (a "mailbox") per local rank that may send to it. A message whose payload fits in one slot
// (<= 96 bytes, see MailboxSlot) goes to the sender's own mailbox: no compare-and-swap (the
// sender owns the lane), and the few lines of a mailbox stay in the two cores' caches, whereas
// the shared ring walks through a megabyte and costs cold misses on its first lap. A slot's
// first line has the ring's cell format (ready word written last).
//
// MPI's per-sender order across the two lanes, with no sequence numbers:
//   * a sender uses its mailbox only when the receiver has consumed every ring record it sent
//     (QueueProducer::consumed on the position after its last ring record);
//   * before the receiver delivers a ring record from sender S it drains S's mailbox: anything
//     there was published before the ring record (release/acquire on the ready words), and
//     nothing newer can be there yet, because the sender waits for the ring record to be
//     consumed before using the mailbox again.
#pragma once

#include "PollSpacing.hpp"
#include "ReceiveQueue.hpp"
#include "SmallCopy.hpp"

namespace xmsg::transport::shm {

// A mailbox slot is two lines: the first is a ring cell (ready word, header, 32 payload bytes),
// the second holds 64 more payload bytes, so one record carries up to 96 bytes with the
// payload contiguous. A slot per position rather than a record spanning a variable number of
// cells keeps every slot's first word a ready word: a cell that held payload on an earlier lap
// could otherwise show a stale word equal to the ready value now expected there.
inline constexpr size_t kMailboxPayload = kFirstCellPayload + kCell;  // 96

struct MailboxSlot {
  Cell first;
  std::byte more[kCell];  // payload bytes 32-95, right after first.payload

  std::byte* payload() { return reinterpret_cast<std::byte*>(this) + offsetof(Cell, payload); }
  const std::byte* payload() const { return reinterpret_cast<const std::byte*>(this) + offsetof(Cell, payload); }
};
static_assert(sizeof(MailboxSlot) == 2 * kCell && offsetof(MailboxSlot, more) == kCell);

// 16 KiB per sender: a window of 64 small messages (OSU's bandwidth test) fits with room to
// spare, and a lap is short enough to stay cache resident.
inline constexpr uint64_t kMailboxSlots = 128;

// Every mailbox record is exactly one slot, so the ring's general machinery (skip records,
// stale continuation cells, a shared tail) has nothing to do here; these two classes are the
// ring's protocol for that one case (same first-cell format, ready = position + 1), about a
// third of the instructions per message on the latency path. The ready word of a slot from an
// earlier lap holds an earlier position + 1, and kMailboxSlots divides 2^32, so it never passes
// for the current one. The second line needs no ready word of its own: it is written before
// the first line's ready word is released.
class MailboxProducer {
 public:
  // Unbound (no mailbox in that peer's segment, or the peer not mapped yet): always full, so
  // try_push fails without a test of its own on the send path and the message takes the ring.
  MailboxProducer() = default;
  MailboxProducer(QueueControl* control, MailboxSlot* slots) : control_(control), slots_(slots), tail_(0) {}

  // False when the mailbox is full. Reads the consumer's head line only then, so the lines the
  // receiver writes stay out of the sender's path while the mailbox has room.
  bool try_push(const WireHeader& header, const std::byte* payload, size_t n) {
    if (tail_ - cached_head_ >= kMailboxSlots) {
      cached_head_ = control_->head.load(std::memory_order_acquire);
      if (tail_ - cached_head_ >= kMailboxSlots) return false;
    }
    MailboxSlot& s = slots_[tail_ & (kMailboxSlots - 1)];
    copy_header(&s.first.header, header);
    copy_upto96(s.payload(), payload, n);
    s.first.bytes = static_cast<uint32_t>(n);
    ++tail_;
    s.first.ready.store(static_cast<uint32_t>(tail_), std::memory_order_release);
    return true;
  }

 private:
  // Read-only stand-in for an unbound producer: head 0 with tail kMailboxSlots looks full.
  static inline QueueControl never_free_{};

  QueueControl* control_ = &never_free_;
  MailboxSlot* slots_ = nullptr;
  uint64_t tail_ = kMailboxSlots;  // the only producer: the position lives here, not in shared memory
  uint64_t cached_head_ = 0;
};

class MailboxConsumer {
 public:
  // Unbound (no sender has claimed a mailbox for this lane yet): shows one slot that is never
  // published, so peek() and poll() need no test of their own.
  MailboxConsumer() = default;
  MailboxConsumer(QueueControl* control, MailboxSlot* slots, PollSpacing spacing = PollSpacing())
      : control_(control), slots_(slots), spacing_(spacing) {}

  bool ready() const { return peek() != nullptr; }
  bool bound() const { return slots_ != &never_ready_; }

  // The published slot at the head, or nullptr; it stays there until take().
  const MailboxSlot* peek() const {
    const MailboxSlot& s = slots_[head_ & (kMailboxSlots - 1)];
    const bool published = s.first.ready.load(std::memory_order_acquire) == static_cast<uint32_t>(head_ + 1);
    // After a two-line record the next is likely one too (a ping-pong of one size): request
    // the second line along with the first, so the two transfers overlap instead of the second
    // starting once the first has shown the record published (64 B in the VM's slow state
    // 0.29-0.30 us instead of 0.30-0.40). Not after one-line records: the extra request cost
    // 0-32 B about a tenth in the fast state.
    if (spacing_.after_two_lines()) __builtin_prefetch(s.more);
    return published ? &s : nullptr;
  }
  // The slot at the head, which a peek() has shown published.
  const MailboxSlot& shown() const { return slots_[head_ & (kMailboxSlots - 1)]; }

  // What a waiter does between two peek()s that found nothing. True (and no pause) when
  // `other_input()` says something else has arrived.
  template <class OtherInput>
  bool wait(OtherInput&& other_input) {
    if (spacing_.look_around() && other_input()) return true;
    spacing_.pause();
    return false;
  }

  void take() {
    spacing_.found(shown().first.bytes > kFirstCellPayload);
    ++head_;
    // The producer reads this only when the mailbox looks full.
    control_->head.store(head_, std::memory_order_release);
  }

  // Delivers at most `budget` messages to `fn(header, payload_ptr, payload_len)`.
  template <class Fn>
  int poll(Fn&& fn, int budget) {
    int n = 0;
    for (; n < budget; ++n) {
      const MailboxSlot* s = peek();
      if (!s) break;
      fn(s->first.header, s->payload(), s->first.bytes);
      take();
    }
    return n;
  }

 private:
  // Zeroed: its ready word never equals head + 1 = 1, and take() is never reached through it.
  static inline const MailboxSlot never_ready_{};

  QueueControl* control_ = nullptr;
  const MailboxSlot* slots_ = &never_ready_;
  uint64_t head_ = 0;
  PollSpacing spacing_;
};

// The identity line of a rank's ring control (QueueControl from `magic` on), as the owner sends
// it to its peers at wire-up (SegmentRendezvous) or they read it with pread(2).
struct SegmentIdentity {
  uint64_t magic;
  uint64_t ring_cells;
  int64_t owner_pid;
  uint64_t owner_rank;
  uint64_t mailboxes;
  uint32_t local_ranks;
  uint32_t unused;
  uint64_t probe_addr;
  uint64_t probe_value;
};
static_assert(sizeof(SegmentIdentity) == kCell && offsetof(QueueControl, magic) == 2 * kCell &&
              offsetof(QueueControl, probe_value) == 2 * kCell + offsetof(SegmentIdentity, probe_value) &&
              offsetof(QueueControl, local_ranks) == 2 * kCell + offsetof(SegmentIdentity, local_ranks));

// [QueueControl][ring cells] (page-rounded) [claims page: mapped_by line, claims: u32 x
// (mailboxes + 1)] (page-rounded) | [192-byte gap][mailbox 0][mailbox 1]...
// Everything before the bar is what a sender maps of a peer's segment; of the mailboxes it maps
// only the pages of the one it claimed. The ring starts the segment and the gap keeps every
// mailbox at the offset within its page that it had when the segment was [ring][mailboxes]:
// which lines pair up for the adjacent-line prefetcher and share pages decides what a hand-off
// costs (a build with one page in front of the ring scattered 1-2 KiB window bandwidth by up to
// a sixth on this VM). Mailbox k belongs to the sender whose world rank + 1 is in claims[k]: a
// sender takes the first zero entry with a compare-and-swap, so the claimed entries are always a
// prefix and the owner finds a new one by watching the entry after the last it bound
// (claims[mailboxes] stays 0: a pool without room is never watched past its end).
struct SegmentLayout {
  static constexpr size_t kPage = 4096;

  uint64_t ring_cells = 0;
  uint64_t mailboxes = 0;

  static constexpr size_t kMailboxBytes = sizeof(QueueControl) + kMailboxSlots * sizeof(MailboxSlot);

  static size_t page_round(size_t x) { return (x + kPage - 1) / kPage * kPage; }
  size_t claims_page() const { return page_round(segment_bytes(ring_cells)); }
  // What a sender maps: the ring and the claims page.
  size_t shared_bytes() const { return claims_page() + page_round(kCell + (mailboxes + 1) * sizeof(uint32_t)); }
  size_t mailbox_offset(uint64_t i) const { return shared_bytes() + sizeof(QueueControl) + i * kMailboxBytes; }
  size_t bytes() const { return mailbox_offset(mailboxes); }

  static QueueControl* ring_control(void* base) { return static_cast<QueueControl*>(base); }
  static Cell* ring_cells_of(void* base) {
    return reinterpret_cast<Cell*>(static_cast<std::byte*>(base) + sizeof(QueueControl));
  }
  // Peers that have mapped the segment: at the count of local peers the owner unlinks its name.
  std::atomic<uint64_t>* mapped_by(void* base) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(static_cast<std::byte*>(base) + claims_page());
  }
  std::atomic<uint32_t>* claims(void* base) const {
    return reinterpret_cast<std::atomic<uint32_t>*>(static_cast<std::byte*>(base) + claims_page() + kCell);
  }
  // A mailbox's control block at `at` (its start in a mapping of its own, or base + mailbox_offset).
  static QueueControl* mailbox_control(void* at) { return static_cast<QueueControl*>(at); }
  static MailboxSlot* mailbox_slots(void* at) {
    return reinterpret_cast<MailboxSlot*>(static_cast<std::byte*>(at) + sizeof(QueueControl));
  }
};

}  // namespace xmsg::transport::shm
