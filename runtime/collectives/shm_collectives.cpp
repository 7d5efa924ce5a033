// Collectives through one shared-memory region per communicator, for communicators whose
// ranks all live on one node (chosen in algorithm_selection.cpp for small sizes).
//
// Every rank of the communicator runs the same sequence of collectives, so each numbers them
// alike (NodeShm::seq). A rank announces "I arrived / my data for collective s is in place"
// by storing s in its `posted` counter of half s % 2 (data up to 56 bytes sits in that
// counter's cache line, larger data in the rank's slot of that half), and "I read nothing of
// collective s any more" by storing s in its `done` counter; counters only grow, so nobody
// ever resets a flag and a rank that runs ahead never confuses an old collective with a new
// one. Before writing half s % 2 a rank waits until every peer is done with s - 2 (normally
// long true). Each collective is one phase: a rank writes its data, then reads what it needs
// as soon as it is posted. That matters when ranks outnumber cores: every extra
// round of messages costs one more pass of the scheduler over all ranks.
//
// Waiting spins, then yields under the runtime's policy (xmsgi_idle). It runs the
// point-to-point progress engine every 8 polls, and every poll once the wait is long (256
// polls), so a peer blocked sending to us is drained and the transports' liveness checks run
// (the shm transport checks once per 256 idle progress calls: fewer calls made a dead peer
// take seconds to notice among yielding ranks on a loaded machine); every 256 polls it asks
// whether a peer was found dead, so a killed rank ends the collective with
// XMSG_ERR_PEER_FAILED instead of a hang.
#include <xmsg/transport/shm/NodeCollectiveRegion.hpp>

#include <algorithm>
#include <exception>
#include <memory>
#include <unordered_map>
#include <vector>

#include "algorithm_selection.hpp"
#include "coll.hpp"
#include "xmsg_internal.h"

namespace xmsg::coll {

using transport::shm::NodeCollectiveRegion;

struct NodeShm {
  NodeCollectiveRegion region;
  uint64_t seq = 0;
  bool usable = false;
  // Per rank, the newest collective this rank has seen it post. A rank posts collective s
  // only after finishing s - 1, so seeing its post of s - 1 already proves it is done with
  // s - 2: claim_slot() then needs no read of that rank's `done` line (a cache-line transfer
  // on the critical path of every back-to-back collective).
  std::vector<uint64_t> seen_posted;
};

namespace {

std::unordered_map<int, std::unique_ptr<NodeShm>>& by_comm() {
  static std::unordered_map<int, std::unique_ptr<NodeShm>> states;
  return states;
}

enum SetupStatus : char { kSetupFailed = 0, kSetupOk = 1 };

bool on_one_node(const Comm& c) {
  std::vector<int> node_ids;
  if (comm_node_ids(c.handle, c.size, &node_ids) != XMSG_SUCCESS) return false;
  return std::all_of(node_ids.begin(), node_ids.end(), [&](int id) { return id == node_ids[0]; });
}

// Rank 0 creates the region and says whether it could; the others map it and answer; rank 0
// unlinks the name (everyone has mapped it or given up) and sends the verdict, so every rank
// takes the same path even when /dev/shm is full or a map fails.
bool set_up(const Comm& c, NodeShm* s) {
  uint32_t context = 0;
  int creator = 0;
  if (xmsgi_comm_context(c.handle, &context) != XMSG_SUCCESS ||
      xmsgi_comm_world_rank(c.handle, 0, &creator) != XMSG_SUCCESS)
    return false;
  const std::string name = NodeCollectiveRegion::name_for(xmsgi_job_id(), context, creator);
  const size_t slot = static_cast<size_t>(thresholds().shm_slot);
  char mine = kSetupOk;
  if (c.rank == 0) {
    try {
      s->region = NodeCollectiveRegion::create(name, c.size, slot);
    } catch (const std::exception&) {
      mine = kSetupFailed;
    }
    std::vector<char> answers(static_cast<size_t>(c.size), kSetupFailed);
    {
      Step step(c);
      for (int r = 1; r < c.size; ++r) step.send(&mine, 1, r, kTagNodeRegion);
      for (int r = 1; r < c.size; ++r) step.recv(&answers[static_cast<size_t>(r)], 1, r, kTagNodeRegion + 1);
      if (step.wait() != XMSG_SUCCESS) mine = kSetupFailed;
    }
    s->region.unlink();
    for (int r = 1; r < c.size; ++r)
      if (answers[static_cast<size_t>(r)] != kSetupOk) mine = kSetupFailed;
    Step verdict(c);
    for (int r = 1; r < c.size; ++r) verdict.send(&mine, 1, r, kTagNodeRegion + 2);
    if (verdict.wait() != XMSG_SUCCESS) mine = kSetupFailed;
  } else {
    char created = kSetupFailed;
    if (sendrecv(c, nullptr, 0, -1, &created, 1, 0, kTagNodeRegion) != XMSG_SUCCESS) created = kSetupFailed;
    if (created == kSetupOk) {
      try {
        s->region = NodeCollectiveRegion::open(name, c.size, slot);
      } catch (const std::exception&) {
        mine = kSetupFailed;
      }
    } else {
      mine = kSetupFailed;
    }
    if (sendrecv(c, &mine, 1, 0, nullptr, 0, -1, kTagNodeRegion + 1) != XMSG_SUCCESS ||
        sendrecv(c, nullptr, 0, -1, &mine, 1, 0, kTagNodeRegion + 2) != XMSG_SUCCESS)
      mine = kSetupFailed;
  }
  if (mine != kSetupOk) s->region = NodeCollectiveRegion();
  return mine == kSetupOk;
}

// Waits until ready() holds (see the file comment for what happens while waiting).
template <class Ready>
int wait_for(const Comm& c, const char* func, Ready&& ready) {
  unsigned spins = 0;
  for (uint32_t polls = 1; !ready(); ++polls) {
    xmsgi_idle(&spins);
    if (polls > 256 || (polls & 7) == 0) {
      xmsgi_progress();
      if ((polls & 255) == 0)
        for (int r = 0; r < c.size; ++r)
          if (int e = xmsgi_check_peer(c.handle, r, func)) return e;
    }
  }
  return XMSG_SUCCESS;
}

bool has_posted(NodeShm& s, int rank, uint64_t seq) {
  if (s.region.posted(rank, seq).load(std::memory_order_acquire) < seq) return false;
  s.seen_posted[static_cast<size_t>(rank)] = std::max(s.seen_posted[static_cast<size_t>(rank)], seq);
  return true;
}

// Waits until every rank has posted collective `seq`.
int wait_all_posted(NodeShm& s, const Comm& c, uint64_t seq, const char* func) {
  int next = 0;  // ranks below `next` are known to have posted
  return wait_for(c, func, [&] {
    while (next < c.size && has_posted(s, next, seq)) ++next;
    return next == c.size;
  });
}

// Starts collective number s: waits until nobody reads our half s % 2 any more (its last
// contents were those of collective s - 2) and returns where our `bytes` of data go.
int claim_slot(NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes, const char* func, std::byte** slot) {
  *slot = s.region.data(c.rank, seq, static_cast<size_t>(bytes));
  if (seq < 3) return XMSG_SUCCESS;
  int next = 0;
  auto finished_old = [&](int r) {
    return r == c.rank || s.seen_posted[static_cast<size_t>(r)] >= seq - 1 ||
           s.region.done(r).load(std::memory_order_acquire) >= seq - 2;
  };
  return wait_for(c, func, [&] {
    while (next < c.size && finished_old(next)) ++next;
    return next == c.size;
  });
}

void publish(NodeShm& s, const Comm& c, uint64_t seq) {
  s.region.posted(c.rank, seq).store(seq, std::memory_order_release);
}

int finish(NodeShm& s, const Comm& c, uint64_t seq, int error) {
  s.region.done(c.rank).store(seq, std::memory_order_release);
  return error;
}

// Folds every rank's vector in rank order: v0 op (v1 op (... op v(n-1))); associativity (MPI's
// requirement of every op) makes that the rank-order result, and every rank that folds gets
// the same bits.
void fold_slots(const NodeShm& s, const Comm& c, uint64_t seq, void* out, int64_t count, const ReduceOp& op) {
  const size_t bytes = static_cast<size_t>(count) * op.elem_size;
  copy_bytes(out, s.region.data(c.size - 1, seq, bytes), static_cast<int64_t>(bytes));
  for (int r = c.size - 2; r >= 0; --r) op.apply(s.region.data(r, seq, bytes), out, count);
}

}  // namespace

NodeShm* node_shm(const Comm& c) {
  if (c.members || c.size < 2 || !thresholds().shm) return nullptr;
  auto& state = by_comm()[c.handle];
  if (!state) {
    state = std::make_unique<NodeShm>();
    state->seen_posted.assign(static_cast<size_t>(c.size), 0);
    state->usable = on_one_node(c) && set_up(c, state.get());
  }
  return state->usable ? state.get() : nullptr;
}

// Rank 0 posts last, once it has seen everyone arrive, and the others wait only for rank 0.
// Rank 0 thus leaves first: a collective rooted at rank 0 right after (OSU's bcast loop)
// finds the root's data already posted instead of waiting for the root to be scheduled again.
int shm_barrier(NodeShm& s, const Comm& c) {
  const char* func = "xmsg_barrier";
  const uint64_t seq = ++s.seq;
  if (c.rank != 0) {
    publish(s, c, seq);
    return finish(s, c, seq, wait_for(c, func, [&] { return has_posted(s, 0, seq); }));
  }
  int next = 1;
  int e = wait_for(c, func, [&] {
    while (next < c.size && has_posted(s, next, seq)) ++next;
    return next == c.size;
  });
  if (e == XMSG_SUCCESS) publish(s, c, seq);
  return finish(s, c, seq, e);
}

int shm_bcast(NodeShm& s, const Comm& c, void* buf, int64_t bytes, int root) {
  const char* func = "xmsg_bcast";
  const uint64_t seq = ++s.seq;
  if (c.rank == root) {
    std::byte* slot = nullptr;
    if (int e = claim_slot(s, c, seq, bytes, func, &slot)) return finish(s, c, seq, e);
    copy_bytes(slot, buf, bytes);
    publish(s, c, seq);
    return finish(s, c, seq, XMSG_SUCCESS);
  }
  int e = wait_for(c, func, [&] { return has_posted(s, root, seq); });
  if (e == XMSG_SUCCESS) copy_bytes(buf, s.region.data(root, seq, static_cast<size_t>(bytes)), bytes);
  return finish(s, c, seq, e);
}

int shm_reduce(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op,
               int root, bool everyone) {
  const char* func = everyone ? "xmsg_allreduce" : "xmsg_reduce";
  const uint64_t seq = ++s.seq;
  std::byte* slot = nullptr;
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  if (int e = claim_slot(s, c, seq, bytes, func, &slot)) return finish(s, c, seq, e);
  copy_bytes(slot, sendbuf, bytes);
  publish(s, c, seq);
  if (!everyone && c.rank != root) return finish(s, c, seq, XMSG_SUCCESS);
  int e = wait_all_posted(s, c, seq, func);
  if (e == XMSG_SUCCESS) fold_slots(s, c, seq, recvbuf, count, op);
  return finish(s, c, seq, e);
}

int shm_alltoall(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t block) {
  const char* func = "xmsg_alltoall";
  const uint64_t seq = ++s.seq;
  const int n = c.size, me = c.rank;
  std::byte* slot = nullptr;
  if (int e = claim_slot(s, c, seq, n * block, func, &slot)) return finish(s, c, seq, e);
  copy_bytes(slot, sendbuf, n * block);
  publish(s, c, seq);
  copy_bytes(at(recvbuf, me * block), slot + me * block, block);
  // Take each peer's block as soon as that peer has posted, starting with the next rank up
  // (the order the pairwise algorithms use, so ranks do not all read one slot at once).
  int copied = 1;
  char have_inline[64] = {};  // no allocation for the small communicators this path is for
  std::vector<char> have_more(n > 64 ? static_cast<size_t>(n) : 0, 0);
  char* have = n > 64 ? have_more.data() : have_inline;
  have[me] = 1;
  int e = wait_for(c, func, [&] {
    for (int step = 1; step < n; ++step) {
      const int from = (me + step) % n;
      if (have[from] || !has_posted(s, from, seq)) continue;
      copy_bytes(at(recvbuf, from * block), s.region.data(from, seq, static_cast<size_t>(n * block)) + me * block, block);
      have[from] = 1;
      ++copied;
    }
    return copied == n;
  });
  return finish(s, c, seq, e);
}

}  // namespace xmsg::coll

void xmsgi_coll_comm_freed(xmsg_comm_t comm) { xmsg::coll::by_comm().erase(comm); }
