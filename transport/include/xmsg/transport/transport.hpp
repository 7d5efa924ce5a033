// The transport interface: what the runtime needs from shared memory, verbs and tcp alike.
//
// A transport moves opaque messages (one WireHeader + payload bytes) between world ranks and,
// where it can, lets a receiver read a sender's exposed memory (the rendezvous capability).
// It knows nothing of tags, communicators or matching: those belong to the runtime.
//
// Contract every transport keeps:
//   * Per peer, messages are delivered in the order try_send() accepted them (MPI's
//     non-overtaking rule rests on this: a peer is always served by exactly one transport).
//   * try_send() copies what it needs before returning true: the caller may reuse the buffer.
//     It returns false (never blocks, never drops) when resources are exhausted; the caller
//     runs progress() and tries again.
//   * progress() never blocks. It hands each arrived message to the sink; the payload span is
//     valid only during the call.
//   * Failures (peer died, QP error, connection reset) reach the sink via on_peer_failure with a
//     message naming the peer and the cause; a transport never hangs on a dead peer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace xmsg::bootstrap {
class Bootstrap;
}

namespace xmsg::transport {

class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a message is, to the runtime's protocols. Transports only carry it.
enum class MessageKind : uint8_t {
  kEager = 1,        // payload is the whole message
  kRendezvousRts,    // payload: protocol::RendezvousRts; receiver fetches the data
  kRendezvousCts,    // receiver -> sender: ready, send the data as kRendezvousData fragments
  kRendezvousData,   // a fragment of a rendezvous message (for transports without remote read)
  kRendezvousFin,    // receiver -> sender: data fetched, the send buffer may be released
  kControl,          // runtime-internal (e.g. cancel, finalize handshake)
};

// One header format for every transport. 24 bytes, so a small message fits in one cache line
// with up to 40 bytes of payload.
struct WireHeader {
  uint32_t source;   // world rank of the sender
  uint32_t context;  // communicator context id
  int32_t tag;
  MessageKind kind;
  uint8_t flags;
  uint16_t reserved;
  uint64_t length;   // total message length in bytes (not only this fragment)
};
static_assert(sizeof(WireHeader) == 24);

// The spin-wait hint (x86 `pause`): lets the other hyperthread run and spaces a poller's loads.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Where a sender's exposed buffer is, as the receiving side's transport needs it.
// shm: address in the sender's address space (read with CMA); verbs: address + rkey.
struct MemoryHandle {
  uint64_t address = 0;
  uint64_t length = 0;
  uint64_t key = 0;     // transport-specific (verbs rkey); 0 where unused
};

// What peers may do with an exposed buffer. A rendezvous sender's buffer is only read; a
// buffer peers write into (split copy's landing, a one-sided window) must say so, since verbs
// registers each kind of access separately.
enum class Access : uint8_t { read, read_write };

// The 64-bit atomics a device applies to remote memory (atomic_remote).
enum class RemoteAtomic : uint8_t {
  fetch_add,     // *target += operand; the old value comes back
  compare_swap,  // if (*target == compare) *target = operand; the old value comes back
};

// Where the payload of an eager message goes when a receive for it is already posted.
struct EagerLanding {
  void* token = nullptr;          // null: no receive matched; the message comes through on_message
  std::span<std::byte> buffer;    // the receive's buffer, at most header.length bytes (fewer: truncated)
};

// Receives what progress() finds. Implemented by the runtime.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void on_message(const WireHeader& header, std::span<const std::byte> payload) = 0;
  virtual void on_peer_failure(int peer, const std::string& reason) = 0;
  // Optional, for a transport that has an eager message's header before its payload (tcp reads
  // the rest of a large one straight into the user's buffer). If a posted receive matches, the
  // sink matches it now (arrival order is kept: nothing later from that peer is delivered before
  // the landing ends) and returns its buffer; the transport fills it with the first
  // buffer.size() payload bytes, drops the rest, and calls on_eager_landed(token) once. If the
  // peer fails first, the transport never calls it: on_peer_failure fails the receive instead.
  virtual EagerLanding claim_eager(const WireHeader& header) {
    (void)header;
    return {};
  }
  virtual void on_eager_landed(void* token) { (void)token; }
};

// Produces a message's payload where the transport wants it: the runtime's datatype engine
// packs non-contiguous data straight into the transport's buffer through this, instead of
// into a staging copy first. write() fills exactly `n` bytes at `dst`.
class PayloadWriter {
 public:
  virtual ~PayloadWriter() = default;
  virtual void write(std::byte* dst, size_t n) = 0;
};

// Completion of an asynchronous remote read.
class ReadCompletion {
 public:
  virtual ~ReadCompletion() = default;
  // ok=false carries the reason (peer died, permission refused, ...).
  virtual void on_read_done(bool ok, const std::string& reason) = 0;
};

struct Capabilities {
  bool remote_read = false;      // read_remote() works (CMA, RDMA READ)
  size_t max_eager_payload = 0;  // largest payload try_send() accepts
  // Largest message worth copying through the transport's buffers when the user set no
  // XMSG_EAGER_LIMIT: above it this transport's rendezvous is faster (0: no preference, the
  // parameter's documented default applies).
  size_t preferred_eager_limit = 0;
  bool remote_write = false;     // write_remote() works (CMA, RDMA WRITE)
  // atomic_remote() works: the device applies 64-bit fetch-and-add and compare-and-swap to
  // exposed (Access::read_write) memory, also this rank's own (loopback), so the ops of every
  // rank on one location are atomic against each other. They are not atomic against the CPU's
  // own instructions on that memory (RDMA atomics never are, unless the device says global).
  bool remote_atomics = false;
  // The receiver's read and the sender's write of one rendezvous message run at once on two
  // CPUs (CMA), so splitting the message halves its copy time (split copy, XMSG_RNDV_SPLIT).
  // Not so where a NIC moves both halves over the same link (RDMA).
  bool split_copy = false;
  size_t peek_payload = 0;       // largest message wait_peek() can show (0: not offered)
  bool input_hint = false;       // input_ready() really looks (false: it always answers true)
  // One progress() call costs system calls even when nothing came (tcp: a recv per socket):
  // a waiter that shares its core should not spin on it (the runtime yields at once).
  bool polls_by_syscall = false;
};

// What the runtime decided about a transport before it connects (TransportSelector).
struct ConnectOptions {
  // Pairs of ranks that share a node go over this transport too (XMSG_TRANSPORTS names it
  // first). The same on every rank. verbs then plans every rank as a node of its own.
  bool carries_same_node_pairs = false;
};

// The contract every transport keeps (the runtime relies on each point):
//   * Errors. The factory (construction) and connect() may throw, with a message naming the
//     cause; xmsg_init reports it. try_send(), progress(), read_remote(), write_remote() and
//     disconnect() do not throw for anything a peer, the network or the machine can cause: a
//     peer that fails is reported through MessageSink::on_peer_failure (once), a transfer that
//     fails through its ReadCompletion. Only a caller's contract violation (a peer it was not
//     given, a payload over max_eager_payload) may throw, as a bug. expose() may throw when the
//     buffer cannot be registered; the C API turns any exception into an error return.
//   * try_send() returning false means "no room now", never "dropped": the runtime queues and
//     retries; messages to one peer arrive in the order try_send() accepted them.
//   * Optional operations are advertised in Capabilities and implemented exactly where
//     advertised: read_remote (remote_read), write_remote (remote_write), wait_peek and
//     take_peeked (peek_payload > 0), input_ready (input_hint). The defaults below are what a
//     transport without the capability does. read_remote/write_remote refuse (through the
//     completion, with a reason) any range past the handle's length.
//   tests/transport/TransportContract.cpp checks these points against every built transport.
class Transport {
 public:
  virtual ~Transport() = default;

  virtual std::string_view name() const = 0;
  virtual Capabilities capabilities() const = 0;

  // Collective over the whole job (every rank calls it, in the same order for every transport):
  // sets up what is needed to reach `peers` (world ranks), exchanging addresses through the
  // bootstrap's key-value store. A transport with no peers still takes part in the fences.
  virtual void connect(std::span<const int> peers, const ConnectOptions& options = {}) = 0;

  virtual bool try_send(int peer, const WireHeader& header, std::span<const std::byte> payload) = 0;

  // try_send of an `n`-byte payload that `writer` produces in place (same ordering, limits and
  // error rules as try_send; the two may be mixed on one peer). The writer may have been called
  // even when the answer is false (no room): a retry calls it again, so it must produce the same
  // bytes every time. The default packs into a scratch buffer and calls try_send: one copy more
  // than a transport that lets the writer fill its own buffer (shm: the ring record or mailbox
  // slot; verbs: the registered send slot). tcp keeps the default: the kernel copies out of
  // whatever buffer it is given, so packing into the socket's queue would save nothing.
  virtual bool try_send_packed(int peer, const WireHeader& header, size_t n, PayloadWriter& writer) {
    thread_local std::vector<std::byte> scratch;
    if (scratch.size() < n) scratch.resize(n);
    writer.write(scratch.data(), n);
    return try_send(peer, header, {scratch.data(), n});
  }

  // Runs the transport once; returns how many messages/completions it handled.
  virtual int progress(MessageSink& sink) = 0;

  // A cheap look (a few loads, no side effects) for whether progress() would find something.
  // A blocked waiter spins on it between full progress() calls. Transports that cannot tell
  // answer true, so the waiter calls progress() every time, as without the hint.
  virtual bool input_ready() const { return true; }

  // Descriptors that turn readable when input for progress() may have arrived (tcp: its
  // established sockets and its epoll set), for a thread that waits outside progress() (the MPI
  // progress thread). Writes at most fds.size() of them and returns how many; 0: the transport
  // has none (shm, verbs without a completion channel), the waiter sleeps instead. The set may
  // change with every progress() call; a descriptor closed meanwhile only costs a spurious or a
  // late wake-up.
  virtual size_t wait_fds(std::span<int> fds) const {
    (void)fds;
    return 0;
  }

  // Fast path of a blocking receive from one peer (capabilities().peek_payload > 0): waits for
  // the oldest message from `peer` not yet delivered, when the transport can see it without
  // delivering it (shm: the head of the peer's mailbox; a sender uses it only once all its
  // earlier messages were delivered), and shows it. Looks at most `looks` times, spaced as the
  // transport sees fit (shm follows the cost of a cache-line hand-off). Returns nullptr after
  // the last look, or earlier with *other_input set when something else arrived that
  // progress() would find. The loop lives here, not in the caller, because a look is a load and
  // a pause: a virtual call per look would cost more than the look and sit between the message
  // landing and the waiter seeing it.
  // The caller then either consumes the message with take_peeked() instead of progress()
  // delivering it, or leaves it for progress(). The pointers stay valid until one of those.
  virtual const WireHeader* wait_peek(int peer, uint32_t looks, std::span<const std::byte>* payload,
                                      bool* other_input) {
    (void)peer, (void)looks, (void)payload;
    *other_input = true;
    return nullptr;
  }
  // Copies the first `n` payload bytes (at most the message's) of the shown message to `dst`
  // and consumes it: one call, since both sit on the latency path.
  virtual void take_peeked(int peer, void* dst, size_t n) { (void)peer, (void)dst, (void)n; }

  // Rendezvous capability (capabilities().remote_read). expose() registers a buffer the peer
  // may read (and, with Access::read_write, write) until release() with the same access;
  // read_remote() copies from a peer's exposed buffer into `dst` and calls `done` (possibly
  // before returning). Where both remote_read and remote_write are advertised, neither needs
  // the peer's CPU (CMA, RDMA): one-sided communication builds on that.
  virtual MemoryHandle expose(const void* buffer, size_t length, Access access = Access::read) {
    (void)access;
    return {reinterpret_cast<uint64_t>(buffer), length, 0};
  }
  virtual void release(const MemoryHandle&, Access access = Access::read) { (void)access; }
  virtual void read_remote(int peer, const MemoryHandle& source, uint64_t offset,
                           std::span<std::byte> dst, ReadCompletion& done) {
    (void)peer, (void)source, (void)offset, (void)dst;
    done.on_read_done(false, std::string(name()) + " has no remote read");
  }

  // Optional (capabilities().remote_write): copies `src` into a peer's exposed buffer at
  // `offset` and calls `done` (possibly before returning). ReadCompletion serves both directions.
  virtual void write_remote(int peer, const MemoryHandle& destination, uint64_t offset,
                            std::span<const std::byte> src, ReadCompletion& done) {
    (void)peer, (void)destination, (void)offset, (void)src;
    done.on_read_done(false, std::string(name()) + " has no remote write");
  }

  // Optional (capabilities().remote_atomics): applies `op` to the 8 bytes at `offset` of what
  // `peer` exposed with Access::read_write (8-byte aligned), writes the old value to *result
  // and calls `done` (possibly before returning). `peer` is any rank atomics_reach() names:
  // this rank itself and ranks another transport carries included, so that every rank's
  // atomics on one location can be this device's.
  virtual void atomic_remote(int peer, const MemoryHandle& target, uint64_t offset, RemoteAtomic op,
                             uint64_t operand, uint64_t compare, uint64_t* result, ReadCompletion& done) {
    (void)peer, (void)target, (void)offset, (void)op, (void)operand, (void)compare, (void)result;
    done.on_read_done(false, std::string(name()) + " has no remote atomics");
  }

  // Whether atomic_remote() reaches world rank `peer` (false without remote_atomics).
  virtual bool atomics_reach(int peer) const {
    (void)peer;
    return false;
  }

  // True while bytes that try_send() accepted still wait inside the transport (they move only
  // in progress()). The runtime keeps progressing until this is false before its finalize fence:
  // otherwise a peer blocked in a receive of those bytes and this rank blocked in the fence
  // would wait for each other.
  virtual bool output_pending() const { return false; }

  // Collective teardown: after this no message arrives for this rank.
  virtual void disconnect() = 0;
};

}  // namespace xmsg::transport
