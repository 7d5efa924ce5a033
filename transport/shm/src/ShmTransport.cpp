// ShmTransport: ties the pieces together. Wire-up (collective):
//   1. each rank that has local peers creates its segment (ReceiveQueue + one Mailbox per local
//      rank), binds it to its NUMA node, and publishes {pid, ring size, mailbox count, CMA
//      probe} under "xmsg.shm";
//   2. fence (collect) -> map every peer's segment, open a pidfd, probe CMA;
//   3. fence -> every local rank has mapped every segment: unlink our name from /dev/shm.
#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/bootstrap/parameters.hpp>
#include <xmsg/transport/shm.hpp>

#include "CmaCopy.hpp"
#include "Mailbox.hpp"
#include "PeerMonitor.hpp"
#include "ReceiveQueue.hpp"
#include "Segment.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <cstring>
#include <ctime>
#include <string>
#include <unistd.h>

namespace xmsg::transport {
namespace shm {
namespace {

// What a rank publishes for its local peers.
struct PeerRecord {
  int64_t pid;
  uint64_t cells;        // 0: this rank has no segment
  uint64_t mailboxes;    // local ranks (one mailbox each in the segment)
  uint64_t probe_addr;   // address of cma_probe_word in its address space
  uint64_t probe_value;
};

// Read by peers with process_vm_readv to learn whether CMA is allowed between us.
volatile uint64_t cma_probe_word = 0;

uint64_t round_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// Places `len` bytes at `addr` on the NUMA node(s) this process runs on. Best effort: a
// single-node machine or a failed topology load changes nothing (first touch by the owner
// already allocates locally).
void bind_to_local_numa(void* addr, size_t len) {
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
    c.remote_write = cma_all_;
    c.peek_payload = kMailboxPayload;
    c.input_hint = true;
    return c;
  }

  void connect(std::span<const int> peers, const ConnectOptions&) override {
    const int world = boot_.size();
    peer_at_.assign(world, nullptr);
    const bool active = !peers.empty();
    // The node's local ranks in world order: mailbox i of every segment belongs to local[i].
    std::vector<int> local(peers.begin(), peers.end());
    local.push_back(boot_.rank());
    std::sort(local.begin(), local.end());
    auto mailbox_of = [&](int rank) {
      return static_cast<uint64_t>(std::lower_bound(local.begin(), local.end(), rank) - local.begin());
    };
    const SegmentLayout layout{cells_, local.size()};
    if (active) {
      const std::string name = "/xmsg-" + boot_.job_id() + "-shm-" + std::to_string(boot_.rank());
      own_ = Segment::create(name, layout.bytes());
      bind_to_local_numa(own_.data(), own_.size());
      std::memset(own_.data(), 0, own_.size());  // first touch after binding
      auto* ctl = new (own_.data()) QueueControl();
      ctl->magic = kQueueMagic;
      ctl->cells = cells_;
      ctl->owner_pid = ::getpid();
      ctl->owner_rank = static_cast<uint64_t>(boot_.rank());
      consumer_ = QueueConsumer(ctl, SegmentLayout::ring_cells_of(own_.data()), cells_, peers.size() == 1);
      for (uint64_t i = 0; i < layout.mailboxes; ++i) {
        auto* mctl = new (layout.mailbox_control(own_.data(), i)) QueueControl();
        mctl->magic = kQueueMagic;
        mctl->cells = kMailboxSlots;
        mctl->owner_pid = ::getpid();
        mctl->owner_rank = static_cast<uint64_t>(boot_.rank());
      }
    }
    cma_probe_word = 0x5eed0000'0000'0000ULL ^ static_cast<uint64_t>(::getpid());
    PeerRecord rec{::getpid(), active ? cells_ : 0, layout.mailboxes, reinterpret_cast<uint64_t>(&cma_probe_word),
                   cma_probe_word};
    boot_.put("xmsg.shm", std::as_bytes(std::span(&rec, 1)));
    boot_.commit();
    // Only ranks of this node read the record, and their node's PMIx server holds it: nothing
    // needs collecting to the other nodes.
    boot_.fence(false);

    max_payload_ = ~uint64_t(0);
    cma_all_ = cma_wanted_;
    for (int peer : peers) {
      auto bytes = boot_.get(peer, "xmsg.shm");
      if (bytes.size() != sizeof(PeerRecord))
        throw TransportError("shm: rank " + std::to_string(peer) + " published a malformed record");
      PeerRecord pr;
      std::memcpy(&pr, bytes.data(), sizeof pr);
      if (pr.cells == 0)
        throw TransportError("shm: rank " + std::to_string(peer) +
                             " has no shared-memory queue (transport selection differs between ranks)");
      if (pr.mailboxes != layout.mailboxes)
        throw TransportError("shm: rank " + std::to_string(peer) + " counts " + std::to_string(pr.mailboxes) +
                             " local ranks, this rank " + std::to_string(layout.mailboxes) +
                             " (transport selection differs between ranks)");
      Peer p;
      p.rank = peer;
      p.pid = static_cast<pid_t>(pr.pid);
      const SegmentLayout theirs{pr.cells, pr.mailboxes};
      p.segment = Segment::open("/xmsg-" + boot_.job_id() + "-shm-" + std::to_string(peer), theirs.bytes());
      void* base = p.segment.data();
      auto* ctl = SegmentLayout::ring_control(base);
      QueueControl* box = theirs.mailbox_control(base, mailbox_of(boot_.rank()));
      if (ctl->magic != kQueueMagic || ctl->cells != pr.cells || box->magic != kQueueMagic ||
          box->cells != kMailboxSlots)
        throw TransportError("shm: segment of rank " + std::to_string(peer) + " is not a valid queue");
      // With a single local peer, that peer's ring has exactly one producer: us (selection is
      // the same on every rank, so the peer's only shm peer is this rank).
      p.producer = QueueProducer(ctl, SegmentLayout::ring_cells_of(base), pr.cells, peers.size() == 1, true);
      p.mailbox = MailboxProducer(box, theirs.mailbox_slots(base, mailbox_of(boot_.rank())));
      const uint64_t inbox = mailbox_of(peer);
      p.inbox = MailboxConsumer(layout.mailbox_control(own_.data(), inbox), layout.mailbox_slots(own_.data(), inbox),
                                PollSpacing(spacing_));
      max_payload_ = std::min<uint64_t>(max_payload_, p.producer.max_payload());
      p.cma_ok = cma_wanted_ && cma_probe(p.pid, pr.probe_addr, pr.probe_value);
      cma_all_ = cma_all_ && p.cma_ok;
      monitor_.watch(peer, p.pid);
      peers_.push_back(std::move(p));
    }
    // peers_ is complete: its addresses hold from here on.
    for (Peer& p : peers_) peer_at_[static_cast<size_t>(p.rank)] = &p;
    if (peers_.empty()) max_payload_ = 0;
    boot_.fence(false);
    own_.unlink();
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

  int progress(MessageSink& sink) override {
    if (peers_.empty()) return 0;
    // At most one message per lane and call: the caller re-checks its request between calls, so
    // a blocked receiver returns as soon as its message is in. Every lane is looked at on every
    // call, so a sender streaming into its mailbox cannot starve the ring.
    int n = 0;
    for (Peer& p : peers_) n += p.inbox.poll(Deliver{sink}, 1);
    n += poll_ring(sink, 1);
    if (n == 0 && (++idle_polls_ & 255) == 0) check_liveness(sink);
    return n;
  }

  bool input_ready() const override {
    for (const Peer& p : peers_)
      if (p.inbox.ready()) return true;
    return consumer_.ready();
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
    std::string err;
    bool ok = cma_write(p.pid, destination.address + offset, src.data(), src.size(), err);
    done.on_read_done(ok, ok ? std::string() : "shm: writing to rank " + std::to_string(peer) + ": " + err);
  }

  void disconnect() override { teardown(); }

 private:
  struct Peer {
    int rank = -1;
    pid_t pid = 0;
    Segment segment;
    QueueProducer producer;  // the peer's shared ring
    MailboxProducer mailbox;  // our mailbox in the peer's segment
    MailboxConsumer inbox;    // the peer's mailbox in our segment
    uint64_t ring_end = 0;   // ring position just past our last record in the peer's ring
    bool cma_ok = false;
  };

  struct Deliver {
    MessageSink& sink;
    void operator()(const WireHeader& h, const std::byte* p, uint64_t len) const { sink.on_message(h, {p, len}); }
  };

  // Ring records from a sender come after whatever that sender left in its mailbox.
  // Out of line: the mailbox path of try_send then needs no stack frame (a small message's
  // send is on the latency path; a ring record's copy costs more than the call).
  [[gnu::noinline]] bool push_to_ring(Peer& p, const WireHeader& header, std::span<const std::byte> payload) {
    return p.producer.try_push(header, payload.data(), payload.size(), nullptr, 0, &p.ring_end);
  }

  int poll_ring(MessageSink& sink, int budget) {
    const int n = consumer_.poll(
        [&](const WireHeader& h, const std::byte* p, uint64_t len) {
          if (h.source < peer_at_.size() && peer_at_[h.source])
            while (peer_at_[h.source]->inbox.poll(Deliver{sink}, static_cast<int>(kMailboxSlots)) > 0) {
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
    auto dead = monitor_.check();
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
    peer_at_.clear();
    peers_.clear();
    own_ = Segment();
    consumer_ = QueueConsumer();
  }

  bootstrap::Bootstrap& boot_;
  uint64_t cells_ = 0;
  bool cma_wanted_ = true;
  bool cma_all_ = false;
  uint64_t max_payload_ = 0;
  Segment own_;
  QueueConsumer consumer_;
  std::vector<Peer> peers_;
  // World rank -> its Peer (nullptr: not an shm peer). A pointer, not an index into peers_:
  // one dependent load less on every small send's path.
  std::vector<Peer*> peer_at_;
  PeerMonitor monitor_;
  uint64_t idle_polls_ = 0;
  uint64_t last_check_ns_ = 0;
  uint64_t check_interval_ns_ = 2000000;
  PollSpacing::Regime spacing_ = PollSpacing::Regime::kMeasured;  // XMSG_SHM_POLL_SPACING
};

}  // namespace shm

std::unique_ptr<Transport> make_shm_transport(bootstrap::Bootstrap& bootstrap) {
  return std::make_unique<shm::ShmTransport>(bootstrap);
}

}  // namespace xmsg::transport
