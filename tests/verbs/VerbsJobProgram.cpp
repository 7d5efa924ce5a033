// A job that drives the verbs transport directly (bootstrap + transport, no runtime), run with
// xmsgrun across virtual nodes inside the soft-RoCE guest:
//
//   xmsg_verbs_job [exchange]  every pair exchanges eager messages of many sizes (order and bytes
//                      checked), then every rank exposes a buffer that every peer fetches by
//                      RDMA READ (bytes checked, FIN back), then a ring flood many times the SRQ
//                      depth that must hit backpressure and still arrive in order.
//   xmsg_verbs_job peerloss    (2 ranks) rank 1's QPs vanish as in a crash while rank 0 reads from
//                              it and sends to it; both must fail naming rank 1 and the device
//   xmsg_verbs_job silentloss  (2 ranks) rank 1's QPs vanish while rank 0 only progresses (sends
//                              nothing): the liveness probe must still report rank 1
//   xmsg_verbs_job killed      every rank floods its peers; rank 1 SIGKILLs itself mid-transfer.
//                              Never ends by itself: the launcher must end the job, naming rank 1
//   xmsg_verbs_job incast      every other rank bursts thousands of eager messages at rank 0,
//                              which starts late and progresses slowly: its SRQ falls to the limit
//                              (event seen), is refilled, and every message arrives intact in order
// Prints "xmsg_verbs_job: OK (<mode>, <n> QPs)" from rank 0 on success; exits non-zero naming
// the rank and the reason otherwise. With no RDMA device it exits 1 ("no RDMA device").
#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/transport/selector.hpp>
#include <xmsg/transport/verbs.hpp>

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "VerbsTransport.hpp"

using namespace xmsg;
using transport::MemoryHandle;
using transport::MessageKind;
using transport::WireHeader;

namespace {

int g_rank = -1;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "xmsg_verbs_job: rank %d: FAILED: %s\n", g_rank, why.c_str());
  std::exit(1);
}
void check(bool ok, const std::string& why) {
  if (!ok) die(why);
}

std::byte pattern(uint32_t source, int32_t tag, size_t i) {
  return std::byte(static_cast<uint8_t>(source * 131 + static_cast<uint32_t>(tag) * 7 + i * 13 + (i >> 8)));
}

constexpr uint32_t kExchangeContext = 1;
constexpr uint32_t kFloodContext = 2;
constexpr uint32_t kIncastContext = 3;

struct Sink final : transport::MessageSink {
  std::map<std::pair<uint32_t, uint32_t>, int32_t> next_tag;  // (context, source) -> next tag
  std::map<uint32_t, size_t> exchange_count;
  size_t flood_count = 0;
  size_t incast_count = 0;
  std::vector<std::pair<int, MemoryHandle>> rts;  // rendezvous offers received
  int fins = 0;
  void on_message(const WireHeader& h, std::span<const std::byte> payload) override {
    switch (h.kind) {
      case MessageKind::kEager: {
        int32_t& expect = next_tag[{h.context, h.source}];
        if (h.tag != expect) die("from rank " + std::to_string(h.source) + ": tag " + std::to_string(h.tag) +
                                   " arrived, expected " + std::to_string(expect) + " (order broken)");
        ++expect;
        if (payload.size() != h.length) die("payload size " + std::to_string(payload.size()) + " != header length " +
                                              std::to_string(h.length));
        for (size_t i = 0; i < payload.size(); ++i) {
          if (payload[i] != pattern(h.source, h.tag, i)) {
            die("corrupt byte " + std::to_string(i) + " of tag " + std::to_string(h.tag) + " from rank " +
                std::to_string(h.source));
          }
        }
        if (h.context == kExchangeContext) ++exchange_count[h.source];
        else if (h.context == kIncastContext) ++incast_count;
        else ++flood_count;
        break;
      }
      case MessageKind::kRendezvousRts: {
        check(payload.size() == sizeof(MemoryHandle), "bad RTS size");
        MemoryHandle handle;
        std::memcpy(&handle, payload.data(), sizeof handle);
        rts.emplace_back(static_cast<int>(h.source), handle);
        break;
      }
      case MessageKind::kRendezvousFin:
        ++fins;
        break;
      default:
        die("unexpected message kind " + std::to_string(static_cast<int>(h.kind)));
    }
  }
  bool expect_failure = false;
  std::vector<std::pair<int, std::string>> failures;
  void on_peer_failure(int peer, const std::string& reason) override {
    if (!expect_failure) die("peer " + std::to_string(peer) + " failed: " + reason);
    failures.emplace_back(peer, reason);
  }
};

struct Read final : transport::ReadCompletion {
  bool finished = false;
  bool ok = false;
  std::string reason;
  void on_read_done(bool success, const std::string& why) override {
    finished = true;
    ok = success;
    reason = why;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string mode_arg = argc > 1 ? argv[1] : "exchange";
  if (mode_arg != "exchange" && mode_arg != "peerloss" && mode_arg != "silentloss" && mode_arg != "incast" &&
      mode_arg != "killed" && mode_arg != "pairs" && mode_arg != "firstmsg") {
    std::fprintf(stderr, "usage: xmsg_verbs_job [exchange|peerloss|silentloss|incast|killed|pairs|firstmsg]\n");
    return 2;
  }
  auto boot = bootstrap::make_bootstrap();
  g_rank = boot->rank();
  const int rank = boot->rank(), size = boot->size();
  std::unique_ptr<transport::Transport> t;
  try {
    t = transport::make_verbs_transport(*boot);
  } catch (const std::exception& e) {
    die(e.what());
  }
  check(t != nullptr, "no RDMA device");
  auto* verbs_transport = dynamic_cast<verbs::VerbsTransport*>(t.get());
  const char* preference = std::getenv("XMSG_TRANSPORTS");
  const bool all_pairs = transport::TransportSelector(preference ? preference : "", {"shm", "verbs", "tcp"})
                             .carries_same_node_pairs("verbs");
  // Peers: every other rank when verbs carries same-node pairs too, else the ranks of other
  // nodes (local_peers(), not node_of(): launchers need not serve remote ranks' node ids).
  const std::vector<int> local = boot->local_peers();
  std::vector<int> peers;
  for (int r = 0; r < size; ++r) {
    if (r != rank && (all_pairs || std::find(local.begin(), local.end(), r) == local.end())) peers.push_back(r);
  }
  t->connect(peers, {all_pairs});
  Sink sink;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  // Yield when idle: under soft-RoCE the device is kernel threads that spinning ranks starve.
  auto pump = [&] {
    if (t->progress(sink) == 0) sched_yield();
    if (std::chrono::steady_clock::now() >= deadline) die("timed out");
  };
  auto send = [&](int peer, uint32_t context, int32_t tag, MessageKind kind, std::span<const std::byte> payload) {
    WireHeader h{static_cast<uint32_t>(rank), context, tag, kind, 0, 0, payload.size()};
    while (!t->try_send(peer, h, payload)) pump();
  };
  const size_t max_eager = t->capabilities().max_eager_payload;

  if (mode_arg == "peerloss" || mode_arg == "silentloss") {
    // Rank 1's QPs vanish (its transport is destroyed without disconnect, as in a crash, but the
    // process stays so the launcher does not end the job first). peerloss: rank 0 is reading a
    // large buffer of rank 1 at that moment and keeps sending to it; silentloss: rank 0 sends
    // nothing and only progresses. Either way rank 0 must get on_peer_failure naming rank 1 and
    // the device (and the read must fail): the transport never hangs on a dead peer.
    const bool silent = mode_arg == "silentloss";
    check(size == 2 && peers.size() == 1, mode_arg + " needs 2 ranks on 2 nodes");
    const std::byte first = pattern(static_cast<uint32_t>(rank), 0, 0);
    send(peers[0], kExchangeContext, 0, MessageKind::kEager, {&first, 1});
    while (sink.exchange_count[static_cast<uint32_t>(peers[0])] != 1) pump();
    std::vector<std::byte> big(silent ? 0 : size_t{4} << 20);
    MemoryHandle exposed{};
    if (rank == 1 && !silent) {
      exposed = t->expose(big.data(), big.size());
      send(0, kExchangeContext, 0, MessageKind::kRendezvousRts, std::as_bytes(std::span(&exposed, 1)));
    }
    if (rank == 0 && !silent) {
      while (sink.rts.empty()) pump();
    }
    boot->fence(false);
    if (rank == 1) {
      if (!silent) usleep(1000000);  // rank 0's READs are under way
      t.reset();
      if (silent) boot->fence(false);
    } else {
      if (silent) boot->fence(false);  // rank 1's QPs are gone before rank 0 starts waiting
      sink.expect_failure = true;
      // peerloss: READs of rank 1's buffer back to back (a READ moves its bytes within a
      // moment of rank 1's HCA, so one READ could finish before the QPs vanish) and sends.
      int reads_done = 0;
      std::string read_failure;
      std::optional<Read> read;
      const auto start = std::chrono::steady_clock::now();
      int32_t tag = 1;
      while (sink.failures.empty() || (!silent && read_failure.empty())) {
        if (!silent) {
          if (read && read->finished) {
            if (read->ok) ++reads_done;
            else read_failure = read->reason;
            read.reset();
          }
          if (!read && read_failure.empty()) {
            read.emplace();
            t->read_remote(1, sink.rts.front().second, 0, big, *read);
          }
          WireHeader h{static_cast<uint32_t>(rank), kExchangeContext, tag, MessageKind::kEager, 0, 0, 1};
          const std::byte byte = pattern(static_cast<uint32_t>(rank), tag, 0);
          if (t->try_send(1, h, {&byte, 1})) ++tag;
        }
        pump();
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const auto& [peer, reason] = sink.failures.front();
      check(peer == 1, "the failure names rank " + std::to_string(peer) + ", not rank 1");
      check(reason.find("rank 1") != std::string::npos && reason.find(verbs_transport->device().name()) != std::string::npos,
            "the failure reason does not name rank 1 and the device: " + reason);
      if (!silent) {
        check(read_failure.find("rank 1") != std::string::npos, "the failed READ does not name rank 1: " + read_failure);
      }
      std::printf("xmsg_verbs_job: %s OK after %.1f s, %d sends and %d whole reads: %s\n", mode_arg.c_str(), seconds,
                  tag - 1, reads_done, reason.c_str());
      std::fflush(stdout);
    }
    if (t) t->disconnect();
    else boot->fence(false);  // pairs with rank 0's disconnect fence
    boot->finalize();
    return 0;
  }

  if (mode_arg == "killed") {
    sink.expect_failure = true;  // the transport may notice before the launcher ends the job
    std::vector<std::byte> message(max_eager);
    for (int32_t k = 0;; ++k) {
      if (rank == 1 && k == 200) raise(SIGKILL);
      const size_t len = 1 + static_cast<size_t>(k) % max_eager;
      for (size_t i = 0; i < len; ++i) message[i] = pattern(static_cast<uint32_t>(rank), k, i);
      for (int peer : peers) {
        WireHeader h{static_cast<uint32_t>(rank), kFloodContext, k, MessageKind::kEager, 0, 0, len};
        while (!t->try_send(peer, h, {message.data(), len})) pump();
      }
      pump();
      if (!sink.failures.empty() && k % 1000 == 0) {
        std::printf("xmsg_verbs_job: rank %d: %s\n", rank, sink.failures.front().second.c_str());
        std::fflush(stdout);
      }
    }
  }

  if (mode_arg == "firstmsg") {
    // Measurement, no assertion on time: the first round trip between rank 0 and the first rank
    // of another node (with the lazy wire-up it includes reading both cards and both handshakes)
    // against the median of the next 1000. Rank 0 names its partner through the bootstrap.
    if (rank == 0) {
      check(!peers.empty(), "firstmsg needs a rank on another node");
      const std::int32_t partner = peers.front();
      boot->put("firstmsg.partner", std::as_bytes(std::span(&partner, 1)));
      boot->commit();
    }
    boot->fence(false);
    std::int32_t partner = -1;
    const auto bytes = boot->get(0, "firstmsg.partner");
    check(bytes.size() == sizeof partner, "bad firstmsg.partner");
    std::memcpy(&partner, bytes.data(), sizeof partner);
    constexpr int kRounds = 1001;
    if (rank == 0 || rank == partner) {
      const int other = rank == 0 ? partner : 0;
      std::vector<double> rtt_us;
      for (int k = 0; k < kRounds; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        if (rank == 0) {
          send(other, kExchangeContext, k, MessageKind::kEager, {});
          while (sink.exchange_count[static_cast<uint32_t>(other)] != static_cast<size_t>(k + 1)) pump();
        } else {
          while (sink.exchange_count[static_cast<uint32_t>(other)] != static_cast<size_t>(k + 1)) pump();
          send(other, kExchangeContext, k, MessageKind::kEager, {});
        }
        rtt_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      if (rank == 0) {
        std::vector<double> rest(rtt_us.begin() + 1, rtt_us.end());
        std::nth_element(rest.begin(), rest.begin() + static_cast<long>(rest.size() / 2), rest.end());
        std::printf("xmsg_verbs_job: firstmsg (%s mode, %s wire-up): first round trip to rank %d %.1f us, median of the next %zu %.1f us\n",
                    std::string(to_string(verbs_transport->mode())).c_str(),
                    std::string(to_string(verbs_transport->scheme())).c_str(), partner, rtt_us.front(), rest.size(),
                    rest[rest.size() / 2]);
        std::fflush(stdout);
      }
    }
    t->disconnect();
    boot->finalize();
    return 0;
  }

  if (mode_arg == "pairs") {
    // Each rank sends to two ranks of the next node and hears from two of the previous one
    // (xmsgrun --nodes lays ranks out block-wise). The lazy wire-up must create only the QPs
    // these pairs use; eager creates every planned QP. Counted here, shown with XMSG_VERBOSE=1.
    const int ppn = boot->local_size();
    const int nodes = size / ppn;
    check(!all_pairs && ppn >= 2 && nodes >= 2 && size % ppn == 0 && local.front() == rank - rank % ppn,
          "pairs needs >= 2 nodes of >= 2 ranks each, laid out block-wise");
    const int node = rank / ppn, index = rank % ppn;
    const int next = ((node + 1) % nodes) * ppn, prev = ((node + nodes - 1) % nodes) * ppn;
    const std::vector<int> targets{next + index, next + (index + 1) % ppn};
    const std::vector<int> senders{prev + index, prev + (index + ppn - 1) % ppn};
    constexpr int kMessages = 100;
    std::vector<std::byte> message(max_eager);
    for (int k = 0; k < kMessages; ++k) {
      const size_t len = (static_cast<size_t>(k) * 97) % max_eager;
      for (int target : targets) {
        for (size_t i = 0; i < len; ++i) message[i] = pattern(static_cast<uint32_t>(rank), k, i);
        send(target, kExchangeContext, k, MessageKind::kEager, {message.data(), len});
      }
    }
    auto all_arrived = [&] {
      for (int s : senders)
        if (sink.exchange_count[static_cast<uint32_t>(s)] != kMessages) return false;
      return true;
    };
    while (!all_arrived()) pump();
    check(sink.exchange_count.size() == senders.size(), "messages from ranks that were never senders");
    const bool xrc = verbs_transport->mode() == verbs::PlanMode::xrc;
    std::size_t expected = 0;
    if (verbs_transport->scheme() == verbs::WireUpScheme::eager) {
      // Every planned QP (XRC: 2(N-1) on average; a rank's share of TGTs follows tgt_owner).
      expected = static_cast<std::size_t>(
          verbs::ConnectionPlan::uniform(nodes, ppn, verbs_transport->mode()).qp_count(rank));
    } else if (xrc) {
      expected = 2;  // the INI towards the next node + the TGT the first sender of the previous node asked for
    } else {
      std::vector<int> pair_peers = targets;
      pair_peers.insert(pair_peers.end(), senders.begin(), senders.end());
      std::sort(pair_peers.begin(), pair_peers.end());
      expected = static_cast<std::size_t>(std::unique(pair_peers.begin(), pair_peers.end()) - pair_peers.begin());
    }
    check(verbs_transport->qps_created() == expected,
          std::to_string(verbs_transport->qps_created()) + " QPs created, expected " + std::to_string(expected));
    boot->fence(false);
    if (rank == 0) {
      std::printf("xmsg_verbs_job: pairs OK (%s mode, %s wire-up, %d ranks on %d nodes, %zu QPs per rank)\n",
                  std::string(to_string(verbs_transport->mode())).c_str(),
                  std::string(to_string(verbs_transport->scheme())).c_str(), size, nodes, expected);
      std::fflush(stdout);
    }
    t->disconnect();
    boot->finalize();
    return 0;
  }

  if (mode_arg == "incast") {
    // Every rank that reaches rank 0 over verbs bursts at it; rank 0 starts a second late and
    // then polls in small doses, so its SRQ runs low (limit event) and senders meet RNR NAKs, the
    // backstop. Every message must still arrive, in order, byte for byte (the sink checks both).
    constexpr int kPerSender = 2000;
    const std::vector<size_t> lengths{1, 64, 1000, max_eager};
    // Lazy wire-up: connections are made by the first message, which needs rank 0 to answer.
    // One greeting per sender, answered before the lag starts, keeps the burst against a full
    // SRQ (without it the senders would wait out rank 0's sleep on their handshakes instead).
    const bool sender = rank != 0 && std::find(peers.begin(), peers.end(), 0) != peers.end();
    if (sender) send(0, kFloodContext, 0, MessageKind::kEager, {});
    if (rank == 0) {
      while (sink.flood_count < peers.size()) pump();
    }
    boot->fence(false);
    const auto start = std::chrono::steady_clock::now();
    if (rank == 0) {
      usleep(1000000);
      const size_t expected = static_cast<size_t>(kPerSender) * peers.size();
      for (size_t calls = 1; sink.incast_count < expected; ++calls) {
        pump();
        if (calls % 4 == 0) usleep(2000);
      }
      // Async events are read every 1024 progress calls: make sure the last ones are seen.
      for (int i = 0; i < 4096; ++i) t->progress(sink);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::uint64_t limit_events = verbs_transport->srq_limit_events();
      check(limit_events > 0, "the SRQ never reached its limit: the receiver did not lag, the test proves nothing");
      std::printf("xmsg_verbs_job: incast OK: %zu messages from %zu senders intact in %.1f s, SRQ limit reached %llu times\n",
                  expected, peers.size(), seconds, static_cast<unsigned long long>(limit_events));
      std::fflush(stdout);
    } else if (sender) {
      std::vector<std::byte> message(max_eager);
      for (int k = 0; k < kPerSender; ++k) {
        const size_t len = lengths[static_cast<size_t>(k) % lengths.size()];
        for (size_t i = 0; i < len; ++i) message[i] = pattern(static_cast<uint32_t>(rank), k, i);
        send(0, kIncastContext, k, MessageKind::kEager, {message.data(), len});
      }
    }
    t->disconnect();
    boot->finalize();
    return 0;
  }

  // 1. Eager exchange, many sizes, every pair.
  const std::vector<size_t> sizes{0, 1, 7, 64, 100, 1000, 4096, max_eager - 1, max_eager};
  std::vector<std::byte> buf(max_eager);
  for (int peer : peers) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      for (size_t i = 0; i < sizes[k]; ++i) buf[i] = pattern(static_cast<uint32_t>(rank), static_cast<int32_t>(k), i);
      send(peer, kExchangeContext, static_cast<int32_t>(k), MessageKind::kEager, {buf.data(), sizes[k]});
    }
  }
  auto exchange_done = [&] {
    for (int peer : peers) {
      if (sink.exchange_count[static_cast<uint32_t>(peer)] != sizes.size()) return false;
    }
    return true;
  };
  while (!exchange_done()) pump();

  // 2. Rendezvous: every peer reads our exposed buffer by RDMA READ.
  const size_t rndv_bytes = (1 << 20) + 7;
  std::vector<std::byte> exposed(rndv_bytes);
  for (size_t i = 0; i < rndv_bytes; ++i) exposed[i] = pattern(static_cast<uint32_t>(rank), 999, i);
  const MemoryHandle handle = t->expose(exposed.data(), exposed.size());
  for (int peer : peers) send(peer, kExchangeContext, 0, MessageKind::kRendezvousRts, std::as_bytes(std::span(&handle, 1)));
  while (sink.rts.size() < peers.size()) pump();
  std::vector<std::byte> fetched(rndv_bytes);
  for (const auto& [peer, remote] : sink.rts) {
    std::memset(fetched.data(), 0, fetched.size());
    Read read;
    // Two reads: the tail first at an offset, then the rest, to exercise offsets.
    const size_t split = 4096 + 3;
    t->read_remote(peer, remote, split, std::span(fetched).subspan(split), read);
    while (!read.finished) pump();
    check(read.ok, "RDMA READ from rank " + std::to_string(peer) + ": " + read.reason);
    Read head;
    t->read_remote(peer, remote, 0, std::span(fetched).first(split), head);
    while (!head.finished) pump();
    check(head.ok, "RDMA READ (head) from rank " + std::to_string(peer) + ": " + head.reason);
    for (size_t i = 0; i < rndv_bytes; ++i) {
      if (fetched[i] != pattern(static_cast<uint32_t>(peer), 999, i)) {
        die("RDMA READ from rank " + std::to_string(peer) + ": byte " + std::to_string(i) + " differs");
      }
    }
    send(peer, kExchangeContext, 0, MessageKind::kRendezvousFin, {});
  }
  while (sink.fins < static_cast<int>(peers.size())) pump();
  t->release(handle);

  // 3. Flood every peer with more messages than SRQ buffers (300 x peers > 256); the peer relation is symmetric,
  // so as many arrive as this rank sends.
  const int flood = 300;
  int refused = 0;
  for (int k = 0; k < flood; ++k) {
    const size_t len = 1 + static_cast<size_t>(k % 200);
    for (size_t i = 0; i < len; ++i) buf[i] = pattern(static_cast<uint32_t>(rank), k, i);
    for (int peer : peers) {
      WireHeader h{static_cast<uint32_t>(rank), kFloodContext, k, MessageKind::kEager, 0, 0, len};
      while (!t->try_send(peer, h, {buf.data(), len})) {
        ++refused;
        pump();
      }
    }
  }
  const size_t expected_flood = static_cast<size_t>(flood) * peers.size();
  while (sink.flood_count < expected_flood) pump();

  const std::string mode = verbs_transport ? std::string(verbs::to_string(verbs_transport->mode())) : "?";
  t->disconnect();
  boot->finalize();
  if (rank == 0) {
    std::printf("xmsg_verbs_job: OK (%s mode, %d ranks, %zu peers each, %d sends refused by backpressure)\n",
                mode.c_str(), size, peers.size(), refused);
  }
  return 0;
}
