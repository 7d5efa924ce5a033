// A job that drives the verbs transport directly (bootstrap + transport, no runtime), run with
// xmsgrun across virtual nodes inside the soft-RoCE guest:
//
//   xmsg_verbs_job [exchange]  every pair exchanges eager messages of many sizes (order and bytes
//                      checked), then every rank exposes a buffer that every peer fetches by
//                      RDMA READ (bytes checked, FIN back), then a ring flood many times the SRQ
//                      depth that must hit backpressure and still arrive in order.
//   xmsg_verbs_job peerloss    (2 ranks) rank 1's QPs vanish as in a crash; rank 0 keeps sending
//                              and must get on_peer_failure naming rank 1 and the device
// Prints "xmsg_verbs_job: OK (<mode>, <n> QPs)" from rank 0 on success; exits non-zero naming
// the rank and the reason otherwise. With no RDMA device it exits 1 ("no RDMA device").
#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/transport/verbs.hpp>

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
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

struct Sink final : transport::MessageSink {
  std::map<std::pair<uint32_t, uint32_t>, int32_t> next_tag;  // (context, source) -> next tag
  std::map<uint32_t, size_t> exchange_count;
  size_t flood_count = 0;
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
  if (mode_arg != "exchange" && mode_arg != "peerloss") {
    std::fprintf(stderr, "usage: xmsg_verbs_job [exchange|peerloss]\n");
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
  const bool all_pairs = verbs::verbs_carries_same_node_pairs(std::getenv("XMSG_TRANSPORTS"));
  // Peers: every other rank when verbs carries same-node pairs too, else the ranks of other
  // nodes (local_peers(), not node_of(): launchers need not serve remote ranks' node ids).
  const std::vector<int> local = boot->local_peers();
  std::vector<int> peers;
  for (int r = 0; r < size; ++r) {
    if (r != rank && (all_pairs || std::find(local.begin(), local.end(), r) == local.end())) peers.push_back(r);
  }
  t->connect(peers);
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

  if (mode_arg == "peerloss") {
    // Rank 1's QPs vanish (its transport is destroyed without disconnect, as in a crash, but the
    // process stays so the launcher does not end the job first). Rank 0 keeps sending to it and
    // must get on_peer_failure naming rank 1 and the device: the transport never hangs on it.
    check(size == 2 && peers.size() == 1, "peerloss needs 2 ranks on 2 nodes");
    const std::byte first = pattern(static_cast<uint32_t>(rank), 0, 0);
    send(peers[0], kExchangeContext, 0, MessageKind::kEager, {&first, 1});
    while (sink.exchange_count[static_cast<uint32_t>(peers[0])] != 1) pump();
    boot->fence(false);
    if (rank == 1) {
      t.reset();
    } else {
      boot->fence(false);  // rank 1's QPs are gone now
      sink.expect_failure = true;
      int32_t tag = 1;
      while (sink.failures.empty()) {
        WireHeader h{static_cast<uint32_t>(rank), kExchangeContext, tag, MessageKind::kEager, 0, 0, 1};
        const std::byte byte = pattern(static_cast<uint32_t>(rank), tag, 0);
        if (t->try_send(1, h, {&byte, 1})) ++tag;
        pump();
      }
      const auto& [peer, reason] = sink.failures.front();
      check(peer == 1, "the failure names rank " + std::to_string(peer) + ", not rank 1");
      check(reason.find("rank 1") != std::string::npos && reason.find(verbs_transport->device().name()) != std::string::npos,
            "the failure reason does not name rank 1 and the device: " + reason);
      std::printf("xmsg_verbs_job: peerloss OK after %d sends: %s\n", tag - 1, reason.c_str());
      std::fflush(stdout);
    }
    if (rank == 1) boot->fence(false);
    if (t) t->disconnect();
    else boot->fence(false);  // pairs with rank 0's disconnect fence
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
