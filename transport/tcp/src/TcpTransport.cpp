#include "TcpTransport.hpp"

#include <xmsg/bootstrap/parameters.hpp>
#include <xmsg/transport/tcp.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

namespace xmsg::transport::tcp {
namespace {

constexpr const char* kAddressKey = "xmsg.tcp.addr";
constexpr const char* kSecretKey = "xmsg.tcp.secret";
constexpr const char* kLauncherSecretKey = "xmsg.job_secret";
// Accepted callers that have not proven the job secret yet; past this the oldest is evicted
// (a port scan or stalled clients must not lock real ranks out).
constexpr size_t kMaxUnidentified = 256;
// Our calls the listener may close before the handshake ends, in a row, before the peer fails.
constexpr unsigned kMaxCallRetries = 5;
// Evictions and refusals (out of descriptors) are logged at most this often.
constexpr auto kLogEvery = std::chrono::seconds(10);
// A pushed head is accepted up to the largest this rank would push itself, and never refused
// below this (the default XMSG_TCP_PUSH_LARGE), so ranks whose settings differ a little
// still work; a larger announcement is a protocol error, not an allocation.
constexpr uint64_t kPushAcceptFloor = 4 << 20;
constexpr size_t kReadBudget = 4 * 1024 * 1024;  // bytes read from one socket per progress call
constexpr auto kDisconnectTimeout = std::chrono::seconds(10);
constexpr size_t kDirectPollMax = 4;     // established connections polled by recv directly
constexpr unsigned kEpollEvery = 64;     // ... with an epoll_wait every this many calls
constexpr size_t kReadDataFrame = sizeof(FrameHeader) + sizeof(ReadData);
// A guessing recv puts at most this much of a read's range into its destination; a wrong guess
// moves that much back into rx, no more than the plain recv into rx would have copied.
constexpr size_t kGuessMax = 64 * 1024;
constexpr size_t kGuessMin = 4 * 1024;   // below this one more recv costs more than the copy

std::string errno_text(int err) { return std::strerror(err); }

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

TcpTransport::TcpTransport(bootstrap::Bootstrap& bootstrap, TcpConfig config)
    : bootstrap_(bootstrap), config_(std::move(config)), rank_(bootstrap.rank()) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw TransportError("tcp: epoll_create1 failed: " + errno_text(errno));
  peers_.resize(static_cast<size_t>(bootstrap.size()));
}

TcpTransport::~TcpTransport() {
  connections_.clear();
  if (spare_fd_ >= 0) ::close(spare_fd_);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void TcpTransport::trace(const char* format, ...) const {
  if (!config_.verbose) return;
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  std::fprintf(stderr, "xmsg: tcp: rank %d: %s\n", rank_, line);
}

TcpTransport::Peer* TcpTransport::peer_or_null(int rank) {
  if (rank < 0 || static_cast<size_t>(rank) >= peers_.size()) return nullptr;
  return peers_[static_cast<size_t>(rank)].get();
}

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

void TcpTransport::connect(std::span<const int> peers, const ConnectOptions&) {
  if (connected_) throw TransportError("tcp: connect() called twice");
  open_listener();
  bootstrap_.put_string(kAddressKey, listen_address_);
  // Where the secret comes from: xmsgrun writes it to a 0600 file in the job's private
  // directory and names it in XMSG_JOB_SECRET_FILE (never the PMIx store, which other local
  // users can reach); an older xmsgrun published it as a job value; under mpirun or srun
  // nobody gives one, so rank 0 makes one for the job and shares it through the KVS.
  std::optional<std::string> secret;
  const char* source = "rank 0 (KVS)";
  if (auto file = params::raw("XMSG_JOB_SECRET_FILE")) {
    secret = read_secret_file(*file);
    source = "XMSG_JOB_SECRET_FILE";
  } else if (auto launcher_secret = bootstrap_.job_value(kLauncherSecretKey); launcher_secret && !launcher_secret->empty()) {
    secret = std::move(launcher_secret);
    source = "the launcher (job value)";
  }
  if (!secret && rank_ == 0) bootstrap_.put_string(kSecretKey, random_secret());
  bootstrap_.commit();
  // No data collection: at scale every node would receive every rank's address. A peer's
  // address is read (PMIx direct modex) when this rank first connects to it.
  bootstrap_.fence(false);
  secret_.emplace(secret ? *secret : bootstrap_.get_string(0, kSecretKey));
  trace("listening on %s, job secret from %s", listen_address_.c_str(), source);

  for (int r : peers) {
    if (r == rank_) continue;
    if (r < 0 || static_cast<size_t>(r) >= peers_.size())
      throw TransportError("tcp: connect: peer rank " + std::to_string(r) + " out of range [0, " + std::to_string(peers_.size()) + ")");
    auto p = std::make_unique<Peer>();
    p->rank = r;
    peers_[static_cast<size_t>(r)] = std::move(p);
  }
  connected_ = true;
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

void TcpTransport::watch(Connection& c, bool writes) {
  if (c.watching_writes == writes || c.state == ConnectionState::kClosed) return;
  if (!c.in_epoll) {
    c.watching_writes = writes;  // registered with these events by the next drive()
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | (writes ? uint32_t(EPOLLOUT) : 0u);
  ev.data.ptr = &c;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.watching_writes = writes;
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

void TcpTransport::flush(Peer& p) {
  Connection* c = p.established;
  if (!c) return;
  while (!p.queue.empty()) {
    iovec iov[64];
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(p.queue.gather(iov, 64));
    ssize_t n = ::sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return fail_peer(p, errno_text(errno));
    }
    p.queue.consume(static_cast<size_t>(n));
  }
  watch(*c, !p.queue.empty());
}

bool TcpTransport::try_send(int peer, const WireHeader& header, std::span<const std::byte> payload) {
  Peer* p = peer_or_null(peer);
  if (!p) throw TransportError("tcp: try_send to rank " + std::to_string(peer) + ", which is not a tcp peer of rank " + std::to_string(rank_));
  if (payload.size() > config_.max_payload)
    throw TransportError("tcp: try_send of " + std::to_string(payload.size()) + " bytes exceeds max_eager_payload " + std::to_string(config_.max_payload));
  // A dead peer's messages go nowhere; the runtime hears of it through on_peer_failure.
  if (p->failed) return true;
  // The head of a rendezvous travels right behind its RTS, so the receiver asks only for the
  // rest and the round trip overlaps with data (as Open MPI's tcp path does with its first
  // fragment).
  if (header.kind == MessageKind::kRendezvousRts && config_.rendezvous_push > 0 &&
      payload.size() == sizeof(protocol::RendezvousRts)) {
    bool accepted = false;
    if (try_send_pushed(*p, header, payload, accepted)) return accepted;
  }
  size_t frame_bytes = sizeof(FrameHeader) + payload.size();
  if (!p->queue.empty() && p->queue.copied_bytes() + frame_bytes > config_.queue_limit) return false;
  FrameHeader fh{FrameType::kData, static_cast<uint32_t>(payload.size()), header};
  auto fh_bytes = std::as_bytes(std::span(&fh, 1));
  if (p->established && p->queue.empty()) {
    // Fast path: straight from the caller's buffer; only what the kernel refuses is copied.
    iovec iov[2] = {{&fh, sizeof fh}, {const_cast<std::byte*>(payload.data()), payload.size()}};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = payload.empty() ? 1 : 2;
    ssize_t n;
    do n = ::sendmsg(p->established->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        fail_peer(*p, errno_text(errno));
        return true;
      }
      n = 0;
    }
    size_t sent = static_cast<size_t>(n);
    if (sent == frame_bytes) return true;
    if (sent < sizeof fh) {
      p->queue.append(fh_bytes.subspan(sent));
      p->queue.append(payload);
    } else {
      p->queue.append(payload.subspan(sent - sizeof fh));
    }
    watch(*p->established, true);
    return true;
  }
  p->queue.append(fh_bytes);
  p->queue.append(payload);
  if (!p->established && !p->outgoing && !p->incoming) start_connect(*p);
  return true;
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

bool TcpTransport::parse_frames(Connection& c, MessageSink* sink, int& handled) {
  Peer& p = *peer_or_null(c.peer);
  for (;;) {
    if (c.direct_left > 0) {
      // Bytes of the range that arrived with earlier frames: the only copy out of rx.
      auto have = c.rx.readable();
      const size_t take = std::min(have.size(), c.direct_left);
      if (take) std::memcpy(c.direct, have.data(), take);
      c.rx.consume(take);
      c.direct += take;
      c.direct_left -= take;
      if (c.direct_left > 0) return true;  // the rest goes from the socket to its destination
    }
    if (c.skip_left > 0) {
      // The end of an eager payload that a shorter receive (truncation) has no room for.
      const size_t take = std::min(c.rx.readable().size(), c.skip_left);
      c.rx.consume(take);
      c.skip_left -= take;
      if (c.skip_left > 0) return true;
    }
    if (c.landing) {
      void* token = std::exchange(c.landing, nullptr);
      c.direct = nullptr;
      if (sink) sink->on_eager_landed(token);
      ++handled;
      if (c.state == ConnectionState::kClosed) return false;
    }
    if (c.push && c.push->landing) {
      finish_push(c);
      ++handled;
      if (c.state == ConnectionState::kClosed) return false;  // the completion failed the peer
    }
    if (c.direct_done) {
      ReadCompletion* done = std::exchange(c.direct_done, nullptr);
      c.direct = nullptr;
      done->on_read_done(true, {});
      ++handled;
      if (c.state == ConnectionState::kClosed) return false;  // the completion failed the peer
    }
    ParsedFrame f = parse_frame(c.rx.readable(), config_.max_payload);
    if (f.status == ParsedFrame::Status::kInvalid) {
      fail_peer(p, "protocol error: " + f.error);
      return false;
    }
    if (f.status == ParsedFrame::Status::kNeedMore) {
      if (f.need > sizeof(FrameHeader) && sink && land_eager(c, f.header, *sink)) continue;
      c.rx.writable(f.need - c.rx.readable().size());  // room for the whole frame
      return true;
    }
    switch (f.header.type) {
      case FrameType::kBye:
        c.bye_received = true;
        c.rx.consume(f.need);
        break;
      case FrameType::kReadRequest: {
        ReadRequest request;
        std::memcpy(&request, f.payload.data(), sizeof request);
        c.rx.consume(f.need);
        serve_read(p, request);
        break;
      }
      case FrameType::kDataThenPush: {
        // A message handled earlier in this call may have completed the request the user
        // waits on, after which it posts the receive this RTS is for. Returning first lets that
        // receive claim the pushed bytes (straight into the user buffer) instead of finding
        // them staged. Once per frame, so a busy connection cannot starve it.
        if (handled > 0 && !c.yielded) {
          c.yielded = true;
          return true;
        }
        c.yielded = false;
        protocol::RendezvousRts rts;
        uint64_t head = 0;
        std::memcpy(&rts, f.payload.data(), sizeof rts);
        std::memcpy(&head, f.payload.data() + sizeof rts, sizeof head);
        if (c.push) {
          fail_peer(p, "protocol error: a push was announced before the previous one arrived");
          return false;
        }
        // Bounded before anything is allocated for it: a peer cannot make this rank stage more
        // than it would push itself, nor more than the message.
        const uint64_t most = std::max({kPushAcceptFloor, uint64_t(config_.push_whole_message),
                                        uint64_t(config_.push_large_message), uint64_t(config_.rendezvous_push)});
        if (head > most || head > rts.handle.length || head == 0) {
          fail_peer(p, "protocol error: rank " + std::to_string(p.rank) + " announced a pushed head of " + std::to_string(head) +
                           " bytes for a message of " + std::to_string(rts.handle.length) +
                           " bytes; this rank accepts 1 byte up to the message's length, at most " + std::to_string(most) +
                           " (XMSG_TCP_PUSH_WHOLE, XMSG_TCP_PUSH_LARGE and XMSG_TCP_RNDV_PUSH must agree on every rank)");
          return false;
        }
        c.push.emplace();
        c.push->key = rts.handle.key;
        c.push->length = head;
        // The sink may claim the head right here (read_remote of a matched RTS): it then lands
        // in the receive buffer of the user directly.
        if (sink) {
          sink->on_message(f.header.wire, f.payload.first(sizeof rts));
          ++handled;
        }
        c.rx.consume(f.need);
        break;
      }
      case FrameType::kPush: {
        PushHeader push;
        std::memcpy(&push, f.payload.data(), sizeof push);
        c.rx.consume(f.need);
        if (!start_push(c, p, push)) return false;
        break;
      }
      case FrameType::kReadData: {
        ReadData data;
        std::memcpy(&data, f.payload.data(), sizeof data);
        c.rx.consume(f.need);
        if (!start_read_data(c, p, data)) return false;
        ++handled;
        break;
      }
      default:
        if (sink) {
          sink->on_message(f.header.wire, f.payload);
          ++handled;
        }
        c.rx.consume(f.need);
        break;
    }
    // The sink or a send may have failed this peer.
    if (c.state == ConnectionState::kClosed) return false;
  }
}

bool TcpTransport::land_eager(Connection& c, const FrameHeader& fh, MessageSink& sink) {
  if (fh.type != FrameType::kData || fh.wire.kind != MessageKind::kEager || config_.land_min == 0 || fh.payload_bytes < config_.land_min) return false;
  EagerLanding landing = sink.claim_eager(fh.wire);
  if (!landing.token) return false;
  // From here the message is matched: its payload goes to the receive's buffer, bytes already
  // in rx first (parse_frames), the rest straight from the socket.
  const size_t into = std::min<size_t>(landing.buffer.size(), fh.payload_bytes);
  c.rx.consume(sizeof(FrameHeader));
  c.landing = landing.token;
  c.direct = landing.buffer.data();
  c.direct_left = into;
  c.skip_left = fh.payload_bytes - into;
  return true;
}

bool TcpTransport::read_socket(Connection& c, MessageSink* sink, int& handled) {
  size_t budget = kReadBudget;
  bool drained = false;
  for (;;) {
    if (c.state != ConnectionState::kEstablished && !handle_handshake(c)) return false;
    if (c.state == ConnectionState::kEstablished && !parse_frames(c, sink, handled)) return false;
    if (c.yielded) return true;  // parse again next call, before reading more
    if (budget == 0 || drained) return true;
    // A range being read goes from the socket straight to its destination, never past its end;
    // what follows it lands in rx in the same call (and a short read then says the socket is
    // empty, sparing the recv that would only return EAGAIN).
    iovec iov[2];
    msghdr msg{};
    msg.msg_iov = iov;
    std::span<std::byte> guess = read_guess(c, budget);
    if (!guess.empty()) {
      bool ok = true;
      if (!recv_guessing(c, guess, drained, budget, ok)) return ok;
      continue;
    }
    size_t direct_want = 0;
    if (c.direct_left > 0) {
      direct_want = std::min(c.direct_left, budget);
      iov[msg.msg_iovlen++] = {c.direct, direct_want};
    }
    if (direct_want == c.direct_left) {
      auto room = c.rx.writable(16 * 1024);
      iov[msg.msg_iovlen++] = {room.data(), direct_want == 0 ? std::min(room.size(), budget) : room.size()};
    }
    size_t want = 0;
    for (size_t i = 0; i < msg.msg_iovlen; ++i) want += iov[i].iov_len;
    ssize_t n = ::recvmsg(c.fd, &msg, MSG_DONTWAIT);
    if (n > 0) {
      const size_t to_direct = std::min(static_cast<size_t>(n), direct_want);
      c.direct += to_direct;
      c.direct_left -= to_direct;
      c.rx.produced(static_cast<size_t>(n) - to_direct);
      budget -= std::min(budget, static_cast<size_t>(n));
      // A short read emptied the socket: parse what came and skip the recv that would only
      // say EAGAIN (one system call less per message).
      drained = static_cast<size_t>(n) < want;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return handle_recv_end(c, n);
  }
}

std::span<std::byte> TcpTransport::read_guess(Connection& c, size_t budget) {
  if (c.state != ConnectionState::kEstablished || c.direct_left > 0 || c.skip_left > 0 || c.push || c.landing ||
      c.direct_done || !c.rx.readable().empty())
    return {};
  Peer* p = peer_or_null(c.peer);
  if (!p || p->reads.empty() || p->reads.front().dst.size() < kGuessMin || budget < kReadDataFrame + kGuessMin) return {};
  return p->reads.front().dst.first(std::min({p->reads.front().dst.size(), kGuessMax, budget - kReadDataFrame}));
}

bool TcpTransport::recv_guessing(Connection& c, std::span<std::byte> guess, bool& drained, size_t& budget, bool& ok) {
  // The next frame is probably the answer to the oldest read (a ping-pong or a stream of reads
  // has nothing in between): receive its header into rx and the range's start straight into
  // the destination, sparing the copy out of rx that a plain recv would cost.
  iovec iov[2] = {{c.rx.writable(kReadDataFrame).data(), kReadDataFrame}, {guess.data(), guess.size()}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  ssize_t n;
  do n = ::recvmsg(c.fd, &msg, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    ok = handle_recv_end(c, n);
    return false;
  }
  const size_t got = static_cast<size_t>(n);
  const size_t header = std::min(got, kReadDataFrame);
  c.rx.produced(header);
  const size_t in_guess = got - header;
  if (in_guess > 0) {
    Peer& p = *peer_or_null(c.peer);
    ParsedFrame f = parse_frame(c.rx.readable(), config_.max_payload);
    const bool is_read_data = f.status == ParsedFrame::Status::kComplete && f.header.type == FrameType::kReadData;
    ReadData data{};
    if (is_read_data) std::memcpy(&data, f.payload.data(), sizeof data);
    if (is_read_data && !data.refused && data.read_id == p.reads.front().id && data.length == p.reads.front().dst.size()) {
      c.prelanded = in_guess;
    } else {
      // Wrong guess: those bytes belong to later frames. The destination is the read's own, so
      // its real range overwrites them later.
      std::memcpy(c.rx.writable(in_guess).data(), guess.data(), in_guess);
      c.rx.produced(in_guess);
    }
  }
  budget -= std::min(budget, got);
  drained = got < kReadDataFrame + guess.size();
  return true;
}

bool TcpTransport::handle_recv_end(Connection& c, ssize_t n) {
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
  const int err = n == 0 ? 0 : errno;
  std::string cause = n == 0 ? "end of stream (the peer exited or was killed)" : errno_text(err);
  if (c.outgoing() && peer_or_null(c.peer) && (n == 0 || err == ECONNRESET || err == EPIPE)) {
    // Closed before it answered our hello: the listener evicted our call or its deadline passed
    // while we did not progress. A peer that really died refuses the next call outright.
    retry_call(c, "the listener closed our call before the handshake finished (" + (n == 0 ? std::string("end of stream") : cause) + ")");
  } else if (c.unproven()) {
    close_connection(c);
  } else if (c.state == ConnectionState::kEstablished && c.bye_received) {
    close_connection(c);  // orderly end
  } else if (Peer* p = peer_or_null(c.peer)) {
    fail_peer(*p, cause);
  } else {
    close_connection(c);
  }
  return false;
}

// ---- remote read -------------------------------------------------------------------------

MemoryHandle TcpTransport::expose(const void* buffer, size_t length) {
  const uint64_t key = next_key_++;
  exposed_.emplace(key, std::span(static_cast<const std::byte*>(buffer), length));
  return {reinterpret_cast<uint64_t>(buffer), length, key};
}

void TcpTransport::release(const MemoryHandle& handle) {
  exposed_.erase(handle.key);
  // Released after the receiver's FIN: whatever it staged of this message is gone.
  if (auto it = large_pushes_.find(handle.key); it != large_pushes_.end()) {
    if (Peer* p = peer_or_null(it->second)) p->large_pushed -= handle.length;  // the size expose() gave it
    large_pushes_.erase(it);
  }
}

void TcpTransport::read_remote(int peer, const MemoryHandle& source, uint64_t offset, std::span<std::byte> dst,
                               ReadCompletion& done) {
  Peer* p = peer_or_null(peer);
  if (!p) return done.on_read_done(false, "tcp: rank " + std::to_string(peer) + " is not a tcp peer");
  if (p->failed) return done.on_read_done(false, p->failure);
  if (dst.empty()) return done.on_read_done(true, {});
  Connection* c = p->established;
  if (offset == 0 && c && c->push && c->push->key == source.key && !c->push->claimed) {
    // The head is on its way (or arriving): it lands in dst; only the rest is asked for.
    Connection::Push& push = *c->push;
    push.claimed = true;
    const size_t head = std::min<size_t>(push.length, dst.size());
    push.dst = dst.first(head);
    if (dst.size() > head) request_read(*p, source.key, head, dst.subspan(head), done);
    else push.done = &done;  // the rest (if any) was read before this call; see finish_push
    return;
  }
  if (offset == 0) {
    auto it = pushed_.find({peer, source.key});
    if (it != pushed_.end()) {
      // The head arrived before its receive was posted (like an unexpected eager message).
      std::vector<std::byte> head = std::move(it->second);
      pushed_.erase(it);
      const size_t n = std::min(head.size(), dst.size());
      std::memcpy(dst.data(), head.data(), n);
      if (dst.size() > n) return request_read(*p, source.key, n, dst.subspan(n), done);
      return done.on_read_done(true, {});
    }
  }
  request_read(*p, source.key, offset, dst, done);
}

void TcpTransport::request_read(Peer& p, uint64_t key, uint64_t offset, std::span<std::byte> dst, ReadCompletion& done) {
  const uint64_t id = next_read_id_++;
  p.reads.push_back({id, dst, &done});
  const ReadRequest request{key, offset, dst.size(), id};
  queue_frame(p, FrameHeader{FrameType::kReadRequest, sizeof request, {}}, std::as_bytes(std::span(&request, 1)));
}

bool TcpTransport::start_push(Connection& c, Peer& p, const PushHeader& header) {
  if (!c.push || c.push->key != header.key || c.push->length != header.length || c.push->landing) {
    fail_peer(p, "protocol error: pushed data that no RTS announced");
    return false;
  }
  Connection::Push& push = *c.push;
  push.landing = true;
  if (push.claimed && push.dst.size() == header.length) {
    c.direct = push.dst.data();
  } else {
    push.buffer.resize(header.length);
    c.direct = push.buffer.data();
  }
  c.direct_left = header.length;
  return true;
}

void TcpTransport::finish_push(Connection& c) {
  Connection::Push push = std::move(*c.push);
  c.push.reset();
  c.direct = nullptr;
  if (!push.claimed) {
    pushed_[{c.peer, push.key}] = std::move(push.buffer);
    return;
  }
  if (!push.buffer.empty()) std::memcpy(push.dst.data(), push.buffer.data(), push.dst.size());
  if (push.done) push.done->on_read_done(true, {});
}

bool TcpTransport::try_send_pushed(Peer& p, const WireHeader& header, std::span<const std::byte> payload, bool& accepted) {
  protocol::RendezvousRts rts;
  std::memcpy(&rts, payload.data(), sizeof rts);
  auto it = exposed_.find(rts.handle.key);
  if (it == exposed_.end() || config_.rendezvous_push == 0) return false;
  const uint64_t size = it->second.size();
  // A large message goes whole only while the whole pushes of the peer's not yet finished
  // messages stay within the budget: that bounds what a receiver that posts late must stage.
  const bool large = size > config_.push_whole_message && size <= config_.push_large_message &&
                     p.large_pushed + size <= config_.push_budget;
  const uint64_t head = size <= config_.push_whole_message || large ? size
                        : size <= config_.push_max_message        ? std::min<uint64_t>(config_.rendezvous_push, size)
                                                                  : 0;
  if (head == 0) return false;
  const size_t copied = 2 * sizeof(FrameHeader) + payload.size() + sizeof head + sizeof(PushHeader);
  if (!p.queue.empty() && p.queue.copied_bytes() + copied > config_.queue_limit) {
    accepted = false;
    return true;
  }
  const FrameHeader rts_frame{FrameType::kDataThenPush, static_cast<uint32_t>(payload.size() + sizeof head), header};
  const FrameHeader push_frame{FrameType::kPush, sizeof(PushHeader), {}};
  const PushHeader push{rts.handle.key, head};
  p.queue.append(std::as_bytes(std::span(&rts_frame, 1)));
  p.queue.append(payload);
  p.queue.append(std::as_bytes(std::span(&head, 1)));
  p.queue.append(std::as_bytes(std::span(&push_frame, 1)));
  p.queue.append(std::as_bytes(std::span(&push, 1)));
  // Valid until the receiver's FIN, which it sends only after the whole message arrived.
  p.queue.append_borrowed(it->second.first(head));
  if (large) {
    p.large_pushed += size;
    large_pushes_[rts.handle.key] = p.rank;
  }
  accepted = true;
  if (p.established) flush(p);
  else if (!p.outgoing && !p.incoming) start_connect(p);
  return true;
}

void TcpTransport::serve_read(Peer& p, const ReadRequest& request) {
  ReadData data{request.read_id, request.length, 0};
  auto it = exposed_.find(request.key);
  // Only ranges this rank exposed and has not released leave the process.
  if (it == exposed_.end() || request.offset > it->second.size() || request.length > it->second.size() - request.offset) {
    data.length = 0;
    data.refused = 1;
    queue_frame(p, FrameHeader{FrameType::kReadData, sizeof data, {}}, std::as_bytes(std::span(&data, 1)));
    return;
  }
  const FrameHeader fh{FrameType::kReadData, sizeof data, {}};
  p.queue.append(std::as_bytes(std::span(&fh, 1)));
  p.queue.append(std::as_bytes(std::span(&data, 1)));
  // The exposed buffer stays valid until the reader's FIN, which follows these bytes.
  p.queue.append_borrowed(it->second.subspan(request.offset, request.length));
  flush(p);
}

bool TcpTransport::start_read_data(Connection& c, Peer& p, const ReadData& data) {
  if (p.reads.empty() || p.reads.front().id != data.read_id) {
    fail_peer(p, "protocol error: read data for read " + std::to_string(data.read_id) + ", which was not asked for");
    return false;
  }
  PendingRead read = p.reads.front();
  p.reads.pop_front();
  if (data.refused) {
    read.done->on_read_done(false, "tcp: rank " + std::to_string(p.rank) + " has no exposed buffer for the read");
    return c.state != ConnectionState::kClosed;
  }
  if (data.length != read.dst.size()) {
    fail_peer(p, "protocol error: read data of " + std::to_string(data.length) + " bytes for a read of " +
                     std::to_string(read.dst.size()));
    return false;
  }
  const size_t prelanded = std::exchange(c.prelanded, 0);
  c.direct = read.dst.data() + prelanded;
  c.direct_left = read.dst.size() - prelanded;
  c.direct_done = read.done;
  return true;
}

void TcpTransport::queue_frame(Peer& p, const FrameHeader& fh, std::span<const std::byte> payload) {
  if (p.failed) return;
  p.queue.append(std::as_bytes(std::span(&fh, 1)));
  p.queue.append(payload);
  if (p.established) flush(p);
  else if (!p.outgoing && !p.incoming) start_connect(p);
}

void TcpTransport::handle_events(Connection& c, uint32_t events, MessageSink* sink, int& handled) {
  if (c.state == ConnectionState::kClosed) return;
  if (c.state == ConnectionState::kConnecting) {
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
    on_connected(c);
    if (c.state == ConnectionState::kClosed) return;
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
    if (!read_socket(c, sink, handled)) return;
  }
  if ((events & EPOLLOUT) && c.state == ConnectionState::kEstablished) flush(*peer_or_null(c.peer));
}

bool TcpTransport::output_flushed() const {
  for (const auto& p : peers_)
    if (p && !p->failed && !p->queue.empty()) return false;
  return true;
}

bool TcpTransport::direct_poll_ok() const {
  if (unproven_ > 0 || connections_.empty() || connections_.size() > kDirectPollMax) return false;
  for (const auto& c : connections_)
    if (c->state != ConnectionState::kEstablished || c->watching_writes) return false;
  return true;
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

void TcpTransport::attach_all() const {
  for (const auto& c : connections_) {
    if (c->in_epoll || c->state == ConnectionState::kClosed) continue;
    epoll_event ev{};
    ev.events = EPOLLIN | (c->watching_writes ? uint32_t(EPOLLOUT) : 0u);
    ev.data.ptr = c.get();
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev);
    c->in_epoll = true;
  }
}

int TcpTransport::drive(MessageSink* sink) {
  int handled = 0;
  // With a few established peers and nothing else going on, one recv per peer is cheaper than
  // epoll_wait followed by recv: poll them directly and ask epoll (for new callers, handshakes)
  // only every kEpollEvery calls. Those sockets also leave the epoll set meanwhile: the kernel
  // then runs no epoll callback for every arriving segment (measured: 1-3% of latency at most
  // sizes, 2 MiB 0.96-0.99x Open MPI instead of 1.00-1.12x, same runs).
  if (config_.poll_by_recv && direct_poll_ok()) {
    for (size_t i = 0; i < connections_.size(); ++i) {
      Connection& c = *connections_[i];
      if (c.state != ConnectionState::kEstablished) continue;
      if (c.in_epoll) {
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
        c.in_epoll = false;
      }
      read_socket(c, sink, handled);
    }
    if (++drive_calls_ % kEpollEvery != 0) {
      reap();
      return handled;
    }
  } else {
    attach_all();
  }
  // A connection that stopped parsing in the previous call resumes even if no new byte
  // arrives (epoll would not report it).
  for (size_t i = 0; i < connections_.size(); ++i) {
    Connection& c = *connections_[i];
    if (c.yielded && c.state == ConnectionState::kEstablished) read_socket(c, sink, handled);
  }
  epoll_event events[64];
  int n = ::epoll_wait(epoll_fd_, events, 64, 0);
  for (int i = 0; i < n; ++i) {
    if (events[i].data.ptr == nullptr) {
      accept_all(sink, handled);
      continue;
    }
    handle_events(*static_cast<Connection*>(events[i].data.ptr), events[i].events, sink, handled);
  }
  expire_handshakes(sink, handled);
  // Connections closed above may still be named by later events of this batch: reap after.
  reap();
  return handled;
}

int TcpTransport::progress(MessageSink& sink) {
  if (in_progress_ || !connected_ || disconnected_) return 0;
  in_progress_ = true;
  int handled = 0;
  try {
    report_failures(sink);
    handled = drive(&sink);
    report_failures(sink);
  } catch (...) {
    in_progress_ = false;
    throw;
  }
  in_progress_ = false;
  return handled;
}

void TcpTransport::disconnect() {
  if (!connected_ || disconnected_) return;
  // 1. Everything accepted by try_send reaches the kernel (handshakes included), then kBye.
  auto deadline = std::chrono::steady_clock::now() + kDisconnectTimeout;
  auto busy = [&] {
    for (auto& p : peers_)
      if (p && !p->failed && !p->queue.empty()) return true;
    return false;
  };
  while (busy() && std::chrono::steady_clock::now() < deadline) {
    drive(nullptr);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  for (auto& p : peers_) {
    if (!p || !p->established) continue;
    FrameHeader bye{FrameType::kBye, 0, {}};
    p->queue.append(std::as_bytes(std::span(&bye, 1)));
    flush(*p);
  }
  while (busy() && std::chrono::steady_clock::now() < deadline) {
    drive(nullptr);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  // 2. Every rank has handed its last bytes to the kernel before anyone closes, so no close
  //    can reset a connection that still carries a peer's data.
  try {
    bootstrap_.fence(false);
  } catch (const std::exception&) {
    // A peer died: its failure was already reported; closing is all that is left.
  }
  disconnected_ = true;
  for (auto& c : connections_) close_connection(*c);
  reap();
  if (listen_fd_ >= 0) ::close(listen_fd_), listen_fd_ = -1;
}

}  // namespace xmsg::transport::tcp

namespace xmsg::transport {

std::unique_ptr<Transport> make_tcp_transport(xmsg::bootstrap::Bootstrap& bootstrap) {
  return std::make_unique<tcp::TcpTransport>(bootstrap, tcp::TcpConfig::from_environment());
}

bool tcp_output_flushed(const Transport& transport) {
  return dynamic_cast<const tcp::TcpTransport&>(transport).output_flushed();
}

}  // namespace xmsg::transport
