// ShmTransport: ties the pieces together. Wire-up (collective, one fence):
//   1. each rank that has local peers creates its segment (ReceiveQueue, mailbox claims, a pool
//      of mailboxes), binds it to its NUMA node and writes its identity into the ring control:
//      pid, ring size, pool size, local rank count, CMA probe. With XMSG_SHM_NAMELESS (the
//      default) the segment is a memfd and the node's lowest rank listens on the rendezvous
//      socket; otherwise the segment is a named /dev/shm object;
//   2. fence -> learn every local peer's identity: through the rendezvous (the node's lowest
//      rank collects every rank's identity and segment descriptor and hands each rank the
//      others', SegmentRendezvous.hpp) or by reading the peer's named object (pread, nothing
//      mapped); open a pidfd, probe CMA.
// A peer's segment is mapped when this rank first sends to it (only the ring, the claims and
// the mailbox it claims there), through the descriptor it sent or else its name; a name goes
// once every local peer has mapped it, or at teardown. docs/shm.md has the sizes and why.
#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/bootstrap/parameters.hpp>
#include <xmsg/transport/shm.hpp>

#include "CmaCopy.hpp"
#include "Mailbox.hpp"
#include "PeerMonitor.hpp"
#include "ReceiveQueue.hpp"
#include "Segment.hpp"
#include "SegmentRendezvous.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <new>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

namespace xmsg::transport {
namespace shm {
namespace {

// At most XMSG_SHM_MAILBOXES senders get a mailbox in a rank's segment (64 by default, 1 MiB of
// them): at 65 local ranks or fewer every pair has one, as before there was a pool; beyond, the
// first 64 senders to write to a rank get one and the others send their small messages through
// the ring. The tests take a smaller pool, so jobs of a few ranks run the senders without one.
uint64_t mailbox_pool_limit() { return static_cast<uint64_t>(params::integer("XMSG_SHM_MAILBOXES")); }

std::string segment_name(const std::string& job_id, int rank) {
  return "/xmsg-" + job_id + "-shm-" + std::to_string(rank);
}

// A rank holds a pidfd and, until it first sends there, the segment descriptor of every local
// peer: 1022 descriptors at 512 ranks, past the common soft limit of 1024. The soft limit goes
// up toward the hard one as far as that needs (and 64 more for the program); a hard limit
// below that is an error now, on every rank of the node alike, rather than a descriptor lost
// in the middle of the rendezvous.
void raise_descriptor_limit(size_t held) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const rlim_t want = static_cast<rlim_t>(held) + 64;
  if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= want) return;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want)
    throw TransportError("shm: " + std::to_string(held / 2 + 1) + " ranks on this node need about " +
                         std::to_string(want) + " descriptors per rank, RLIMIT_NOFILE allows " +
                         std::to_string(lim.rlim_max) +
                         " (raise the hard limit, ulimit -Hn, or set XMSG_SHM_NAMELESS=off to meet by /dev/shm names)");
  lim.rlim_cur = want;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0)
    throw TransportError(std::string("shm: cannot raise RLIMIT_NOFILE to ") + std::to_string(want) + ": " +
                         std::strerror(errno));
}

// Largest eager message when CMA reaches every local peer and XMSG_EAGER_LIMIT is unset.
constexpr size_t kCmaEagerLimit = 8 * 1024;

// Read by peers with process_vm_readv to learn whether CMA is allowed between us.
volatile uint64_t cma_probe_word = 0;

uint64_t round_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// True when the kernel reports one NUMA node (or none: no NUMA support). Read before loading
// the hwloc topology, which costs ~3 ms per rank here: 1.5 s of CPU for 512 ranks on a node
// that has nothing to bind to.
bool single_numa_node() {
  const int fd = ::open("/sys/devices/system/node/online", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char text[64] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  return n > 0 && std::strcmp(text, "0\n") == 0;
}

// Places `len` bytes at `addr` on the NUMA node(s) this process runs on. Best effort: a
// single-node machine or a failed topology load changes nothing (first touch by the owner
// already allocates locally).
void bind_to_local_numa(void* addr, size_t len) {
  if (single_numa_node()) return;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  if (hwloc_topology_load(topo) == 0 && hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) > 1) {
    hwloc_cpuset_t cpus = hwloc_bitmap_alloc();
    hwloc_nodeset_t nodes = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, cpus, HWLOC_CPUBIND_PROCESS) == 0) {
      hwloc_cpuset_to_nodeset(topo, cpus, nodes);
      hwloc_set_area_membind(topo, addr, len, nodes, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
    }
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(nodes);
  }
  hwloc_topology_destroy(topo);
}

}  // namespace

class ShmTransport final : public Transport {
 public:
  explicit ShmTransport(bootstrap::Bootstrap& boot) : boot_(boot) {
    // 512 KiB: a 1 MiB ring ran 4 KiB window bandwidth at ~24 GB/s in about half of the runs
    // while hand-offs were near (512 KiB: 40 GB/s median, MPICH 29), probably because ring and
    // buffers then no longer fit a core's 1 MiB L2 (this VM has no counters to confirm it).
    // 64 KiB records still fit (a record is at most a quarter of the ring): the eager limit
    // is unchanged.
    const auto queue_bytes = static_cast<uint64_t>(params::integer("XMSG_SHM_QUEUE_BYTES"));
    cells_ = round_pow2(queue_bytes / kCell);
    cma_wanted_ = params::flag("XMSG_SHM_CMA");
    nameless_wanted_ = params::flag("XMSG_SHM_NAMELESS");
    check_interval_ns_ = static_cast<uint64_t>(params::integer("XMSG_SHM_LIVENESS_US")) * 1000;
    if (const std::string spacing = params::choice("XMSG_SHM_POLL_SPACING"); spacing == "near")
      spacing_ = PollSpacing::Regime::kNear;
    else if (spacing == "far")
      spacing_ = PollSpacing::Regime::kFar;
  }

  ~ShmTransport() override { teardown(); }

  std::string_view name() const override { return "shm"; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.remote_read = cma_all_;
    c.max_eager_payload = max_payload_;
    // With CMA, a rendezvous is one copy by the receiver (RTS, process_vm_readv, FIN) against
    // eager's two through the ring; from 16 KiB up that halves ping-pong latency (2 ranks,
    // near hand-offs: 16 KiB 3.0 -> 1.5 us, 64 KiB 9.1 -> 2.9 us) and window bandwidth at
    // 64 KiB goes 16.5 -> 30 GB/s. At 8 KiB eager still streams faster (16 vs 10.5 GB/s).
    c.preferred_eager_limit = cma_all_ ? kCmaEagerLimit : 0;
    c.remote_write = cma_all_;
    c.split_copy = cma_all_;
    c.peek_payload = kMailboxPayload;
    c.input_hint = true;
    return c;
  }

  void connect(std::span<const int> peers, const ConnectOptions&) override {
    const int world = boot_.size();
    peer_at_.assign(world, nullptr);
    const bool active = !peers.empty();
    const uint64_t local_ranks = peers.size() + 1;
    // Every local rank computes the same layout (same peers, same environment); a peer whose
    // identity says otherwise is refused below.
    const SegmentLayout layout{cells_, std::min<uint64_t>(peers.size(), mailbox_pool_limit())};
    cma_probe_word = 0x5eed0000'0000'0000ULL ^ static_cast<uint64_t>(::getpid());
    if (active) {
      const std::string name = segment_name(boot_.job_id(), boot_.rank());
      if (nameless_wanted_) {
        raise_descriptor_limit(2 * peers.size());
        own_ = Segment::create_nameless(name, layout.bytes());
        const int leader = std::min(boot_.rank(), *std::min_element(peers.begin(), peers.end()));
        rendezvous_ = SegmentRendezvous(boot_.job_id(), boot_.rank(), leader);
      } else {
        own_ = Segment::create(name, layout.bytes());
      }
      void* base = own_.data();
      bind_to_local_numa(base, own_.size());
      std::memset(base, 0, own_.size());  // first touch after binding
      auto* ctl = new (SegmentLayout::ring_control(base)) QueueControl();
      ctl->magic = kQueueMagic;
      ctl->cells = cells_;
      ctl->owner_pid = ::getpid();
      ctl->owner_rank = static_cast<uint64_t>(boot_.rank());
      ctl->mailboxes = layout.mailboxes;
      ctl->local_ranks = static_cast<uint32_t>(local_ranks);
      ctl->probe_addr = reinterpret_cast<uint64_t>(&cma_probe_word);
      ctl->probe_value = cma_probe_word;
      consumer_ = QueueConsumer(ctl, SegmentLayout::ring_cells_of(base), cells_, peers.size() == 1);
      for (uint64_t i = 0; i < layout.mailboxes; ++i) {
        auto* mctl = new (SegmentLayout::mailbox_control(static_cast<std::byte*>(base) + layout.mailbox_offset(i)))
            QueueControl();
        mctl->magic = kQueueMagic;
        mctl->cells = kMailboxSlots;
        mctl->owner_pid = ::getpid();
        mctl->owner_rank = static_cast<uint64_t>(boot_.rank());
      }
      own_mapped_by_ = layout.mapped_by(base);
      own_layout_ = layout;
      claims_ = layout.claims(base);
      claims_bound_ = 0;
      next_claim_ = claims_;
    }
    // Every segment and rendezvous socket exists and its identity is written once everyone is
    // past this fence. It collects nothing: the identities travel between the node's ranks
    // directly, so the wire-up costs no PMIx get per pair (at 512 ranks those 261,632 requests
    // to one server were most of a 5-minute hello).
    boot_.fence(false);

    max_payload_ = ~uint64_t(0);
    cma_all_ = cma_wanted_;
    nameless_ = active && nameless_wanted_;
    std::vector<SegmentRendezvous::Arrival> arrivals;
    if (nameless_) {
      SegmentIdentity mine;
      std::memcpy(&mine, &SegmentLayout::ring_control(own_.data())->magic, sizeof mine);
      arrivals = rendezvous_.exchange(peers, mine, own_.descriptor());
      // Every peer holds the segment now (or the wire-up failed): the descriptor is not needed.
      own_.close_descriptor();
    }
    peers_.reserve(peers.size());
    for (size_t i = 0; i < peers.size(); ++i) {
      const int peer = peers[i];
      const SegmentIdentity h = nameless_ ? arrivals[i].identity : read_identity(peer);
      if (h.magic != kQueueMagic || h.ring_cells < 64 || (h.ring_cells & (h.ring_cells - 1)) != 0 ||
          h.owner_rank != static_cast<uint64_t>(peer) || h.mailboxes > 4096)
        throw TransportError("shm: segment of rank " + std::to_string(peer) + " is not a valid queue");
      if (h.local_ranks != local_ranks)
        throw TransportError("shm: rank " + std::to_string(peer) + " counts " + std::to_string(h.local_ranks) +
                             " local ranks, this rank " + std::to_string(local_ranks) +
                             " (transport selection differs between ranks)");
      Peer p;
      p.rank = peer;
      p.pid = static_cast<pid_t>(h.owner_pid);
      p.layout = SegmentLayout{h.ring_cells, h.mailboxes};
      max_payload_ = std::min<uint64_t>(max_payload_, QueueProducer::max_payload_of(h.ring_cells));
      if (nameless_) p.segment_fd = std::move(arrivals[i].segment);
      p.cma_ok = cma_wanted_ && cma_probe(p.pid, h.probe_addr, h.probe_value);
      cma_all_ = cma_all_ && p.cma_ok;
      monitor_.watch(peer, p.pid);
      peers_.push_back(std::move(p));
    }
    // peers_ is complete: its addresses hold from here on.
    for (Peer& p : peers_) peer_at_[static_cast<size_t>(p.rank)] = &p;
    inboxes_.clear();
    inboxes_.reserve(layout.mailboxes);
    poll_every_peer_ = peers_.size() <= layout.mailboxes;
    if (peers_.empty()) max_payload_ = 0;
    last_check_ns_ = now_ns();
  }

  bool try_send(int peer, const WireHeader& header, std::span<const std::byte> payload) override {
    Peer& p = *peer_at_[peer];
    // Mailbox only while no ring record of ours is unconsumed (see Mailbox.hpp for the order).
    if (payload.size() <= kMailboxPayload && p.producer.consumed(p.ring_end) &&
        p.mailbox.try_push(header, payload.data(), payload.size()))
      return true;
    return push_to_ring(p, header, payload);
  }

  bool try_send_packed(int peer, const WireHeader& header, size_t n, PayloadWriter& writer) override {
    Peer& p = *peer_at_[peer];
    if (n <= kMailboxPayload && p.producer.consumed(p.ring_end)) {
      alignas(64) std::byte small[kMailboxPayload];
      writer.write(small, n);
      if (p.mailbox.try_push(header, small, n)) return true;
      return push_to_ring(p, header, {small, n});
    }
    const auto fill = [&](std::byte* dst) { writer.write(dst, n); };
    if (p.producer.try_push_filled(header, n, fill, &p.ring_end)) return true;
    if (p.mapped || !map_peer(p)) return false;
    return p.producer.try_push_filled(header, n, fill, &p.ring_end);
  }

  int progress(MessageSink& sink) override {
    if (peers_.empty()) return 0;
    // At most one message per lane and call: the caller re-checks its request between calls, so
    // a blocked receiver returns as soon as its message is in. Every lane is looked at on every
    // call, so a sender streaming into its mailbox cannot starve the ring.
    int n = 0;
    if (poll_every_peer_) {
      for (Peer& p : peers_) n += p.inbox.poll(Deliver{sink}, 1);
    } else {
      for (Peer* p : inboxes_) n += p->inbox.poll(Deliver{sink}, 1);
    }
    n += poll_ring(sink, 1);
    // A new claim is looked for when the lanes are empty, and every 64th call while they are
    // busy (a sender that only uses its new mailbox must not wait for the others to pause).
    // Not on every call: looking on every call and before every ring record took 512-byte
    // window bandwidth to 0.78x in the VM's far state (docs/shm.md, MEASUREMENTS).
    if (n == 0) {
      if (next_claim_->load(std::memory_order_acquire) != 0) [[unlikely]]
        bind_claims();
      if ((++idle_polls_ & 255) == 0) check_liveness(sink);
    } else if ((++busy_polls_ & 63) == 0 && next_claim_->load(std::memory_order_acquire) != 0) [[unlikely]] {
      bind_claims();
    }
    return n;
  }

  bool input_ready() const override {
    if (poll_every_peer_) {
      for (const Peer& p : peers_)
        if (p.inbox.ready()) return true;
    } else {
      for (const Peer* p : inboxes_)
        if (p->inbox.ready()) return true;
    }
    // A sender that just claimed a mailbox has written, or is about to write, into it. (The
    // load also spaces a waiter's looks at the lines it spins on: without it the 0-64 B
    // in-place receive measured 3-8% slower with near hand-offs, docs/shm.md.)
    return consumer_.ready() || next_claim_->load(std::memory_order_acquire) != 0;
  }

  const WireHeader* wait_peek(int peer, uint32_t looks, std::span<const std::byte>* payload,
                              bool* other_input) override {
    MailboxConsumer& inbox = peer_at_[peer]->inbox;
    for (uint32_t look = 1;; ++look) {
      if (const MailboxSlot* s = inbox.peek()) {
        *payload = {s->payload(), s->first.bytes};
        return &s->first.header;
      }
      if (look >= looks) return nullptr;  // looks 0 takes one look, as 1 does
      if (inbox.wait([this] { return input_ready(); })) {
        *other_input = true;
        return nullptr;
      }
    }
  }
  void take_peeked(int peer, void* dst, size_t n) override {
    MailboxConsumer& inbox = peer_at_[peer]->inbox;
    copy_upto96(dst, inbox.shown().payload(), n);  // n <= kMailboxPayload
    inbox.take();
  }

  void read_remote(int peer, const MemoryHandle& source, uint64_t offset, std::span<std::byte> dst,
                   ReadCompletion& done) override {
    const Peer& p = *peer_at_[peer];
    if (!p.cma_ok) {
      done.on_read_done(false, "shm: CMA to rank " + std::to_string(peer) + " is not available");
      return;
    }
    if (!in_exposed(source, offset, dst.size())) {
      done.on_read_done(false, "shm: read of " + std::to_string(dst.size()) + " bytes at offset " + std::to_string(offset) +
                                   " exceeds the " + std::to_string(source.length) + " bytes rank " + std::to_string(peer) +
                                   " exposed");
      return;
    }
    std::string err;
    bool ok = cma_read(p.pid, source.address + offset, dst.data(), dst.size(), err);
    done.on_read_done(ok, ok ? std::string() : "shm: reading from rank " + std::to_string(peer) + ": " + err);
  }

  void write_remote(int peer, const MemoryHandle& destination, uint64_t offset, std::span<const std::byte> src,
                    ReadCompletion& done) override {
    const Peer& p = *peer_at_[peer];
    if (!p.cma_ok) {
      done.on_read_done(false, "shm: CMA to rank " + std::to_string(peer) + " is not available");
      return;
    }
    if (!in_exposed(destination, offset, src.size())) {
      done.on_read_done(false, "shm: write of " + std::to_string(src.size()) + " bytes at offset " + std::to_string(offset) +
                                   " exceeds the " + std::to_string(destination.length) + " bytes rank " +
                                   std::to_string(peer) + " exposed");
      return;
    }
    std::string err;
    bool ok = cma_write(p.pid, destination.address + offset, src.data(), src.size(), err);
    done.on_read_done(ok, ok ? std::string() : "shm: writing to rank " + std::to_string(peer) + ": " + err);
  }

  void disconnect() override { teardown(); }

 private:
  // CMA reaches the whole of the peer's address space: the exposed range is the only bound.
  static bool in_exposed(const MemoryHandle& h, uint64_t offset, size_t n) {
    return offset <= h.length && n <= h.length - offset;
  }

  struct Peer {
    // What every message touches first, in the order of the layout before lazy mapping.
    int rank = -1;
    pid_t pid = 0;
    QueueProducer producer;   // the peer's shared ring
    MailboxProducer mailbox;  // our mailbox in the peer's segment (unbound: always full)
    MailboxConsumer inbox;    // the peer's mailbox in our segment (unbound: never ready)
    uint64_t ring_end = 0;    // ring position just past our last record in the peer's ring
    bool cma_ok = false;
    bool mapped = false;
    bool map_failure_reported = false;
    Descriptor segment_fd;    // the peer's segment as it sent it at wire-up, until mapped
    SegmentLayout layout;     // of the peer's segment, from its identity
    Segment segment;          // the peer's ring and claims; unmapped until our first send
    Segment mailbox_pages;    // the pages of the mailbox we claimed there (none: pool full)
    std::string map_error;    // why mapping the peer's segment failed (reported as its failure)
  };

  struct Deliver {
    MessageSink& sink;
    void operator()(const WireHeader& h, const std::byte* p, uint64_t len) const { sink.on_message(h, {p, len}); }
  };

  SegmentIdentity read_identity(int peer) const {
    const std::string name = segment_name(boot_.job_id(), peer);
    const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
    if (fd < 0)
      throw TransportError("shm: rank " + std::to_string(peer) + " has no shared-memory segment (/dev/shm" + name +
                           ": " + std::strerror(errno) + "; transport selection differs between ranks?)");
    SegmentIdentity h{};
    const ssize_t got = ::pread(fd, &h, sizeof h, offsetof(QueueControl, magic));
    ::close(fd);
    if (got != static_cast<ssize_t>(sizeof h))
      throw TransportError("shm: segment of rank " + std::to_string(peer) + " is not a valid queue");
    return h;
  }

  // Maps what this rank needs of `p`'s segment and claims a mailbox there. False (and
  // `p.map_error` set, reported as the peer's failure by the next liveness check) when the
  // segment cannot be mapped: the send stays queued until then.
  bool map_peer(Peer& p) {
    if (!p.map_error.empty()) return false;
    const std::string name = segment_name(boot_.job_id(), p.rank);
    // The descriptor the peer sent at wire-up is needed only until this mapping.
    const int fd = nameless_ ? p.segment_fd.get() : ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) {
      p.map_error = "shm: cannot map the segment of rank " + std::to_string(p.rank) + " (/dev/shm" + name +
                    "): " + std::strerror(errno);
      return false;
    }
    const auto done_with = [&] {
      if (nameless_) p.segment_fd.reset();
      else ::close(fd);
    };
    try {
      p.segment = Segment::map(fd, name, 0, p.layout.shared_bytes(), true);
      void* base = p.segment.data();
      QueueControl* ctl = SegmentLayout::ring_control(base);
      if (ctl->magic != kQueueMagic || ctl->cells != p.layout.ring_cells || ctl->mailboxes != p.layout.mailboxes)
        throw TransportError("shm: segment of rank " + std::to_string(p.rank) + " is not a valid queue");
      // With a single local peer, that peer's ring has exactly one producer: us (selection is
      // the same on every rank, so the peer's only shm peer is this rank).
      p.producer = QueueProducer(ctl, SegmentLayout::ring_cells_of(base), p.layout.ring_cells, peers_.size() == 1, true);
      std::atomic<uint32_t>* claims = p.layout.claims(base);
      const uint32_t mine = static_cast<uint32_t>(boot_.rank()) + 1;
      for (uint64_t k = 0; k < p.layout.mailboxes; ++k) {
        uint32_t expected = 0;
        if (claims[k].load(std::memory_order_relaxed) != 0 ||
            !claims[k].compare_exchange_strong(expected, mine, std::memory_order_acq_rel))
          continue;
        // Only the pages our mailbox lies on: the rest of the pool is other senders' business.
        const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
        const size_t at = p.layout.mailbox_offset(k), from = at / page * page;
        const size_t to = (at + SegmentLayout::kMailboxBytes + page - 1) / page * page;
        p.mailbox_pages = Segment::map(fd, name, from, to - from, true);
        void* box = static_cast<std::byte*>(p.mailbox_pages.data()) + (at - from);
        QueueControl* mctl = SegmentLayout::mailbox_control(box);
        if (mctl->magic != kQueueMagic || mctl->cells != kMailboxSlots)
          throw TransportError("shm: mailbox " + std::to_string(k) + " of rank " + std::to_string(p.rank) +
                               " is not valid");
        p.mailbox = MailboxProducer(mctl, SegmentLayout::mailbox_slots(box));
        break;
      }
      p.layout.mapped_by(base)->fetch_add(1, std::memory_order_relaxed);
    } catch (const std::exception& e) {
      p.map_error = e.what();
      p.segment = Segment();
      p.mailbox_pages = Segment();
      p.producer = QueueProducer();
      p.mailbox = MailboxProducer();
      done_with();
      return false;
    }
    done_with();
    p.mapped = true;
    return true;
  }

  // Binds the mailboxes senders claimed since the last call (claims are a prefix, see
  // SegmentLayout): from now on progress() polls them.
  [[gnu::noinline]] void bind_claims() {
    for (uint32_t who; (who = claims_[claims_bound_].load(std::memory_order_acquire)) != 0; ++claims_bound_) {
      const uint64_t rank = who - 1;
      Peer* p = rank < peer_at_.size() ? peer_at_[rank] : nullptr;
      if (!p || p->inbox.bound()) continue;  // not a local peer, or claimed twice: never written
      void* box = static_cast<std::byte*>(own_.data()) + own_layout_.mailbox_offset(claims_bound_);
      p->inbox = MailboxConsumer(SegmentLayout::mailbox_control(box), SegmentLayout::mailbox_slots(box),
                                 PollSpacing(spacing_));
      inboxes_.push_back(p);
    }
    next_claim_ = &claims_[claims_bound_];
  }

  // Ring records from a sender come after whatever that sender left in its mailbox.
  // Out of line: the mailbox path of try_send then needs no stack frame (a small message's
  // send is on the latency path; a ring record's copy costs more than the call).
  [[gnu::noinline]] bool push_to_ring(Peer& p, const WireHeader& header, std::span<const std::byte> payload) {
    if (p.producer.try_push(header, payload.data(), payload.size(), nullptr, 0, &p.ring_end)) return true;
    // The ring is full, or not mapped yet (an unmapped producer is always full).
    if (p.mapped || !map_peer(p)) return false;
    if (payload.size() <= kMailboxPayload && p.mailbox.try_push(header, payload.data(), payload.size())) return true;
    return p.producer.try_push(header, payload.data(), payload.size(), nullptr, 0, &p.ring_end);
  }

  int poll_ring(MessageSink& sink, int budget) {
    const int n = consumer_.poll(
        [&](const WireHeader& h, const std::byte* p, uint64_t len) {
          if (h.source < peer_at_.size() && peer_at_[h.source]) {
            MailboxConsumer& inbox = peer_at_[h.source]->inbox;
            // The sender claimed its mailbox (if it has one) before writing this record.
            if (!inbox.bound() && next_claim_->load(std::memory_order_acquire) != 0) [[unlikely]]
              bind_claims();
            while (inbox.poll(Deliver{sink}, static_cast<int>(kMailboxSlots)) > 0) {
            }
          }
          sink.on_message(h, {p, len});
        },
        budget);
    if (n == 0) consumer_.idle();
    return n;
  }

  static uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  }

  void check_liveness(MessageSink& sink) {
    const uint64_t now = now_ns();
    if (now - last_check_ns_ < check_interval_ns_) return;
    last_check_ns_ = now;
    // Nobody needs our name any more once every local peer has mapped the segment.
    if (own_mapped_by_ && own_mapped_by_->load(std::memory_order_relaxed) >= peers_.size()) own_.unlink();
    auto dead = monitor_.check();
    for (Peer& p : peers_)
      if (!p.map_error.empty() && !p.map_failure_reported) {
        p.map_failure_reported = true;
        dead.emplace_back(p.rank, p.map_error);
      }
    if (dead.empty()) return;
    // A peer's last messages may still sit in our ring: deliver them before the failure.
    for (;;) {
      int n = poll_ring(sink, 64);
      for (Peer& p : peers_) n += p.inbox.poll(Deliver{sink}, static_cast<int>(kMailboxSlots));
      if (n == 0) break;
    }
    for (auto& [rank, why] : dead) sink.on_peer_failure(rank, why);
  }

  void teardown() {
    monitor_.clear();
    inboxes_.clear();
    peer_at_.clear();
    peers_.clear();
    own_mapped_by_ = nullptr;
    claims_ = &no_claims_;
    claims_bound_ = 0;
    next_claim_ = &no_claims_;
    own_ = Segment();
    rendezvous_.close();
    consumer_ = QueueConsumer();
  }

  bootstrap::Bootstrap& boot_;
  uint64_t cells_ = 0;
  bool cma_wanted_ = true;
  bool cma_all_ = false;
  bool nameless_wanted_ = true;  // XMSG_SHM_NAMELESS
  bool nameless_ = false;        // this rank has local peers and met them by rendezvous
  SegmentRendezvous rendezvous_;  // the node leader's socket, from segment creation to the end of the wire-up
  uint64_t max_payload_ = 0;
  Segment own_;
  SegmentLayout own_layout_;
  std::atomic<uint64_t>* own_mapped_by_ = nullptr;
  // Our segment's claims; next_claim_ (the entry at claims_bound_) turns non-zero when a sender
  // claims the next mailbox (no segment: a zero word that never changes). A pointer of its
  // own: one load on every progress call rather than three.
  static inline std::atomic<uint32_t> no_claims_{0};
  std::atomic<uint32_t>* claims_ = &no_claims_;
  uint64_t claims_bound_ = 0;
  const std::atomic<uint32_t>* next_claim_ = &no_claims_;
  QueueConsumer consumer_;
  std::vector<Peer> peers_;
  // The peers whose mailbox in our segment is bound, in the order they claimed it. When the
  // pool has room for every peer, progress() walks peers_ instead (an unbound lane costs a look
  // at one static line; the walk is contiguous, no pointer per lane); else only these.
  std::vector<Peer*> inboxes_;
  bool poll_every_peer_ = true;
  // World rank -> its Peer (nullptr: not an shm peer). A pointer, not an index into peers_:
  // one dependent load less on every small send's path.
  std::vector<Peer*> peer_at_;
  PeerMonitor monitor_;
  uint64_t idle_polls_ = 0;
  uint64_t busy_polls_ = 0;
  uint64_t last_check_ns_ = 0;
  uint64_t check_interval_ns_ = 2000000;
  PollSpacing::Regime spacing_ = PollSpacing::Regime::kMeasured;  // XMSG_SHM_POLL_SPACING
};

}  // namespace shm

std::unique_ptr<Transport> make_shm_transport(bootstrap::Bootstrap& bootstrap) {
  return std::make_unique<shm::ShmTransport>(bootstrap);
}

}  // namespace xmsg::transport
