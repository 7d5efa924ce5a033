// The transport contract (transport/include/xmsg/transport/transport.hpp) checked against one
// transport chosen by name, through the bootstrap and the transport alone (no runtime above),
// the way UCX instantiates one UCT suite per transport. tests/transport/CMakeLists.txt registers
// it for every built transport under the launchers and settings it can run in.
//
//   xmsg_transport_contract TRANSPORT [traffic]   (run under a launcher: xmsgrun -n N ...)
//     flood     every rank floods every peer without progressing until each try_send() refused
//               (backpressure must come: a transport that buffers without bound fails), then
//               goes on with progress; per peer every message arrives once, in order, every byte
//               as it was when try_send() returned (the sender overwrites its buffer at once);
//               every third message goes through try_send_packed, its writer filling in place;
//               some go to receives posted through the sink (claim_eager): whole, truncated, the
//               guard bytes around them untouched, on_eager_landed once, nothing later from that
//               peer before it
//     largest   a message of exactly max_eager_payload (at most 8 MiB) to every peer
//     hint      input_hint: input_ready() turns true for a waiting message before any progress();
//               without it, input_ready() answers true
//     waitfd    wait_fds(): a descriptor it names turns readable for a waiting message before
//               any progress(); a transport that names none says so (its waiter sleeps)
//     peek      peek_payload: wait_peek() shows messages (header and bytes), take_peeked()
//               consumes them, one shown and left is delivered by progress() once; without it,
//               wait_peek() shows nothing and says other input may be there
//     read      remote_read: every rank reads ranges of every peer's exposed buffer (one byte,
//               unaligned, page-crossing, the whole buffer, empty), the bytes around each
//               destination untouched; a read past the exposed length fails with a reason and
//               changes nothing; without the capability every read fails with a reason
//     write     remote_write: the same for writes into the peers' exposed buffers, the bytes
//               between the written ranges and past the exposed length untouched
//     atomics   remote_atomics: every rank applies fetch-and-add to one counter of every peer's
//               exposed buffer and of its own (loopback), and compare-and-swap to a word of its
//               own there (the first finds 0 and swaps, a second with the old compare fails and
//               returns the swapped value); the counter ends at the exact total, the values each
//               rank fetched are distinct, an unaligned word and one past the exposed length are
//               refused with a reason; without the capability every atomic fails with a reason
//               and changes nothing
//     drain     output_pending(): a rank that floods a peer, progresses until output_pending()
//               is false and then stops (a plain fence) must have delivered everything; then
//               every rank calls disconnect()
//   xmsg_transport_contract TRANSPORT failure
//               the last rank leaves the job cleanly but drops its transport without
//               disconnect() (the transport sees a crash, the launcher a normal exit); every
//               other rank must get on_peer_failure for it once, naming the rank, and try_send
//               to it must neither throw nor block
// Peers: the ranks of this node for shm, every other rank otherwise (same-node pairs too).
// Rank 0 prints "xmsg_transport_contract TRANSPORT: CASE OK (...)" per case and "contract OK"
// at the end; any failure prints FAILED naming the rank and what was wrong, and exits 1.
#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/transport/registry.hpp>
#include <xmsg/transport/transport.hpp>

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace xmsg;
using transport::MessageKind;
using transport::WireHeader;

namespace {

int g_rank = -1;
std::string g_transport;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "xmsg_transport_contract %s: rank %d: FAILED: %s\n", g_transport.c_str(), g_rank, why.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}
void check(bool ok, const std::string& why) {
  if (!ok) die(why);
}
std::string str(uint64_t v) { return std::to_string(v); }

// Contexts keep the cases' messages apart; each has its own per-peer order.
enum Context : uint32_t { kHello = 1, kFlood, kLargest, kHint, kWaitFd, kPeek, kPeekAck, kWriteDone, kDrain, kChecked };
constexpr int32_t kEndTag = -1;  // kControl, payload: how many messages came before it

std::byte pattern(uint32_t source, uint32_t context, int32_t tag, size_t i) {
  return std::byte(static_cast<uint8_t>(source * 131 + context * 31 + static_cast<uint32_t>(tag) * 7 + i * 13));
}
void fill(std::span<std::byte> buf, uint32_t source, uint32_t context, int32_t tag, size_t base = 0) {
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = pattern(source, context, tag, base + i);
}
// The first byte that differs from the pattern, or npos.
size_t first_wrong(std::span<const std::byte> buf, uint32_t source, uint32_t context, int32_t tag, size_t base = 0) {
  for (size_t i = 0; i < buf.size(); ++i)
    if (buf[i] != pattern(source, context, tag, base + i)) return i;
  return std::string::npos;
}

constexpr size_t kGuard = 64;
constexpr std::byte kGuardByte{0xA5};

struct Stream {  // what one peer sent in one context, as seen here
  int32_t next_tag = 0;
  uint64_t arrived = 0;
  bool ended = false;
  uint64_t announced = 0;
};

// try_send_packed's writer: the pattern the receiver checks, written in place.
struct PatternWriter final : transport::PayloadWriter {
  uint32_t source, context;
  int32_t tag;
  size_t size;
  int calls = 0;
  PatternWriter(uint32_t s, uint32_t c, int32_t t, size_t n) : source(s), context(c), tag(t), size(n) {}
  void write(std::byte* dst, size_t n) override {
    check(n == size, "try_send_packed asked its writer for " + str(n) + " bytes of a " + str(size) + "-byte payload");
    ++calls;
    fill(std::span(dst, n), source, context, tag);
  }
};

// A receive posted through claim_eager: the message's bytes (or their first part) land here.
struct Landing {
  WireHeader header{};
  std::vector<std::byte> buffer;  // kGuard guard bytes, the receive, kGuard guard bytes
  size_t size = 0;
  bool landed = false;
};

struct Sink final : transport::MessageSink {
  std::map<std::pair<uint32_t, uint32_t>, Stream> streams;  // (source, context)
  std::map<uint32_t, Landing*> pending_landing;              // per source
  std::vector<std::unique_ptr<Landing>> landings;
  uint64_t claimed = 0, truncated = 0;
  std::vector<std::pair<int, std::string>> failures;
  bool expect_failures = false;

  Stream& stream(uint32_t source, uint32_t context) { return streams[{source, context}]; }

  // One place for the order rule: every message of a stream arrives once, in tag order.
  void arrive(const WireHeader& h) {
    Stream& s = stream(h.source, h.context);
    check(!s.ended, "rank " + str(h.source) + " context " + str(h.context) + ": tag " + std::to_string(h.tag) +
                        " arrived after the stream's end");
    check(h.tag == s.next_tag, "rank " + str(h.source) + " context " + str(h.context) + ": tag " + std::to_string(h.tag) +
                                   " arrived, expected " + std::to_string(s.next_tag) + " (order broken, or a message lost or repeated)");
    ++s.next_tag;
    ++s.arrived;
  }

  void on_message(const WireHeader& h, std::span<const std::byte> payload) override {
    check(!pending_landing.count(h.source), "a message from rank " + str(h.source) +
                                                " was delivered before the landing claimed ahead of it ended");
    if (h.kind == MessageKind::kControl && h.tag == kEndTag) {
      Stream& s = stream(h.source, h.context);
      check(payload.size() == sizeof(uint64_t), "end marker of " + str(payload.size()) + " bytes");
      std::memcpy(&s.announced, payload.data(), sizeof(uint64_t));
      check(s.arrived == s.announced, "rank " + str(h.source) + " context " + str(h.context) + " sent " + str(s.announced) +
                                          " messages, " + str(s.arrived) + " arrived");
      s.ended = true;
      return;
    }
    check(h.kind == MessageKind::kEager || h.kind == MessageKind::kControl, "unexpected message kind " + str(static_cast<unsigned>(h.kind)));
    check(payload.size() == h.length, "payload of " + str(payload.size()) + " bytes, header says " + str(h.length));
    arrive(h);
    size_t bad = first_wrong(payload, h.source, h.context, h.tag);
    check(bad == std::string::npos, "rank " + str(h.source) + " context " + str(h.context) + " tag " + std::to_string(h.tag) +
                                        ": byte " + str(bad) + " of " + str(payload.size()) + " is wrong");
  }

  transport::EagerLanding claim_eager(const WireHeader& h) override {
    check(h.kind == MessageKind::kEager, "claim_eager offered a message of kind " + str(static_cast<unsigned>(h.kind)));
    check(!pending_landing.count(h.source), "claim_eager offered a second message of rank " + str(h.source) +
                                                " before the first landing ended");
    // Only flood messages, and of those a whole receive for one tag in five, a truncated one
    // (half the message) for another: the others come through on_message.
    if (h.context != kFlood || h.tag % 5 > 1) return {};
    arrive(h);
    auto l = std::make_unique<Landing>();
    l->header = h;
    l->size = h.tag % 5 == 0 ? h.length : h.length / 2;
    l->buffer.assign(l->size + 2 * kGuard, kGuardByte);
    transport::EagerLanding claim{l.get(), std::span(l->buffer).subspan(kGuard, l->size)};
    pending_landing[h.source] = l.get();
    ++claimed;
    if (l->size < h.length) ++truncated;
    landings.push_back(std::move(l));
    return claim;
  }

  void on_eager_landed(void* token) override {
    auto* l = static_cast<Landing*>(token);
    check(!l->landed, "on_eager_landed called twice for one landing");
    const WireHeader& h = l->header;
    auto it = pending_landing.find(h.source);
    check(it != pending_landing.end() && it->second == l, "on_eager_landed for a landing that was not pending");
    pending_landing.erase(it);
    l->landed = true;
    std::span<const std::byte> buf(l->buffer);
    size_t bad = first_wrong(buf.subspan(kGuard, l->size), h.source, h.context, h.tag);
    check(bad == std::string::npos, "landed message from rank " + str(h.source) + " tag " + std::to_string(h.tag) + ": byte " +
                                        str(bad) + " of " + str(l->size) + " is wrong");
    for (size_t i = 0; i < kGuard; ++i)
      check(buf[i] == kGuardByte && buf[kGuard + l->size + i] == kGuardByte,
            "landing of " + str(l->size) + " bytes (message " + str(h.length) + ") wrote outside its buffer");
  }

  void on_peer_failure(int peer, const std::string& reason) override {
    if (!expect_failures) die("unexpected failure of rank " + std::to_string(peer) + ": " + reason);
    failures.emplace_back(peer, reason);
  }
};

struct Completion final : transport::ReadCompletion {
  bool done = false, ok = false;
  int calls = 0;
  std::string reason;
  void on_read_done(bool success, const std::string& why) override {
    ++calls;
    done = true;
    ok = success;
    reason = why;
  }
};

class Contract {
 public:
  Contract(bootstrap::Bootstrap& boot, transport::Transport& t, std::vector<int> peers)
      : boot_(boot), t_(t), caps_(t.capabilities()), peers_(std::move(peers)), rank_(boot.rank()) {}

  void flood();
  void largest();
  void hint();
  void waitfd();
  template <class Look>
  void seen_before_progress(Context context, Look look, const std::string& unseen, const std::string& what);
  void peek();
  void read();
  void write();
  void atomics();
  void drain();
  void failure();

 private:
  using Clock = std::chrono::steady_clock;

  // Progress until `done()`; a wait that outlasts a minute is a hang, reported with `what`.
  template <typename Done>
  void progress_until(Done done, const std::string& what) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!done()) {
      if (t_.progress(sink_) == 0) sched_yield();
      if (Clock::now() > deadline) die("waited 60 s for " + what);
    }
  }
  void progress_fence(bool collect = false) {
    boot_.fence_while(collect, [&] {
      if (t_.progress(sink_) == 0) sched_yield();
    });
  }
  WireHeader header(uint32_t context, int32_t tag, size_t length, MessageKind kind = MessageKind::kEager) const {
    return WireHeader{static_cast<uint32_t>(rank_), context, tag, kind, 0, 0, length};
  }
  void send(int peer, const WireHeader& h, std::span<const std::byte> payload) {
    progress_until([&] { return t_.try_send(peer, h, payload); }, "try_send to rank " + std::to_string(peer) + " to accept");
  }
  void send_end(int peer, uint32_t context, uint64_t count) {
    send(peer, header(context, kEndTag, sizeof count, MessageKind::kControl), std::as_bytes(std::span(&count, 1)));
  }
  bool ended(int peer, uint32_t context) { return sink_.stream(static_cast<uint32_t>(peer), context).ended; }
  bool all_ended(uint32_t context) {
    return std::all_of(peers_.begin(), peers_.end(), [&](int p) { return ended(p, context); });
  }
  // Pairs for the one-way cases: an even rank sends to the next rank when both are peers.
  int pair_receiver() const { return rank_ % 2 == 0 && has_peer(rank_ + 1) ? rank_ + 1 : -1; }
  int pair_sender() const { return rank_ % 2 == 1 && has_peer(rank_ - 1) ? rank_ - 1 : -1; }
  bool has_peer(int r) const { return std::find(peers_.begin(), peers_.end(), r) != peers_.end(); }
  // One line per case, from rank 0 or, for what only a receiver saw, from rank 1.
  void say(const std::string& what, int who = 0) {
    if (rank_ == who) std::printf("xmsg_transport_contract %s: %s\n", g_transport.c_str(), what.c_str()), std::fflush(stdout);
  }
  // Every rank's MemoryHandle through the key-value store.
  std::map<int, transport::MemoryHandle> exchange_handles(const std::string& key, const transport::MemoryHandle& mine) {
    boot_.put(key, std::as_bytes(std::span(&mine, 1)));
    boot_.commit();
    progress_fence(true);
    std::map<int, transport::MemoryHandle> handles;
    for (int p : peers_) {
      auto bytes = boot_.get(p, key);
      check(bytes.size() == sizeof(transport::MemoryHandle), key + " of rank " + std::to_string(p) + " has " + str(bytes.size()) + " bytes");
      std::memcpy(&handles[p], bytes.data(), sizeof(transport::MemoryHandle));
    }
    return handles;
  }

  bootstrap::Bootstrap& boot_;
  transport::Transport& t_;
  const transport::Capabilities caps_;
  const std::vector<int> peers_;
  const int rank_;
  Sink sink_;
};

void Contract::flood() {
  // Sizes from empty to 64 KiB, odd ones among them, within what try_send accepts.
  std::vector<size_t> sizes;
  for (size_t s : {0, 1, 3, 8, 40, 41, 64, 100, 255, 1000, 4096, 4097, 16384, 65536})
    if (s <= caps_.max_eager_payload) sizes.push_back(s);
  auto size_of = [&](int32_t tag) { return sizes[static_cast<size_t>(tag) % sizes.size()]; };
  std::vector<std::byte> buffer(sizes.back());
  std::map<int, int32_t> next;  // per peer: the next tag to send
  auto attempt = [&](int peer) {
    const int32_t tag = next[peer];
    std::span<std::byte> payload(buffer.data(), size_of(tag));
    fill(payload, static_cast<uint32_t>(rank_), kFlood, tag);
    // Every third message through try_send_packed: the writer produces the same bytes in place,
    // in order with the others; it is asked for exactly the payload, and at least once when
    // the message is accepted.
    bool accepted;
    if (tag % 3 == 2) {
      PatternWriter writer(static_cast<uint32_t>(rank_), kFlood, tag, payload.size());
      accepted = t_.try_send_packed(peer, header(kFlood, tag, payload.size()), payload.size(), writer);
      check(!accepted || writer.calls > 0, "try_send_packed accepted a message without calling its writer");
    } else {
      accepted = t_.try_send(peer, header(kFlood, tag, payload.size()), payload);
    }
    // Payload lifetime: what try_send accepted was copied; the caller may scribble at once.
    std::fill(buffer.begin(), buffer.end(), std::byte{0xEE});
    if (accepted) ++next[peer];
    return accepted;
  };

  // 0. One message each way first: a transport that wires up lazily (verbs) refuses until the
  // connection exists, which is not the backpressure this case is after.
  for (int p : peers_) send_end(p, kHello, 0);
  progress_until([&] { return all_ended(kHello); }, "every peer's hello");
  progress_fence();

  // 1. No progress at all: every peer must refuse sooner or later.
  constexpr uint64_t kUnbounded = 1 << 18;
  uint64_t refused_at_min = UINT64_MAX, refused_at_max = 0;
  for (int p : peers_) {
    for (uint64_t bytes = 0; attempt(p);) {
      bytes += size_of(next[p] - 1);
      if (static_cast<uint64_t>(next[p]) >= kUnbounded)
        die("try_send to rank " + std::to_string(p) + " never refused: " + str(next[p]) + " messages (" + str(bytes) +
            " bytes) accepted without a progress() call, so the transport buffers without bound");
    }
    refused_at_min = std::min<uint64_t>(refused_at_min, static_cast<uint64_t>(next[p]));
    refused_at_max = std::max<uint64_t>(refused_at_max, static_cast<uint64_t>(next[p]));
  }
  boot_.fence(false);  // nobody reads before every rank was refused by every peer

  // 2. With progress: as many again and a thousand more, then the end marker.
  std::map<int, int32_t> total;
  for (int p : peers_) total[p] = 2 * next[p] + 1000;
  for (bool more = true; more;) {
    more = false;
    for (int p : peers_) {
      if (next[p] >= total[p]) continue;
      more = true;
      if (!attempt(p)) t_.progress(sink_);
    }
  }
  for (int p : peers_) send_end(p, kFlood, static_cast<uint64_t>(total[p]));
  progress_until([&] { return all_ended(kFlood); }, "every peer's flood");
  check(sink_.pending_landing.empty(), "a landing never ended");
  progress_fence();
  uint64_t received = 0;
  for (int p : peers_) received += sink_.stream(static_cast<uint32_t>(p), kFlood).arrived;
  say("flood OK (rank 0 received " + str(received) + " messages from " + str(peers_.size()) + " peers; first refusal after " +
      str(refused_at_min) + "-" + str(refused_at_max) + " messages; " + str(sink_.claimed) + " landed in posted receives, " +
      str(sink_.truncated) + " truncated)");
}

void Contract::largest() {
  const size_t n = std::min<size_t>(caps_.max_eager_payload, 8 << 20);
  std::vector<std::byte> buffer(n);
  fill(buffer, static_cast<uint32_t>(rank_), kLargest, 0);
  for (int p : peers_) send(p, header(kLargest, 0, n), buffer);
  for (int p : peers_) send_end(p, kLargest, 1);
  progress_until([&] { return all_ended(kLargest); }, "the largest messages");
  progress_fence();
  say("largest OK (" + str(n) + " bytes, max_eager_payload " + str(caps_.max_eager_payload) + ")");
}

// The pair sender sends one byte; the pair receiver calls `look` (no progress() in it) until
// it answers true, dying with `unseen` after 60 s, and then takes the message with progress().
template <class Look>
void Contract::seen_before_progress(Context context, Look look, const std::string& unseen,
                                    const std::string& what) {
  // A fence without progress first: the previous step ended in a fence that progresses while
  // it waits, and a sender that left it first could send its byte while the receiver was still
  // in it; the receiver's last progress() there then took the byte, no descriptor or hint
  // could show it any more, and the look below waited 60 s (seen once in CI, tcp under load).
  boot_.fence(false);
  if (int to = pair_receiver(); to >= 0) {
    std::byte b = pattern(static_cast<uint32_t>(rank_), context, 0, 0);
    send(to, header(context, 0, 1), std::span(&b, 1));
  }
  if (int from = pair_sender(); from >= 0) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!look())
      if (Clock::now() > deadline) die(unseen + " for 60 s while rank " + std::to_string(from) + "'s message waited");
    progress_until([&] { return sink_.stream(static_cast<uint32_t>(from), context).arrived == 1; }, what);
  }
  progress_fence();
}

void Contract::hint() {
  if (!caps_.input_hint) {
    check(t_.input_ready(), "input_ready() answered false although input_hint is not advertised");
    progress_fence();
    say("hint OK (not advertised: input_ready() answers true)");
    return;
  }
  // Only the cheap look until it says yes: a transport that needs progress() to see the
  // message would leave a spinning waiter asleep on a message that is there.
  seen_before_progress(kHint, [&] { return t_.input_ready() || (sched_yield(), false); },
                       "input_ready() stayed false", "the hinted message");
  say("hint OK (input_ready() saw a waiting message before progress())");
}

void Contract::waitfd() {
  int probe[64];
  if (t_.wait_fds(std::span(probe)) == 0) {
    progress_fence();
    say("waitfd OK (names no descriptor: a waiter outside progress() sleeps)");
    return;
  }
  // No progress() until a named descriptor is readable: the progress thread sleeps in ppoll on
  // them, and a message that wakes nobody would wait a whole interval.
  auto readable = [&] {
    int fds[64];
    size_t n = t_.wait_fds(std::span(fds));
    pollfd p[64];
    for (size_t i = 0; i < n; ++i) p[i] = pollfd{fds[i], POLLIN, 0};
    return ::poll(p, n, 100) > 0;
  };
  seen_before_progress(kWaitFd, readable, "no descriptor of wait_fds() turned readable",
                       "the message the descriptors announced");
  say("waitfd OK (a named descriptor turned readable for a waiting message before progress())");
}

void Contract::peek() {
  constexpr int kRounds = 16;
  if (caps_.peek_payload == 0) {
    for (int p : peers_) {
      std::span<const std::byte> payload;
      bool other = false;
      check(t_.wait_peek(p, 4, &payload, &other) == nullptr && other,
            "wait_peek() showed a message or did not send the caller to progress() although peek_payload is 0");
    }
    progress_fence();
    say("peek OK (not advertised: wait_peek() shows nothing)");
    return;
  }
  int shown = 0, left = 0, last_shown = -1;
  if (int to = pair_receiver(); to >= 0) {
    for (int32_t tag = 0; tag < kRounds; ++tag) {
      std::vector<std::byte> payload(std::min<size_t>(caps_.peek_payload, 1 + static_cast<size_t>(tag) * 3));
      fill(payload, static_cast<uint32_t>(rank_), kPeek, tag);
      send(to, header(kPeek, tag, payload.size()), payload);
      // One message at a time: wait_peek shows only what follows everything delivered before.
      progress_until([&] { return sink_.stream(static_cast<uint32_t>(to), kPeekAck).arrived == static_cast<uint64_t>(tag) + 1; },
                     "rank " + std::to_string(to) + "'s ack of peek message " + std::to_string(tag));
    }
  }
  if (int from = pair_sender(); from >= 0) {
    Stream& s = sink_.stream(static_cast<uint32_t>(from), kPeek);
    for (int32_t tag = 0; tag < kRounds; ++tag) {
      const auto deadline = Clock::now() + std::chrono::seconds(60);
      while (s.arrived == static_cast<uint64_t>(tag)) {
        std::span<const std::byte> payload;
        bool other = false;
        if (const WireHeader* h = t_.wait_peek(from, 256, &payload, &other)) {
          check(h->source == static_cast<uint32_t>(from) && h->context == kPeek && h->tag == tag,
                "wait_peek() showed rank " + str(h->source) + " context " + str(h->context) + " tag " + std::to_string(h->tag) +
                    ", expected rank " + std::to_string(from) + " context " + str(kPeek) + " tag " + std::to_string(tag));
          check(payload.size() == h->length && first_wrong(payload, h->source, h->context, h->tag) == std::string::npos,
                "wait_peek() showed wrong bytes for tag " + std::to_string(tag));
          if (last_shown != tag) ++shown, last_shown = tag;
          if (tag % 2 == 0) {
            std::vector<std::byte> dst(payload.size() + kGuard, kGuardByte);
            const WireHeader copy = *h;
            t_.take_peeked(from, dst.data(), payload.size());
            check(first_wrong(std::span(dst).first(copy.length), copy.source, copy.context, copy.tag) == std::string::npos,
                  "take_peeked() copied wrong bytes for tag " + std::to_string(tag));
            check(std::all_of(dst.begin() + static_cast<std::ptrdiff_t>(copy.length), dst.end(), [](std::byte b) { return b == kGuardByte; }),
                  "take_peeked() wrote past the bytes asked for");
            sink_.arrive(copy);
          } else {
            t_.progress(sink_);  // left for progress(), which must deliver it exactly once
            if (s.arrived > static_cast<uint64_t>(tag)) ++left;
          }
        } else {
          t_.progress(sink_);
        }
        if (Clock::now() > deadline) die("waited 60 s for peek message " + std::to_string(tag));
      }
      std::byte b = pattern(static_cast<uint32_t>(rank_), kPeekAck, tag, 0);
      send(from, header(kPeekAck, tag, 1), std::span(&b, 1));
    }
    check(shown > 0, "peek_payload is " + str(caps_.peek_payload) + " but wait_peek() never showed one of " + std::to_string(kRounds) +
                         " messages that arrived one at a time");
  }
  progress_fence();
  say("peek OK (rank 1 saw " + std::to_string(shown) + " of " + std::to_string(kRounds) + " messages by wait_peek, left " +
      std::to_string(left) + " to progress)", 1);
}

void Contract::read() {
  const size_t n = (3 << 20) + 13;
  std::vector<std::byte> exposed(n);
  fill(exposed, static_cast<uint32_t>(rank_), 0, 0);
  const transport::MemoryHandle mine = t_.expose(exposed.data(), n);
  auto handles = exchange_handles("contract.read", mine);
  struct Range {
    uint64_t offset, length;
  };
  const Range ranges[] = {{0, 1}, {1, 7}, {4093, 4099}, {n - 1, 1}, {12345, 1 << 20}, {0, n}, {n, 0}, {5, 0}};
  struct Read {
    int peer;
    Range range;
    bool in_range;
    std::vector<std::byte> dst;
    Completion done;
  };
  std::vector<std::unique_ptr<Read>> reads;
  for (int p : peers_) {
    auto start = [&](Range r, bool in_range) {
      auto rd = std::make_unique<Read>(Read{p, r, in_range, std::vector<std::byte>(r.length + 2 * kGuard, kGuardByte), {}});
      t_.read_remote(p, handles[p], r.offset, std::span(rd->dst).subspan(kGuard, r.length), rd->done);
      reads.push_back(std::move(rd));
    };
    for (Range r : ranges) start(r, true);
    start({n - 10, 11}, false);  // one byte past the end
  }
  progress_until([&] { return std::all_of(reads.begin(), reads.end(), [](const auto& r) { return r->done.done; }); },
                 "remote reads to complete");
  for (const auto& rd : reads) {
    const std::string what = "read of " + str(rd->range.length) + " bytes at offset " + str(rd->range.offset) + " from rank " +
                             std::to_string(rd->peer);
    check(rd->done.calls == 1, what + ": completion called " + std::to_string(rd->done.calls) + " times");
    std::span<const std::byte> dst(rd->dst);
    if (!caps_.remote_read || !rd->in_range) {
      check(!rd->done.ok && !rd->done.reason.empty(),
            what + (caps_.remote_read ? " (past the exposed length) succeeded" : " succeeded although remote_read is not advertised") +
                " or failed without a reason");
      check(std::all_of(dst.begin(), dst.end(), [](std::byte b) { return b == kGuardByte; }), what + " refused but wrote bytes");
      continue;
    }
    check(rd->done.ok, what + " failed: " + rd->done.reason);
    size_t bad = first_wrong(dst.subspan(kGuard, rd->range.length), static_cast<uint32_t>(rd->peer), 0, 0, rd->range.offset);
    check(bad == std::string::npos, what + ": byte " + str(bad) + " is wrong");
    for (size_t i = 0; i < kGuard; ++i)
      check(dst[i] == kGuardByte && dst[kGuard + rd->range.length + i] == kGuardByte, what + " wrote outside its destination");
  }
  progress_fence();  // peers may still be reading this rank's buffer (tcp serves reads in progress)
  t_.release(mine);
  say(caps_.remote_read ? "read OK (" + str(reads.size()) + " reads at offsets, one past the end refused)"
                        : "read OK (not advertised: every read refused with a reason)");
}

void Contract::write() {
  // Every peer writes into its own region of this rank's exposed buffer.
  const size_t region = (1 << 20) + 7, n = region * static_cast<size_t>(boot_.size());
  std::vector<std::byte> exposed(n + kGuard, std::byte{0});
  std::fill(exposed.begin() + static_cast<std::ptrdiff_t>(n), exposed.end(), kGuardByte);
  const transport::MemoryHandle mine = t_.expose(exposed.data(), n, transport::Access::read_write);
  auto handles = exchange_handles("contract.write", mine);
  struct Range {
    uint64_t offset, length;
  };
  const Range ranges[] = {{0, 1}, {3, 4096}, {5000, region - 5000}, {region, 0}};  // within the writer's region
  std::vector<std::byte> src(region);
  fill(src, static_cast<uint32_t>(rank_), 0, 1);
  std::vector<std::unique_ptr<Completion>> done;
  std::vector<std::string> what;
  for (int p : peers_) {
    const uint64_t base = region * static_cast<uint64_t>(rank_);
    for (Range r : ranges) {
      done.push_back(std::make_unique<Completion>());
      what.push_back("write of " + str(r.length) + " bytes at offset " + str(base + r.offset) + " to rank " + std::to_string(p));
      t_.write_remote(p, handles[p], base + r.offset, std::span<const std::byte>(src).subspan(r.offset, r.length), *done.back());
    }
    done.push_back(std::make_unique<Completion>());
    what.push_back("write of 11 bytes at offset " + str(n - 10) + " (past the end) to rank " + std::to_string(p));
    t_.write_remote(p, handles[p], n - 10, std::span<const std::byte>(src).first(11), *done.back());
  }
  progress_until([&] { return std::all_of(done.begin(), done.end(), [](const auto& c) { return c->done; }); },
                 "remote writes to complete");
  for (size_t i = 0; i < done.size(); ++i) {
    const bool is_past_end = (i + 1) % (std::size(ranges) + 1) == 0;  // each peer's last write
    check(done[i]->calls == 1, what[i] + ": completion called " + std::to_string(done[i]->calls) + " times");
    if (!caps_.remote_write || is_past_end)
      check(!done[i]->ok && !done[i]->reason.empty(), what[i] + (caps_.remote_write ? " succeeded" : " succeeded although remote_write is not advertised") +
                                                          " or failed without a reason");
    else
      check(done[i]->ok, what[i] + " failed: " + done[i]->reason);
  }
  for (int p : peers_) send_end(p, kWriteDone, 0);
  progress_until([&] { return all_ended(kWriteDone); }, "every peer's writes");
  // The writers are done (their end markers follow their completed writes): check the buffer.
  for (int w : peers_) {
    const std::span<const std::byte> mine_region = std::span<const std::byte>(exposed).subspan(region * static_cast<size_t>(w), region);
    for (size_t i = 0; i < region; ++i) {
      const bool written = caps_.remote_write && (i < 1 || (i >= 3 && i < 4099) || i >= 5000);
      const std::byte want = written ? pattern(static_cast<uint32_t>(w), 0, 1, i) : std::byte{0};
      check(mine_region[i] == want, "byte " + str(i) + " of rank " + std::to_string(w) + "'s region is " +
                                        (written ? "not what it wrote" : "changed although nothing was written there"));
    }
  }
  for (size_t i = n; i < n + kGuard; ++i) check(exposed[i] == kGuardByte, "a write changed byte " + str(i - n) + " past the exposed length");
  progress_fence();
  t_.release(mine, transport::Access::read_write);
  say(caps_.remote_write ? "write OK (" + str(done.size()) + " writes at offsets, one past the end refused)"
                         : "write OK (not advertised: every write refused with a reason)");
}

void Contract::atomics() {
  constexpr int kAdds = 50;
  constexpr uint64_t kGuardWord = 0x5a5a5a5a5a5a5a5aull, kSwapped = 1000;
  const size_t words_exposed = static_cast<size_t>(boot_.size()) + 1;  // the counter, a word per rank
  std::vector<uint64_t> words(words_exposed + 1, 0);
  words.back() = kGuardWord;
  const transport::MemoryHandle mine =
      t_.expose(words.data(), words_exposed * sizeof(uint64_t), transport::Access::read_write);
  auto handles = exchange_handles("contract.atomics", mine);
  handles[rank_] = mine;
  std::vector<int> targets = peers_;
  targets.push_back(rank_);  // itself: by loopback where the transport has atomics
  struct Op {
    std::string what;
    Completion done;
    uint64_t result = ~0ull;
    bool refused = false;  // must fail even where atomics are advertised
  };
  std::vector<std::unique_ptr<Op>> ops;
  auto start = [&](int p, uint64_t offset, transport::RemoteAtomic kind, uint64_t operand, uint64_t compare,
                   std::string what, bool refused) {
    ops.push_back(std::make_unique<Op>());
    Op& op = *ops.back();
    op.what = std::move(what) + " on rank " + std::to_string(p);
    op.refused = refused;
    t_.atomic_remote(p, handles[p], offset, kind, operand, compare, &op.result, op.done);
  };
  const uint64_t own_word = sizeof(uint64_t) * (1 + static_cast<uint64_t>(rank_));
  for (int p : targets) {
    for (int i = 0; i < kAdds; ++i)
      start(p, 0, transport::RemoteAtomic::fetch_add, 1, 0, "fetch-and-add " + std::to_string(i), false);
    start(p, own_word, transport::RemoteAtomic::compare_swap, kSwapped + static_cast<uint64_t>(rank_), 0,
          "compare-and-swap of 0", false);
    start(p, 4, transport::RemoteAtomic::fetch_add, 1, 0, "fetch-and-add at the unaligned offset 4", true);
    start(p, words_exposed * sizeof(uint64_t), transport::RemoteAtomic::fetch_add, 1, 0,
          "fetch-and-add past the exposed length", true);
  }
  auto all_done = [&] { return std::all_of(ops.begin(), ops.end(), [](const auto& o) { return o->done.done; }); };
  progress_until(all_done, "remote atomics to complete");
  const size_t first_round = ops.size();
  // After its own swap completed: a second with the old compare must fail and show the swap.
  for (int p : targets)
    start(p, own_word, transport::RemoteAtomic::compare_swap, 7, 0, "second compare-and-swap of 0", false);
  progress_until(all_done, "remote atomics to complete");
  std::map<int, std::vector<uint64_t>> fetched;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = *ops[i];
    check(op.done.calls == 1, op.what + ": completion called " + std::to_string(op.done.calls) + " times");
    if (!caps_.remote_atomics || op.refused) {
      check(!op.done.ok && !op.done.reason.empty(),
            op.what + (caps_.remote_atomics ? " succeeded" : " succeeded although remote_atomics is not advertised") +
                " or failed without a reason");
      continue;
    }
    check(op.done.ok, op.what + " failed: " + op.done.reason);
  }
  if (caps_.remote_atomics) {
    size_t at = 0;
    for (int p : targets) {
      for (int i = 0; i < kAdds; ++i) fetched[p].push_back(ops[at++]->result);
      check(ops[at]->result == 0, ops[at]->what + " found " + str(ops[at]->result) + ", not 0");
      at += 3;
    }
    for (size_t i = first_round; i < ops.size(); ++i)
      check(ops[i]->result == kSwapped + static_cast<uint64_t>(rank_),
            ops[i]->what + " found " + str(ops[i]->result) + ", not the first one's swap");
    for (auto& [p, values] : fetched) {
      std::sort(values.begin(), values.end());
      check(std::adjacent_find(values.begin(), values.end()) == values.end(),
            "fetch-and-add on rank " + std::to_string(p) + " returned one old value twice");
    }
  }
  progress_fence();  // every rank's atomics on this rank's words are complete
  const uint64_t adders = peers_.size() + 1;
  check(words[0] == (caps_.remote_atomics ? adders * kAdds : 0),
        "the counter holds " + str(words[0]) + ", expected " + str(caps_.remote_atomics ? adders * kAdds : 0));
  for (int p : targets) {
    const uint64_t want = caps_.remote_atomics ? kSwapped + static_cast<uint64_t>(p) : 0;
    check(words[1 + static_cast<size_t>(p)] == want, "rank " + std::to_string(p) + "'s word holds " +
                                                         str(words[1 + static_cast<size_t>(p)]) + ", expected " + str(want));
  }
  check(words.back() == kGuardWord, "an atomic changed the word past the exposed length");
  progress_fence();
  t_.release(mine, transport::Access::read_write);
  say(caps_.remote_atomics ? "atomics OK (" + str(ops.size()) + " atomics, the counter at " + str(words[0]) +
                                 ", unaligned and past the end refused)"
                           : "atomics OK (not advertised: every atomic refused with a reason)");
}

void Contract::drain() {
  uint64_t sent = 0;
  if (int to = pair_receiver(); to >= 0) {
    const size_t n = std::min<size_t>(caps_.max_eager_payload, 64 << 10);
    std::vector<std::byte> buffer(n);
    for (int32_t tag = 0;; ++tag) {
      fill(buffer, static_cast<uint32_t>(rank_), kDrain, tag);
      if (!t_.try_send(to, header(kDrain, tag, n), buffer)) break;
      ++sent;
    }
    send_end(to, kDrain, sent);
    progress_until([&] { return !t_.output_pending(); }, "output_pending() to turn false");
  }
  if (int from = pair_sender(); from >= 0) {
    progress_until([&] { return ended(from, kDrain); }, "rank " + std::to_string(from) + "'s drained messages (it stopped "
                                                        "progressing once output_pending() was false)");
  }
  boot_.fence(false);  // the sender no longer progresses: what it accepted must already be out
  t_.disconnect();
  say("drain OK (" + str(sent) + " messages until refused, delivered after output_pending() turned false; disconnect done)");
}

void Contract::failure() {
  const int leaving = boot_.size() - 1;
  // Traffic first, so the connection exists (lazy wire-up) and the failure is of a live peer.
  for (int p : peers_) {
    send(p, header(kFlood, 0, 0), {});
    send_end(p, kFlood, 1);
  }
  progress_until([&] { return all_ended(kFlood); }, "every peer's greeting");
  // The leaving rank may leave the fence, and exit, while a survivor still progresses inside it: the failure can be
  // reported from there on.
  sink_.expect_failures = rank_ != leaving;
  progress_fence();
  if (rank_ == leaving) {
    // The transport never hears of the exit: no disconnect, no destructor.
    boot_.finalize();
    std::_Exit(0);
  }
  if (!has_peer(leaving)) return;  // not this rank's peer (shm, another node): nothing to see
  progress_until([&] { return !sink_.failures.empty(); }, "on_peer_failure for rank " + std::to_string(leaving));
  // A little more progress: the failure must be reported once.
  const auto until = Clock::now() + std::chrono::milliseconds(200);
  while (Clock::now() < until) t_.progress(sink_);
  if (sink_.failures.size() != 1) {
    std::string all;
    for (const auto& [r, why] : sink_.failures) all += "; rank " + std::to_string(r) + ": " + why;
    die("on_peer_failure called " + str(sink_.failures.size()) + " times" + all);
  }
  // Copies: later progress may report a survivor that already left, growing the vector.
  const auto [peer, reason] = sink_.failures.front();
  check(peer == leaving, "on_peer_failure named rank " + std::to_string(peer) + ", but rank " + std::to_string(leaving) + " left");
  check(reason.find("rank " + std::to_string(leaving)) != std::string::npos,
        "the failure reason does not name rank " + std::to_string(leaving) + ": " + reason);
  // Sending to the dead peer: no exception, no block (accepted and dropped, or refused).
  try {
    std::byte b{1};
    (void)t_.try_send(leaving, header(kFlood, 1, 1), std::span(&b, 1));
    t_.progress(sink_);
  } catch (const std::exception& e) {
    die(std::string("try_send to the failed rank threw: ") + e.what());
  }
  // No survivor leaves before every survivor has checked: its exit would be a second failure.
  std::vector<int> survivors;
  for (int p : peers_)
    if (p != leaving) survivors.push_back(p);
  for (int p : survivors) send_end(p, kChecked, 0);
  progress_until([&] { return std::all_of(survivors.begin(), survivors.end(), [&](int p) { return ended(p, kChecked); }); },
                 "the other survivors' checks");
  progress_until([&] { return !t_.output_pending(); }, "output_pending() to turn false");
  say("failure OK (" + reason + ")");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "traffic") != 0 && std::strcmp(argv[2], "failure") != 0)) {
    std::fprintf(stderr, "usage: xmsg_transport_contract TRANSPORT [traffic|failure]\n");
    return 2;
  }
  g_transport = argv[1];
  const bool failure = argc == 3 && std::strcmp(argv[2], "failure") == 0;
  std::unique_ptr<bootstrap::Bootstrap> boot;
  std::unique_ptr<transport::Transport> t;
  try {
    boot = bootstrap::make_bootstrap();
    g_rank = boot->rank();
    const transport::TransportFactory* factory = nullptr;
    std::string built;
    for (const auto& f : transport::built_transports()) {
      built += (built.empty() ? "" : ", ") + std::string(f.name);
      if (f.name == g_transport) factory = &f;
    }
    check(factory != nullptr, "transport '" + g_transport + "' is not built (built: " + built + ")");
    t = factory->make(*boot);
    check(t != nullptr, "transport '" + g_transport + "' cannot run here (no device)");
  } catch (const std::exception& e) {
    die(e.what());
  }
  check(boot->size() >= 2, "needs at least 2 ranks");
  const std::vector<int> local = boot->local_peers();
  std::vector<int> peers;
  for (int r = 0; r < boot->size(); ++r) {
    const bool same_node = std::find(local.begin(), local.end(), r) != local.end();
    if (r != boot->rank() && (same_node || g_transport != "shm")) peers.push_back(r);
  }
  check(!peers.empty(), "this rank has no peer for " + g_transport);
  transport::ConnectOptions options;
  options.carries_same_node_pairs = g_transport != "shm" && local.size() > 1;
  try {
    t->connect(peers, options);
  } catch (const std::exception& e) {
    die(std::string("connect: ") + e.what());
  }
  Contract contract(*boot, *t, peers);
  if (failure) {
    contract.failure();
  } else {
    contract.flood();
    contract.largest();
    contract.hint();
    contract.waitfd();
    contract.peek();
    contract.read();
    contract.write();
    contract.atomics();
    contract.drain();
  }
  if (boot->rank() == 0) std::printf("xmsg_transport_contract %s: contract OK\n", g_transport.c_str());
  std::fflush(stdout);
  boot->finalize();
  // The failure case leaves the transport undisconnected on the survivors (a peer is gone):
  // destroying it is the test's end, not part of what is checked.
  return 0;
}
