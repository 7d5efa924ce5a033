// The shm ReceiveQueue in one process: several producer threads, one consumer, wrap-around,
// full ring, multi-cell messages. (The same code runs between processes over a segment.)
#include "Mailbox.hpp"
#include "ReceiveQueue.hpp"
#include "RingCopy.hpp"
#include "SmallCopy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>
#include <vector>

using namespace xmsg::transport;
using namespace xmsg::transport::shm;

namespace {

struct Ring {
  explicit Ring(uint64_t cells) : cells(cells) {
    mem = static_cast<std::byte*>(std::aligned_alloc(64, segment_bytes(cells)));
    std::memset(mem, 0, segment_bytes(cells));
    control = new (mem) QueueControl();
    cell = reinterpret_cast<Cell*>(mem + sizeof(QueueControl));
  }
  ~Ring() { std::free(mem); }
  // `marking`: the single-producer mode where the producer, not the consumer, keeps stale
  // payload from passing for a record.
  QueueProducer producer(bool marking = false) { return QueueProducer(control, cell, cells, marking, marking); }
  QueueConsumer consumer(bool marking = false) { return QueueConsumer(control, cell, cells, marking); }
  uint64_t cells;
  std::byte* mem;
  QueueControl* control;
  Cell* cell;
};

WireHeader header(uint32_t src, int32_t tag, uint64_t len) {
  return {src, 0, tag, MessageKind::kEager, 0, 0, len};
}

TEST(ReceiveQueue, FullRingRefusesThenAcceptsAfterConsumption) {
  Ring ring(64);
  auto p = ring.producer();
  auto c = ring.consumer();
  std::vector<std::byte> payload(200, std::byte{7});  // 4 cells each
  int pushed = 0;
  while (p.try_push(header(0, pushed, payload.size()), payload.data(), payload.size())) ++pushed;
  EXPECT_EQ(pushed, 16);
  int seen = 0;
  c.poll([&](const WireHeader& h, const std::byte* data, uint64_t n) {
    EXPECT_EQ(h.tag, seen);
    EXPECT_EQ(n, 200u);
    EXPECT_EQ(data[199], std::byte{7});
    ++seen;
  }, 3);
  EXPECT_EQ(seen, 3);
  EXPECT_TRUE(p.try_push(header(0, 99, payload.size()), payload.data(), payload.size()));
}

TEST(ReceiveQueue, ManyProducersKeepPerProducerOrderAndContent) {
  Ring ring(1024);
  constexpr int kProducers = 4, kPerProducer = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kProducers; ++t) {
    threads.emplace_back([&, t] {
      auto p = ring.producer();
      std::vector<std::byte> buf(300);
      for (int i = 0; i < kPerProducer; ++i) {
        const size_t n = static_cast<size_t>((i * 37 + t) % 300);
        for (size_t k = 0; k < n; ++k) buf[k] = static_cast<std::byte>(i + k + t);
        while (!p.try_push(header(t, i, n), buf.data(), n)) std::this_thread::yield();
      }
    });
  }
  auto c = ring.consumer();
  std::vector<int> next(kProducers, 0);
  int total = 0, errors = 0;
  while (total < kProducers * kPerProducer) {
    total += c.poll([&](const WireHeader& h, const std::byte* data, uint64_t n) {
      const int t = static_cast<int>(h.source), i = h.tag;
      if (i != next[t]++) ++errors;
      if (n != static_cast<uint64_t>((i * 37 + t) % 300)) ++errors;
      for (uint64_t k = 0; k < n; ++k)
        if (data[k] != static_cast<std::byte>(i + k + t)) {
          ++errors;
          break;
        }
    }, 64);
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors, 0);
  for (int t = 0; t < kProducers; ++t) EXPECT_EQ(next[t], kPerProducer);
}

void max_payload_fits_across_the_wrap(bool marking) {
  Ring ring(64);
  auto p = ring.producer(marking);
  auto c = ring.consumer(marking);
  const uint64_t max = p.max_payload();
  std::vector<std::byte> buf(max, std::byte{3});
  for (int round = 0; round < 50; ++round) {
    ASSERT_TRUE(p.try_push(header(0, round, max), buf.data(), max));
    ASSERT_TRUE(p.try_push(header(0, round, 1), buf.data(), 1));
    int got = 0;
    while (got < 2) got += c.poll([&](const WireHeader&, const std::byte* d, uint64_t n) {
      EXPECT_TRUE(n == max || n == 1);
      EXPECT_EQ(d[n - 1], std::byte{3});
    }, 8);
  }
}

TEST(ReceiveQueue, MaxPayloadFitsAcrossTheWrap) { max_payload_fits_across_the_wrap(false); }
TEST(ReceiveQueue, MaxPayloadFitsAcrossTheWrapWhenTheProducerMarks) { max_payload_fits_across_the_wrap(true); }

// Payload bytes of a record that takes exactly `cells` cells, and where continuation cell i
// (1 <= i < cells) starts within that payload.
uint64_t payload_for_cells(uint64_t cells) {
  const uint64_t aligned = (cells - 1) * kCell;
  return aligned >= kAlignedFrom ? aligned : kFirstCellPayload + (cells - 1) * kCell;
}
uint64_t continuation_offset(uint64_t payload, uint64_t i) {
  return i * kCell - (kCell - kFirstCellPayload) - payload_skip(payload);
}

// A continuation cell's first payload word may equal the ready value the consumer will expect
// at that cell on the next lap; it must never be taken for a published record, whether the
// consumer invalidates such cells at once (short records) or after idle() (long ones), or the
// sole producer marks the cell after each record.
void stale_payload_never_passes_for_a_published_record(bool marking) {
  constexpr uint64_t kCells = 64;
  Ring ring(kCells);
  auto p = ring.producer(marking);
  auto c = ring.consumer(marking);
  int32_t expect_tag = 0;
  int delivered = 0;
  auto sink = [&](const WireHeader& h, const std::byte*, uint64_t) {
    EXPECT_EQ(h.tag, expect_tag);
    ++delivered;
  };
  // One message in, exactly one out; as ShmTransport does, idle() follows an empty poll.
  auto push_and_take = [&](const std::vector<std::byte>& buf) {
    for (int tries = 0; !p.try_push(header(0, expect_tag, buf.size()), buf.data(), buf.size()); ++tries) {
      ASSERT_LT(tries, 2) << "ring stays full";
      c.idle();
    }
    delivered = 0;
    ASSERT_EQ(c.poll(sink, 1), 1);
    ASSERT_EQ(c.poll(sink, 1), 0) << "a stale cell passed for a record after message " << expect_tag;
    c.idle();
    ++expect_tag;
  };
  uint64_t pos = 0;  // the producer's position, mirrored here to forge the words
  for (int round = 0; round < 40; ++round) {
    const uint64_t cells = round % 2 ? 20 : 5;  // deferred and immediate invalidation
    if ((pos % kCells) + cells > kCells) pos += kCells - pos % kCells;  // the skip record
    std::vector<std::byte> big(payload_for_cells(cells), std::byte{1});
    ASSERT_EQ(cells_for(big.size()), cells);
    for (uint64_t i = 1; i < cells; ++i) {
      const uint32_t next_lap_ready = static_cast<uint32_t>(pos + i + kCells + 1);
      std::memcpy(big.data() + continuation_offset(big.size(), i), &next_lap_ready, 4);
    }
    push_and_take(big);
    if (::testing::Test::HasFailure()) return;
    pos += cells;
    // A lap of one-cell records walks the consumer over every forged cell.
    std::vector<std::byte> small(8, std::byte{1});
    for (uint64_t k = 0; k < kCells; ++k) {
      push_and_take(small);
      if (::testing::Test::HasFailure()) return;
      ++pos;
    }
  }
}

TEST(ReceiveQueue, StalePayloadNeverPassesForAPublishedRecord) { stale_payload_never_passes_for_a_published_record(false); }
TEST(ReceiveQueue, StalePayloadNeverPassesWhenTheProducerMarks) { stale_payload_never_passes_for_a_published_record(true); }

}  // namespace

// Every length a slot can carry, at every source and destination alignment within a word: the
// copy writes exactly n bytes (the overlapping blocks must neither miss nor overrun one).
TEST(SmallCopy, EveryLengthUpTo96ExactBytesNoOverrun) {
  for (size_t n = 0; n <= 96; ++n)
    for (size_t so = 0; so < 8; ++so)
      for (size_t doff = 0; doff < 8; ++doff) {
        std::byte src[112], dst[128];
        for (size_t i = 0; i < sizeof src; ++i) src[i] = static_cast<std::byte>(i * 7 + 1);
        std::memset(dst, 0xEE, sizeof dst);
        copy_upto96(dst + 8 + doff, src + so, n);
        for (size_t i = 0; i < sizeof dst; ++i) {
          const bool inside = i >= 8 + doff && i < 8 + doff + n;
          const std::byte want = inside ? src[so + i - 8 - doff] : std::byte{0xEE};
          ASSERT_EQ(dst[i], want) << "n=" << n << " src offset " << so << " dst offset " << doff << " byte " << i;
        }
      }
}

// The record copy switches to `rep movsb` at kOverlapFrom: lengths on both sides of the switch
// and around 8 KiB, odd offsets, guard bytes on both sides.
TEST(RingCopy, LengthsAroundTheSwitchExactBytesNoOverrun) {
  std::vector<std::byte> src(9000), dst(9100);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 13 + 5);
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, kOverlapFrom - 1, kOverlapFrom, kOverlapFrom + 1,
                   size_t{2048}, size_t{4095}, size_t{8192}, size_t{8193}})
    for (size_t so : {size_t{0}, size_t{3}})
      for (size_t doff : {size_t{0}, size_t{5}}) {
        std::fill(dst.begin(), dst.end(), std::byte{0xEE});
        prefetch_record(src.data() + so, n);  // a hint only: must not change or fault anything
        copy_into_record(dst.data() + 16 + doff, src.data() + so, n);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= 16 + doff && i < 16 + doff + n;
          const std::byte want = inside ? src[so + i - 16 - doff] : std::byte{0xEE};
          ASSERT_EQ(dst[i], want) << "n=" << n << " src offset " << so << " dst offset " << doff << " byte " << i;
        }
      }
}

// The mailbox (one two-line slot per record, 0-96 bytes): a full mailbox refuses until the
// consumer takes, peek() leaves the message in place until take(), and over many laps (the ready words of earlier laps still in
// the slots, second lines holding the payload of longer records) every message comes once, in
// order, with its bytes, whatever mix of one- and two-line records went before.
TEST(Mailbox, FullRefusesPeekKeepsOrderOverManyLaps) {
  constexpr size_t kBytes = sizeof(QueueControl) + kMailboxSlots * sizeof(MailboxSlot);
  auto* mem = static_cast<std::byte*>(std::aligned_alloc(64, kBytes));
  std::memset(mem, 0, kBytes);
  auto* control = new (mem) QueueControl();
  auto* slots = reinterpret_cast<MailboxSlot*>(mem + sizeof(QueueControl));
  MailboxProducer producer(control, slots);
  MailboxConsumer consumer(control, slots);

  uint64_t sent = 0, received = 0;
  auto push = [&] {
    std::byte data[kMailboxPayload];
    const size_t n = sent % (kMailboxPayload + 1);
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<std::byte>(sent + i);
    if (!producer.try_push(header(0, static_cast<int32_t>(sent), n), data, n)) return false;
    ++sent;
    return true;
  };
  auto check = [&](const WireHeader& h, const std::byte* data, uint64_t n) {
    ASSERT_EQ(h.tag, static_cast<int32_t>(received));
    ASSERT_EQ(n, received % (kMailboxPayload + 1));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], static_cast<std::byte>(received + i));
    ++received;
  };

  EXPECT_EQ(consumer.peek(), nullptr);
  while (push()) {
  }
  EXPECT_EQ(sent, kMailboxSlots);
  const MailboxSlot* head = consumer.peek();
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(consumer.peek(), head);  // still there: peek does not consume
  EXPECT_FALSE(push());
  check(head->first.header, head->payload(), head->first.bytes);
  consumer.take();
  EXPECT_TRUE(push());
  EXPECT_FALSE(push());

  // Many laps with the consumer a varying distance behind.
  for (int round = 0; round < 2000; ++round) {
    const int take = 1 + round % 40;
    EXPECT_EQ(consumer.poll(check, take), take);
    for (int i = 0; i < take; ++i) ASSERT_TRUE(push());
  }
  while (consumer.poll(check, 64) > 0) {
  }
  EXPECT_EQ(received, sent);
  EXPECT_GT(sent, 100 * kMailboxSlots);
  EXPECT_EQ(consumer.peek(), nullptr);
  std::free(mem);
}

// PollSpacing: the regime a waiter's loop follows. Only directions that cannot flake on a
// loaded machine are asserted: a hand-off made slow on purpose must select "far".
TEST(PollSpacing, FixedRegimesLookAroundAsDocumented) {
  PollSpacing near(PollSpacing::Regime::kNear);
  PollSpacing far(PollSpacing::Regime::kFar);
  int near_looks = 0, far_looks = 0;
  for (int i = 0; i < 64; ++i) {
    near_looks += near.look_around();
    far_looks += far.look_around();
  }
  EXPECT_EQ(near_looks, 64);  // near: other lanes on every look
  EXPECT_EQ(far_looks, 8);    // far: every 8th look
  EXPECT_FALSE(near.far());
  EXPECT_TRUE(far.far());
  // After a two-line record the far regime loops like the near one.
  far.found(true);
  int after_long = 0;
  for (int i = 0; i < 16; ++i) after_long += far.look_around();
  EXPECT_EQ(after_long, 16);
}

TEST(PollSpacing, MeasuredSlowHandoffsSelectFar) {
  EXPECT_FALSE(PollSpacing(PollSpacing::Regime::kMeasured).far());  // until measured, the near loop
  // Records found 500 ns after the waiter's last pause: four times the 120 ns threshold, and
  // below the 2 us beyond which a sample is dropped as "not a hand-off". Waits are measured once
  // the first kWarmupFinds records were found, a few close together. A preempted sample is
  // dropped by design, so on a loaded machine one attempt may see all of them dropped: a fresh
  // waiter is tried again then (the assertion itself is not loosened).
  auto busy = [] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(500);
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  auto waiter_after_slow_handoffs = [&] {
    PollSpacing s(PollSpacing::Regime::kMeasured);
    for (uint32_t i = 0; i < PollSpacing::kWarmupFinds + 4 * PollSpacing::kFirstSamples; ++i) {
      s.pause();
      busy();
      s.found(false);
    }
    return s;
  };
  PollSpacing s = waiter_after_slow_handoffs();
  for (int attempt = 1; attempt < 20 && !s.far(); ++attempt) s = waiter_after_slow_handoffs();
  ASSERT_TRUE(s.far());
  // A record found at the first look (no pause before it) measures nothing.
  for (int i = 0; i < 16; ++i) s.found(false);
  EXPECT_TRUE(s.far());
}
