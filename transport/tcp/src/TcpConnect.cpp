// Connections and their lifetime: the listener, our calls and accepted ones, the handshake,
// eviction and refusals when out of room or descriptors, peer failure, closing.
#include "TcpInternal.hpp"
#include "TcpTransport.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <utility>

namespace xmsg::transport::tcp {

using detail::errno_text;
using detail::kAddressKey;

namespace {

// Accepted callers that have not proven the job secret yet; past this the oldest is evicted
// (a port scan or stalled clients must not lock real ranks out).
constexpr size_t kMaxUnidentified = 256;
// Our calls the listener may close before the handshake ends, in a row, before the peer fails.
constexpr unsigned kMaxCallRetries = 5;
// Evictions and refusals (out of descriptors) are logged at most this often.
constexpr auto kLogEvery = std::chrono::seconds(10);

std::string socket_peer_text(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return "?";
  char ip[INET_ADDRSTRLEN];
  ::inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(sa.sin_port));
}

std::string connections_text(uint64_t n) { return std::to_string(n) + (n == 1 ? " tcp connection" : " tcp connections"); }

std::string limit_text(rlim_t v) { return v == RLIM_INFINITY ? std::string("unlimited") : std::to_string(v); }

// Why no descriptor could be had (`err` EMFILE or ENFILE), with what to do about it.
std::string descriptor_shortage(int err, size_t connections) {
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  std::string s = err == ENFILE ? "the system's file table is full (ENFILE, see /proc/sys/fs/file-max)"
                                : "out of file descriptors (EMFILE)";
  s += ": `ulimit -n` is " + limit_text(rl.rlim_cur) + " (hard limit " + limit_text(rl.rlim_max) + ") with " +
       connections_text(connections) + " open; raise `ulimit -n` for the job's ranks (a rank talking to N others over tcp holds N sockets)";
  return s;
}

template <class P>
std::string after_closed_call(const P& p) {
  return p.calls_ended > 0 ? " (after the listener had closed our previous call: the peer exited or was killed?)" : "";
}

void set_socket_options(int fd, const std::string& congestion) {
  int one = 1;
  // Small messages must leave at once: latency matters more than packet count here.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Checked by TcpConfig::from_environment on a scratch socket, so this does not fail.
  if (!congestion.empty()) ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, congestion.data(), static_cast<socklen_t>(congestion.size()));
}

}  // namespace

void TcpTransport::open_listener() {
  listen_address_ = choose_listen_address(config_.interface);
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    const int err = errno;
    throw TransportError("tcp: cannot open the listening socket: " +
                         (err == EMFILE || err == ENFILE ? descriptor_shortage(err, 0) : errno_text(err)));
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  ::inet_pton(AF_INET, listen_address_.c_str(), &sa.sin_addr);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw TransportError("tcp: cannot bind a listening socket to " + listen_address_ + " (XMSG_TCP_IF='" + config_.interface + "'): " + errno_text(errno));
  if (::listen(listen_fd_, SOMAXCONN) != 0) throw TransportError("tcp: listen failed: " + errno_text(errno));
  socklen_t len = sizeof sa;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  std::string port = std::to_string(ntohs(sa.sin_port));
  listen_address_.push_back(':');
  listen_address_.append(port);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // null marks the listener
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev) != 0)
    throw TransportError("tcp: epoll_ctl(listener) failed: " + errno_text(errno));
  // Kept in reserve: out of descriptors, it is closed to accept a call and refuse it (see
  // refuse_for_descriptors). Without it the call would wait in the backlog, unanswered.
  spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

Connection& TcpTransport::add_connection(int fd, ConnectionState state, std::string remote, uint32_t events) {
  connections_.push_back(std::make_unique<Connection>(fd, state, std::move(remote)));
  Connection& c = *connections_.back();
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = &c;
  c.watching_writes = (events & EPOLLOUT) != 0;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    int err = errno;
    c.state = ConnectionState::kClosed;
    throw TransportError("tcp: epoll_ctl(add) failed: " + errno_text(err));
  }
  return c;
}

void TcpTransport::close_connection(Connection& c) {
  if (c.state == ConnectionState::kClosed) return;
  if (c.unproven()) --unproven_;
  if (c.outgoing()) --calls_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  c.fd = -1;
  c.state = ConnectionState::kClosed;
  // A call held on the spare descriptor to be refused: the descriptor is the spare's again.
  if (c.refusing && spare_fd_ < 0) spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (Peer* p = peer_or_null(c.peer)) {
    if (p->established == &c) p->established = nullptr;
    if (p->outgoing == &c) p->outgoing = nullptr;
    if (p->incoming == &c) p->incoming = nullptr;
  }
}

void TcpTransport::reap() {
  std::erase_if(connections_, [](const auto& c) { return c->state == ConnectionState::kClosed; });
}

void TcpTransport::fail_peer(Peer& p, const std::string& cause) {
  if (p.failed) return;
  p.failed = true;
  // Its published address once looked up; a peer that only called us: where its call came from.
  std::string where = p.address;
  for (Connection* c : {p.established, p.incoming})
    if (where.empty() && c) where = "from " + c->remote;
  p.failure = "tcp: connection to rank " + std::to_string(p.rank) + (where.empty() ? "" : " (" + where + ")") + " closed: " + cause;
  for (Connection* c : {p.established, p.outgoing, p.incoming})
    if (c) close_connection(*c);
  p.queue.clear();
  // The runtime fails the requests behind these reads when it hears of the failure.
  p.reads.clear();
  std::erase_if(pushed_, [&](const auto& entry) { return entry.first.first == p.rank; });
  failures_pending_ = true;
}

void TcpTransport::report_failures(MessageSink& sink) {
  if (!failures_pending_) return;
  failures_pending_ = false;
  for (auto& p : peers_) {
    if (p && p->failed && !p->failure_reported) {
      p->failure_reported = true;
      sink.on_peer_failure(p->rank, p->failure);
    }
  }
}

void TcpTransport::reject_unproven(Connection& c, const std::string& why) {
  // Logged once per process: a port scanner or a stray client must not flood the job's stderr.
  if (rejected_++ == 0)
    std::fprintf(stderr, "xmsg: tcp: rank %d rejected a connection from %s: %s (further rejections are not logged)\n",
                 rank_, c.remote.c_str(), why.c_str());
  close_connection(c);
}

bool TcpTransport::resolve_address(Peer& p) {
  if (!p.address.empty()) return true;
  std::string address;
  try {
    address = bootstrap_.get_string(p.rank, kAddressKey);
  } catch (const std::exception& e) {
    fail_peer(p, std::string("cannot read its address: ") + e.what());
    return false;
  }
  const auto colon = address.rfind(':');
  p.sockaddr.sin_family = AF_INET;
  int port = 0;
  if (colon != std::string::npos) {
    const auto digits = std::string_view(address).substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size()) port = 0;
  }
  if (colon == std::string::npos || port <= 0 || port > 65535 ||
      ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &p.sockaddr.sin_addr) != 1) {
    fail_peer(p, "it published an invalid address '" + address + "'");
    return false;
  }
  p.sockaddr.sin_port = htons(static_cast<uint16_t>(port));
  p.address = std::move(address);
  return true;
}

size_t TcpTransport::open_connections() const {
  return static_cast<size_t>(std::count_if(connections_.begin(), connections_.end(),
                                           [](const auto& c) { return c->state != ConnectionState::kClosed; }));
}

void TcpTransport::start_connect(Peer& p) {
  if (!resolve_address(p)) return;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    fail_peer(p, "cannot open a socket to call it: " +
                     (err == EMFILE || err == ENFILE ? descriptor_shortage(err, open_connections()) : errno_text(err)));
    return;
  }
  set_socket_options(fd, config_.congestion);
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&p.sockaddr), sizeof p.sockaddr);
  if (rc != 0 && errno != EINPROGRESS) {
    int err = errno;
    ::close(fd);
    fail_peer(p, "connect failed: " + errno_text(err) + after_closed_call(p));
    return;
  }
  Connection& c = add_connection(fd, ConnectionState::kConnecting, p.address, EPOLLIN | EPOLLOUT);
  c.peer = p.rank;
  c.deadline = std::chrono::steady_clock::now() + config_.connect_timeout;
  ++calls_;
  p.outgoing = &c;
  // Loopback and veth connects usually finish at once: say hello now rather than a
  // progress() later.
  if (rc == 0) on_connected(c);
}

bool TcpTransport::send_handshake(Connection& c, const HandshakeMessage& m) {
  auto bytes = m.encode();
  // A fresh socket's send buffer always holds one 68-byte message, so a short write means
  // the socket is broken.
  ssize_t n = ::send(c.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return n == static_cast<ssize_t>(bytes.size());
}

void TcpTransport::on_connected(Connection& c) {
  Peer& p = *peer_or_null(c.peer);
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err == ECONNRESET || err == EPIPE) return retry_call(c, "the listener reset our call (" + errno_text(err) + ")");
  if (err != 0) {
    fail_peer(p, "connect to " + p.address + " failed: " + errno_text(err) + after_closed_call(p));
    return;
  }
  c.my_nonce = random_nonce();
  HandshakeMessage hello;
  hello.type = HandshakeType::kHello;
  hello.from = static_cast<uint32_t>(rank_);
  hello.to = static_cast<uint32_t>(p.rank);
  hello.nonce = c.my_nonce;
  if (!send_handshake(c, hello)) {
    const int send_err = errno;
    if (send_err == ECONNRESET || send_err == EPIPE)
      return retry_call(c, "the listener closed our call before our hello (" + errno_text(send_err) + ")");
    fail_peer(p, "sending the handshake failed: " + errno_text(send_err));
    return;
  }
  c.state = ConnectionState::kAwaitWelcome;
  watch(c, false);
}

void TcpTransport::accept_all(MessageSink* sink, int& handled) {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EMFILE || err == ENFILE) {
        // Unproven callers hold descriptors too (a flood of them may be why none is left):
        // one of them goes before a call is refused.
        if (unproven_ > 0 && evict_oldest_unproven(sink, handled, descriptor_shortage(err, open_connections()))) continue;
        if (refuse_for_descriptors(err)) continue;
      }
      return;  // EAGAIN: nobody else is calling
    }
    // A caller beyond the limit does not lock the others out: the oldest unproven one goes.
    if (unproven_ >= kMaxUnidentified)
      evict_oldest_unproven(sink, handled, std::to_string(unproven_) + " callers have not proven the job secret, the most it keeps");
    set_socket_options(fd, config_.congestion);
    Connection& c = add_connection(fd, ConnectionState::kAwaitHello, socket_peer_text(fd), EPOLLIN);
    c.deadline = std::chrono::steady_clock::now() + config_.handshake_timeout;
    ++unproven_;
  }
}

bool TcpTransport::evict_oldest_unproven(MessageSink* sink, int& handled, const std::string& why) {
  Connection* oldest = nullptr;
  for (const auto& c : connections_)  // (a call held to be refused goes soon anyway)
    if (c->unproven() && !c->refusing && (!oldest || c->deadline < oldest->deadline)) oldest = c.get();
  if (!oldest) return false;
  // Its proof may be waiting in the socket (a real rank, just slow): a last look first.
  read_socket(*oldest, sink, handled);
  if (oldest->state == ConnectionState::kClosed) return true;
  if (!oldest->unproven()) return false;
  const auto now = std::chrono::steady_clock::now();
  const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - (oldest->deadline - config_.handshake_timeout));
  ++evicted_;
  if (evicted_ == 1) {
    std::fprintf(stderr,
                 "xmsg: tcp: rank %d: %s: closed the oldest unproven caller (from %s, %lld ms old) to make room for a "
                 "new one; a port scan or stalled clients? (further evictions are counted, logged at most every %lld s)\n",
                 rank_, why.c_str(), oldest->remote.c_str(), static_cast<long long>(age.count()),
                 static_cast<long long>(kLogEvery.count()));
    evict_logged_ = now;
  } else if (++evicted_unlogged_, now - evict_logged_ >= kLogEvery) {
    std::fprintf(stderr, "xmsg: tcp: rank %d evicted %zu more unproven callers (%zu in all; at most %zu kept): %s\n", rank_,
                 evicted_unlogged_, evicted_, kMaxUnidentified, why.c_str());
    evicted_unlogged_ = 0;
    evict_logged_ = now;
  }
  close_connection(*oldest);
  return true;
}

bool TcpTransport::refuse_for_descriptors(int err) {
  if (spare_fd_ < 0) {
    log_refusal(err, "a caller", "; no spare descriptor is left to refuse it now, so it waits");
    return false;
  }
  ::close(spare_fd_);
  spare_fd_ = -1;
  int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return false;
  }
  // Held on the spare's descriptor until its hello names the caller (usually it is here
  // already): then refused and closed, and the spare taken back (close_connection).
  Connection& c = add_connection(fd, ConnectionState::kAwaitHello, socket_peer_text(fd), EPOLLIN);
  c.deadline = std::chrono::steady_clock::now() + config_.handshake_timeout;
  c.refusing = err;
  ++unproven_;
  int handled = 0;
  read_socket(c, nullptr, handled);
  return spare_fd_ >= 0;
}

void TcpTransport::refuse_call(Connection& c, const HandshakeMessage& m) {
  if (m.type != HandshakeType::kHello) return reject_unproven(c, "the first message was not a hello");
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  const uint64_t soft = rl.rlim_cur, hard = rl.rlim_max, open = open_connections();
  const uint32_t code = static_cast<uint32_t>(c.refusing);
  HandshakeMessage reply;
  reply.type = HandshakeType::kReject;
  reply.from = static_cast<uint32_t>(rank_);
  reply.to = m.from;
  reply.reason = static_cast<uint32_t>(RejectReason::kNoFileDescriptors);
  std::memcpy(reply.nonce.data(), &soft, 8);
  std::memcpy(reply.nonce.data() + 8, &hard, 8);
  std::memcpy(reply.mac.data(), &open, 8);
  std::memcpy(reply.mac.data() + 8, &code, 4);
  send_handshake(c, reply);
  const std::string why = descriptor_shortage(c.refusing, open);
  log_refusal(c.refusing, "rank " + std::to_string(m.from) + " (" + c.remote + ")", "; the call was refused, so the caller fails this rank");
  close_connection(c);  // (the hello was read: FIN, not RST, so the caller reads the refusal)
  // The caller fails this rank on the refusal, so nothing will come from it any more: a receive
  // waiting for it here must fail too, not wait forever. (The hello is not proven, so a
  // stranger could name a rank here; it can only do so while this rank has no descriptor left.)
  Peer* p = peer_or_null(static_cast<int>(m.from));
  if (p && !p->established && m.to == static_cast<uint32_t>(rank_)) fail_peer(*p, "this rank could not accept its call: " + why);
}

void TcpTransport::log_refusal(int err, const std::string& caller, const char* outcome) {
  const auto now = std::chrono::steady_clock::now();
  const std::string why = descriptor_shortage(err, open_connections());
  if (++refused_fd_ == 1) {
    std::fprintf(stderr, "xmsg: tcp: rank %d cannot accept %s: %s%s (further refusals are counted, logged at most every %lld s)\n",
                 rank_, caller.c_str(), why.c_str(), outcome, static_cast<long long>(kLogEvery.count()));
    refuse_logged_ = now;
  } else if (++refused_fd_unlogged_, now - refuse_logged_ >= kLogEvery) {
    std::fprintf(stderr, "xmsg: tcp: rank %d: %zu more calls refused or left waiting: %s\n", rank_, refused_fd_unlogged_,
                 why.c_str());
    refused_fd_unlogged_ = 0;
    refuse_logged_ = now;
  }
}

void TcpTransport::handle_hello(Connection& c, const HandshakeMessage& m) {
  if (c.refusing) return refuse_call(c, m);
  if (m.type != HandshakeType::kHello) return reject_unproven(c, "the first message was not a hello");
  Peer* p = peer_or_null(static_cast<int>(m.from));
  if (m.to != static_cast<uint32_t>(rank_) || !p)
    return reject_unproven(c, "hello from rank " + std::to_string(m.from) + " to rank " + std::to_string(m.to) +
                                  " does not name a tcp peer of this rank");
  if (p->failed) return close_connection(c);
  HandshakeMessage reply;
  reply.from = static_cast<uint32_t>(rank_);
  reply.to = m.from;
  // An unproven caller claiming the same rank does not block this one (it may be an impostor):
  // whichever proves the secret first is kept.
  if (p->established || (p->outgoing && rank_ < p->rank)) {
    // Our own call wins (lower rank) or a connection exists already: the caller drops its call
    // and keeps waiting for ours.
    reply.type = HandshakeType::kReject;
    reply.reason = static_cast<uint32_t>(p->established ? RejectReason::kDuplicate : RejectReason::kSimultaneous);
    trace("rank %d called while %s: keeping ours", p->rank, p->established ? "connected already" : "our call is in flight");
    send_handshake(c, reply);
    return close_connection(c);
  }
  c.peer = p->rank;
  c.their_nonce = m.nonce;
  c.my_nonce = random_nonce();
  reply.type = HandshakeType::kWelcome;
  reply.nonce = c.my_nonce;
  reply.mac = secret_->acceptor_proof(reply.from, reply.to, c.their_nonce, c.my_nonce);
  if (!send_handshake(c, reply)) return close_connection(c);
  c.state = ConnectionState::kAwaitProof;
  p->incoming = &c;
}

void TcpTransport::handle_proof(Connection& c, const HandshakeMessage& m) {
  Peer& p = *peer_or_null(c.peer);
  Digest expected = secret_->connector_proof(static_cast<uint32_t>(p.rank), static_cast<uint32_t>(rank_), c.my_nonce, c.their_nonce);
  if (m.type != HandshakeType::kProof || m.from != static_cast<uint32_t>(p.rank) || !digests_equal(m.mac, expected))
    return reject_unproven(c, "caller claiming rank " + std::to_string(p.rank) + " failed to prove the job secret");
  --unproven_;
  if (p.incoming == &c) p.incoming = nullptr;
  c.state = ConnectionState::kEstablished;
  establish(p, c);
}

void TcpTransport::handle_welcome(Connection& c, const HandshakeMessage& m) {
  Peer& p = *peer_or_null(c.peer);
  if (m.type == HandshakeType::kReject) return handle_reject(c, m);
  Digest expected = secret_->acceptor_proof(static_cast<uint32_t>(p.rank), static_cast<uint32_t>(rank_), c.my_nonce, m.nonce);
  if (m.type != HandshakeType::kWelcome || m.from != static_cast<uint32_t>(p.rank) || m.to != static_cast<uint32_t>(rank_) ||
      !digests_equal(m.mac, expected))
    return fail_peer(p, "the listener at " + p.address + " did not prove the job secret (not rank " + std::to_string(p.rank) + " of this job)");
  // The listener may have given up on this call while we did not progress (its handshake
  // deadline) and closed it behind the welcome: data sent now would meet a reset. Call again.
  char probe;
  const ssize_t peeked = ::recv(c.fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
  if (peeked == 0 || (peeked < 0 && (errno == ECONNRESET || errno == EPIPE)))
    return retry_call(c, "the listener closed our call right after its welcome");
  HandshakeMessage proof;
  proof.type = HandshakeType::kProof;
  proof.from = static_cast<uint32_t>(rank_);
  proof.to = m.from;
  proof.mac = secret_->connector_proof(proof.from, proof.to, m.nonce, c.my_nonce);
  if (!send_handshake(c, proof)) {
    const int err = errno;
    if (err == ECONNRESET || err == EPIPE) return retry_call(c, "the listener closed our call before our proof (" + errno_text(err) + ")");
    return fail_peer(p, "sending the handshake proof failed: " + errno_text(err));
  }
  p.outgoing = nullptr;
  --calls_;
  c.state = ConnectionState::kEstablished;
  establish(p, c);
}

void TcpTransport::handle_reject(Connection& c, const HandshakeMessage& m) {
  Peer& p = *peer_or_null(c.peer);
  if (m.reason == static_cast<uint32_t>(RejectReason::kNoFileDescriptors)) {
    uint64_t soft = 0, hard = 0, open = 0;
    uint32_t err = 0;
    std::memcpy(&soft, m.nonce.data(), 8);
    std::memcpy(&hard, m.nonce.data() + 8, 8);
    std::memcpy(&open, m.mac.data(), 8);
    std::memcpy(&err, m.mac.data() + 8, 4);
    return fail_peer(p, "rank " + std::to_string(p.rank) + " cannot accept the call: " +
                            (err == ENFILE ? "its node's file table is full (ENFILE, see /proc/sys/fs/file-max)"
                                           : "it is out of file descriptors (EMFILE)") +
                            ": `ulimit -n` there is " + limit_text(static_cast<rlim_t>(soft)) + " (hard limit " +
                            limit_text(static_cast<rlim_t>(hard)) + ") with " + connections_text(open) +
                            " open; raise `ulimit -n` for the job's ranks");
  }
  if (m.reason != static_cast<uint32_t>(RejectReason::kSimultaneous) && m.reason != static_cast<uint32_t>(RejectReason::kDuplicate))
    return fail_peer(p, "the peer refused the connection (reason " + std::to_string(m.reason) + ")");
  // The peer's own call carries our queue once it is proven.
  close_connection(c);
}

void TcpTransport::retry_call(Connection& c, const std::string& cause) {
  Peer& p = *peer_or_null(c.peer);
  close_connection(c);
  if (++p.calls_ended > kMaxCallRetries)
    return fail_peer(p, cause + " (" + std::to_string(p.calls_ended) +
                            " calls in a row ended before the handshake finished: the listener closed them, out of room for "
                            "unproven callers or past its XMSG_TCP_HANDSHAKE_TIMEOUT_MS; see that rank's log)");
  trace("rank %d: %s; calling again (%u)", p.rank, cause.c_str(), p.calls_ended);
  // The peer's own call, if one is on its way, carries the queue instead.
  if (!p.established && !p.outgoing && !p.incoming) start_connect(p);
}

void TcpTransport::establish(Peer& p, Connection& c) {
  if (p.established && p.established != &c) {
    close_connection(c);
    return;
  }
  p.established = &c;
  p.calls_ended = 0;
  trace("connected to rank %d (%s), %s", p.rank, p.address.c_str(), c.remote == p.address ? "our call" : "its call");
  if (p.outgoing && p.outgoing != &c) close_connection(*p.outgoing);
  if (p.incoming && p.incoming != &c) close_connection(*p.incoming);
  flush(p);
}

bool TcpTransport::handle_handshake(Connection& c) {
  while (c.state != ConnectionState::kEstablished && c.state != ConnectionState::kClosed) {
    auto bytes = c.rx.readable();
    if (c.state == ConnectionState::kAwaitHello && bytes.size() >= 4) {
      uint32_t magic;
      std::memcpy(&magic, bytes.data(), 4);
      // Reject a stranger as soon as it shows it does not speak the protocol.
      if (magic != HandshakeMessage::kMagic) {
        reject_unproven(c, "it sent bytes that are not an xmsg tcp handshake");
        return false;
      }
    }
    if (bytes.size() < HandshakeMessage::kWireSize) return true;
    std::string error;
    auto m = HandshakeMessage::decode(
        std::span<const uint8_t, HandshakeMessage::kWireSize>(reinterpret_cast<const uint8_t*>(bytes.data()), HandshakeMessage::kWireSize), error);
    c.rx.consume(HandshakeMessage::kWireSize);
    if (!m) {
      if (c.unproven()) reject_unproven(c, error);
      else fail_peer(*peer_or_null(c.peer), "bad handshake: " + error);
      return false;
    }
    switch (c.state) {
      case ConnectionState::kAwaitHello: handle_hello(c, *m); break;
      case ConnectionState::kAwaitProof: handle_proof(c, *m); break;
      case ConnectionState::kAwaitWelcome: handle_welcome(c, *m); break;
      default: break;
    }
  }
  return c.state != ConnectionState::kClosed;
}

void TcpTransport::expire_handshakes(MessageSink* sink, int& handled) {
  if (unproven_ == 0 && calls_ == 0) return;
  const auto now = std::chrono::steady_clock::now();
  // By index: a read below may reach the sink, whose sends may open connections.
  for (size_t i = 0; i < connections_.size(); ++i) {
    Connection* c = connections_[i].get();
    if ((!c->unproven() && !c->outgoing()) || now < c->deadline) continue;
    // This rank may itself not have progressed for a while: what arrived meanwhile counts.
    if (c->state != ConnectionState::kConnecting) read_socket(*c, sink, handled);
    if (c->unproven()) {
      reject_unproven(*c, "it did not prove the job secret within " + std::to_string(config_.handshake_timeout.count()) + " ms");
    } else if (c->outgoing()) {
      const bool connected = c->state == ConnectionState::kAwaitWelcome;
      fail_peer(*peer_or_null(c->peer),
                std::string(connected ? "it did not accept our call and answer its hello"
                                      : "our call did not connect (TCP)") +
                    " within " + std::to_string(config_.connect_timeout.count()) +
                    " ms (XMSG_TCP_CONNECT_TIMEOUT_MS): that rank is hung or stopped, out of file descriptors, or has "
                    "not called into xmsg for that long");
    }
  }
}

}  // namespace xmsg::transport::tcp
