// PollSpacing: what a receiver waiting on a mailbox line does between two looks at it.
//
// Looking again at once is not free, and what pays depends on what a cache-line hand-off
// between the two cores costs. Measured in the VM this project runs on (AMD EPYC, two vCPUs that
// sit either close together — a hand-off 0.05-0.07 us — or far apart — ~0.2 us), OSU 0-32 B
// one-way latency, same runs, xmsg's in-place receive:
//   near (hand-off ~0.06 us): other lanes checked on every look + one pause  0.067-0.077 us
//                             other lanes every 8th look + one pause         0.071-0.081
//                             other lanes every 8th look + two pauses        0.085-0.093
//   far  (hand-off ~0.20 us): other lanes checked on every look + one pause  0.27-0.30 us
//                             other lanes every 8th look + one pause         0.24-0.26
//                             other lanes every 8th look + two pauses        0.21-0.23
// So the regime follows the hand-off cost, measured on the receives themselves: a few first
// waits, then one in kSampleEvery, time the look that finds the record (that load is the
// hand-off: the writer took the line away); an average slower than kFarHandoffNs selects "far".
// XMSG_SHM_POLL_SPACING=near|far fixes the regime instead (docs/shm.md).
#pragma once

#include <xmsg/transport/transport.hpp>

#include <cstdint>
#include <ctime>

namespace xmsg::transport::shm {

class PollSpacing {
 public:
  enum class Regime { kMeasured, kNear, kFar };
  static constexpr uint64_t kFarHandoffNs = 120;  // between the two placements above
  // Finds per measured wait after the first few: ~10-30 ms apart in a ping-pong. Any clock read
  // in the loop disturbs it (two spinning ranks fall into a faster or slower rhythm, and a
  // measured wait every 64 finds cost 0-32 B ~15% when hand-offs are near), so the regime is
  // re-checked rarely; a change of placement is followed within ~0.1 s.
  static constexpr uint32_t kSampleEvery = 65536;
  static constexpr uint32_t kFirstSamples = 8;
  // Finds before the first measured wait: a mailbox lap (128 slots) and then some, so that no
  // sample times a line's first touch (a miss to memory, not a hand-off).
  static constexpr uint32_t kWarmupFinds = 256;
  // Longer than any hand-off: the waiter was interrupted, preempted or gave up on the in-place
  // receive (the record then arrives through progress()); such a sample is dropped.
  static constexpr uint64_t kNotAHandoffNs = 2000;

  explicit PollSpacing(Regime regime = Regime::kNear)
      : measured_(regime == Regime::kMeasured),
        far_(regime == Regime::kFar),
        countdown_(measured_ ? kWarmupFinds : UINT32_MAX) {}

  // Before a pause: whether the waiter should look at its other lanes this time.
  bool look_around() { return !spaced() || (++looks_ & 7) == 0; }

  // Between two looks at a line that has not changed yet.
  void pause() {
    cpu_relax();
    if (spaced()) cpu_relax();
    if (armed_) [[unlikely]] stamp();
  }

  // A look found a new record (before it is consumed); `two_lines`: it filled both lines of its
  // slot, so the next is expected to as well. The measuring stays out of line: the waits it
  // does not measure run the same instructions as a fixed regime's.
  void found(bool two_lines) {
    two_lines_ = two_lines;
    if (armed_ || --countdown_ == 0) [[unlikely]] sample_point();
  }

  bool far() const { return far_; }
  // The last record found filled both lines of its slot.
  bool after_two_lines() const { return two_lines_; }

 private:
  // The far regime's wider spacing, except after a two-line record (33-96 B): there the near
  // regime's loop stays best even when hand-offs are far (64 B: 0.29-0.30 us against 0.32),
  // the receiver asking for the second line during the wait and spacing delaying that request.
  bool spaced() const { return far_ && !two_lines_; }

  static uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  }

  // A clock read (~20 ns from the vDSO) after each pause of a measured wait.
  [[gnu::noinline]] void stamp() { look_ns_ = now_ns(); }

  // Ends a measured wait (armed_) or arms the next one (countdown_ ran out).
  [[gnu::noinline]] void sample_point() {
    if (armed_) {
      // A record found at the first look, with no pause before it, measures nothing.
      if (look_ns_) record(now_ns() - look_ns_);
      look_ns_ = 0;
      armed_ = false;
      countdown_ = ++samples_ < kFirstSamples ? 2 : kSampleEvery;
    } else {
      armed_ = measured_;
      countdown_ = measured_ ? 1 : UINT32_MAX;
    }
  }

  void record(uint64_t ns) {
    if (ns > kNotAHandoffNs) return;
    // A little memory: one odd sample (an interrupt, a migration) does not flip the choice.
    avg_ns_ = avg_ns_ == 0 ? ns : (3 * avg_ns_ + ns) / 4;
    far_ = avg_ns_ > kFarHandoffNs;
  }

  bool measured_ = false;
  bool far_ = false;
  bool armed_ = false;
  bool two_lines_ = false;
  uint32_t looks_ = 0;
  uint32_t countdown_ = UINT32_MAX;  // finds until the next measured wait is armed
  uint32_t samples_ = 0;
  uint64_t look_ns_ = 0;
  uint64_t avg_ns_ = 0;
};

}  // namespace xmsg::transport::shm
