#include "VerbsTransport.hpp"

#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/bootstrap/parameters.hpp>
#include <xmsg/transport/verbs.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "VerbsError.hpp"

namespace xmsg::verbs {

using xmsg::transport::Capabilities;
using xmsg::transport::MemoryHandle;
using xmsg::transport::MessageSink;
using xmsg::transport::PayloadWriter;
using xmsg::transport::ReadCompletion;
using xmsg::transport::TransportError;
using xmsg::transport::WireHeader;

namespace {

// wr_id: the top two bits say what completed, the rest which slot or read.
constexpr std::uint64_t kKindShift = 62;
constexpr std::uint64_t kRecv = 0;
constexpr std::uint64_t kSend = 1;
constexpr std::uint64_t kRdma = 2;  // an RDMA READ or WRITE chunk
constexpr std::uint64_t kProbe = 3;
constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kKindShift) - 1;
// One READ or WRITE moves at most this much; larger ones are split (devices cap max_msg_sz).
constexpr std::uint64_t kMaxRdmaChunk = std::uint64_t{1} << 30;
constexpr int kMaxRdmaPosted = 64;
constexpr int kPollBatch = 32;
// A peer that dies while nobody sends to it leaves nothing to fail: its RC/INI QP is only
// tested by traffic. So a rank that keeps progressing probes every peer it has not heard from
// within this interval (no message from it, no send or READ to it completed) with a zero-length
// RDMA WRITE: it needs no key, no receive buffer and no CPU on the far side (the peer's HCA
// acknowledges it), and a peer whose QPs are gone lets it run into the transport retry limit,
// reported like any failed send. Detection: one or two intervals + retries (~10 s).
constexpr auto kProbeInterval = std::chrono::seconds(2);
// How often a progressing rank looks for connection requests (lazy wire-up).
constexpr auto kConnectionPollInterval = std::chrono::microseconds(100);

std::uint64_t make_wr_id(std::uint64_t kind, std::uint64_t index) { return (kind << kKindShift) | index; }

bool verbose() { return params::flag("XMSG_VERBOSE"); }

}  // namespace

PlanMode choose_mode(const Device& device, const char* env_value) {
  const std::string_view wanted = env_value != nullptr && *env_value != '\0' ? env_value : "auto";
  if (wanted == "auto") return device.supports_xrc() ? PlanMode::xrc : PlanMode::rc;
  if (wanted != "xrc" && wanted != "rc") {
    throw std::invalid_argument("XMSG_VERBS_MODE: expected auto, xrc or rc, got '" + std::string(wanted) + "'");
  }
  const PlanMode mode = parse_plan_mode(wanted, "XMSG_VERBS_MODE");
  if (mode == PlanMode::xrc && !device.supports_xrc()) {
    throw VerbsError("XMSG_VERBS_MODE=xrc but there is no XRC-capable device: " + device.label() +
                     " lacks IBV_DEVICE_XRC (use rc or auto)");
  }
  return mode;
}

std::string_view to_string(WireUpScheme scheme) { return scheme == WireUpScheme::lazy ? "lazy" : "eager"; }

WireUpScheme choose_wireup_scheme(const char* env_value) {
  const std::string_view wanted = env_value != nullptr ? env_value : "";
  if (wanted.empty() || wanted == "lazy") return WireUpScheme::lazy;
  if (wanted == "eager") return WireUpScheme::eager;
  throw std::invalid_argument("XMSG_VERBS_CONNECT: expected lazy or eager, got '" + std::string(wanted) + "'");
}

VerbsTransport::VerbsTransport(bootstrap::Bootstrap& bootstrap, Device device, PlanMode mode, VerbsLimits limits,
                               WireUpScheme scheme)
    : boot_(bootstrap), device_(std::move(device)), mode_(mode), limits_(limits), scheme_(scheme),
      rank_(bootstrap.rank()) {
  limits_.validate();
}

VerbsTransport::~VerbsTransport() {
  teardown();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Capabilities VerbsTransport::capabilities() const {
  Capabilities caps;
  caps.remote_read = true;
  caps.remote_write = true;
  caps.remote_atomics = atomics();
  caps.max_eager_payload = limits_.eager_buffer_bytes - sizeof(WireHeader);
  return caps;
}

std::string VerbsTransport::peer_label(int rank) const {
  if (auto it = routes_.find(rank); it != routes_.end() && it->second.node >= 0) {
    return "rank " + std::to_string(rank) + " (node " + std::to_string(it->second.node) + ")";
  }
  if (plan_ && rank >= 0 && rank < plan_->num_ranks()) {
    return "rank " + std::to_string(rank) + " (node " + std::to_string(plan_->node_of(rank)) + ")";
  }
  return "rank " + std::to_string(rank);
}

ConnectionPlan VerbsTransport::identity_plan(int size) const {
  std::vector<int> layout(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) layout[static_cast<std::size_t>(r)] = r;
  return ConnectionPlan(std::move(layout), mode_);
}

ConnectionPlan VerbsTransport::provisional_plan() const {
  const int size = boot_.size();
  const int nodes = boot_.num_nodes();
  const int my_node = boot_.node_id();
  const std::vector<int> local = boot_.local_peers();
  if (nodes < 1 || my_node < 0 || my_node >= nodes || local.empty() || size - static_cast<int>(local.size()) < nodes - 1) {
    throw TransportError("verbs: rank " + std::to_string(rank_) + ": inconsistent job shape from the bootstrap (" +
                         std::to_string(size) + " ranks, " + std::to_string(nodes) + " nodes, node " +
                         std::to_string(my_node) + ", " + std::to_string(local.size()) + " local ranks)");
  }
  std::vector<int> layout(static_cast<std::size_t>(size), -1);
  for (int r : local) layout.at(static_cast<std::size_t>(r)) = my_node;
  int next = 0;
  for (int r = 0; r < size; ++r) {
    if (layout[static_cast<std::size_t>(r)] != -1) continue;
    if (next == my_node) next = (next + 1) % nodes;
    layout[static_cast<std::size_t>(r)] = next;
    next = (next + 1) % nodes;
  }
  return ConnectionPlan(std::move(layout), mode_);
}

std::vector<int> VerbsTransport::true_layout() {
  const int size = boot_.size();
  std::vector<int> layout(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    std::vector<std::byte> bytes;
    try {
      bytes = boot_.get(r, kNodeKey);
    } catch (const std::exception& e) {
      throw TransportError("verbs: rank " + std::to_string(rank_) + " cannot read the node of rank " +
                           std::to_string(r) + ": " + e.what());
    }
    std::uint32_t node = 0;
    if (bytes.size() != sizeof node) {
      throw TransportError("verbs: rank " + std::to_string(r) + " published a " + std::to_string(bytes.size()) +
                           "-byte node id");
    }
    std::memcpy(&node, bytes.data(), sizeof node);
    layout[static_cast<std::size_t>(r)] = static_cast<int>(node);
  }
  return layout;
}

const WireUpRecord& VerbsTransport::record_of(int rank) {
  auto& slot = records_.at(static_cast<std::size_t>(rank));
  if (!slot) {
    std::vector<std::byte> bytes;
    try {
      bytes = boot_.get(rank, kWireUpKey);
    } catch (const std::exception& e) {
      throw TransportError("verbs: rank " + std::to_string(rank_) + " cannot read the wire-up record of " +
                           peer_label(rank) + ": " + e.what());
    }
    try {
      slot = WireUpRecord::decode(bytes, rank);
    } catch (const std::runtime_error& e) {
      throw TransportError(std::string("verbs: ") + e.what());
    }
    if (slot->header.mode != static_cast<std::uint8_t>(mode_)) {
      throw TransportError("verbs: " + peer_label(rank) + " runs in " +
                           std::string(to_string(static_cast<PlanMode>(slot->header.mode))) + " mode, rank " +
                           std::to_string(rank_) + " in " + std::string(to_string(mode_)) +
                           " (mixed devices or XMSG_VERBS_MODE?)");
    }
    if (static_cast<int>(slot->qps.size()) != plan_->qp_count(rank)) {
      throw TransportError("verbs: " + peer_label(rank) + " published " + std::to_string(slot->qps.size()) +
                           " QPs, the plan expects " + std::to_string(plan_->qp_count(rank)) +
                           " (different XMSG_TRANSPORTS on different ranks?)");
    }
  }
  return *slot;
}

RemoteEndpoint VerbsTransport::endpoint(const WireUpRecord& record, int qp_position, int publisher) const {
  if (qp_position < 0 || qp_position >= static_cast<int>(record.qps.size())) {
    throw TransportError("verbs: the wire-up record of " + peer_label(publisher) + " has no QP at position " +
                         std::to_string(qp_position));
  }
  RemoteEndpoint ep;
  ep.qpn = record.qps[static_cast<std::size_t>(qp_position)].qpn;
  ep.psn = record.qps[static_cast<std::size_t>(qp_position)].psn;
  ep.lid = record.header.lid;
  ep.gid = record.header.gid;
  ep.path_mtu = static_cast<ibv_mtu>(record.header.path_mtu);
  return ep;
}

void VerbsTransport::create_local_resources(std::size_t peer_count) {
  try {
    pd_ = std::make_unique<ProtectionDomain>(device_);
    registrations_ = std::make_unique<RegistrationCache>(*pd_);
    const int send_slots = limits_.send_depth * 2;
    send_slab_.assign(static_cast<std::size_t>(send_slots) * limits_.eager_buffer_bytes, std::byte{0});
    send_mr_ = std::make_unique<MemoryRegion>(*pd_, send_slab_.data(), send_slab_.size(), IBV_ACCESS_LOCAL_WRITE);
    for (int s = send_slots - 1; s >= 0; --s) free_send_slots_.push_back(s);
    send_slot_owner_.assign(static_cast<std::size_t>(send_slots), {-1, -1});
    // Every CQ entry is bounded by something finite: posted receives, send slots, posted reads,
    // one liveness probe per peer; what the device cannot hold is taken off the probes.
    const int wanted_cq = limits_.srq_depth + send_slots + kMaxRdmaPosted + 16 + static_cast<int>(peer_count);
    const int cq_depth = std::min(wanted_cq, device_.attributes().max_cqe);
    probe_budget_ = std::max(0, static_cast<int>(peer_count) - (wanted_cq - cq_depth));
    cq_ = std::make_unique<CompletionQueue>(device_, cq_depth, params::flag("XMSG_VERBS_COMP_CHANNEL"));
    if (cq_->channel_fd() >= 0) wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (mode_ == PlanMode::xrc) {
      xrcd_ = std::make_unique<XrcDomain>(device_, boot_.job_id(), my_node_);
      srq_ = std::make_unique<SharedReceiveQueue>(*pd_, *xrcd_, *cq_, limits_.srq_depth, limits_.eager_buffer_bytes);
    } else {
      srq_ = std::make_unique<SharedReceiveQueue>(*pd_, limits_.srq_depth, limits_.eager_buffer_bytes);
    }
    srq_->arm_limit(limits_.srq_low_watermark());
  } catch (const VerbsError& e) {
    throw TransportError(std::string("verbs: rank ") + std::to_string(rank_) + ": " + e.what());
  }
}

int VerbsTransport::add_qp(std::unique_ptr<QueuePair> qp) {
  QpState state;
  state.qp = std::move(qp);
  qp_index_by_qpn_[state.qp->qpn()] = static_cast<int>(qps_.size());
  qps_.push_back(std::move(state));
  return static_cast<int>(qps_.size()) - 1;
}

void VerbsTransport::connect(std::span<const int> peers, const xmsg::transport::ConnectOptions& options) {
  if (connected_) throw TransportError("verbs: connect() called twice");
  connected_ = true;
  const auto wire_up_start = std::chrono::steady_clock::now();
  const bool own_nodes = options.carries_same_node_pairs;
  my_node_ = own_nodes ? rank_ : boot_.node_id();
  heard_.assign(static_cast<std::size_t>(boot_.size()), 0);
  last_probe_round_ = std::chrono::steady_clock::now();
  create_local_resources(peers.size());
  if (scheme_ == WireUpScheme::eager) {
    connect_eager(peers, own_nodes);
  } else {
    connect_lazy(peers);
  }
  if (verbose()) {
    const double wire_up_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wire_up_start).count();
    const std::string domain = xrcd_ ? ", XRC domain " + xrcd_->path() : std::string();
    const std::string cm = cm_ ? ", connection manager " + ConnectionManager::address_text(cm_->ipv4(), cm_->port())
                               : std::string();
    std::fprintf(stderr,
                 "xmsg: verbs: rank %d on %s, %s mode, %s wire-up, %zu QPs, SRQ %d x %zu bytes%s%s, wired up in %.1f ms\n",
                 rank_, device_.label().c_str(), std::string(to_string(mode_)).c_str(),
                 std::string(to_string(scheme_)).c_str(), qps_.size(), limits_.srq_depth, limits_.eager_buffer_bytes,
                 domain.c_str(), cm.c_str(), wire_up_ms);
  }
}

namespace {

// RoCE v2 GIDs of IPv4 ports are ::ffff:a.b.c.d: the connection manager listens on that address,
// which is the one RDMA traffic uses. Otherwise (InfiniBand) XMSG_VERBS_CM_ADDRESS, else the
// first IPv4 address of the host name.
std::uint32_t connection_manager_address(const PortAddress& address, const std::string& hostname) {
  if (const auto forced = params::raw("XMSG_VERBS_CM_ADDRESS")) {
    in_addr a{};
    if (::inet_pton(AF_INET, forced->c_str(), &a) != 1) {
      throw std::invalid_argument("XMSG_VERBS_CM_ADDRESS: expected an IPv4 address, got '" + *forced + "'");
    }
    return a.s_addr;
  }
  const auto& g = address.gid;
  const bool v4_mapped = std::all_of(g.begin(), g.begin() + 10, [](std::uint8_t b) { return b == 0; }) &&
                         g[10] == 0xff && g[11] == 0xff;
  if (v4_mapped) {
    std::uint32_t ip = 0;
    std::memcpy(&ip, g.data() + 12, sizeof ip);
    return ip;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (::getaddrinfo(hostname.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    throw std::invalid_argument("verbs: no IPv4 address for the connection manager: the port GID is not IPv4-mapped "
                                "and host name '" + hostname + "' does not resolve; set XMSG_VERBS_CM_ADDRESS");
  }
  const std::uint32_t ip = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr.s_addr;
  ::freeaddrinfo(found);
  return ip;
}

std::uint64_t random_cookie() {
  std::uint64_t value = 0;
  if (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    throw TransportError("verbs: getrandom failed for the wire-up cookie");
  }
  return value;
}

}  // namespace

void VerbsTransport::connect_lazy(std::span<const int> peers) {
  const int size = boot_.size();
  is_peer_.assign(static_cast<std::size_t>(size), 0);
  for (int peer : peers) {
    if (peer < 0 || peer >= size || peer == rank_) {
      throw TransportError("verbs: rank " + std::to_string(rank_) + ": bad peer " + std::to_string(peer));
    }
    is_peer_[static_cast<std::size_t>(peer)] = 1;
  }
  try {
    cm_ = std::make_unique<ConnectionManager>(connection_manager_address(device_.address(), boot_.hostname()));
  } catch (const std::exception& e) {
    throw TransportError(std::string("verbs: rank ") + std::to_string(rank_) + ": " + e.what());
  }
  cookie_ = random_cookie();
  WireUpCard card{};
  const PortAddress& address = device_.address();
  card.mode = static_cast<std::uint8_t>(mode_);
  card.link_layer = address.link_layer;
  card.path_mtu = static_cast<std::uint8_t>(address.path_mtu);
  card.lid = address.lid;
  card.port = address.port;
  card.gid_index = static_cast<std::uint8_t>(address.gid_index);
  card.srq_num = srq_->srq_num();
  card.node = static_cast<std::uint32_t>(my_node_);
  card.cm_ipv4 = cm_->ipv4();
  card.cm_port = cm_->port();
  card.cookie = cookie_;
  card.gid = address.gid;
  boot_.put(kWireUpCardKey, card.encode());
  boot_.commit();
  // No data: cards travel only when a peer asks for one. The fence makes every card readable and,
  // XRC, proves every local rank has opened the domain file.
  boot_.fence(false);
  if (xrcd_) xrcd_->unlink_file();
  const int flags = fcntl(device_.context()->async_fd, F_GETFL);
  if (flags < 0 || fcntl(device_.context()->async_fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw TransportError("verbs: cannot make the async event fd of " + device_.label() + " non-blocking");
  }
}

const WireUpCard* VerbsTransport::card_of(int peer, std::string& error, bool same_node) {
  if (auto it = cards_.find(peer); it != cards_.end()) return &it->second;
  try {
    const WireUpCard card = WireUpCard::decode(boot_.get(peer, kWireUpCardKey), peer);
    if (card.mode != static_cast<std::uint8_t>(mode_)) {
      error = "it runs in " + std::string(to_string(static_cast<PlanMode>(card.mode))) + " mode, rank " +
              std::to_string(rank_) + " in " + std::string(to_string(mode_)) + " (mixed devices or XMSG_VERBS_MODE?)";
      return nullptr;
    }
    if (static_cast<int>(card.node) == my_node_ && !same_node) {
      error = "it shares node " + std::to_string(my_node_) + " with rank " + std::to_string(rank_) +
              "; set XMSG_TRANSPORTS=verbs,... to carry same-node pairs over verbs";
      return nullptr;
    }
    return &cards_.emplace(peer, card).first->second;
  } catch (const std::exception& e) {
    error = std::string("cannot read its wire-up card: ") + e.what();
    return nullptr;
  }
}

VerbsTransport::Route* VerbsTransport::route_to(int peer) {
  if (auto it = routes_.find(peer); it != routes_.end()) return &it->second;
  if (scheme_ != WireUpScheme::lazy || peer < 0 || peer >= static_cast<int>(is_peer_.size()) ||
      !is_peer_[static_cast<std::size_t>(peer)]) {
    return nullptr;
  }
  std::string error;
  const WireUpCard* card = card_of(peer, error);
  if (card == nullptr) {
    // No QP to hang the route on: a failed route on a failed placeholder link.
    Route& route = routes_[peer];
    route.qp_index = add_failed_link(error);
    fail_peer(peer, error, nullptr);
    return &route;
  }
  Route route;
  route.node = static_cast<int>(card->node);
  route.remote_srqn = card->srq_num;
  const int key = mode_ == PlanMode::xrc ? route.node : peer;
  auto link = links_.find(key);
  route.qp_index = link != links_.end() ? link->second : open_link(key, peer, *card);
  Route& stored = routes_[peer] = route;
  const QpState& qp = qps_[static_cast<std::size_t>(stored.qp_index)];
  if (qp.state == LinkState::failed) fail_peer(peer, qp.failure, nullptr);
  return &stored;
}

ConnectionMessage VerbsTransport::message_template(ConnectionMessageKind kind, int to_rank) const {
  ConnectionMessage m{};
  const PortAddress& address = device_.address();
  m.magic = kConnectionMagic;
  m.version = kConnectionVersion;
  m.kind = kind;
  m.mode = static_cast<std::uint8_t>(mode_);
  m.path_mtu = static_cast<std::uint8_t>(address.path_mtu);
  m.from_rank = static_cast<std::uint32_t>(rank_);
  m.to_rank = static_cast<std::uint32_t>(to_rank);
  m.from_node = static_cast<std::uint32_t>(my_node_);
  m.lid = address.lid;
  m.gid = address.gid;
  return m;
}

RemoteEndpoint VerbsTransport::endpoint(const ConnectionMessage& message) const {
  RemoteEndpoint ep;
  ep.qpn = message.qpn;
  ep.psn = message.psn;
  ep.lid = message.lid;
  ep.gid = message.gid;
  ep.path_mtu = static_cast<ibv_mtu>(message.path_mtu);
  return ep;
}

int VerbsTransport::open_link(int key, int responder, const WireUpCard& card) {
  int index = -1;
  try {
    std::unique_ptr<QueuePair> qp =
        mode_ == PlanMode::xrc
            ? QueuePair::create_xrc_ini(*pd_, *cq_, limits_.send_depth, "node " + std::to_string(key))
            : QueuePair::create_rc(*pd_, *cq_, *srq_, limits_.send_depth,
                                   "rank " + std::to_string(responder) + " (node " + std::to_string(card.node) + ")");
    index = add_qp(std::move(qp));
  } catch (const VerbsError& e) {
    return links_[key] = add_failed_link(e.what());
  }
  links_[key] = index;
  QpState& state = qps_[static_cast<std::size_t>(index)];
  state.state = LinkState::requesting;
  state.responder = responder;
  state.requested = std::chrono::steady_clock::now();
  ConnectionMessage request = message_template(ConnectionMessageKind::request, responder);
  request.qpn = state.qp->qpn();
  request.psn = state.qp->psn();
  request.cookie = card.cookie;
  try {
    cm_->start(index, request, card.cm_ipv4, card.cm_port, std::chrono::seconds(limits_.connect_timeout_seconds));
  } catch (const std::exception& e) {
    state.state = LinkState::failed;
    state.failure = e.what();
  }
  return index;
}

int VerbsTransport::add_failed_link(std::string reason) {
  QpState dead;
  dead.state = LinkState::failed;
  dead.failure = std::move(reason);
  qps_.push_back(std::move(dead));
  return static_cast<int>(qps_.size()) - 1;
}

void VerbsTransport::fail_link(int qp_index, const std::string& reason) {
  QpState& state = qps_[static_cast<std::size_t>(qp_index)];
  state.state = LinkState::failed;
  state.failure = reason;
  for (auto& [peer, route] : routes_) {
    if (route.qp_index == qp_index) fail_peer(peer, reason, nullptr);
  }
}

ConnectionMessage VerbsTransport::on_request(const ConnectionMessage& request) {
  const int from = static_cast<int>(request.from_rank);
  ConnectionMessage reply = message_template(ConnectionMessageKind::accept, from);
  auto reject = [&](ConnectionReject why) {
    reply.kind = ConnectionMessageKind::reject;
    reply.reject_reason = static_cast<std::uint16_t>(why);
    if (verbose()) {
      std::fprintf(stderr, "xmsg: verbs: rank %d rejected a connection request from rank %d: %s\n", rank_, from,
                   describe(why).c_str());
    }
    return reply;
  };
  if (request.cookie != cookie_) return reject(ConnectionReject::bad_cookie);
  if (static_cast<int>(request.to_rank) != rank_) return reject(ConnectionReject::wrong_rank);
  if (request.mode != static_cast<std::uint8_t>(mode_)) return reject(ConnectionReject::wrong_mode);
  // A rank of this node may ask too (RC): for atomics on this rank's windows (atomics_route).
  if (from < 0 || from >= static_cast<int>(is_peer_.size()) ||
      (!is_peer_[static_cast<std::size_t>(from)] && static_cast<int>(request.from_node) != my_node_)) {
    return reject(ConnectionReject::not_a_peer);
  }
  const std::string who = "rank " + std::to_string(from) + " (node " + std::to_string(request.from_node) + ")";
  try {
    int index = -1;
    if (mode_ == PlanMode::xrc) {
      // One TGT per remote sender in the node's domain; a repeated request gets the same one.
      if (auto it = tgt_of_sender_.find(from); it != tgt_of_sender_.end()) {
        index = it->second;
        if (qps_[static_cast<std::size_t>(index)].remote_qpn != request.qpn) return reject(ConnectionReject::conflict);
      } else {
        index = add_qp(QueuePair::create_xrc_tgt(*xrcd_, who));
        qps_[static_cast<std::size_t>(index)].qp->connect(endpoint(request));
        qps_[static_cast<std::size_t>(index)].remote_qpn = request.qpn;
        tgt_of_sender_[from] = index;
      }
    } else {
      // One RC QP per pair whoever asks first; when both asked at once each side connects its
      // own QP to the one named in the other's request, so the replies agree.
      auto link = links_.find(from);
      if (link == links_.end()) {
        index = add_qp(QueuePair::create_rc(*pd_, *cq_, *srq_, limits_.send_depth, who));
        links_[from] = index;
        Route& route = routes_[from];
        route.qp_index = index;
        route.node = static_cast<int>(request.from_node);
      } else {
        index = link->second;
      }
      QpState& state = qps_[static_cast<std::size_t>(index)];
      if (state.state == LinkState::failed) return reject(ConnectionReject::qp_failed);
      if (state.remote_qpn == 0) {
        state.qp->connect(endpoint(request));
        state.remote_qpn = request.qpn;
        state.state = LinkState::up;
      } else if (state.remote_qpn != request.qpn) {
        return reject(ConnectionReject::conflict);
      }
    }
    reply.qpn = qps_[static_cast<std::size_t>(index)].qp->qpn();
    reply.psn = qps_[static_cast<std::size_t>(index)].qp->psn();
    if (verbose()) {
      std::fprintf(stderr, "xmsg: verbs: rank %d created %s QP %u for %s (its QP %u)\n", rank_,
                   std::string(to_string(qps_[static_cast<std::size_t>(index)].qp->kind())).c_str(), reply.qpn,
                   who.c_str(), request.qpn);
    }
    return reply;
  } catch (const VerbsError& e) {
    std::fprintf(stderr, "xmsg: verbs: rank %d cannot answer the connection request of %s: %s\n", rank_, who.c_str(),
                 e.what());
    return reject(ConnectionReject::qp_failed);
  }
}

void VerbsTransport::on_reply(int qp_index, const ConnectionMessage& reply) {
  QpState& state = qps_[static_cast<std::size_t>(qp_index)];
  const std::string who = "rank " + std::to_string(state.responder);
  if (reply.kind == ConnectionMessageKind::reject) {
    fail_link(qp_index, who + " rejected the connection: " +
                            describe(static_cast<ConnectionReject>(reply.reject_reason)));
    return;
  }
  if (static_cast<int>(reply.from_rank) != state.responder) {
    fail_link(qp_index, "the connection manager of " + who + " answered as rank " + std::to_string(reply.from_rank));
    return;
  }
  if (state.state == LinkState::up) {
    // RC: the responder's own request reached us first and connected this QP already.
    if (state.remote_qpn != reply.qpn) fail_link(qp_index, who + " answered with another QP than it asked with");
    return;
  }
  if (state.state == LinkState::failed) return;
  try {
    state.qp->connect(endpoint(reply));
  } catch (const VerbsError& e) {
    fail_link(qp_index, e.what());
    return;
  }
  state.remote_qpn = reply.qpn;
  state.state = LinkState::up;
  if (verbose()) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state.requested).count();
    std::fprintf(stderr, "xmsg: verbs: rank %d connected %s QP %u to %s QP %u of rank %d (node %u) in %.2f ms\n", rank_,
                 std::string(to_string(state.qp->kind())).c_str(), state.qp->qpn(),
                 mode_ == PlanMode::xrc ? "TGT" : "RC", reply.qpn, state.responder, reply.from_node, ms);
  }
}

void VerbsTransport::on_failure(int qp_index, const std::string& reason) {
  const QpState& state = qps_[static_cast<std::size_t>(qp_index)];
  fail_link(qp_index, reason + " (asking rank " + std::to_string(state.responder) + " for a QP)");
}

void VerbsTransport::connect_eager(std::span<const int> peers, bool own_nodes) {
  const int size = boot_.size();
  const int my_node = my_node_;
  // The QPs this rank creates depend only on which ranks share its node, so a provisional
  // layout (this node exact, the other ranks spread over the other nodes) plans them before any
  // exchange; the true layout, needed to find entries in peers' records, follows the fence.
  const ConnectionPlan provisional = own_nodes ? identity_plan(size) : provisional_plan();
  records_.assign(static_cast<std::size_t>(size), std::nullopt);
  try {
    for (const PlannedQp& planned : provisional.qps_of(rank_)) {
      switch (planned.kind) {
        case QpKind::xrc_ini:
          add_qp(QueuePair::create_xrc_ini(*pd_, *cq_, limits_.send_depth, "node " + std::to_string(planned.peer)));
          break;
        case QpKind::xrc_tgt:
          add_qp(QueuePair::create_xrc_tgt(*xrcd_, peer_label(planned.peer)));
          break;
        case QpKind::rc:
          add_qp(QueuePair::create_rc(*pd_, *cq_, *srq_, limits_.send_depth, peer_label(planned.peer)));
          break;
      }
    }
  } catch (const VerbsError& e) {
    throw TransportError(std::string("verbs: rank ") + std::to_string(rank_) + ": " + e.what());
  }

  WireUpRecord mine;
  const PortAddress& address = device_.address();
  mine.header.mode = static_cast<std::uint8_t>(mode_);
  mine.header.link_layer = address.link_layer;
  mine.header.path_mtu = static_cast<std::uint8_t>(address.path_mtu);
  mine.header.lid = address.lid;
  mine.header.port = address.port;
  mine.header.gid_index = static_cast<std::uint8_t>(address.gid_index);
  mine.header.srq_num = srq_->srq_num();
  mine.header.gid = address.gid;
  for (const auto& state : qps_) mine.qps.push_back({state.qp->qpn(), state.qp->psn()});
  const auto bytes = mine.encode();
  boot_.put(kWireUpKey, bytes);
  const std::uint32_t node_word = static_cast<std::uint32_t>(my_node);
  boot_.put(kNodeKey, std::as_bytes(std::span(&node_word, 1)));
  boot_.commit();
  boot_.fence(true);
  // XRC: every local rank has opened the domain file by now (the fence is job-wide).
  if (xrcd_) xrcd_->unlink_file();

  if (own_nodes) {
    plan_.emplace(provisional);
  } else {
    plan_.emplace(true_layout(), mode_);
    if (plan_->qps_of(rank_) != provisional.qps_of(rank_)) {
      throw TransportError("verbs: rank " + std::to_string(rank_) +
                           ": the published node layout disagrees with this node's local peers");
    }
  }

  try {
    const auto planned = plan_->qps_of(rank_);
    for (std::size_t i = 0; i < planned.size(); ++i) {
      const PlannedQp& p = planned[i];
      switch (p.kind) {
        case QpKind::xrc_ini: {
          const int owner = plan_->tgt_owner(rank_, p.peer);
          qps_[i].qp->connect(endpoint(record_of(owner), plan_->tgt_index(rank_, p.peer), owner));
          break;
        }
        case QpKind::xrc_tgt:
          qps_[i].qp->connect(endpoint(record_of(p.peer), plan_->ini_index(p.peer, my_node), p.peer));
          break;
        case QpKind::rc:
          qps_[i].qp->connect(endpoint(record_of(p.peer), plan_->rc_index(p.peer, rank_), p.peer));
          break;
      }
    }
    for (int peer : peers) {
      const auto path = plan_->path(rank_, peer);
      if (!path) {
        throw TransportError("verbs: " + peer_label(peer) + " shares a node with rank " + std::to_string(rank_) +
                             "; set XMSG_TRANSPORTS=verbs,... to carry same-node pairs over verbs");
      }
      Route route;
      route.node = path->via_node;
      if (mode_ == PlanMode::xrc) {
        route.qp_index = plan_->ini_index(rank_, path->via_node);
        route.remote_srqn = record_of(peer).header.srq_num;
      } else {
        route.qp_index = plan_->rc_index(rank_, peer);
      }
      routes_[peer] = route;
    }
  } catch (const VerbsError& e) {
    throw TransportError(std::string("verbs: rank ") + std::to_string(rank_) + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw TransportError(std::string("verbs: rank ") + std::to_string(rank_) + ": bad peer: " + e.what());
  }
  // Async events (SRQ limit, QP errors) are drained from progress(), which must never block.
  const int flags = fcntl(device_.context()->async_fd, F_GETFL);
  if (flags < 0 || fcntl(device_.context()->async_fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw TransportError("verbs: cannot make the async event fd of " + device_.label() + " non-blocking");
  }
  boot_.fence(false);
}

template <class Fill>
bool VerbsTransport::send_into_slot(int peer, const WireHeader& header, std::size_t n, Fill&& fill) {
  Route* found = route_to(peer);
  if (found == nullptr) {
    throw TransportError("verbs: try_send to rank " + std::to_string(peer) + ", which is not a verbs peer of rank " +
                         std::to_string(rank_));
  }
  if (n > capabilities().max_eager_payload) {
    throw TransportError("verbs: try_send of " + std::to_string(n) + " bytes exceeds max_eager_payload " +
                         std::to_string(capabilities().max_eager_payload));
  }
  Route& route = *found;
  // A dead peer's messages go nowhere; the runtime hears of it through on_peer_failure.
  if (route.failed) return true;
  // Lazy: the link is still being asked for; progress() moves the handshake on.
  if (!route_ready(route)) return false;
  QpState& qp = qps_[static_cast<std::size_t>(route.qp_index)];
  if (free_send_slots_.empty() || qp.outstanding >= limits_.send_depth) return false;
  const int slot = free_send_slots_.back();
  free_send_slots_.pop_back();
  std::byte* buffer = send_slab_.data() + static_cast<std::size_t>(slot) * limits_.eager_buffer_bytes;
  std::memcpy(buffer, &header, sizeof header);
  fill(buffer + sizeof header);

  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(buffer);
  sge.length = static_cast<std::uint32_t>(sizeof header + n);
  sge.lkey = send_mr_->lkey();
  ibv_send_wr wr{};
  wr.wr_id = make_wr_id(kSend, static_cast<std::uint64_t>(slot));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (mode_ == PlanMode::xrc) wr.qp_type.xrc.remote_srqn = route.remote_srqn;
  try {
    qp.qp->post_send(wr);
  } catch (const VerbsError& e) {
    free_send_slots_.push_back(slot);
    fail_peer(peer, e.what(), nullptr);
    return true;
  }
  ++qp.outstanding;
  send_slot_owner_[static_cast<std::size_t>(slot)] = {peer, route.qp_index};
  return true;
}

bool VerbsTransport::try_send(int peer, const WireHeader& header, std::span<const std::byte> payload) {
  return send_into_slot(peer, header, payload.size(), [&](std::byte* dst) {
    if (!payload.empty()) std::memcpy(dst, payload.data(), payload.size());
  });
}

// The writer packs straight into the registered send slot: the datatype engine's pieces reach
// the wire with no copy between the user's buffer and the SEND.
bool VerbsTransport::try_send_packed(int peer, const WireHeader& header, size_t n, PayloadWriter& writer) {
  return send_into_slot(peer, header, n, [&](std::byte* dst) { writer.write(dst, n); });
}

void VerbsTransport::fail_peer(int peer, const std::string& reason, MessageSink* sink) {
  auto it = routes_.find(peer);
  if (it == routes_.end() || it->second.failed) return;
  it->second.failed = true;
  // A route only atomics use (this rank itself, a rank of its node shm carries) says nothing
  // about the peer: its operations fail, the peer is not reported.
  if (!carried(peer)) return;
  const std::string message = "verbs: " + peer_label(peer) + " unreachable from rank " + std::to_string(rank_) +
                              " on " + device_.label() + ": " + reason;
  if (sink != nullptr) {
    sink->on_peer_failure(peer, message);
  } else {
    failures_to_report_.emplace_back(peer, message);
  }
}

int VerbsTransport::progress(MessageSink& sink) {
  if (!cq_) return 0;
  int handled = 0;
  // A read() or a clock read per call would cost more than the CQ poll; both are rare needs.
  // Connection requests are looked for (one accept4) when kConnectionPollInterval has passed,
  // the clock read every 16 calls: a call count alone would make a rank that yields between
  // calls answer only every few tens of milliseconds. Every call while this rank waits for a
  // reply of its own.
  ++progress_calls_;
  if (cm_ && (cm_->in_flight() > 0 || (progress_calls_ & 15) == 0)) {
    const auto now = std::chrono::steady_clock::now();
    if (cm_->in_flight() > 0 || now - last_connection_poll_ >= kConnectionPollInterval) {
      last_connection_poll_ = now;
      handled += cm_->poll(*this);
    }
  }
  // Failures found outside progress (try_send, read_remote) or by the connection manager.
  for (auto& [peer, message] : failures_to_report_) sink.on_peer_failure(peer, message);
  failures_to_report_.clear();
  if ((progress_calls_ & 1023) == 0) {
    drain_async_events(sink);
    probe_quiet_peers();
  }

  if (armed_) {
    // Whatever woke a waiter (or nothing) is taken: the next wait_fds() arms afresh.
    armed_ = false;
    cq_->drain_events();
    std::uint64_t count = 0;
    if (wake_fd_ >= 0) (void)!::read(wake_fd_, &count, sizeof count);
  }
  ibv_wc wcs[kPollBatch];
  const int n = poll_completions(wcs);
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs[i];
    const std::uint64_t kind = wc.wr_id >> kKindShift;
    const std::uint64_t index = wc.wr_id & kIndexMask;
    if (kind == kRecv) {
      if (wc.status != IBV_WC_SUCCESS) {
        srq_->consumed();  // flushed by a QP in error; that QP's sender is reported on its own
        continue;
      }
      const auto slot = srq_->slot(index);
      if (wc.byte_len < sizeof(WireHeader)) {
        srq_->repost(index);
        throw TransportError("verbs: rank " + std::to_string(rank_) + " received a " + std::to_string(wc.byte_len) +
                             "-byte message, shorter than a header, on QP " + std::to_string(wc.qp_num));
      }
      WireHeader header;
      std::memcpy(&header, slot.data(), sizeof header);
      if (header.source < heard_.size()) heard_[header.source] = 1;
      sink.on_message(header, slot.subspan(sizeof header, wc.byte_len - sizeof header));
      // The payload span was valid only during the call: the buffer goes straight back.
      srq_->repost(index);
      ++handled;
    } else if (kind == kSend) {
      const auto [peer, qp_index] = send_slot_owner_.at(static_cast<std::size_t>(index));
      free_send_slots_.push_back(static_cast<int>(index));
      if (qp_index >= 0) --qps_[static_cast<std::size_t>(qp_index)].outstanding;
      if (wc.status != IBV_WC_SUCCESS) fail_peer(peer, "send failed: " + describe_completion(wc), &sink);
      else heard_[static_cast<std::size_t>(peer)] = 1;
      ++handled;
    } else if (kind == kProbe) {
      const int peer = static_cast<int>(index);
      Route& route = routes_.at(peer);
      --qps_[static_cast<std::size_t>(route.qp_index)].outstanding;
      route.probe_posted = false;
      --probes_posted_;
      if (wc.status != IBV_WC_SUCCESS) fail_peer(peer, "liveness probe failed: " + describe_completion(wc), &sink);
    } else if (kind == kRdma) {
      on_rdma_completion(index, wc, &sink);
      ++handled;
    }
  }
  while (!pending_rdma_.empty() && post_rdma(pending_rdma_.front())) pending_rdma_.pop_front();
  return handled;
}

void VerbsTransport::probe_quiet_peers() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_probe_round_ < kProbeInterval) return;
  last_probe_round_ = now;
  for (auto& [peer, route] : routes_) {
    if (!carried(peer)) continue;  // a route only atomics use
    auto& heard = heard_[static_cast<std::size_t>(peer)];
    if (heard) {
      heard = 0;
      continue;
    }
    QpState& qp = qps_[static_cast<std::size_t>(route.qp_index)];
    if (route.failed || route.probe_posted || !route_ready(route) || qp.outstanding >= limits_.send_depth) continue;
    if (probes_posted_ >= probe_budget_) break;
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(kProbe, static_cast<std::uint64_t>(peer));
    wr.num_sge = 0;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    // XRC: the write names the peer's SRQ, which the target checks, so it tests that rank and
    // not only the rank owning the TGT QP.
    if (mode_ == PlanMode::xrc) wr.qp_type.xrc.remote_srqn = route.remote_srqn;
    try {
      qp.qp->post_send(wr);
    } catch (const VerbsError& e) {
      fail_peer(peer, std::string("liveness probe: ") + e.what(), nullptr);
      continue;
    }
    ++qp.outstanding;
    ++probes_posted_;
    route.probe_posted = true;
  }
}

void VerbsTransport::drain_async_events(MessageSink& sink) {
  ibv_async_event event;
  bool rearm = false;
  while (ibv_get_async_event(device_.context(), &event) == 0) {
    switch (event.event_type) {
      case IBV_EVENT_SRQ_LIMIT_REACHED:
        // Every consumed buffer is reposted at once, so this means the rank progressed too
        // rarely for its senders; RNR retry covers the gap. Count it, re-arm, say so if asked.
        ++srq_limit_events_;
        rearm = true;
        if (verbose()) {
          std::fprintf(stderr, "xmsg: verbs: rank %d: SRQ on %s fell below %d posted buffers\n", rank_,
                       device_.label().c_str(), limits_.srq_low_watermark());
        }
        break;
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR: {
        const auto it = qp_index_by_qpn_.find(event.element.qp->qp_num);
        if (it != qp_index_by_qpn_.end()) {
          const std::string reason = std::string("QP ") + std::to_string(event.element.qp->qp_num) + " (" +
                                     std::string(to_string(qps_[static_cast<std::size_t>(it->second)].qp->kind())) +
                                     ") reported " + ibv_event_type_str(event.event_type);
          for (auto& [peer, route] : routes_) {
            if (route.qp_index == it->second) fail_peer(peer, reason, &sink);
          }
        }
        break;
      }
      case IBV_EVENT_PORT_ERR:
        if (verbose()) std::fprintf(stderr, "xmsg: verbs: rank %d: port %s went down\n", rank_, device_.label().c_str());
        break;
      default:
        break;
    }
    ibv_ack_async_event(&event);
  }
  if (rearm && srq_) srq_->arm_limit(limits_.srq_low_watermark());
}

namespace {
// Registration access of an exposed buffer. Remote writes need local write too (verbs rule);
// memory peers write may also take their atomics, where the device has them.
int access_flags(xmsg::transport::Access access, bool atomics) {
  return access == xmsg::transport::Access::read_write
             ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                   (atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0)
             : IBV_ACCESS_REMOTE_READ;
}
}  // namespace

MemoryHandle VerbsTransport::expose(const void* buffer, size_t length, xmsg::transport::Access access) {
  MemoryHandle handle{reinterpret_cast<std::uint64_t>(buffer), length, 0};
  if (length == 0) return handle;
  try {
    handle.key = registrations_->acquire(buffer, length, access_flags(access, atomics())).rkey();
  } catch (const VerbsError& e) {
    throw TransportError(std::string("verbs: rank ") + std::to_string(rank_) + " cannot expose its buffer: " + e.what());
  }
  return handle;
}

void VerbsTransport::release(const MemoryHandle& handle, xmsg::transport::Access access) {
  if (handle.length == 0) return;
  registrations_->release(reinterpret_cast<const void*>(handle.address), handle.length, access_flags(access, atomics()));
}

void VerbsTransport::read_remote(int peer, const MemoryHandle& source, uint64_t offset, std::span<std::byte> dst,
                                 ReadCompletion& done) {
  start_rdma(peer, source, offset, dst.data(), dst.size(), {IBV_WR_RDMA_READ}, done);
}

void VerbsTransport::write_remote(int peer, const MemoryHandle& destination, uint64_t offset,
                                  std::span<const std::byte> src, ReadCompletion& done) {
  start_rdma(peer, destination, offset, const_cast<std::byte*>(src.data()), src.size(), {IBV_WR_RDMA_WRITE}, done);
}

void VerbsTransport::atomic_remote(int peer, const MemoryHandle& target, uint64_t offset,
                                   xmsg::transport::RemoteAtomic op, uint64_t operand, uint64_t compare,
                                   uint64_t* result, ReadCompletion& done) {
  if (!atomics()) {
    done.on_read_done(false, "verbs: " + device_.label() + " has no atomics (atomic_cap NONE)");
    return;
  }
  if ((target.address + offset) % sizeof(std::uint64_t) != 0) {
    done.on_read_done(false, "verbs: an atomic at offset " + std::to_string(offset) + " of what " + peer_label(peer) +
                                 " exposed is not 8-byte aligned");
    return;
  }
  const bool add = op == xmsg::transport::RemoteAtomic::fetch_add;
  const RdmaWork work{add ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP, add ? operand : compare,
                      add ? 0 : operand};
  start_rdma(peer, target, offset, reinterpret_cast<std::byte*>(result), sizeof(std::uint64_t), work, done);
}

VerbsTransport::Route* VerbsTransport::loopback_route() {
  if (auto it = routes_.find(rank_); it != routes_.end()) return &it->second;
  Route route;
  route.node = my_node_;
  try {
    const std::string label = "itself (rank " + std::to_string(rank_) + ", loopback for atomics)";
    const PortAddress& address = device_.address();
    RemoteEndpoint self;
    self.lid = address.lid;
    self.gid = address.gid;
    self.path_mtu = address.path_mtu;
    if (mode_ == PlanMode::xrc) {
      // An INI QP to a TGT QP of this rank's own domain, naming its own SRQ (an RC QP cannot
      // take an XRC SRQ).
      std::unique_ptr<QueuePair> ini = QueuePair::create_xrc_ini(*pd_, *cq_, limits_.send_depth, label);
      std::unique_ptr<QueuePair> tgt = QueuePair::create_xrc_tgt(*xrcd_, label);
      self.qpn = tgt->qpn();
      self.psn = tgt->psn();
      ini->connect(self);
      self.qpn = ini->qpn();
      self.psn = ini->psn();
      tgt->connect(self);
      route.remote_srqn = srq_->srq_num();
      route.qp_index = add_qp(std::move(ini));
      add_qp(std::move(tgt));
    } else {
      std::unique_ptr<QueuePair> qp = QueuePair::create_rc(*pd_, *cq_, *srq_, limits_.send_depth, label);
      self.qpn = qp->qpn();
      self.psn = qp->psn();
      qp->connect(self);
      route.qp_index = add_qp(std::move(qp));
    }
  } catch (const VerbsError& e) {
    route.qp_index = add_failed_link(e.what());
    route.failed = true;
  }
  return &(routes_[rank_] = route);
}

bool VerbsTransport::atomics_reach(int peer) const {
  if (!atomics() || peer < 0 || peer >= boot_.size()) return false;
  if (peer == rank_ || routes_.count(peer)) return true;
  // Lazy: every rank published a card, so a rank of this node another transport carries is
  // reached too (atomics_route). Eager has routes to the carried pairs only.
  return scheme_ == WireUpScheme::lazy;
}

VerbsTransport::Route* VerbsTransport::atomics_route(int peer) {
  if (peer == rank_) return loopback_route();
  if (Route* route = route_to(peer)) return route;
  if (scheme_ != WireUpScheme::lazy || peer < 0 || peer >= boot_.size()) return nullptr;
  // A rank of this node that shm carries: only atomics come this way, so that a window's
  // atomics are all the device's.
  std::string error;
  const WireUpCard* card = card_of(peer, error, /*same_node=*/true);
  if (card == nullptr) {
    Route& route = routes_[peer];
    route.qp_index = add_failed_link(error);
    route.failed = true;
    return &route;
  }
  Route route;
  route.node = static_cast<int>(card->node);
  route.remote_srqn = card->srq_num;
  if (mode_ == PlanMode::xrc) {
    // The loopback INI QP reaches this node's domain; naming the peer's SRQ names its memory.
    const Route* self = loopback_route();
    route.qp_index = self->qp_index;
    route.failed = self->failed;
  } else {
    auto link = links_.find(peer);
    route.qp_index = link != links_.end() ? link->second : open_link(peer, peer, *card);
  }
  return &(routes_[peer] = route);
}

void VerbsTransport::start_rdma(int peer, const MemoryHandle& remote, uint64_t offset, std::byte* local,
                                std::size_t length, const RdmaWork& work, ReadCompletion& done) {
  const bool write = work.opcode == IBV_WR_RDMA_WRITE;
  const bool atomic = work.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || work.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
  const char* what = write ? "write" : atomic ? "atomic" : "read";
  Route* route = atomic ? atomics_route(peer) : route_to(peer);
  if (route == nullptr) {
    done.on_read_done(false, "verbs: rank " + std::to_string(peer) + " is not a verbs peer of rank " + std::to_string(rank_));
    return;
  }
  if (route->failed) {
    done.on_read_done(false, "verbs: " + (peer == rank_ ? qps_[static_cast<std::size_t>(route->qp_index)].failure
                                                         : peer_label(peer) + " already failed"));
    return;
  }
  if (length == 0) {
    done.on_read_done(true, "");
    return;
  }
  if (offset > remote.length || length > remote.length - offset) {
    done.on_read_done(false, std::string("verbs: ") + what + " of " + std::to_string(length) + " bytes at offset " +
                                 std::to_string(offset) + " exceeds the " + std::to_string(remote.length) + " bytes " +
                                 peer_label(peer) + " exposed");
    return;
  }
  int slot = -1;
  std::uint64_t local_address = reinterpret_cast<std::uint64_t>(local);
  std::uint32_t lkey = 0;
  if (length <= limits_.eager_buffer_bytes && !free_send_slots_.empty()) {
    slot = free_send_slots_.back();
    free_send_slots_.pop_back();
    std::byte* buffer = send_slab_.data() + static_cast<std::size_t>(slot) * limits_.eager_buffer_bytes;
    if (write) std::memcpy(buffer, local, length);
    local_address = reinterpret_cast<std::uint64_t>(buffer);
    lkey = send_mr_->lkey();
  } else {
    try {
      // A source needs no access flag (and may be read-only memory); a destination local write.
      lkey = registrations_->acquire(local, length, write ? 0 : IBV_ACCESS_LOCAL_WRITE).lkey();
    } catch (const VerbsError& e) {
      done.on_read_done(false, std::string("verbs: cannot register the ") + (write ? "source" : "destination") +
                                   " buffer: " + e.what());
      return;
    }
  }
  const std::uint64_t op_id = next_rdma_id_++ & kIndexMask;
  RdmaOp& op = rdma_ops_[op_id];
  op.done = &done;
  op.peer = peer;
  op.write = write;
  op.opcode = work.opcode;
  op.slot = slot;
  op.local = local;
  op.local_length = length;
  for (std::uint64_t at = 0; at < length; at += kMaxRdmaChunk) {
    const std::uint64_t len = std::min<std::uint64_t>(kMaxRdmaChunk, length - at);
    pending_rdma_.push_back({op_id, peer, work, local_address + at, static_cast<std::uint32_t>(len), lkey,
                             remote.address + offset + at, static_cast<std::uint32_t>(remote.key)});
    ++op.chunks;
  }
  while (!pending_rdma_.empty() && post_rdma(pending_rdma_.front())) pending_rdma_.pop_front();
}

bool VerbsTransport::post_rdma(const PendingRdma& chunk) {
  auto route = routes_.find(chunk.peer);
  QpState& qp = qps_[static_cast<std::size_t>(route->second.qp_index)];
  if (route->second.failed) {
    finish_rdma_chunk(chunk.op_id, false, "verbs: " + peer_label(chunk.peer) + " failed");
    return true;
  }
  if (!route_ready(route->second)) return false;
  if (qp.outstanding >= limits_.send_depth || rdma_posted_ >= kMaxRdmaPosted) return false;
  ibv_sge sge{};
  sge.addr = chunk.local_address;
  sge.length = chunk.length;
  sge.lkey = chunk.lkey;
  ibv_send_wr wr{};
  wr.wr_id = make_wr_id(kRdma, chunk.op_id);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = chunk.work.opcode;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (chunk.work.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || chunk.work.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
    wr.wr.atomic.remote_addr = chunk.remote_address;
    wr.wr.atomic.compare_add = chunk.work.compare_add;
    wr.wr.atomic.swap = chunk.work.swap;
    wr.wr.atomic.rkey = chunk.rkey;
  } else {
    wr.wr.rdma.remote_addr = chunk.remote_address;
    wr.wr.rdma.rkey = chunk.rkey;
  }
  // XRC: the target checks the rkey against the PD of the SRQ named here: the owner's own SRQ.
  if (mode_ == PlanMode::xrc) wr.qp_type.xrc.remote_srqn = route->second.remote_srqn;
  try {
    qp.qp->post_send(wr);
  } catch (const VerbsError& e) {
    fail_peer(chunk.peer, e.what(), nullptr);
    finish_rdma_chunk(chunk.op_id, false, e.what());
    return true;
  }
  ++qp.outstanding;
  ++rdma_posted_;
  return true;
}

void VerbsTransport::on_rdma_completion(std::uint64_t op_id, const ibv_wc& wc, MessageSink* sink) {
  --rdma_posted_;
  auto it = rdma_ops_.find(op_id);
  if (it == rdma_ops_.end()) return;
  const int peer = it->second.peer;
  const auto route = routes_.find(peer);
  if (route != routes_.end()) --qps_[static_cast<std::size_t>(route->second.qp_index)].outstanding;
  if (wc.status != IBV_WC_SUCCESS) {
    const char* what = it->second.opcode == IBV_WR_RDMA_WRITE  ? "RDMA WRITE to "
                       : it->second.opcode == IBV_WR_RDMA_READ ? "RDMA READ from "
                                                               : "RDMA atomic on ";
    const std::string reason = std::string(what) + peer_label(peer) + " failed: " + describe_completion(wc);
    fail_peer(peer, reason, sink);
    finish_rdma_chunk(op_id, false, reason);
  } else {
    heard_[static_cast<std::size_t>(peer)] = 1;
    finish_rdma_chunk(op_id, true, "");
  }
}

void VerbsTransport::finish_rdma_chunk(std::uint64_t op_id, bool ok, const std::string& reason) {
  auto it = rdma_ops_.find(op_id);
  if (it == rdma_ops_.end()) return;
  RdmaOp& op = it->second;
  if (!ok && op.ok) {
    op.ok = false;
    op.reason = reason;
  }
  if (--op.chunks > 0) return;
  RdmaOp finished = op;
  rdma_ops_.erase(it);
  if (finished.slot >= 0) {
    const std::byte* buffer = send_slab_.data() + static_cast<std::size_t>(finished.slot) * limits_.eager_buffer_bytes;
    if (!finished.write && finished.ok) std::memcpy(const_cast<void*>(finished.local), buffer, finished.local_length);
    free_send_slots_.push_back(finished.slot);
  } else {
    registrations_->release(finished.local, finished.local_length, finished.write ? 0 : IBV_ACCESS_LOCAL_WRITE);
  }
  finished.done->on_read_done(finished.ok, finished.reason);
}

void VerbsTransport::disconnect() {
  if (!connected_) return;
  // Let our sends reach their SRQs before anyone destroys a TGT QP or an SRQ; bounded so a dead
  // peer cannot hold us here (its sends fail by transport timeout first).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const int send_slots = limits_.send_depth * 2;
  ibv_wc wcs[kPollBatch];
  while (cq_ && static_cast<int>(free_send_slots_.size()) < send_slots && std::chrono::steady_clock::now() < deadline) {
    const int n = poll_completions(wcs);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t kind = wcs[i].wr_id >> kKindShift;
      const std::uint64_t index = wcs[i].wr_id & kIndexMask;
      if (kind == kSend) {
        free_send_slots_.push_back(static_cast<int>(index));
      } else if (kind == kRecv) {
        if (wcs[i].status == IBV_WC_SUCCESS) srq_->repost(index);  // late messages are dropped after disconnect
        else srq_->consumed();
      } else if (kind == kRdma) {
        on_rdma_completion(index, wcs[i], nullptr);  // gives its send slot back
      }
    }
  }
  if (verbose() && scheme_ == WireUpScheme::lazy) {
    std::size_t ini = 0, tgt = 0, rc = 0;
    for (const auto& state : qps_) {
      if (!state.qp) continue;
      switch (state.qp->kind()) {
        case QpKind::xrc_ini: ++ini; break;
        case QpKind::xrc_tgt: ++tgt; break;
        case QpKind::rc: ++rc; break;
      }
    }
    std::fprintf(stderr, "xmsg: verbs: rank %d created %zu QPs on demand (%zu INI, %zu TGT, %zu RC) for %zu peers\n", rank_,
                 ini + tgt + rc, ini, tgt, rc, routes_.size());
  }
  // The node-local barrier the XRC notes ask for before TGT QPs go (a job-wide fence is one).
  boot_.fence(false);
  teardown();
  connected_ = false;
}

int VerbsTransport::poll_completions(std::span<ibv_wc> completions) {
  if (stashed_.empty()) return cq_->poll(completions);
  const size_t n = std::min(completions.size(), stashed_.size());
  std::copy_n(stashed_.begin(), n, completions.begin());
  stashed_.erase(stashed_.begin(), stashed_.begin() + static_cast<std::ptrdiff_t>(n));
  return static_cast<int>(n);
}

// A waiter outside progress() (the MPI progress thread) sleeps on the completion channel: the
// CQ is armed here, once per progress() (ibv_req_notify_cq is a system call on soft-RoCE, too
// dear for every progress()). A completion that arrived before the arm raises no event, so the
// CQ is polled once right after it: what that finds is kept for the next progress() and the
// eventfd is made readable, so the waiter wakes at once. Connection requests (lazy wire-up)
// wake nobody: the waiter's interval bounds them.
size_t VerbsTransport::wait_fds(std::span<int> fds) const {
  if (!cq_ || cq_->channel_fd() < 0 || wake_fd_ < 0 || fds.size() < 2) return 0;
  if (!armed_) {
    cq_->drain_events();
    if (!cq_->arm()) return 0;
    armed_ = true;
    ibv_wc wcs[kPollBatch];
    const int n = cq_->poll(wcs);
    if (n > 0) {
      stashed_.insert(stashed_.end(), wcs, wcs + n);
      const std::uint64_t one = 1;
      (void)!::write(wake_fd_, &one, sizeof one);
    }
  }
  fds[0] = cq_->channel_fd();
  fds[1] = wake_fd_;
  return 2;
}

void VerbsTransport::teardown() {
  for (auto& [id, op] : rdma_ops_) {
    if (op.done != nullptr) op.done->on_read_done(false, "verbs: transport disconnected");
  }
  rdma_ops_.clear();
  pending_rdma_.clear();
  cm_.reset();
  qps_.clear();
  srq_.reset();
  xrcd_.reset();
  cq_.reset();
  send_mr_.reset();
  registrations_.reset();
  pd_.reset();
}

}  // namespace xmsg::verbs

namespace xmsg::transport {

std::unique_ptr<Transport> make_verbs_transport(bootstrap::Bootstrap& bootstrap) {
  using namespace xmsg::verbs;
  const bool forced = params::raw("XMSG_IB_DEVICE").has_value();
  if (!forced && list_device_names().empty()) {
    if (verbose()) std::fprintf(stderr, "xmsg: verbs: no RDMA device on %s; using the other transports\n", bootstrap.hostname().c_str());
    return nullptr;
  }
  try {
    Device device = Device::open_default();
    const PlanMode mode = choose_mode(device, params::choice("XMSG_VERBS_MODE").c_str());
    const VerbsLimits limits = VerbsLimits::from_environment();
    const WireUpScheme scheme = choose_wireup_scheme(params::choice("XMSG_VERBS_CONNECT").c_str());
    return std::make_unique<VerbsTransport>(bootstrap, std::move(device), mode, limits, scheme);
  } catch (const VerbsError& e) {
    throw TransportError(std::string("verbs: rank ") + std::to_string(bootstrap.rank()) + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw TransportError(std::string("verbs: ") + e.what());
  }
}

}  // namespace xmsg::transport
