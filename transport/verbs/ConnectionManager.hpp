// ConnectionManager: the out-of-band channel the lazy verbs wire-up exchanges QP numbers over.
//
// Each rank listens on one TCP port (published in its WireUpCard). The first message from rank s
// to a rank p that s has no QP to makes s open a TCP connection to p's port, send one
// ConnectionRequest (s's new INI or RC QP: number, PSN, port address) and read one reply (the TGT
// or RC QP p created and connected for it); then both sides close the socket. One request per
// socket, so two ranks that start towards each other at once simply run two exchanges; the
// transport decides what a second request for the same pair means (RC: both name the same two
// QPs).
//
// Everything is non-blocking and driven from poll(), which the transport calls from progress():
// a rank that only waits for a message still answers requests. A request that gets no reply within
// its deadline, a refused connection or a reject ends in Handler::on_failure naming the peer and
// the address; nothing here ever blocks.
//
// Why sockets and not UD or librdmacm (docs/verbs.md "Wire-up"): every cluster node has an IP
// network; UD is missing from the project's XRC soft-RoCE provider; rdma_cm on InfiniBand needs
// IPoIB and runs its own QP state machine, which would bypass QueuePair.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace xmsg::verbs {

inline constexpr std::uint32_t kConnectionMagic = 0x4d434d58;  // "XMCM"
inline constexpr std::uint8_t kConnectionVersion = 1;

enum class ConnectionMessageKind : std::uint8_t { request = 1, accept = 2, reject = 3 };

// The one fixed-size message each way. Host byte order (homogeneous cluster, as WireUpCard).
struct ConnectionMessage {
  std::uint32_t magic;
  std::uint8_t version;
  ConnectionMessageKind kind;
  std::uint8_t mode;      // PlanMode of the sender
  std::uint8_t path_mtu;  // enum ibv_mtu of the sender's port
  std::uint32_t from_rank;
  std::uint32_t to_rank;
  std::uint32_t from_node;
  std::uint32_t qpn;      // request: the requester's INI/RC QP; accept: the TGT/RC QP made for it
  std::uint32_t psn;
  std::uint16_t lid;
  std::uint16_t reject_reason;  // ConnectionReject, on a reject
  std::uint64_t cookie;  // request: the responder's card cookie, proving the card was read
  std::array<std::uint8_t, 16> gid;
  std::uint64_t reserved;
};
static_assert(sizeof(ConnectionMessage) == 64, "ConnectionMessage is sent as is");

enum class ConnectionReject : std::uint16_t {
  none = 0,
  bad_cookie = 1,   // the requester did not read this rank's card (or it is from another job)
  wrong_rank = 2,   // the request names another rank
  wrong_mode = 3,   // XRC against RC (different devices or XMSG_VERBS_MODE)
  not_a_peer = 4,   // the requester is not a verbs peer of this rank (XMSG_TRANSPORTS differs)
  qp_failed = 5,    // creating or connecting the QP failed here (see this rank's stderr)
  conflict = 6,     // RC: a QP for this pair already connects to another QP
};
std::string describe(ConnectionReject reason);

class ConnectionManager {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // A request arrived; returns the reply (accept or reject). Must not throw.
    virtual ConnectionMessage on_request(const ConnectionMessage& request) = 0;
    // The reply to start(peer, ...) arrived (accept or reject).
    virtual void on_reply(int peer, const ConnectionMessage& reply) = 0;
    // start(peer, ...) ended without a reply; `reason` names the address and what happened.
    virtual void on_failure(int peer, const std::string& reason) = 0;
  };

  // Listens on `ipv4` (network order; 0 = every address) at a port the kernel picks. Throws
  // std::runtime_error naming the address.
  explicit ConnectionManager(std::uint32_t ipv4);
  ~ConnectionManager();
  ConnectionManager(const ConnectionManager&) = delete;
  ConnectionManager& operator=(const ConnectionManager&) = delete;

  std::uint32_t ipv4() const { return ipv4_; }  // network order: what peers connect to
  std::uint16_t port() const { return port_; }  // network order

  // Sends `request` to the rank listening at (ipv4, port); the outcome arrives through poll().
  void start(int peer, const ConnectionMessage& request, std::uint32_t ipv4, std::uint16_t port,
             std::chrono::steady_clock::duration timeout);
  // Accepts and answers requests, advances started ones. Returns how many events it delivered.
  int poll(Handler& handler);
  // Requests started and not yet ended.
  int in_flight() const { return static_cast<int>(outgoing_.size()); }

  static std::string address_text(std::uint32_t ipv4, std::uint16_t port);

 private:
  struct Exchange {
    int fd = -1;
    int peer = -1;  // outgoing: the responder; incoming: -1
    std::array<std::byte, sizeof(ConnectionMessage)> buffer{};
    std::size_t done = 0;  // bytes of buffer sent (writing) or received (reading)
    bool writing = true;
    std::chrono::steady_clock::time_point deadline;
    std::string address;
  };
  // Moves one exchange on; true when it ended (its fd closed).
  bool advance_outgoing(Exchange& x, Handler& handler, int& events);
  bool advance_incoming(Exchange& x, Handler& handler, int& events);

  int listen_fd_ = -1;
  std::uint32_t ipv4_ = 0;
  std::uint16_t port_ = 0;
  std::vector<Exchange> outgoing_;
  std::vector<Exchange> incoming_;
};

}  // namespace xmsg::verbs
