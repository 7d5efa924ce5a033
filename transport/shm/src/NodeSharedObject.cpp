#include <xmsg/transport/shm/NodeSharedObject.hpp>

#include "AbstractSocket.hpp"
#include "Segment.hpp"

#include <xmsg/transport/transport.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <poll.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utility>

namespace xmsg::transport::shm {

namespace {

// What a joiner sends: the ticket's token.
struct Claim {
  uint64_t token[2];
};

// What the creator answers, with the descriptor.
struct Handover {
  uint64_t bytes;
};

// A joiner that connected gets this long to show its token (it sends it right after connect);
// a process of the same user that connects and says nothing must not stall the creator.
constexpr int kClaimTimeoutMs = 5000;

uint64_t random_word() {
  uint64_t w = 0;
  for (size_t got = 0; got < sizeof w;) {
    const ssize_t n = ::getrandom(reinterpret_cast<char*>(&w) + got, sizeof w - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw TransportError("shm: " + errno_text("getrandom"));
    got += static_cast<size_t>(n);
  }
  return w;
}

// Serves one connection: the caller must be of this user and show the token. Returns whether
// it got the descriptor.
bool serve(int conn, const JoinTicket& ticket, int fd, uint64_t bytes, const std::string& what) {
  if (peer_credentials(conn, what).uid != ::getuid()) return false;
  timeval patience{kClaimTimeoutMs / 1000, 0};
  ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  Claim claim{};
  ssize_t got;
  do got = ::recv(conn, &claim, sizeof claim, 0);
  while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof claim) || claim.token[0] != ticket.token[0] ||
      claim.token[1] != ticket.token[1])
    return false;
  const Handover handover{bytes};
  try {
    send_with_descriptors(conn, &handover, sizeof handover, &fd, 1, what);
  } catch (const TransportError&) {
    return false;  // the caller went away meanwhile
  }
  return true;
}

// One wait for `fd` to turn readable: with a Pause, 1 ms in poll(2) and then the pause (so a
// caller that holds the MPI layer's lock hands it over); without, up to `block_ms` (-1: for
// good). Returns whether it is readable.
bool wait_readable(int fd, const NodeSharedObject::Pause& pause, int block_ms, const std::string& what) {
  pollfd p{fd, POLLIN, 0};
  const int ready = ::poll(&p, 1, pause ? 1 : block_ms);
  if (ready < 0 && errno != EINTR) throw TransportError("shm: " + what + " " + errno_text("poll"));
  if (ready > 0) return true;
  if (pause) pause();
  return false;
}

}  // namespace

NodeSharedObject::NodeSharedObject() = default;
NodeSharedObject::NodeSharedObject(NodeSharedObject&&) noexcept = default;
NodeSharedObject& NodeSharedObject::operator=(NodeSharedObject&&) noexcept = default;
NodeSharedObject::~NodeSharedObject() = default;

std::string NodeSharedObject::address_of(const std::string& name) {
  const std::string plain = name.starts_with('/') ? name.substr(1) : name;
  return plain.size() <= kAbstractNameMax ? plain : "xmsg-object-" + hex64(fnv1a(name));
}

NodeSharedObject NodeSharedObject::create(const std::string& name, size_t bytes, bool nameless_wanted) {
  NodeSharedObject o;
  o.name_ = name;
  o.ticket_.creator_pid = ::getpid();
  if (!nameless_wanted) {
    o.segment_ = std::make_unique<Segment>(Segment::create(name, bytes));
    return o;
  }
  o.segment_ = std::make_unique<Segment>(Segment::create_nameless(name, bytes));
  o.listener_ = std::make_unique<Descriptor>(listen_abstract(address_of(name), "shared object " + name));
  o.ticket_.nameless = 1;
  o.ticket_.token[0] = random_word();
  o.ticket_.token[1] = random_word();
  return o;
}

void NodeSharedObject::share(int joiners, const Pause& pause, int patience_ms) {
  // Closed on every way out: callers still queued then fail instead of waiting.
  const std::unique_ptr<Descriptor> listener = std::move(listener_);
  if (!listener) return;
  const std::string what = "shared object " + name_;
  const int fd = segment_->descriptor();
  int served = 0;
  auto last = std::chrono::steady_clock::now();
  while (served < joiners) {
    if (!wait_readable(listener->get(), pause, 100, what)) {
      if (std::chrono::steady_clock::now() - last > std::chrono::milliseconds(patience_ms))
        throw TransportError("shm: " + what + ": " + std::to_string(joiners - served) + " of " +
                             std::to_string(joiners) + " ranks did not come for its descriptor in " +
                             std::to_string(patience_ms) +
                             " ms (are this node's ranks in different network namespaces? "
                             "XMSG_SHM_NAMELESS=off joins by name)");
      continue;
    }
    Descriptor conn(::accept4(listener->get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN) continue;
      throw TransportError("shm: " + what + " " + errno_text("accept"));
    }
    last = std::chrono::steady_clock::now();
    if (serve(conn.get(), ticket_, fd, segment_->size(), what)) ++served;
  }
}

NodeSharedObject NodeSharedObject::join(const std::string& name, size_t bytes, const JoinTicket& ticket,
                                        bool populate, const Pause& pause) {
  NodeSharedObject o;
  o.name_ = name;
  o.ticket_ = ticket;
  if (!ticket.nameless) {
    o.segment_ = std::make_unique<Segment>(Segment::open(name, bytes, populate));
    return o;
  }
  const std::string address = address_of(name);
  const std::string what = "shared object " + name;
  Descriptor conn = connect_abstract(address);
  if (!conn)
    throw TransportError("shm: cannot reach the creator of " + name + " (pid " + std::to_string(ticket.creator_pid) +
                         ") at @" + address + ": " + std::strerror(errno) +
                         " (ranks of one node in different network namespaces? XMSG_SHM_NAMELESS=off joins by name)");
  // The socket must be the creator's: another process of this user could not have bound the
  // name before it (the creator would have failed), but say so if the kernel disagrees.
  const ucred creator = peer_credentials(conn.get(), what);
  if (creator.uid != ::getuid() || creator.pid != ticket.creator_pid)
    throw TransportError("shm: the socket @" + address + " belongs to pid " + std::to_string(creator.pid) + " uid " +
                         std::to_string(creator.uid) + ", not to the creator of " + name + " (pid " +
                         std::to_string(ticket.creator_pid) + ")");
  const Claim claim{{ticket.token[0], ticket.token[1]}};
  send_with_descriptors(conn.get(), &claim, sizeof claim, nullptr, 0, what);
  // The creator answers once it gets to this connection (it serves them in turn).
  while (!wait_readable(conn.get(), pause, -1, what)) {
  }
  Handover handover{};
  Received got = receive_with_descriptors(conn.get(), &handover, sizeof handover, what + " receive");
  if (got.bytes != static_cast<ssize_t>(sizeof handover) || got.descriptors.size() != 1 || handover.bytes != bytes)
    throw TransportError("shm: the creator of " + name + " (pid " + std::to_string(ticket.creator_pid) + ") " +
                         (got.bytes == 0 && got.descriptors.empty()
                              ? std::string("closed the socket without handing over its descriptor (it gave up?)")
                              : "did not hand over one " + std::to_string(bytes) + "-byte object"));
  // Trust the kernel, not the message, about the size.
  struct stat st{};
  const int fd = got.descriptors[0].get();
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != bytes)
    throw TransportError("shm: the descriptor handed over for " + name + " is not a " + std::to_string(bytes) +
                         "-byte shared object");
  o.segment_ = std::make_unique<Segment>(Segment::map(fd, name, 0, bytes, populate));
  return o;
}

JoinTicket NodeSharedObject::ticket() const { return ticket_; }

void NodeSharedObject::done_sharing() {
  listener_.reset();
  if (!segment_) return;
  segment_->unlink();
  segment_->close_descriptor();
}

void* NodeSharedObject::data() const { return segment_ ? segment_->data() : nullptr; }
size_t NodeSharedObject::size() const { return segment_ ? segment_->size() : 0; }

}  // namespace xmsg::transport::shm
