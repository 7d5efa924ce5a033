// wireup_exchange: the bootstrap (PMIx) exchange of one verbs wire-up scheme, with records and
// cards of their real sizes but no RDMA device, so start-up cost and bytes can be measured on
// any machine, under xmsgrun's virtual nodes at hundreds of ranks.
//
//   wireup_exchange --scheme eager|lazy [--mode xrc|rc] [--touch K|all]
//
// eager (VerbsTransport::connect() before the lazy wire-up): put the WireUpRecord of the size
//   ConnectionPlan gives this rank (kWireUpKey) and the 4-byte node id (kNodeKey), commit,
//   fence with data collection, get every rank's node key (the true layout) and the record of
//   every rank on another node (every remote peer has a route), fence without data.
// lazy (WireUpCard): put one card (kWireUpCardKey), commit, fence without data collection,
//   then get the cards of K ranks on other nodes (--touch, default 0: a rank that has not sent
//   yet; "all": a first all-to-all), each get a PMIx direct modex through the node servers.
//   Peer j of rank r is remote[(r + j * (M / K)) mod M] in the ascending list of the M ranks on
//   other nodes, so the touched peers spread over the job.
//
// What a rank reads is decoded and checked against what its publisher must have written (QP
// numbers, SRQ number, cookie, node), so a short or mixed-up value fails the run.
// Every rank prints one line, `wireup_exchange: {...}` (JSON: its times and get counts);
// benchmarks/wireup/run aggregates them with xmsgrun --stats. A final fence without data
// (lazy; eager already ends with one) keeps ranks alive until every peer has read them; it is
// outside the timed part.
#include <xmsg/bootstrap/bootstrap.hpp>

#include "ConnectionPlan.hpp"
#include "WireUpCard.hpp"
#include "WireUpRecord.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using xmsg::verbs::ConnectionPlan;
using xmsg::verbs::PlanMode;

constexpr int kUsage = 2;

// Deterministic "random-looking" values a reader can recompute for any publisher.
std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
std::uint32_t qpn_of(int rank, int index) { return mix((std::uint64_t(rank) << 32) | std::uint32_t(index)) & 0xffffff; }
std::uint32_t psn_of(int rank, int index) { return mix((std::uint64_t(rank) << 32) ^ (0x5a5aULL << 16) ^ std::uint32_t(index)) & 0xffffff; }
std::uint32_t srq_of(int rank, PlanMode mode) { return mode == PlanMode::xrc ? 0x100000u + static_cast<std::uint32_t>(rank) : 0u; }
std::uint64_t cookie_of(int rank) { return (std::uint64_t(mix(std::uint64_t(rank) + 7)) << 32) | mix(std::uint64_t(rank) + 11); }
// RoCE v2 style IPv4-mapped GID ::ffff:10.n.n.l
std::array<std::uint8_t, 16> gid_of(int node, int local) {
  std::array<std::uint8_t, 16> g{};
  g[10] = 0xff;
  g[11] = 0xff;
  g[12] = 10;
  g[13] = static_cast<std::uint8_t>(node >> 8);
  g[14] = static_cast<std::uint8_t>(node);
  g[15] = static_cast<std::uint8_t>(local + 1);
  return g;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "wireup_exchange: %s\nusage: wireup_exchange --scheme eager|lazy [--mode xrc|rc] [--touch K|all]\n",
               why.c_str());
  std::exit(kUsage);
}

// The QPs of this rank depend only on which ranks share its node; the other ranks are spread
// over the other nodes (as VerbsTransport::provisional_plan does) until the node keys are read.
ConnectionPlan provisional_plan(const xmsg::bootstrap::Bootstrap& b, PlanMode mode) {
  const int size = b.size();
  const int nodes = b.num_nodes();
  const int my_node = b.node_id();
  std::vector<int> layout(static_cast<std::size_t>(size), -1);
  for (int r : b.local_peers()) layout.at(static_cast<std::size_t>(r)) = my_node;
  int next = 0;
  for (int r = 0; r < size; ++r) {
    if (layout[static_cast<std::size_t>(r)] != -1) continue;
    if (next == my_node) next = (next + 1) % nodes;
    layout[static_cast<std::size_t>(r)] = next;
    next = (next + 1) % nodes;
  }
  return ConnectionPlan(std::move(layout), mode);
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  const auto t_start = Clock::now();
  std::string scheme;
  std::string mode_text = "xrc";
  std::string touch_text;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--scheme") scheme = value();
    else if (a == "--mode") mode_text = value();
    else if (a == "--touch") touch_text = value();
    else if (a == "-h" || a == "--help") {
      std::printf("usage: wireup_exchange --scheme eager|lazy [--mode xrc|rc] [--touch K|all]\n");
      return 0;
    } else usage("unknown argument '" + a + "'");
  }
  if (scheme != "eager" && scheme != "lazy") usage("--scheme must be eager or lazy");
  PlanMode mode{};
  try {
    mode = xmsg::verbs::parse_plan_mode(mode_text, "--mode");
  } catch (const std::exception& e) {
    usage(e.what());
  }
  long touch = 0;
  bool touch_all = false;
  if (!touch_text.empty()) {
    if (scheme != "lazy") usage("--touch is for --scheme lazy only");
    if (touch_text == "all") {
      touch_all = true;
    } else {
      char* end = nullptr;
      touch = std::strtol(touch_text.c_str(), &end, 10);
      if (touch_text.empty() || *end || touch < 0) usage("--touch must be a count >= 0 or 'all'");
    }
  }

  int rank = -1;
  try {
    auto b = xmsg::bootstrap::make_bootstrap();
    const auto t_init = Clock::now();
    rank = b->rank();
    const int size = b->size();
    const int my_node = b->node_id();
    const std::vector<int> local = b->local_peers();
    auto on_my_node = [&](int r) { return std::binary_search(local.begin(), local.end(), r); };

    std::uint64_t gets = 0, get_bytes = 0, published = 0;
    int qp_count = 0;
    double fence_s = 0;
    Clock::duration get_time{};
    long touched = 0;
    auto get = [&](int r, std::string_view key) {
      const auto t = Clock::now();
      auto v = b->get(r, key);
      get_time += Clock::now() - t;
      ++gets;
      get_bytes += v.size();
      return v;
    };

    if (scheme == "eager") {
      const ConnectionPlan provisional = provisional_plan(*b, mode);
      qp_count = provisional.qp_count(rank);
      xmsg::verbs::WireUpRecord mine;
      mine.header.mode = static_cast<std::uint8_t>(mode);
      mine.header.link_layer = 2;  // Ethernet (RoCE)
      mine.header.path_mtu = 3;    // IBV_MTU_1024
      mine.header.port = 1;
      mine.header.gid_index = 1;
      mine.header.srq_num = srq_of(rank, mode);
      mine.header.gid = gid_of(my_node, b->local_rank());
      for (int i = 0; i < qp_count; ++i) mine.qps.push_back({qpn_of(rank, i), psn_of(rank, i)});
      const auto bytes = mine.encode();
      if (bytes.size() != xmsg::verbs::WireUpRecord::encoded_size(static_cast<std::size_t>(qp_count)))
        throw std::runtime_error("encoded record has the wrong size");
      b->put(xmsg::verbs::kWireUpKey, bytes);
      const std::uint32_t node_word = static_cast<std::uint32_t>(my_node);
      b->put(xmsg::verbs::kNodeKey, std::as_bytes(std::span(&node_word, 1)));
      published = bytes.size() + sizeof node_word;
      b->commit();
      const auto t_f0 = Clock::now();
      b->fence(true);
      fence_s = seconds(Clock::now() - t_f0);

      std::vector<int> layout(static_cast<std::size_t>(size));
      for (int r = 0; r < size; ++r) {
        auto v = get(r, xmsg::verbs::kNodeKey);
        std::uint32_t node = 0;
        if (v.size() != sizeof node)
          throw std::runtime_error("rank " + std::to_string(r) + " published a " + std::to_string(v.size()) + "-byte node id");
        std::memcpy(&node, v.data(), sizeof node);
        layout[static_cast<std::size_t>(r)] = static_cast<int>(node);
      }
      const ConnectionPlan plan(std::move(layout), mode);
      if (plan.qps_of(rank) != provisional.qps_of(rank))
        throw std::runtime_error("the published node layout disagrees with this node's local peers");
      for (int r = 0; r < size; ++r) {
        if (plan.node_of(r) == my_node) continue;
        const auto record = xmsg::verbs::WireUpRecord::decode(get(r, xmsg::verbs::kWireUpKey), r);
        if (record.header.mode != static_cast<std::uint8_t>(mode) || record.header.srq_num != srq_of(r, mode) ||
            static_cast<int>(record.qps.size()) != plan.qp_count(r))
          throw std::runtime_error("the record of rank " + std::to_string(r) + " does not match its plan");
        for (int i = 0; i < static_cast<int>(record.qps.size()); ++i) {
          const auto& q = record.qps[static_cast<std::size_t>(i)];
          if (q.qpn != qpn_of(r, i) || q.psn != psn_of(r, i))
            throw std::runtime_error("the record of rank " + std::to_string(r) + " has a wrong QP " + std::to_string(i));
        }
        ++touched;
      }
      b->fence(false);
    } else {
      xmsg::verbs::WireUpCard card{};
      card.mode = static_cast<std::uint8_t>(mode);
      card.link_layer = 2;
      card.path_mtu = 3;
      card.port = 1;
      card.gid_index = 1;
      card.srq_num = srq_of(rank, mode);
      card.node = static_cast<std::uint32_t>(my_node);
      card.cm_ipv4 = htonl(0x0a000000u | static_cast<std::uint32_t>(my_node + 1));
      card.cm_port = htons(static_cast<std::uint16_t>(20000 + b->local_rank()));
      card.cookie = cookie_of(rank);
      card.gid = gid_of(my_node, b->local_rank());
      const auto bytes = card.encode();
      b->put(xmsg::verbs::kWireUpCardKey, bytes);
      published = bytes.size();
      b->commit();
      const auto t_f0 = Clock::now();
      b->fence(false);
      fence_s = seconds(Clock::now() - t_f0);

      std::vector<int> remote;
      for (int r = 0; r < size; ++r)
        if (!on_my_node(r)) remote.push_back(r);
      const long m = static_cast<long>(remote.size());
      const long k = touch_all ? m : std::min(touch, m);
      const long step = k > 0 ? std::max(1L, m / k) : 1;
      for (long j = 0; j < k; ++j) {
        const int peer = remote[static_cast<std::size_t>((rank + j * step) % m)];
        const auto c = xmsg::verbs::WireUpCard::decode(get(peer, xmsg::verbs::kWireUpCardKey), peer);
        if (c.cookie != cookie_of(peer) || c.srq_num != srq_of(peer, mode) || c.mode != static_cast<std::uint8_t>(mode) ||
            static_cast<int>(c.node) == my_node || static_cast<int>(c.node) >= b->num_nodes())
          throw std::runtime_error("the card of rank " + std::to_string(peer) + " does not match its publisher");
        ++touched;
      }
    }
    const auto t_done = Clock::now();
    if (scheme == "lazy") b->fence(false);  // nobody leaves while a peer may still read it

    std::printf(
        "wireup_exchange: {\"rank\": %d, \"node\": %d, \"ranks\": %d, \"nodes\": %d, \"scheme\": \"%s\", \"mode\": \"%s\", "
        "\"peers_read\": %ld, \"qp_count\": %d, \"published_bytes\": %llu, \"gets\": %llu, \"get_bytes\": %llu, "
        "\"init_s\": %.6f, \"fence_s\": %.6f, \"gets_s\": %.6f, \"exchange_s\": %.6f, \"startup_s\": %.6f}\n",
        rank, my_node, size, b->num_nodes(), scheme.c_str(), std::string(xmsg::verbs::to_string(mode)).c_str(), touched,
        qp_count, static_cast<unsigned long long>(published), static_cast<unsigned long long>(gets),
        static_cast<unsigned long long>(get_bytes), seconds(t_init - t_start), fence_s, seconds(get_time), seconds(t_done - t_init),
        seconds(t_done - t_start));
    std::fflush(stdout);
    b->finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wireup_exchange: rank %d: %s\n", rank, e.what());
    return 1;
  }
  return 0;
}
