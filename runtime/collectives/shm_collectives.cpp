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
// point-to-point progress engine every 64 polls (8 when oversubscribed), and every poll once the wait is long (256
// polls), so a peer blocked sending to us is drained and the transports' liveness checks run
// (the shm transport checks once per 256 idle progress calls: fewer calls made a dead peer
// take seconds to notice among yielding ranks on a loaded machine); every 256 polls it asks
// whether a peer was found dead, so a killed rank ends the collective with
// XMSG_ERR_PEER_FAILED instead of a hang.
#include <xmsg/bootstrap/parameters.hpp>
#include <xmsg/transport/shm/NodeCollectiveRegion.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "algorithm_selection.hpp"
#include "coll.hpp"
#include "node_profile.hpp"
#include "node_shared.hpp"
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
  // The newest collective every rank is known to have posted (a rooted barrier's release, or a
  // wait for all posts, proves it): every rank then finished all before it, so claim_slot()
  // reads no peer's `done` line (after a rooted barrier a rank has seen only the root post).
  uint64_t all_posted = 0;
  // The newest collective through this region: a barrier (or none yet: kBarrier), one with a
  // root (bcast, reduce: last_root) or another. Every rank runs the same collectives through
  // the region, so all agree on it, and a barrier picks its algorithm from it (shm_barrier).
  enum class Last : char { kBarrier, kRooted, kOther };
  Last last = Last::kBarrier;
  int last_root = 0;
  // Every pair of members may read each other's memory with process_vm_readv (probed at set-up,
  // agreed by all); pids[r] is rank r's process then.
  bool cma = false;
  std::vector<pid_t> pids;
  // Rank 0's measurements (the same on every rank: it sent them) and, per LargeCollective,
  // the sizes at which single copy is predicted faster than the pipelines.
  NodeProfile profile;
  SingleCopySizes single_copy[kLargeCollectives];
  // Collectives so far other than barriers, and the slots the rings turn by for each of them
  // in the pipelined collective under way (ring_slot): the same on every rank.
  uint64_t ring_turns = 0;
  uint64_t ring_stride = 1;
  // Where this rank's last alltoallv stream ended in its ring: the next one starts there. An
  // alltoallv writer's stream length is its own affair, so its readers find each block's first
  // chunk in its table instead of from a turn every rank computes.
  uint64_t alltoallv_stream_end = 0;
};

namespace {

// Single-copy allreduce folds in pieces of this size, so the operand read from a peer is
// still in cache when it is folded in.
constexpr int64_t kCmaPieceBytes = 256 << 10;

// Indexed by communicator handle (small integers, reused after a free): every collective
// call looks its communicator up here, so a vector index instead of a hash lookup.
std::vector<std::unique_ptr<NodeShm>>& by_comm() {
  static std::vector<std::unique_ptr<NodeShm>> states;
  return states;
}

enum SetupStatus : char { kSetupFailed = 0, kSetupOk = 1 };

bool on_one_node(const Comm& c) {
  std::vector<int> node_ids;
  if (comm_node_ids(c.handle, c.size, &node_ids) != XMSG_SUCCESS) return false;
  return std::all_of(node_ids.begin(), node_ids.end(), [&](int id) { return id == node_ids[0]; });
}

// Rank 0 creates the region and says whether it could, with what the others need to join it
// (where the region is nameless, the token to show at its socket, which rank 0 serves until
// every member has the descriptor); the others map it and answer; rank 0 lets go of the name
// and the descriptor (everyone has mapped it or given up) and sends the verdict, so every rank
// takes the same path even when /dev/shm is full or a map fails.
bool set_up(const Comm& c, NodeShm* s) {
  uint32_t context = 0;
  int creator = 0;
  if (xmsgi_comm_context(c.handle, &context) != XMSG_SUCCESS ||
      xmsgi_comm_world_rank(c.handle, 0, &creator) != XMSG_SUCCESS)
    return false;
  const std::string name = NodeCollectiveRegion::name_for(xmsgi_job_id(), context, creator);
  const size_t slot = static_cast<size_t>(thresholds().shm_slot);
  const size_t chunk = static_cast<size_t>(thresholds().pipe_chunk);
  const int chunks = static_cast<int>(thresholds().pipe_chunks);
  struct Invitation {
    char status = kSetupFailed;
    transport::shm::JoinTicket ticket;
  } invitation;
  char mine = kSetupOk;
  if (c.rank == 0) {
    try {
      s->region = NodeCollectiveRegion::create(name, c.size, slot, chunk, chunks, params::flag("XMSG_SHM_NAMELESS"),
                                               &invitation.ticket);
      s->region.publish_identity(c.rank);
    } catch (const std::exception&) {
      mine = kSetupFailed;
    }
    invitation.status = mine;
    std::vector<char> answers(static_cast<size_t>(c.size), kSetupFailed);
    {
      // The invitations go out whole before rank 0 serves the members' calls for its descriptor
      // (they come as soon as they have it), and the answers come after that.
      Step invite(c);
      for (int r = 1; r < c.size; ++r) invite.send(&invitation, sizeof invitation, r, kTagNodeRegion);
      if (invite.wait() != XMSG_SUCCESS) mine = kSetupFailed;
      if (mine == kSetupOk) {
        try {
          s->region.share(c.size - 1, xmsgi_pause_in_runtime());
        } catch (const std::exception&) {
          mine = kSetupFailed;
        }
      }
      Step step(c);
      for (int r = 1; r < c.size; ++r) step.recv(&answers[static_cast<size_t>(r)], 1, r, kTagNodeRegion + 1);
      if (step.wait() != XMSG_SUCCESS) mine = kSetupFailed;
    }
    s->region.done_sharing();
    for (int r = 1; r < c.size; ++r)
      if (answers[static_cast<size_t>(r)] != kSetupOk) mine = kSetupFailed;
    Step verdict(c);
    for (int r = 1; r < c.size; ++r) verdict.send(&mine, 1, r, kTagNodeRegion + 2);
    if (verdict.wait() != XMSG_SUCCESS) mine = kSetupFailed;
  } else {
    if (sendrecv(c, nullptr, 0, -1, &invitation, sizeof invitation, 0, kTagNodeRegion) != XMSG_SUCCESS)
      invitation.status = kSetupFailed;
    if (invitation.status == kSetupOk) {
      try {
        s->region = NodeCollectiveRegion::join(name, c.size, slot, chunk, chunks, invitation.ticket,
                                               xmsgi_pause_in_runtime());
        s->region.publish_identity(c.rank);
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

bool cma_wanted() { return params::flag("XMSG_COLL_CMA") && params::flag("XMSG_SHM_CMA"); }

// Every rank probes a CMA read from every peer (their pids are in the region: each published
// its own before answering rank 0), rank 0 collects the answers and sends the verdict, so all
// ranks agree; a refused read anywhere (ptrace policy, XMSG_COLL_CMA=0 on some rank) keeps
// large collectives on the point-to-point path for this communicator.
bool agree_on_cma(const Comm& c, NodeShm* s) {
  char mine = cma_wanted() ? kSetupOk : kSetupFailed;
  for (int r = 0; r < c.size && mine == kSetupOk; ++r)
    if (r != c.rank && !s->region.can_read_from(r)) mine = kSetupFailed;
  if (c.rank == 0) {
    std::vector<char> answers(static_cast<size_t>(c.size), kSetupFailed);
    {
      Step step(c);
      for (int r = 1; r < c.size; ++r) step.recv(&answers[static_cast<size_t>(r)], 1, r, kTagNodeRegion + 3);
      if (step.wait() != XMSG_SUCCESS) mine = kSetupFailed;
    }
    for (int r = 1; r < c.size; ++r)
      if (answers[static_cast<size_t>(r)] != kSetupOk) mine = kSetupFailed;
    Step verdict(c);
    for (int r = 1; r < c.size; ++r) verdict.send(&mine, 1, r, kTagNodeRegion + 4);
    if (verdict.wait() != XMSG_SUCCESS) mine = kSetupFailed;
  } else if (sendrecv(c, &mine, 1, 0, nullptr, 0, -1, kTagNodeRegion + 3) != XMSG_SUCCESS ||
             sendrecv(c, nullptr, 0, -1, &mine, 1, 0, kTagNodeRegion + 4) != XMSG_SUCCESS) {
    mine = kSetupFailed;
  }
  if (mine != kSetupOk) return false;
  s->pids.resize(static_cast<size_t>(c.size));
  for (int r = 0; r < c.size; ++r)
    s->pids[static_cast<size_t>(r)] = static_cast<pid_t>(s->region.control(r).pid.load(std::memory_order_acquire));
  return true;
}

// Nanoseconds from `start` (CLOCK_MONOTONIC) to now.
double ns_since(const timespec& start) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec - start.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec - start.tv_nsec);
}

// One process's copy costs, measured the first time it is rank 0 of a new region (about a
// millisecond: page-aligned buffers of kProfileSmallBytes, seven copies of each kind, and of
// kProfileLargeBytes, three); cma: also CMA reads. Two sizes because the choice differs by
// size: the 1 MiB unaligned buffers measured before read CMA at 13-15 GB/s where the
// collectives' own 64-512 KiB reads ran at 26-30 (2-rank alltoall 64 KiB: 12.2-13.3 us
// pipelined against 4.4-4.8 by single copy, which those numbers never chose), while past the
// caches CMA fell to 9 GB/s (2-rank bcast of 1-4 MiB: pipelines 1.3-1.4x faster). The fastest
// of the copies counts, not the median: another rank sharing the core, or any other process,
// only ever adds time, and with 4 ranks on 2 cores the median of five had memcpy anywhere
// from 5 to 23 GB/s from one job to the next.
NodeProfile local_copy_costs(bool cma) {
  static NodeProfile costs;
  static bool cma_measured = false;
  if (costs.measured() && (cma_measured || !cma)) return costs;
  struct FreeBytes {
    void operator()(std::byte* b) const { std::free(b); }
  };
  const auto page_aligned = [](size_t bytes, int fill) {
    std::unique_ptr<std::byte, FreeBytes> b(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)));
    if (b) std::memset(b.get(), fill, bytes);
    return b;
  };
  // ns per byte of the fastest of `trials` runs of copy(from, to, bytes); 0 when one fails.
  const auto fastest_ns_per_byte = [&](size_t bytes, int trials, auto&& copy) {
    const auto from = page_aligned(bytes, 1), to = page_aligned(bytes, 2);
    if (!from || !to) return 0.0;
    double best = 0;
    for (int i = 0; i < trials; ++i) {
      timespec a;
      clock_gettime(CLOCK_MONOTONIC, &a);
      if (!copy(from.get(), to.get(), bytes)) return 0.0;
      // The copy's result is never read; keep the compiler from dropping it.
      asm volatile("" : : "r"(to.get()) : "memory");
      const double t = ns_since(a);
      if (i == 0 || t < best) best = t;
    }
    return best / static_cast<double>(bytes);
  };
  constexpr auto kSmall = static_cast<size_t>(kProfileSmallBytes), kLarge = static_cast<size_t>(kProfileLargeBytes);
  const auto memcpy_copy = [](std::byte* from, std::byte* to, size_t bytes) {
    std::memcpy(to, from, bytes);
    return true;
  };
  const auto cma_copy = [](std::byte* from, std::byte* to, size_t bytes) {
    std::string err;
    return transport::shm::read_process_memory(getpid(), reinterpret_cast<uint64_t>(from), to, bytes, err);
  };
  if (!costs.measured()) {
    costs.copy_ns_per_byte = fastest_ns_per_byte(kSmall, 7, memcpy_copy);
    costs.copy_large_ns_per_byte = fastest_ns_per_byte(kLarge, 3, memcpy_copy);
  }
  if (cma && !cma_measured) {
    cma_measured = true;
    costs.cma_ns_per_byte = fastest_ns_per_byte(kSmall, 7, cma_copy);
    costs.cma_large_ns_per_byte = costs.cma_ns_per_byte > 0 ? fastest_ns_per_byte(kLarge, 3, cma_copy) : 0;
    costs.cma_call_ns = costs.cma_ns_per_byte > 0 ? fastest_ns_per_byte(4096, 7, cma_copy) * 4096 : 0;
  }
  NodeProfile answer = costs;
  if (!cma) answer.cma_ns_per_byte = answer.cma_large_ns_per_byte = answer.cma_call_ns = 0;
  return answer;
}

// A timed rewrite, as a pipeline's writer does when its ring comes round: `trials` times the
// partner writes the lines and rank 0 reads them (tokens on `tag` take turns). Rank 0's side:
// read(i) on its turn.
template <class Read>
bool reader_turns(const Comm& c, int partner, int trials, int tag, Read&& read) {
  char token = 0;
  for (int i = 0; i < trials; ++i) {
    if (sendrecv(c, nullptr, 0, -1, &token, 1, partner, tag) != XMSG_SUCCESS) return false;
    read(i);
    if (sendrecv(c, &token, 1, partner, nullptr, 0, -1, tag) != XMSG_SUCCESS) return false;
  }
  return true;
}

// The partner's side: writes `bytes` over `ring` on each turn; *best_ns is the fastest write
// but the first (which finds lines nobody has read yet).
bool writer_turns(const Comm& c, std::byte* ring, size_t bytes, int trials, int tag, double* best_ns) {
  const std::vector<std::byte> source(bytes, std::byte{1});
  char token = 0;
  *best_ns = 0;
  for (int i = 0; i < trials; ++i) {
    timespec a;
    clock_gettime(CLOCK_MONOTONIC, &a);
    std::memcpy(ring, source.data(), bytes);
    asm volatile("" : : "r"(ring) : "memory");
    if (const double t = ns_since(a); i == 1 || (i > 1 && t < *best_ns)) *best_ns = t;
    if (sendrecv(c, &token, 1, 0, nullptr, 0, -1, tag) != XMSG_SUCCESS ||
        sendrecv(c, nullptr, 0, -1, &token, 1, 0, tag) != XMSG_SUCCESS)
      return false;
  }
  return true;
}

// What handed_write_over_ring writes: a rank's whole ring, at most kProfileLargeBytes.
int64_t ring_bytes(const NodeShm& s) {
  return std::min(static_cast<int64_t>(s.region.pipe_chunk_bytes()) * s.region.pipe_chunks(), kProfileLargeBytes);
}

// The handed write over the partner's whole ring, up to 2 MiB, when that is more than
// share_profile's 256 KiB (NodeProfile::handed_write_large_ns_per_byte): rank 0 reads the
// ring, the partner writes all of it again, three times; the fastest write but the first
// counts. Rank 0 and its partner call it together; rank 0 gets the figure (ns per byte; 0 when
// not measured). Once per pair of processes: rank 0 remembers the figure by the partner's pid
// and tells the partner whether they measure (a 1 MiB ring at the rates it reads here: about
// 0.3 ms with near hand-offs, 2 ms far).
bool handed_write_over_ring(const Comm& c, const NodeShm& s, int partner, double* ns_per_byte) {
  constexpr int kTrials = 3;
  const int64_t bytes = ring_bytes(s);
  std::byte* const ring = s.region.chunk(partner, 0);
  char measure = 0;
  if (c.rank == 0) {
    // By the partner's pid; regions of several communicators may be set up at once
    // (MPI_THREAD_MULTIPLE).
    static std::mutex known_lock;
    static std::map<pid_t, double> known;
    const auto their_pid = static_cast<pid_t>(s.region.control(partner).pid.load(std::memory_order_acquire));
    {
      std::lock_guard lock(known_lock);
      const auto it = known.find(their_pid);
      measure = bytes > kProfileSmallBytes && it == known.end();
      *ns_per_byte = it != known.end() ? it->second : 0;
    }
    if (sendrecv(c, &measure, 1, partner, nullptr, 0, -1, kTagNodeRegion + 9) != XMSG_SUCCESS) return false;
    if (!measure) return true;
    // The reader's side of a call that large: it reads the ring into its buffer and moves as
    // much again of its own (a call's other blocks), which pushes the ring's lines out of its
    // core's cache -- into a last-level cache the writer shares, or one it does not.
    std::vector<std::byte> out(static_cast<size_t>(bytes)), other(static_cast<size_t>(bytes), std::byte{5});
    if (!reader_turns(c, partner, kTrials, kTagNodeRegion + 9, [&](int) {
          std::memcpy(out.data(), ring, static_cast<size_t>(bytes));
          std::memcpy(out.data(), other.data(), static_cast<size_t>(bytes));
          asm volatile("" : : "r"(out.data()) : "memory");
        }))
      return false;
    double best_ns = 0;
    if (sendrecv(c, nullptr, 0, -1, &best_ns, sizeof best_ns, partner, kTagNodeRegion + 9) != XMSG_SUCCESS) return false;
    *ns_per_byte = best_ns / static_cast<double>(bytes);
    std::lock_guard lock(known_lock);
    known[their_pid] = *ns_per_byte;
    return true;
  }
  if (sendrecv(c, nullptr, 0, -1, &measure, 1, 0, kTagNodeRegion + 9) != XMSG_SUCCESS) return false;
  if (!measure) return true;
  double best_ns = 0;
  if (!writer_turns(c, ring, static_cast<size_t>(bytes), kTrials, kTagNodeRegion + 9, &best_ns)) return false;
  return sendrecv(c, &best_ns, sizeof best_ns, 0, nullptr, 0, -1, kTagNodeRegion + 9) == XMSG_SUCCESS;
}

// Rank 0 times message round trips with its partner (rank 1, or the first rank on another
// NUMA node: profile_partner) and its own copies, and sends the numbers to every rank: all of
// them then derive the same table (node_profile.hpp).
NodeProfile share_profile(const Comm& c, const NodeShm& s) {
  constexpr int kRoundTrips = 16, kWarmUp = 2, kHandedCopies = 5;
  std::vector<int> numa(static_cast<size_t>(c.size));
  for (int r = 0; r < c.size; ++r) numa[static_cast<size_t>(r)] = s.region.numa_node_of(r);
  const int partner = profile_partner(numa.data(), c.size);
  // The handed copy: the partner writes its pipeline chunks (nothing runs through them yet),
  // rank 0 copies them out, as a pipeline's reader does with a writer's fresh chunk. The
  // handed write: the partner's next write over the lines rank 0 just read, as a writer's
  // when its ring comes round; the partner times it and sends the fastest to rank 0.
  std::byte* const partner_chunks = s.region.chunk(partner, 0);
  // 256 KiB: five copies cost the set-up ~0.1 ms (a program may create many communicators).
  const size_t handed_bytes = std::min<size_t>(size_t{256} << 10, s.region.pipe_chunk_bytes() *
                                                                     static_cast<size_t>(s.region.pipe_chunks()));
  NodeProfile p;
  char token = 0;
  if (c.rank == 0) {
    std::vector<double> trips;
    for (int i = 0; i < kWarmUp + kRoundTrips; ++i) {
      timespec a;
      clock_gettime(CLOCK_MONOTONIC, &a);
      if (sendrecv(c, &token, 1, partner, &token, 1, partner, kTagNodeRegion + 5) != XMSG_SUCCESS) return NodeProfile{};
      if (i >= kWarmUp) trips.push_back(ns_since(a));
    }
    std::vector<std::byte> out(handed_bytes, std::byte{0});
    double handed_ns = 0;
    if (!reader_turns(c, partner, kHandedCopies, kTagNodeRegion + 7, [&](int i) {
          timespec a;
          clock_gettime(CLOCK_MONOTONIC, &a);
          std::memcpy(out.data(), partner_chunks, handed_bytes);
          asm volatile("" : : "r"(out.data()) : "memory");
          const double t = ns_since(a);
          if (i == 0 || t < handed_ns) handed_ns = t;
        }))
      return NodeProfile{};
    double handed_write_ns = 0;
    if (sendrecv(c, nullptr, 0, -1, &handed_write_ns, sizeof handed_write_ns, partner, kTagNodeRegion + 8) !=
        XMSG_SUCCESS)
      return NodeProfile{};
    double large_ns_per_byte = 0;
    if (!handed_write_over_ring(c, s, partner, &large_ns_per_byte)) return NodeProfile{};
    std::sort(trips.begin(), trips.end());
    p = local_copy_costs(s.cma);
    p.sync_ns = trips[trips.size() / 2] / 2;
    p.handed_copy_ns_per_byte = handed_bytes > 0 ? handed_ns / static_cast<double>(handed_bytes) : 0;
    p.handed_write_ns_per_byte = handed_bytes > 0 ? handed_write_ns / static_cast<double>(handed_bytes) : 0;
    p.handed_write_large_ns_per_byte = large_ns_per_byte;
    p.handed_write_large_bytes = large_ns_per_byte > 0 ? ring_bytes(s) : 0;
    p.partner = partner;
    p.numa_nodes = numa_nodes_spanned(numa.data(), c.size);
    p.shares_cores = oversubscribed();
    p.ranks_per_core = p.shares_cores ? ranks_per_core() : 1;
    p.ring_chunks = s.region.pipe_chunks();
    // What the user says of this machine replaces what was measured (docs/collectives.md).
    if (auto ns = params::integer_if_set("XMSG_COLL_HANDOFF_NS")) p.sync_ns = static_cast<double>(*ns);
    if (auto mbps = params::integer_if_set("XMSG_COLL_COPY_MBPS"))
      p.copy_ns_per_byte = p.copy_large_ns_per_byte = 1e3 / static_cast<double>(*mbps);
    if (auto mbps = params::integer_if_set("XMSG_COLL_HANDED_COPY_MBPS")) {
      p.handed_copy_ns_per_byte = p.handed_write_ns_per_byte = p.handed_write_large_ns_per_byte =
          1e3 / static_cast<double>(*mbps);
      p.handed_write_large_bytes = ring_bytes(s);
    }
    if (auto ns = params::integer_if_set("XMSG_COLL_CMA_CALL_NS"); ns && s.cma) p.cma_call_ns = static_cast<double>(*ns);
    if (auto mbps = params::integer_if_set("XMSG_COLL_CMA_MBPS"); mbps && s.cma)
      p.cma_ns_per_byte = p.cma_large_ns_per_byte = *mbps > 0 ? 1e3 / static_cast<double>(*mbps) : 0;
    Step step(c);
    for (int r = 1; r < c.size; ++r) step.send(&p, sizeof p, r, kTagNodeRegion + 6);
    if (step.wait() != XMSG_SUCCESS) return NodeProfile{};
    return p;
  }
  if (c.rank == partner) {
    bool ok = true;
    for (int i = 0; ok && i < kWarmUp + kRoundTrips; ++i)
      ok = sendrecv(c, nullptr, 0, -1, &token, 1, 0, kTagNodeRegion + 5) == XMSG_SUCCESS &&
           sendrecv(c, &token, 1, 0, nullptr, 0, -1, kTagNodeRegion + 5) == XMSG_SUCCESS;
    double handed_write_ns = 0;
    ok = ok && writer_turns(c, partner_chunks, handed_bytes, kHandedCopies, kTagNodeRegion + 7, &handed_write_ns);
    ok = ok && sendrecv(c, &handed_write_ns, sizeof handed_write_ns, 0, nullptr, 0, -1, kTagNodeRegion + 8) ==
                   XMSG_SUCCESS;
    double unused = 0;
    if (!ok || !handed_write_over_ring(c, s, partner, &unused)) return NodeProfile{};
  }
  if (sendrecv(c, nullptr, 0, -1, &p, sizeof p, 0, kTagNodeRegion + 6) != XMSG_SUCCESS) return NodeProfile{};
  return p;
}

// Waits until ready() holds (see the file comment for what happens while waiting). With a
// core per rank, progress runs every 64 polls at first (every 8 cost the 2-rank barrier about
// 25%: a flag that turns while progress runs is seen late); oversubscribed, every 8 (each
// poll yields there, so polls are few and long).
//
// Oversubscribed, the wait starts kOversubscribedSpinCredit spins into the runtime's spin
// budget (XMSG_SPIN_COUNT, 32 by default), so it yields from the second poll on: a rank that
// waits here mostly waits for a rank queued behind it on its own core, which spinning only
// delays (same-run A/B, 4 ranks on 2 cores: alltoall 4-16 B 0.89-0.93x, barrier 0.77x of
// the 32-spin wait). Under XMSG_WAIT_POLICY=spin the credit changes nothing but when pause
// instructions start.
constexpr unsigned kOversubscribedSpinCredit = 31;

// `check`, asked with the liveness checks (every 256 polls), may end the wait with its error:
// the pipelines look there for peers that went another way (size_disagreement).
template <class Ready, class Check>
int wait_for(const Comm& c, const char* func, Ready&& ready, Check&& check) {
  static const uint32_t progress_mask = oversubscribed() ? 7 : 63;
  static const unsigned first_spin = oversubscribed() ? kOversubscribedSpinCredit : 0;
  unsigned spins = first_spin;
  for (uint32_t polls = 1; !ready(); ++polls) {
    xmsgi_idle(&spins);
    if (polls > 256 || (polls & progress_mask) == 0) {
      xmsgi_progress();
      if ((polls & 255) == 0) {
        for (int r = 0; r < c.size; ++r)
          if (int e = xmsgi_check_peer(c.handle, r, func)) return e;
        if (int e = check()) return e;
      }
    }
  }
  return XMSG_SUCCESS;
}

template <class Ready>
int wait_for(const Comm& c, const char* func, Ready&& ready) {
  return wait_for(c, func, ready, []() -> int { return XMSG_SUCCESS; });
}

// A rank's posted word is (seq << kSizeBits) | a fingerprint of the byte count it passed, so a
// reader that sees the collective posted also sees, in the same cache line, whether the ranks
// agree on the size: a mismatch (erroneous per MPI, but a user's easy mistake) becomes
// XMSG_ERR_TRUNCATE instead of wrong data or a read past a peer's buffer.
constexpr unsigned kSizeBits = 20;
constexpr uint64_t kSizeMask = (uint64_t{1} << kSizeBits) - 1;
uint64_t size_fingerprint(int64_t bytes) {
  return ((static_cast<uint64_t>(bytes) + 1) * 0x9E3779B97F4A7C15ull) >> (64 - kSizeBits);
}
uint64_t posted_word(uint64_t seq, int64_t bytes) { return (seq << kSizeBits) | size_fingerprint(bytes); }

// `rank` started collective `seq` (so it reads nothing of seq - 2 any more: claim_slot).
void saw_posted(NodeShm& s, int rank, uint64_t seq) {
  s.seen_posted[static_cast<size_t>(rank)] = std::max(s.seen_posted[static_cast<size_t>(rank)], seq);
}

bool has_posted(NodeShm& s, int rank, uint64_t seq) {
  if ((s.region.posted(rank, seq).load(std::memory_order_acquire) >> kSizeBits) < seq) return false;
  saw_posted(s, rank, seq);
  return true;
}

// After has_posted(rank, seq): did `rank` pass the same byte count as `bytes`? A post of a later
// collective in that half (seq + 2: pipelines and PostedSize post without claiming it, see
// pipe_post) answers nothing about this one and counts as agreement: `rank` is past it.
bool same_size(const NodeShm& s, int rank, uint64_t seq, int64_t bytes) {
  const uint64_t word = s.region.posted(rank, seq).load(std::memory_order_relaxed);
  return (word >> kSizeBits) != seq || (word & kSizeMask) == size_fingerprint(bytes);
}

int size_mismatch(const Comm& c, int rank, const char* func) {
  return fail(XMSG_ERR_TRUNCATE,
              "%s: rank %d and rank %d passed different counts or datatypes (the byte counts differ)", func, rank,
              c.rank);
}

// After wait_all_posted: the first rank whose byte count differs from ours, or -1.
int first_other_size(const NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes) {
  for (int r = 0; r < c.size; ++r)
    if (r != c.rank && !same_size(s, r, seq, bytes)) return r;
  return -1;
}

// A peer that has posted collective `seq` with a byte count other than `bytes`, or -1. Every
// algorithm through the region (and every point-to-point one on a communicator that has a
// region: PostedSize) posts its size as it starts, so this finds ranks whose different counts
// sent them down another algorithm, or down the same one with another layout, which would
// otherwise wait for each other forever.
int posted_other_size(NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes) {
  for (int r = 0; r < c.size; ++r)
    if (r != c.rank && has_posted(s, r, seq) && !same_size(s, r, seq, bytes)) return r;
  return -1;
}

int size_disagreement(NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes, const char* func) {
  const int other = posted_other_size(s, c, seq, bytes);
  return other < 0 ? XMSG_SUCCESS : size_mismatch(c, other, func);
}

// Waits until every other rank has posted collective `seq` (ours is the caller's business:
// posted already, or after this wait in a rooted barrier's root).
int wait_all_posted(NodeShm& s, const Comm& c, uint64_t seq, const char* func) {
  int next = 0;  // ranks below `next` are known to have posted
  int e = wait_for(c, func, [&] {
    while (next < c.size && (next == c.rank || has_posted(s, next, seq))) ++next;
    return next == c.size;
  });
  if (e == XMSG_SUCCESS) s.all_posted = seq;
  return e;
}

// Starts collective number s: waits until nobody reads our half s % 2 any more (its last
// contents were those of collective s - 2) and returns where our `bytes` of data go.
int claim_slot(NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes, const char* func, std::byte** slot) {
  *slot = s.region.data(c.rank, seq, static_cast<size_t>(bytes));
  if (seq < 3 || s.all_posted >= seq - 1) return XMSG_SUCCESS;
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

// `bytes`: what this rank passed, for the readers' size check (same_size); collectives whose
// ranks legitimately pass different sizes publish 0 and never check.
void publish(NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes = 0) {
  s.region.posted(c.rank, seq).store(posted_word(seq, bytes), std::memory_order_release);
}

// Numbers the next collective through the region and remembers what it is.
uint64_t start(NodeShm& s, NodeShm::Last kind = NodeShm::Last::kOther, int root = 0) {
  s.last = kind;
  s.last_root = root;
  if (kind != NodeShm::Last::kBarrier) ++s.ring_turns;
  return ++s.seq;
}
uint64_t start_rooted(NodeShm& s, int root) { return start(s, NodeShm::Last::kRooted, root); }

int finish(NodeShm& s, const Comm& c, uint64_t seq, int error) {
  s.region.done(c.rank).store(seq, std::memory_order_release);
  return error;
}

// ---- stamped lines (NodeCollectiveRegion::StampedLine) ------------------------------------
// Data just past the posted line's 56 bytes: the writer writes each line and stamps it with its
// posted word; a reader takes the lines it needs once every one of them carries that word, one
// transfer where the posted line and then the slot's data cost two.
using StampedLine = NodeCollectiveRegion::StampedLine;
constexpr int64_t kLinePayload = static_cast<int64_t>(NodeCollectiveRegion::kStampedPayload);
// 2-rank alltoall, same-run A/B (docs/results/2026-12-07-stamped-lines): at 64 B (two lines)
// 0.40-0.42 us against 0.50-0.51 with far hand-offs, 0.16-0.20 against 0.20-0.24 near; with
// three to five lines (128-256 B) far still gained 4-11% but near lost 5-25%: the reader polls
// every line while the writer fills them.
constexpr int64_t kStampedMaxLines = 2;

int64_t lines_for(int64_t bytes) { return (bytes + kLinePayload - 1) / kLinePayload; }

bool stamped_fits(const NodeShm& s, int64_t bytes) {
  const int64_t lines = lines_for(bytes);
  return lines <= kStampedMaxLines &&
         lines * static_cast<int64_t>(sizeof(StampedLine)) <= static_cast<int64_t>(s.region.slot_bytes());
}

// Each line whole, payload then stamp, before the next: a reader polling the line then takes it
// from us once, not once for the payload and again for the stamp.
void write_lines(StampedLine* lines, const std::byte* src, int64_t bytes, uint64_t word) {
  for (int64_t l = 0; bytes > 0; ++l, src += kLinePayload, bytes -= kLinePayload) {
    std::memcpy(lines[l].data, src, static_cast<size_t>(std::min(bytes, kLinePayload)));
    lines[l].stamp.store(word, std::memory_order_release);
  }
}

enum class Lines { kWaiting, kReady, kOtherSize };
// Loads every stamp of the lines holding payload bytes [from, from + bytes) before judging any,
// so the transfers of lines the writer just stamped overlap.
Lines lines_state(const StampedLine* lines, int64_t from, int64_t bytes, uint64_t word) {
  bool all = true, other = false;
  for (int64_t l = from / kLinePayload, end = (from + bytes - 1) / kLinePayload; l <= end; ++l) {
    const uint64_t w = lines[l].stamp.load(std::memory_order_acquire);
    all &= w == word;
    other |= (w >> kSizeBits) == (word >> kSizeBits) && w != word;
  }
  return other ? Lines::kOtherSize : all ? Lines::kReady : Lines::kWaiting;
}

void drain_lines(Dst dst, const StampedLine* lines, int64_t from, int64_t bytes) {
  while (bytes > 0) {
    const int64_t off = from % kLinePayload, n = std::min(bytes, kLinePayload - off);
    copy_bytes(dst, Src(lines[from / kLinePayload].data + off), n);
    dst = at(dst, n);
    from += n;
    bytes -= n;
  }
}

// Folds every rank's vector in rank order: v0 op (v1 op (... op v(n-1))); associativity (MPI's
// requirement of every op) makes that the rank-order result, and every rank that folds gets
// the same bits.
void fold_slots(const NodeShm& s, const Comm& c, uint64_t seq, void* out, int64_t count, const ReduceOp& op) {
  const size_t bytes = static_cast<size_t>(count) * op.elem_size;
  copy_bytes(out, s.region.data(c.size - 1, seq, bytes), static_cast<int64_t>(bytes));
  for (int r = c.size - 2; r >= 0; --r) op.apply(s.region.data(r, seq, bytes), out, count);
}


// ---- single-copy (CMA) collectives: ranks read each other's user buffers with
// process_vm_readv. A rank publishes its buffer addresses in the inline data of its posted
// line; it may return only once every peer is done with collective s (nobody reads its
// buffers any more), which every single-copy collective ends with.
struct Buffers {
  uint64_t send;
  uint64_t recv;
};
static_assert(sizeof(Buffers) <= NodeCollectiveRegion::kInlineBytes);
// A two-rank single-copy bcast's slot: the buffers, then whether the root wrote the second half.
struct PairBcast {
  Buffers buffers;
  uint64_t pushed;
};
static_assert(sizeof(PairBcast) <= NodeCollectiveRegion::kInlineBytes);

void publish_buffers(NodeShm& s, const Comm& c, uint64_t seq, const void* send, const void* recv, int64_t bytes) {
  const Buffers b{reinterpret_cast<uint64_t>(send), reinterpret_cast<uint64_t>(recv)};
  std::memcpy(s.region.data(c.rank, seq, sizeof b), &b, sizeof b);
  publish(s, c, seq, bytes);
}

Buffers buffers_of(const NodeShm& s, int rank, uint64_t seq) {
  Buffers b;
  std::memcpy(&b, s.region.data(rank, seq, sizeof b), sizeof b);
  return b;
}

// A laid `dst` takes the data through a bounce buffer of kLaidReadChunk bytes: small enough to
// stay in the cache between the read and the unpack.
constexpr int64_t kLaidReadChunk = 128 << 10;

int read_peer(const NodeShm& s, const Comm& c, int rank, uint64_t addr, Dst dst, int64_t bytes, const char* func) {
  std::string err;
  const pid_t pid = s.pids[static_cast<size_t>(rank)];
  bool ok = true;
  if (bytes > 0 && !dst.layout) {
    ok = transport::shm::read_process_memory(pid, addr, dst.ptr, static_cast<size_t>(bytes), err);
  } else if (bytes > 0) {
    std::byte* bounce = kept_scratch(KeptScratch::kBounce, std::min(bytes, kLaidReadChunk));
    for (int64_t done = 0; ok && done < bytes; done += kLaidReadChunk) {
      const int64_t n = std::min(kLaidReadChunk, bytes - done);
      ok = transport::shm::read_process_memory(pid, addr + static_cast<uint64_t>(done), bounce,
                                               static_cast<size_t>(n), err);
      if (ok) copy_bytes(at(dst, done), bounce, n);
    }
  }
  if (ok) return XMSG_SUCCESS;
  if (int e = xmsgi_check_peer(c.handle, rank, func)) return e;
  return fail(XMSG_ERR_PEER_FAILED, "%s: reading rank %d's buffer failed: %s", func, rank, err.c_str());
}

// Marks collective `seq` done here, then waits until every peer is done with it too (so our
// buffers may be handed back to the caller). The first error wins.
int finish_and_wait_all_done(NodeShm& s, const Comm& c, uint64_t seq, int error, const char* func) {
  finish(s, c, seq, error);
  int next = 0;
  int e = wait_for(c, func, [&] {
    while (next < c.size && (next == c.rank || s.region.done(next).load(std::memory_order_acquire) >= seq)) ++next;
    return next == c.size;
  });
  return error ? error : e;
}

// Visits every peer once, each as soon as ready(peer) holds, starting with the next rank up
// (the order of the pairwise algorithms, so ranks do not all read one peer at once); stops
// at the first error visit() returns.
template <class Ready, class Visit>
int visit_peers_when_ready(const Comm& c, const char* func, Ready&& ready, Visit&& visit) {
  const int n = c.size, me = c.rank;
  char have_inline[64] = {};  // no allocation for the small communicators this path is for
  std::vector<char> have_more(n > 64 ? static_cast<size_t>(n) : 0, 0);
  char* have = n > 64 ? have_more.data() : have_inline;
  int visited = 1, error = XMSG_SUCCESS;
  have[me] = 1;
  int e = wait_for(c, func, [&] {
    for (int step = 1; step < n && error == XMSG_SUCCESS; ++step) {
      const int peer = (me + step) % n;
      if (have[peer] || !ready(peer)) continue;
      error = visit(peer);
      have[peer] = 1;
      ++visited;
    }
    return visited == n || error != XMSG_SUCCESS;
  });
  return error ? error : e;
}


// ---- pipelined collectives: data larger than a slot streams through the writer's pipeline
// (chunks of XMSG_COLL_PIPE_CHUNK bytes in a ring of XMSG_COLL_PIPE_CHUNKS), copied in by the
// writer and out by the readers. Two memcpys of cache-resident chunks beat one CMA read by far
// here (process_vm_readv pins every page: about 14 GB/s against 100 GB/s for memcpy from L2),
// and the writer never waits for its readers unless the ring is full.
//
// Chunk k of collective s carries the stamp (s << 24) | (k + 1). A reader takes chunk k when
// the stamp of its ring slot says so, and then stores that stamp in its `consumed` counter
// for the writer. A writer reuses a ring slot once the chunk there was read: by its reader(s)
// (consumed) when it belongs to this collective, by everyone (done) when to an older one.
constexpr uint64_t kAllReaders = ~uint64_t{0};

uint64_t stamp_of(uint64_t seq, uint64_t chunk) { return (seq << 24) | (chunk + 1); }

// The ring slot of chunk `chunk` of the pipelined collective under way. The rings turn by a
// stream's length a collective (turn_rings), so back-to-back calls of one size lay their
// streams end to end and a slot comes back only after its reader took a whole ring of other
// chunks; before, every call turned 5 slots, and a 2-chunk stream came back onto its slots 3
// calls later, its root writing over lines the reader still held. Barriers, which move no
// data, do not turn them: with every other call a barrier (OSU's bcast loop) a one-chunk
// stream went round half the slots. 2 ranks, near hand-offs, through the pipelines: bcast
// 64 KiB 8.1-10.5 -> 5.9-6.7 us, 1 MiB 60-61 -> 33-38; alltoall 64 KiB 8.4-9.8 -> 6.5-8.1.
void turn_rings(NodeShm& s, uint64_t stream_chunks) {
  s.ring_stride = std::clamp<uint64_t>(stream_chunks, 1, static_cast<uint64_t>(s.region.pipe_chunks()));
}
int ring_slot(const NodeShm& s, uint64_t chunk) {
  return static_cast<int>((chunk + s.ring_turns * s.ring_stride) % static_cast<uint64_t>(s.region.pipe_chunks()));
}

class PipeWriter {
 public:
  // reader_of(chunk): the one rank that reads that chunk of our stream, or kAllReaders.
  // `first`: the index of our first chunk (alltoallv's streams start where the last ended).
  template <class ReaderOf>
  PipeWriter(NodeShm& s, const Comm& c, uint64_t seq, ReaderOf reader_of, uint64_t first = 0)
      : s_(s), c_(c), seq_(seq), next_(first) {
    reader_of_ = [reader_of](uint64_t chunk) { return reader_of(chunk); };
  }
  uint64_t written() const { return next_; }
  // Where chunk written() goes, or nullptr while its ring slot is still being read.
  std::byte* try_claim() {
    const int slot = ring_slot(s_, next_);
    const uint64_t old = s_.region.chunk_stamp(c_.rank, slot).load(std::memory_order_relaxed);
    if (old != 0 && !read_by_all(old)) return nullptr;
    return s_.region.chunk(c_.rank, slot);
  }
  void commit() {
    const int slot = ring_slot(s_, next_);
    s_.region.chunk_stamp(c_.rank, slot).store(stamp_of(seq_, next_), std::memory_order_release);
    ++next_;
  }
  // The rank that has yet to read the chunk of this collective in the slot try_claim() wants,
  // or -1 (the slot is free, or holds an older collective's chunk).
  int blocking_reader() const {
    const int slot = ring_slot(s_, next_);
    const uint64_t old = s_.region.chunk_stamp(c_.rank, slot).load(std::memory_order_relaxed);
    if (old == 0 || (old >> 24) < seq_) return -1;
    const uint64_t reader = reader_of_((old & 0xffffff) - 1);
    for (int r = 0; r < c_.size; ++r)
      if (r != c_.rank && (reader == kAllReaders || reader == static_cast<uint64_t>(r)) &&
          s_.region.consumed(r, c_.rank).load(std::memory_order_acquire) < old)
        return r;
    return -1;
  }

 private:
  bool read_by_all(uint64_t old) {
    const uint64_t old_seq = old >> 24;
    if (old_seq < seq_) {
      if (s_.all_posted > old_seq) return true;
      for (int r = 0; r < c_.size; ++r)
        if (r != c_.rank && s_.seen_posted[static_cast<size_t>(r)] <= old_seq &&
            s_.region.done(r).load(std::memory_order_acquire) < old_seq)
          return false;
      return true;
    }
    const uint64_t reader = reader_of_((old & 0xffffff) - 1);
    for (int r = 0; r < c_.size; ++r)
      if (r != c_.rank && (reader == kAllReaders || reader == static_cast<uint64_t>(r)) &&
          s_.region.consumed(r, c_.rank).load(std::memory_order_acquire) < old)
        return false;
    return true;
  }

  NodeShm& s_;
  const Comm& c_;
  uint64_t seq_;
  uint64_t next_ = 0;
  std::function<uint64_t(uint64_t)> reader_of_;
};

// Every pipelined collective posts its byte count as it starts, like the slot ones, so a peer
// that waits for our post finds it and compares sizes, and a peer that waits for our chunks
// sees our size beside them (size_disagreement, asked while waiting). It writes nothing else
// into its half, so it need not claim it (claim_slot: reading peers' `done` lines, a transfer
// per peer on every call): a peer still in collective seq - 2 only reads our post of it, which
// same_size then tells apart from this one.
void pipe_post(NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes) { publish(s, c, seq, bytes); }

// After a pipelined collective every rank took part in: had every peer posted our size? A peer
// with another count can stream a layout that happens to feed us everything we wait for
// (fewer bytes, or chunks at the same indices), so finishing is no proof of agreement. Every
// peer posted as it started (waiting here is for the rare one we took nothing from).
int pipe_agreement(NodeShm& s, const Comm& c, uint64_t seq, int64_t bytes, int error, const char* func) {
  if (error != XMSG_SUCCESS) return error;
  if (int e = wait_all_posted(s, c, seq, func)) return e;
  const int other = first_other_size(s, c, seq, bytes);
  return other < 0 ? XMSG_SUCCESS : size_mismatch(c, other, func);
}

// Chunk `chunk` of `writer`'s stream in collective `seq` when it is there, else nullptr.
const std::byte* pipe_chunk(const NodeShm& s, int writer, uint64_t seq, uint64_t chunk) {
  const int slot = ring_slot(s, chunk);
  if (s.region.chunk_stamp(writer, slot).load(std::memory_order_acquire) != stamp_of(seq, chunk)) return nullptr;
  return s.region.chunk(writer, slot);
}

void pipe_release(const NodeShm& s, const Comm& c, int writer, uint64_t seq, uint64_t chunk) {
  s.region.consumed(c.rank, writer).store(stamp_of(seq, chunk), std::memory_order_release);
}

int64_t chunks_for(int64_t bytes, int64_t chunk) { return (bytes + chunk - 1) / chunk; }

}  // namespace

NodeShm* node_shm(const Comm& c) {
  if (c.members || c.size < 2 || c.handle < 0 || !thresholds().shm) return nullptr;
  auto& states = by_comm();
  if (static_cast<size_t>(c.handle) >= states.size()) states.resize(static_cast<size_t>(c.handle) + 1);
  // A pointer, not a reference into `states`: setting up waits for the other ranks, and under
  // MPI_THREAD_MULTIPLE another thread may set up another communicator's region meanwhile,
  // growing the vector.
  NodeShm* state = states[static_cast<size_t>(c.handle)].get();
  if (!state) {
    states[static_cast<size_t>(c.handle)] = std::make_unique<NodeShm>();
    state = states[static_cast<size_t>(c.handle)].get();
    state->seen_posted.assign(static_cast<size_t>(c.size), 0);
    state->usable = on_one_node(c) && set_up(c, state);
    if (state->usable) {
      state->cma = agree_on_cma(c, state);
      state->profile = share_profile(c, *state);
      for (int kind = 0; kind < kLargeCollectives; ++kind)
        state->single_copy[kind] =
            single_copy_sizes(state->profile, static_cast<LargeCollective>(kind), c.size, thresholds().pipe_chunk);
      trace_profile(c, state->profile, state->single_copy);
    }
  }
  return state->usable ? state : nullptr;
}

bool node_shm_cma(const NodeShm& s) { return s.cma; }

SingleCopySizes node_shm_single_copy(const NodeShm& s, LargeCollective kind) {
  return s.single_copy[static_cast<int>(kind)];
}

// Two shapes. All-poll: every rank posts s and waits until all posted; the last to arrive
// leaves at once, the others a handoff later. Rooted at r: the others post and wait for r's
// post; r posts once it has seen everyone arrive, so r leaves first, a handoff before the
// others -- and a collective from r right after (OSU's bcast loop) finds r's data posted
// instead of its readers waiting for it inside the call. In all-poll the reader of that bcast
// (the rank whose previous bcast took longest, so the last to arrive) leaves first and waits
// for the root: with ranks outnumbering cores a pass of the scheduler (OSU's bcast at 4 ranks
// on 2 cores 10x slower), with 2 pinned ranks in the VM's slow state (handoff ~0.2 us) OSU's
// bcast 1-256 B was 1.1-1.4x MPICH. Rooted costs a second handoff, all-poll only one.
// auto therefore picks by what came before: after a collective with a root, rooted at that
// root; after a barrier (back-to-back barriers), all-poll; after any other collective
// (allreduce, alltoall), all-poll at 2 ranks with a core each and rooted at rank 0 otherwise,
// as measured before. XMSG_COLL_SHM_BARRIER=all / rooted (at rank 0) force one shape.
// Measured (4 ranks confined to one CPU, 20000 barriers): rooted 5.3-5.5 us, all-poll 4.0-4.1,
// Open MPI 6.1-6.8; 8 ranks 15.1-15.6 / 13.9-14.2 / 36-45; 2 ranks pinned, fast VM state: 0.137
// rooted, 0.093 all-poll, Open MPI 0.131.
int shm_barrier(NodeShm& s, const Comm& c) {
  const char* func = "xmsg_barrier";
  const NodeShm::Last before = s.last;
  const int before_root = s.last_root;
  const uint64_t seq = start(s, NodeShm::Last::kBarrier);
  const ShmBarrier kind = thresholds().shm_barrier;
  const bool all_poll =
      kind == ShmBarrier::kAll ||
      (kind == ShmBarrier::kAuto && (before == NodeShm::Last::kBarrier ||
                                     (before == NodeShm::Last::kOther && c.size == 2 && !oversubscribed())));
  if (all_poll) {
    publish(s, c, seq);
    return finish(s, c, seq, wait_all_posted(s, c, seq, func));
  }
  const int root = kind == ShmBarrier::kAuto && before == NodeShm::Last::kRooted ? before_root : 0;
  if (c.rank != root) {
    publish(s, c, seq);
    // The root posts only once every rank has.
    int e = wait_for(c, func, [&] { return has_posted(s, root, seq); });
    if (e == XMSG_SUCCESS) s.all_posted = seq;
    return finish(s, c, seq, e);
  }
  int e = wait_all_posted(s, c, seq, func);
  if (e == XMSG_SUCCESS) publish(s, c, seq);
  return finish(s, c, seq, e);
}

int shm_bcast(NodeShm& s, const Comm& c, Dst buf, int64_t bytes, int root) {
  const char* func = "xmsg_bcast";
  const uint64_t seq = start_rooted(s, root);
  if (c.rank == root) {
    std::byte* slot = nullptr;
    if (int e = claim_slot(s, c, seq, bytes, func, &slot)) return finish(s, c, seq, e);
    copy_bytes(slot, buf, bytes);
    publish(s, c, seq, bytes);
    return finish(s, c, seq, XMSG_SUCCESS);
  }
  int e = wait_for(c, func, [&] { return has_posted(s, root, seq); });
  if (e == XMSG_SUCCESS && !same_size(s, root, seq, bytes)) e = size_mismatch(c, root, func);
  if (e == XMSG_SUCCESS) copy_bytes(buf, s.region.data(root, seq, static_cast<size_t>(bytes)), bytes);
  return finish(s, c, seq, e);
}

int shm_reduce(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op,
               int root, bool everyone) {
  const char* func = everyone ? "xmsg_allreduce" : "xmsg_reduce";
  const uint64_t seq = everyone ? start(s) : start_rooted(s, root);
  std::byte* slot = nullptr;
  const int64_t bytes = count * static_cast<int64_t>(op.elem_size);
  if (int e = claim_slot(s, c, seq, bytes, func, &slot)) return finish(s, c, seq, e);
  copy_bytes(slot, sendbuf, bytes);
  publish(s, c, seq, bytes);
  if (!everyone && c.rank != root) return finish(s, c, seq, XMSG_SUCCESS);
  int e = wait_all_posted(s, c, seq, func);
  if (const int other = e == XMSG_SUCCESS ? first_other_size(s, c, seq, bytes) : -1; other >= 0)
    e = size_mismatch(c, other, func);
  if (e == XMSG_SUCCESS) fold_slots(s, c, seq, recvbuf, count, op);
  return finish(s, c, seq, e);
}

namespace {

// ---- one-phase data through the slots (alltoall, allgather) --------------------------------
// Where a writer's `published` bytes of collective `seq` travel: beside its posted counter (up
// to 56 bytes), as stamped lines (up to two lines), else in its slot. `size` is what every
// rank passed, for the readers' size check.
struct SlotData {
  int64_t published;
  int64_t size;
  uint64_t word;
  bool stamped;
};

SlotData slot_data(const NodeShm& s, uint64_t seq, int64_t published, int64_t size) {
  const bool beside_counter = published <= static_cast<int64_t>(NodeCollectiveRegion::kInlineBytes);
  return {published, size, posted_word(seq, size), !beside_counter && stamped_fits(s, published)};
}

// Writes the concatenation of `pieces` (published bytes in all) as this rank's data and posts.
void publish_data(NodeShm& s, const Comm& c, uint64_t seq, const SlotData& d, std::byte* slot,
                  std::initializer_list<std::pair<Src, int64_t>> pieces) {
  std::byte staged[kStampedMaxLines * kLinePayload];
  std::byte* to = d.stamped ? staged : slot;
  for (const auto& [src, bytes] : pieces) {
    copy_bytes(to, src, bytes);
    to += bytes;
  }
  if (d.stamped) write_lines(s.region.stamped(c.rank, seq), staged, d.published, d.word);
  publish(s, c, seq, d.size);
}

enum class Taken { kNotYet, kCopied, kOtherSize };
// Bytes [at_byte, at_byte + bytes) of `from`'s published data into `dst`, once they are there.
Taken take_data(NodeShm& s, int from, uint64_t seq, const SlotData& d, int64_t at_byte, int64_t bytes, Dst dst) {
  if (d.stamped) {
    const StampedLine* lines = s.region.stamped(from, seq);
    const Lines state = lines_state(lines, at_byte, bytes, d.word);
    if (state == Lines::kWaiting) return Taken::kNotYet;
    saw_posted(s, from, seq);
    if (state == Lines::kOtherSize) return Taken::kOtherSize;
    drain_lines(dst, lines, at_byte, bytes);
    return Taken::kCopied;
  }
  if (!has_posted(s, from, seq)) return Taken::kNotYet;
  if (!same_size(s, from, seq, d.size)) return Taken::kOtherSize;
  copy_bytes(dst, s.region.data(from, seq, static_cast<size_t>(d.published)) + at_byte, bytes);
  return Taken::kCopied;
}

// Takes from every peer (`take(from)` -> Taken) as soon as that peer has posted, starting with
// the next rank up (the order the pairwise algorithms use, so ranks do not all read one slot at
// once), and finishes the collective.
template <class Take>
int take_from_peers(NodeShm& s, const Comm& c, uint64_t seq, const SlotData& d, const char* func, Take&& take) {
  const int n = c.size, me = c.rank;
  int copied = 1;
  char have_inline[64] = {};  // no allocation for the small communicators this path is for
  std::vector<char> have_more(n > 64 ? static_cast<size_t>(n) : 0, 0);
  char* have = n > 64 ? have_more.data() : have_inline;
  have[me] = 1;
  int mismatch = -1;
  int e = wait_for(
      c, func,
      [&] {
        for (int step = 1, from = me + 1; step < n; ++step, ++from) {
          if (from == n) from = 0;  // (me + step) % n, without a division a poll
          if (have[from]) continue;
          const Taken t = take(from);
          if (t == Taken::kNotYet) continue;
          if (t == Taken::kOtherSize) mismatch = from;
          have[from] = 1;
          ++copied;
        }
        return copied == n;
      },
      // A peer with another size may never stamp our lines; its posted word says so.
      [&] { return d.stamped ? size_disagreement(s, c, seq, d.size, func) : XMSG_SUCCESS; });
  if (e == XMSG_SUCCESS) s.all_posted = seq;
  if (e == XMSG_SUCCESS && mismatch >= 0) e = size_mismatch(c, mismatch, func);
  return finish(s, c, seq, e);
}

}  // namespace

int shm_alltoall(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const char* func = "xmsg_alltoall";
  const uint64_t seq = start(s);
  const int me = c.rank;
  // Only the peers' blocks are published (ours goes straight to recvbuf): (n - 1) blocks, so
  // twice as large a block fits beside the posted counter at 2 ranks (one line to hand off),
  // and 8 B at 8 ranks. Peer d's block sits at index d, or d - 1 above us.
  const SlotData d = slot_data(s, seq, (c.size - 1) * block, block);
  std::byte* slot = nullptr;
  if (int e = claim_slot(s, c, seq, d.published, func, &slot)) return finish(s, c, seq, e);
  publish_data(s, c, seq, d, slot, {{sendbuf, me * block}, {at(sendbuf, (me + 1) * block), d.published - me * block}});
  copy_bytes(at(recvbuf, me * block), at(sendbuf, me * block), block);
  return take_from_peers(s, c, seq, d, func, [&](int from) {
    return take_data(s, from, seq, d, (me < from ? me : me - 1) * block, block, at(recvbuf, from * block));
  });
}

// Each rank publishes its one block; every rank copies every peer's.
int shm_allgather(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const char* func = "xmsg_allgather";
  const uint64_t seq = start(s);
  const SlotData d = slot_data(s, seq, block, block);
  std::byte* slot = nullptr;
  if (int e = claim_slot(s, c, seq, block, func, &slot)) return finish(s, c, seq, e);
  const Src mine = sendbuf ? sendbuf : Src(at(recvbuf, c.rank * block));
  publish_data(s, c, seq, d, slot, {{mine, block}});
  if (sendbuf) copy_bytes(at(recvbuf, c.rank * block), sendbuf, block);
  return take_from_peers(s, c, seq, d, func,
                         [&](int from) { return take_data(s, from, seq, d, 0, block, at(recvbuf, from * block)); });
}

// Counts differ per pair, so a rank cannot tell from its own counts how its peers' data will
// travel, and agreeing on it would cost a collective. So each writer decides for itself, per
// call, and says so in a table [mode, sendbuf address, where(d) for every rank d], kept in the
// posted line's inline bytes when it fits there (small communicators), else in the slot.
//   inline / slot: its whole send data fits beside the table (inline) or in the slot: copied
//           there, where(d) = offset; readers copy out (as shm_alltoall). Inline, where(d) is
//           one byte (offsets stay below 56): the table is [mode, where(d) bytes], so 2 ranks
//           hand 46 bytes over in the posted line instead of 24.
//   pipelined: its largest block takes the pipelines (`large`, as the alltoall's would) and
//           its stream fits a stamp: streamed through its ring, readers copy out.
//   single copy: else a largest block of at least `large.cma_min` bytes: where(d) = sdispls[d],
//           readers read its sendbuf with CMA, so it returns only once every reader is done.
//   messages: otherwise (pipelines switched off, blocks below single copy): it sends each block
//           as a point-to-point message, and a reader that finds this mode in its table posts
//           the matching receive.
int shm_alltoallv(NodeShm& s, const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls,
                  Dst recvbuf, const int64_t* rcounts, const int64_t* rdispls, const LargeLimits& large,
                  const char** how) {
  // kInline: data beside the table in the posted line's inline bytes (one line to hand off).
  // kLines: as kInline, continued in a stamped line at the start of the slot (kept for it
  // whenever the table is inline), which readers poll with the posted line.
  enum : uint64_t { kInline = 0, kSlot = 1, kSingleCopy = 2, kMessages = 3, kPipelined = 4, kLines = 5 };
  static constexpr const char* kHow[] = {"shared memory, this writer: inline", "shared memory, this writer: slot",
                                         "shared memory, this writer: single copy (CMA)",
                                         "shared memory, this writer: messages",
                                         "shared memory, this writer: pipelines",
                                         "shared memory, this writer: inline, two lines"};
  constexpr int kTag = kTagAlltoall + 67;
  constexpr int64_t kInlineBytes = static_cast<int64_t>(NodeCollectiveRegion::kInlineBytes);
  const char* func = "xmsg_alltoallv";
  const uint64_t seq = start(s);
  s.ring_stride = 0;  // chunk k in slot k: our stream starts where our last one ended (below)
  const int n = c.size, me = c.rank;
  const int64_t slot_bytes = static_cast<int64_t>(s.region.slot_bytes());
  const int64_t chunk = static_cast<int64_t>(s.region.pipe_chunk_bytes());
  const int64_t table_bytes = shm_alltoallv_table_bytes(n);
  // Where the table lives depends on n only, so readers know where to look.
  const bool table_inline = table_bytes <= kInlineBytes;
  int64_t payload = 0, largest = 0;
  for (int d = 0; d < n; ++d)
    if (d != me) {
      payload += scounts[d];
      largest = std::max(largest, scounts[d]);
    }
  // Chunks of a stream, asked only where the pipelines are in question (a division a block).
  const auto stream_chunks = [&] {
    int64_t k = 0;
    for (int d = 0; d < n; ++d)
      if (d != me) k += chunks_for(scounts[d], chunk);
    return k;
  };
  // An inline table keeps the slot's first line for kLines.
  const int64_t slot_start = table_inline ? 64 : table_bytes;
  const uint64_t lines_word = posted_word(seq, 0);
  // Whether writers that send other than inline or through the slot leave their counts in the
  // slot (n and the slot size decide, so every reader knows).
  const bool counts_in_slot = slot_start + 8 * n <= slot_bytes;
  // Medium blocks take the pipelines wherever the alltoall's would (as messages they cost
  // more: docs/results/2026-12-06-profile-sizes).
  const int64_t inline_table_bytes = static_cast<int64_t>(sizeof(uint64_t)) + n;
  const uint64_t mode = table_inline && inline_table_bytes + payload <= kInlineBytes       ? kInline
                        : table_inline && inline_table_bytes + payload <= 2 * kInlineBytes ? kLines
                        : slot_start + payload <= slot_bytes                             ? kSlot
                        : large.pipelines(largest) && counts_in_slot && stream_chunks() < (int64_t{1} << 23)
                            ? kPipelined
                        : largest >= large.cma_min                             ? kSingleCopy
                                                                               : kMessages;
  *how = kHow[mode];
  std::byte* slot = nullptr;
  if (int e = claim_slot(s, c, seq, slot_bytes, func, &slot)) return finish(s, c, seq, e);
  // A table in the posted line is built here and stored in one go just before the post: the
  // readers poll that line, and every separate store into it would take it from them and give
  // it back (2 ranks, 64-512 B through the slot: 0.51-0.55 -> 0.35-0.44 us).
  std::byte* const posted_line = table_inline ? s.region.data(me, seq, static_cast<size_t>(kInlineBytes)) : nullptr;
  alignas(8) std::byte table_here[2 * kInlineBytes];  // kLines: the posted line's bytes, then the next line's
  std::byte* table = table_inline ? table_here : slot;
  // Single copy hands readers an address: a laid sendbuf is packed first (its stream, so the
  // displacements stay as they are).
  Scratch staging;
  Src readable = sendbuf;
  if (mode == kSingleCopy && sendbuf.layout) {
    int64_t extent = 0;
    for (int d = 0; d < n; ++d)
      if (scounts[d] > 0) extent = std::max(extent, sdispls[d] + scounts[d]);
    readable = plain_for_peers(sendbuf, extent, staging);
  }
  const uint64_t head[2] = {mode, reinterpret_cast<uint64_t>(readable.ptr)};
  const bool byte_table = mode == kInline || mode == kLines;
  std::memcpy(table, head, byte_table ? sizeof head[0] : sizeof head);
  // where(d): an offset into the inline bytes (kInline) or the slot (kSlot), the first chunk of
  // d's block in our stream (kPipelined), else sdispls[d]. The stream holds the blocks for
  // rank + 1, rank + 2, ... in that order.
  std::byte* data = byte_table ? table : slot;
  int64_t offset = byte_table ? inline_table_bytes : slot_start;
  std::vector<uint64_t> stream_start(mode == kPipelined ? static_cast<size_t>(n) + 1 : 0, 0);
  if (mode == kPipelined) {
    uint64_t k = s.alltoallv_stream_end;
    for (int step = 1; step < n; ++step) {
      const int d = (me + step) % n;
      stream_start[static_cast<size_t>(d)] = k;
      k += static_cast<uint64_t>(chunks_for(scounts[d], chunk));
    }
    stream_start[static_cast<size_t>(n)] = k;
  }
  for (int d = 0; d < n; ++d) {
    uint64_t where = static_cast<uint64_t>(sdispls[d]);
    if ((byte_table || mode == kSlot) && d != me) {
      where = static_cast<uint64_t>(offset);
      copy_bytes(data + offset, at(sendbuf, sdispls[d]), scounts[d]);
      offset += scounts[d];
    }
    if (mode == kPipelined) where = stream_start[static_cast<size_t>(d)];
    // Readers check that we agree on their block's length (a stream's reader would wait for
    // chunks that never come, another take stale bytes): where the data does not give it away,
    // our counts sit in the unused part of the slot.
    if (counts_in_slot && !byte_table && mode != kSlot) std::memcpy(slot + slot_start + 8 * d, &scounts[d], sizeof scounts[d]);
    if (byte_table) table[sizeof(uint64_t) + static_cast<size_t>(d)] = static_cast<std::byte>(where);
    else std::memcpy(table + sizeof(uint64_t) * (2 + d), &where, sizeof where);
  }
  // Inline and slot data: blocks lie in destination order, so a block ends where the next one
  // starts; our own entry (which no reader needs) holds where the last one ends.
  if (byte_table) table[sizeof(uint64_t) + static_cast<size_t>(me)] = static_cast<std::byte>(offset);
  if (mode == kSlot) std::memcpy(table + sizeof(uint64_t) * (2 + me), &offset, sizeof offset);
  if (mode == kLines) write_lines(s.region.stamped(me, seq), table_here + kInlineBytes, offset - kInlineBytes, lines_word);
  if (posted_line)
    std::memcpy(posted_line, table_here,
                static_cast<size_t>(mode == kInline ? offset : mode == kLines ? kInlineBytes : table_bytes));
  publish(s, c, seq);
  Step messages(c);
  if (mode == kMessages)  // empty blocks too, so that a reader expecting data is answered
    for (int step = 1; step < n; ++step) {
      const int d = (me + step) % n;
      messages.send(block_at(sendbuf, sdispls[d], scounts[d]), scounts[d], d, kTag);
    }
  // Our own block, from the packed copy when single copy made one (one pass over the datatype
  // instead of two). A pipelined writer whose stream is one chunk copies it a chunk at a time
  // in the passes that find no ring work, as shm_alltoall_pipe does: its reader waits for that
  // one chunk, which the copy would hold back (2 ranks, near hand-offs, 32-64 KiB: 6.8-10.6 ->
  // 5.8-7.3 us). A longer stream's reader starts on its first chunk while the rest is written,
  // and the copy first measured faster there (128-512 KiB: 10.1-11.6 against 12.6-13.6 us).
  const int64_t own_bytes = std::min(scounts[me], rcounts[me]);
  int64_t own_copied = 0;
  auto copy_own_piece = [&] {
    const int64_t len = std::min(chunk, own_bytes - own_copied);
    copy_bytes(at(recvbuf, rdispls[me] + own_copied), at(readable, sdispls[me] + own_copied), len);
    own_copied += len;
  };
  if (mode != kPipelined || stream_start[static_cast<size_t>(n)] - s.alltoallv_stream_end > 1) {
    copy_bytes(at(recvbuf, rdispls[me]), at(readable, sdispls[me]), own_bytes);
    own_copied = own_bytes;
  }

  // Our stream (kPipelined): the chunk being written, as (step, offset in that block).
  const uint64_t total = mode == kPipelined ? stream_start[static_cast<size_t>(n)] : 0;
  // Only a pipelined writer builds its writer (a std::function inside: an allocation the small
  // calls, which most alltoallv calls are, do not pay).
  std::optional<PipeWriter> out;
  if (mode == kPipelined)
    out.emplace(s, c, seq, [&](uint64_t k) {
      for (int step = 1; step < n; ++step) {
        const int d = (me + step) % n;
        const uint64_t first = stream_start[static_cast<size_t>(d)];
        if (k >= first && k < first + static_cast<uint64_t>(chunks_for(scounts[d], chunk))) return static_cast<uint64_t>(d);
      }
      return kAllReaders;
    }, s.alltoallv_stream_end);
  const auto written = [&] { return out ? out->written() : 0; };
  int out_step = 1;
  int64_t out_offset = 0;
  // Per peer: -1 nothing seen yet, then bytes taken of its block (their mode kPipelined), or
  // rcounts[peer] once it is all here or handed to a receive.
  int64_t taken_inline[64];  // no allocation for the small communicators this path is for
  std::vector<int64_t> taken_more(n > 64 ? static_cast<size_t>(n) : 0);
  int64_t* taken = n > 64 ? taken_more.data() : taken_inline;
  std::fill(taken, taken + n, -1);
  taken[me] = rcounts[me];
  int complete = 1, error = XMSG_SUCCESS;
  int e = wait_for(c, func, [&] {
    const int progress_before = complete;
    const uint64_t written_before = written();
    int64_t chunks_taken = 0;
    while (mode == kPipelined && out->written() < total) {
      const int d = (me + out_step) % n;
      if (out_offset >= scounts[d]) {
        ++out_step;
        out_offset = 0;
        continue;
      }
      std::byte* dst = out->try_claim();
      if (!dst) break;
      const int64_t len = std::min(chunk, scounts[d] - out_offset);
      copy_bytes(dst, at(sendbuf, sdispls[d] + out_offset), len);
      out->commit();
      out_offset += len;
    }
    for (int step = 1, peer = me + 1; step < n && error == XMSG_SUCCESS; ++step, ++peer) {
      if (peer == n) peer = 0;  // (me + step) % n, without a division a poll
      int64_t& got = taken[peer];
      const int64_t len = rcounts[peer];
      if (got >= len && got >= 0) continue;
      // Touched before the posted line, whatever the peer's mode, only so that a kLines line
      // travels with it (docs/results/2026-12-07-stamped-lines, section 3); its contents are
      // read below, after the posted line, which orders them.
      if (got < 0 && table_inline) (void)s.region.stamped(peer, seq)->stamp.load(std::memory_order_relaxed);
      if (got < 0 && !has_posted(s, peer, seq)) continue;
      const std::byte* their_slot = s.region.data(peer, seq, static_cast<size_t>(slot_bytes));
      const std::byte* their_table =
          table_inline ? s.region.data(peer, seq, static_cast<size_t>(kInlineBytes)) : their_slot;
      uint64_t their_head[2], where = 0;
      std::memcpy(their_head, their_table, sizeof their_head);
      // An inline table's entries are bytes (see the writer).
      auto entry = [&](int d) {
        uint64_t v = 0;
        if (their_head[0] == kInline || their_head[0] == kLines)
          v = static_cast<uint64_t>(their_table[sizeof(uint64_t) + static_cast<size_t>(d)]);
        else std::memcpy(&v, their_table + sizeof(uint64_t) * (2 + d), sizeof v);
        return v;
      };
      where = entry(me);
      const bool first_look = got < 0;
      if (got < 0) got = 0;
      // What `peer` sends us (-1: not known), checked against what we expect once.
      int64_t theirs = -1;
      if (first_look && (their_head[0] == kInline || their_head[0] == kLines || their_head[0] == kSlot)) {
        int next = me + 1;
        if (next == peer) ++next;
        theirs = static_cast<int64_t>(entry(next < n ? next : peer) - where);
      } else if (first_look && counts_in_slot && their_head[0] != kMessages) {
        std::memcpy(&theirs, their_slot + slot_start + 8 * me, sizeof theirs);
      }
      if (theirs >= 0 && theirs != len) {
        if (their_head[0] == kPipelined) {  // its chunks are counted per block: stop here
          error = fail(XMSG_ERR_TRUNCATE, "%s: rank %d sends %lld bytes to rank %d, which expects %lld", func, peer,
                       static_cast<long long>(theirs), me, static_cast<long long>(len));
          break;
        }
        char text[200];
        std::snprintf(text, sizeof text,
                      "%s: rank %d sends %lld bytes to rank %d, which expects %lld: the ranks passed different counts "
                      "or datatypes", func, peer, static_cast<long long>(theirs), me, static_cast<long long>(len));
        if (SizeDisagreement* d = SizeDisagreement::current()) d->note(text);
        else error = fail(XMSG_ERR_TRUNCATE, "%s", text);
      }
      // No more than both sides agree on; a message carries its own length.
      const int64_t take = theirs >= 0 ? std::min(theirs, len) : len;
      if (take <= 0 && their_head[0] != kMessages) {
        got = len;
        ++complete;
        continue;
      }
      switch (their_head[0]) {
        case kInline:
          copy_bytes(at(recvbuf, rdispls[peer]), their_table + where, take);
          break;
        case kLines: {
          // Written before the posted line we saw (write_lines, then publish), so complete:
          // nobody rewrites it before we are done (claim_slot).
          const StampedLine* line = s.region.stamped(peer, seq);
          std::byte both[2 * kInlineBytes];
          std::memcpy(both, their_table, static_cast<size_t>(kInlineBytes));
          std::memcpy(both + kInlineBytes, line->data, static_cast<size_t>(kInlineBytes));
          copy_bytes(at(recvbuf, rdispls[peer]), both + where, take);
          break;
        }
        case kSlot:
          copy_bytes(at(recvbuf, rdispls[peer]), their_slot + where, take);
          break;
        case kSingleCopy:
          error = read_peer(s, c, peer, their_head[1] + where, at(recvbuf, rdispls[peer]), take, func);
          break;
        case kPipelined:
          while (got < len) {
            const uint64_t k = where + static_cast<uint64_t>(got / chunk);
            const std::byte* src = pipe_chunk(s, peer, seq, k);
            if (!src) break;
            const int64_t piece = std::min(chunk, len - got);
            copy_bytes(at(recvbuf, rdispls[peer] + got), src, piece);
            pipe_release(s, c, peer, seq, k);
            got += piece;
            ++chunks_taken;
          }
          if (got < len) continue;
          break;
        default:
          messages.recv(block_at(recvbuf, rdispls[peer], len), len, peer, kTag);
          break;
      }
      got = len;
      ++complete;
    }
    const bool idle = complete == progress_before && written() == written_before && chunks_taken == 0;
    if (error == XMSG_SUCCESS && own_copied < own_bytes && (idle || (complete == n && written() == total)))
      copy_own_piece();
    return error != XMSG_SUCCESS || (complete == n && written() == total && own_copied == own_bytes);
  });
  if (mode == kPipelined) s.alltoallv_stream_end = total % static_cast<uint64_t>(s.region.pipe_chunks());
  if (e == XMSG_SUCCESS) e = error;
  const int sent = messages.wait();
  if (e == XMSG_SUCCESS) e = sent;
  if (e == XMSG_SUCCESS) s.all_posted = seq;
  return mode == kSingleCopy ? finish_and_wait_all_done(s, c, seq, e, func) : finish(s, c, seq, e);
}

namespace {

// A single-copy bcast reader that reads all of the root's buffer at `from` (after the wait for
// the root's post left `e`), and finishes. A laid buffer: read everything into kept memory, let
// the root go, then unpack. Unpacking straight from bounce-sized reads held the root until we
// had unpacked (OSU bcast -D vect:8:4, 2 ranks, back to back: 1.15-1.20x the time of staging
// whole).
int bcast_read_whole(NodeShm& s, const Comm& c, uint64_t seq, int root, uint64_t from, Dst buf, int64_t bytes, int e,
                     const char* func) {
  if (e == XMSG_SUCCESS && buf.layout && bytes <= kKeptStagingBytes) {
    std::byte* copy = kept_scratch(KeptScratch::kStaging, bytes);
    e = finish(s, c, seq, read_peer(s, c, root, from, copy, bytes, func));
    if (e == XMSG_SUCCESS) copy_bytes(buf, copy, bytes);
    return e;
  }
  if (e == XMSG_SUCCESS) e = read_peer(s, c, root, from, buf, bytes, func);
  return finish(s, c, seq, e);
}

// Where the reader's half ends: half the data rounded up to a page (each side pins whole pages).
int64_t bcast_cma_split(int64_t bytes) {
  constexpr int64_t kPageBytes = 4096;
  return bytes >= 2 * kPageBytes ? (bytes / 2 + kPageBytes - 1) / kPageBytes * kPageBytes : bytes;
}

// Two ranks: the root, which would otherwise only wait, writes the second half into the
// reader's buffer (process_vm_writev) while the reader reads the first, so both cores copy
// (as the point-to-point split copy, docs/protocols.md). The reader posts its buffer (0: laid,
// it reads everything itself); the root says in its slot whether its write went through, and
// the reader reads that half itself when it did not.
int shm_bcast_cma_pair(NodeShm& s, const Comm& c, Dst buf, int64_t bytes, int root) {
  const char* func = "xmsg_bcast";
  const uint64_t seq = start_rooted(s, root);
  const int other = 1 - c.rank;
  const int64_t split = bcast_cma_split(bytes);
  std::byte* line = nullptr;
  if (int e = claim_slot(s, c, seq, sizeof(PairBcast), func, &line)) return finish(s, c, seq, e);
  if (c.rank == root) {
    Scratch staging;
    const Src readable = plain_for_peers(buf, bytes, staging);
    publish_buffers(s, c, seq, readable.ptr, nullptr, bytes);
    int e = wait_for(c, func, [&] { return has_posted(s, other, seq); });
    uint64_t pushed = 0;
    if (e == XMSG_SUCCESS && !same_size(s, other, seq, bytes)) e = size_mismatch(c, other, func);
    if (e == XMSG_SUCCESS && split < bytes) {
      if (const uint64_t to = buffers_of(s, other, seq).recv; to != 0) {
        std::string err;
        pushed = transport::shm::write_process_memory(s.pids[static_cast<size_t>(other)], to + static_cast<uint64_t>(split),
                                                      readable.ptr + split, static_cast<size_t>(bytes - split), err);
      }
    }
    std::memcpy(line + offsetof(PairBcast, pushed), &pushed, sizeof pushed);
    return finish_and_wait_all_done(s, c, seq, e, func);
  }
  const bool plain = !buf.layout;
  publish_buffers(s, c, seq, nullptr, plain ? buf.ptr : nullptr, bytes);
  int e = wait_for(c, func, [&] { return has_posted(s, root, seq); });
  if (e == XMSG_SUCCESS && !same_size(s, root, seq, bytes)) e = size_mismatch(c, root, func);
  const uint64_t from = e == XMSG_SUCCESS ? buffers_of(s, root, seq).send : 0;
  if (!plain) return bcast_read_whole(s, c, seq, root, from, buf, bytes, e, func);
  if (e == XMSG_SUCCESS) e = read_peer(s, c, root, from, buf, split, func);
  // The root's write lands in our buffer: we may return only once it is done.
  if (int waited = wait_for(c, func, [&] { return s.region.done(root).load(std::memory_order_acquire) >= seq; }); e == XMSG_SUCCESS)
    e = waited;
  uint64_t pushed = 0;
  std::memcpy(&pushed, s.region.data(root, seq, sizeof(PairBcast)) + offsetof(PairBcast, pushed), sizeof pushed);
  if (e == XMSG_SUCCESS && split < bytes && !pushed)
    e = read_peer(s, c, root, from + static_cast<uint64_t>(split), at(buf, split), bytes - split, func);
  return finish(s, c, seq, e);
}

}  // namespace

int shm_bcast_cma(NodeShm& s, const Comm& c, Dst buf, int64_t bytes, int root) {
  if (c.size == 2) return shm_bcast_cma_pair(s, c, buf, bytes, root);
  const char* func = "xmsg_bcast";
  const uint64_t seq = start_rooted(s, root);
  if (c.rank == root) {
    std::byte* line = nullptr;
    if (int e = claim_slot(s, c, seq, sizeof(Buffers), func, &line)) return finish(s, c, seq, e);
    Scratch staging;
    const Src readable = plain_for_peers(buf, bytes, staging);
    publish_buffers(s, c, seq, readable.ptr, readable.ptr, bytes);
    return finish_and_wait_all_done(s, c, seq, XMSG_SUCCESS, func);
  }
  int e = wait_for(c, func, [&] { return has_posted(s, root, seq); });
  if (e == XMSG_SUCCESS && !same_size(s, root, seq, bytes)) e = size_mismatch(c, root, func);
  return bcast_read_whole(s, c, seq, root, e == XMSG_SUCCESS ? buffers_of(s, root, seq).send : 0, buf, bytes, e, func);
}

namespace {

// The single-copy exchanges: every rank publishes `mine` (`bytes` long, packed first when laid),
// copies its own block from it at `own_at` (none: -1), then reads `block` bytes at `read_at`
// of every peer's published buffer into block `peer` of its recvbuf, and returns once every
// reader of its buffer is done.
int exchange_cma(NodeShm& s, const Comm& c, const char* func, Src mine, int64_t bytes, int64_t own_at, Dst recvbuf,
                 int64_t block, int64_t read_at) {
  const uint64_t seq = start(s);
  std::byte* line = nullptr;
  if (int e = claim_slot(s, c, seq, sizeof(Buffers), func, &line)) return finish(s, c, seq, e);
  Scratch staging;
  const Src readable = plain_for_peers(mine, bytes, staging);
  publish_buffers(s, c, seq, readable.ptr, recvbuf.ptr, block);
  if (own_at >= 0) copy_bytes(at(recvbuf, c.rank * block), at(readable, own_at), block);  // (packed already when laid)
  int e = visit_peers_when_ready(
      c, func, [&](int peer) { return has_posted(s, peer, seq); },
      [&](int peer) -> int {
        if (!same_size(s, peer, seq, block)) return size_mismatch(c, peer, func);
        return read_peer(s, c, peer, buffers_of(s, peer, seq).send + static_cast<uint64_t>(read_at),
                         at(recvbuf, peer * block), block, func);
      });
  return finish_and_wait_all_done(s, c, seq, e, func);
}

}  // namespace

// Each rank reads block `rank` of every peer's sendbuf.
int shm_alltoall_cma(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const int64_t mine = c.rank * block;
  return exchange_cma(s, c, "xmsg_alltoall", sendbuf, c.size * block, mine, recvbuf, block, mine);
}

// Each rank reads every peer's block from the peer's sendbuf (in place: from its recvbuf, whose
// other blocks only their owners' readers write).
int shm_allgather_cma(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const Src mine = sendbuf ? sendbuf : Src(at(recvbuf, c.rank * block));
  return exchange_cma(s, c, "xmsg_allgather", mine, block, sendbuf ? 0 : -1, recvbuf, block, 0);
}

// Reduce-scatter, then allgather, both reading peers' buffers in place: rank i folds chunk i
// of every rank's sendbuf into chunk i of its recvbuf (in pieces that stay in cache), says so
// in its `stage` counter, then copies chunk j of rank j's recvbuf for every j. In place
// (sendbuf == recvbuf), chunk j of our buffer is overwritten only after rank j's stage, i.e.
// after rank j, its only reader in the first phase, has read it.
// Folds bytes [offset, offset + len * es) of every rank's send buffer into `acc` (`operand`
// holds a piece read). A commutative op may take any order and one rank computes each element,
// so every rank still gets the same bits: from the next peer's piece on, our own folded in
// last, unread. Others in rank order: v0 op (v1 op (... op v(n-1))).
static int fold_pieces(NodeShm& s, const Comm& c, uint64_t seq, const void* sendbuf, int64_t offset, int64_t len,
                       std::byte* acc, std::byte* operand, const ReduceOp& op, const char* func) {
  const int n = c.size, me = c.rank;
  const int64_t bytes = len * static_cast<int64_t>(op.elem_size);
  auto read_into = [&](int r, void* dst) -> int {
    if (r == me) {
      copy_bytes(dst, at(sendbuf, offset), bytes);
      return XMSG_SUCCESS;
    }
    return read_peer(s, c, r, buffers_of(s, r, seq).send + static_cast<uint64_t>(offset), dst, bytes, func);
  };
  int e = XMSG_SUCCESS;
  if (op.commutative) {
    e = read_into((me + 1) % n, acc);
    for (int step = 2; step < n && e == XMSG_SUCCESS; ++step) {
      e = read_into((me + step) % n, operand);
      if (e == XMSG_SUCCESS) op.apply(operand, acc, len);
    }
    if (e == XMSG_SUCCESS) op.apply(at(sendbuf, offset), acc, len);
    return e;
  }
  e = read_into(n - 1, acc);
  for (int r = n - 2; r >= 0 && e == XMSG_SUCCESS; --r) {
    if (r == me) {
      op.apply(at(sendbuf, offset), acc, len);
      continue;
    }
    e = read_into(r, operand);
    if (e == XMSG_SUCCESS) op.apply(operand, acc, len);
  }
  return e;
}

int shm_allreduce_cma(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t count,
                      const ReduceOp& op) {
  const char* func = "xmsg_allreduce";
  const uint64_t seq = start(s);
  const int n = c.size, me = c.rank;
  const int64_t es = static_cast<int64_t>(op.elem_size);
  auto first = [&](int chunk) { return count * chunk / n; };  // element index where a chunk starts
  std::byte* line = nullptr;
  if (int e = claim_slot(s, c, seq, sizeof(Buffers), func, &line)) return finish(s, c, seq, e);
  publish_buffers(s, c, seq, sendbuf, recvbuf, count * es);

  const bool in_place = sendbuf == recvbuf;
  const int64_t piece = std::max<int64_t>(1, kCmaPieceBytes / es);
  const int64_t mine_lo = first(me), mine_count = first(me + 1) - mine_lo;
  Scratch operand(std::min(piece, mine_count) * es), acc_store(in_place ? std::min(piece, mine_count) * es : 0);
  int e = wait_all_posted(s, c, seq, func);
  if (const int other = e == XMSG_SUCCESS ? first_other_size(s, c, seq, count * es) : -1; other >= 0)
    e = size_mismatch(c, other, func);
  for (int64_t done = 0; e == XMSG_SUCCESS && done < mine_count; done += piece) {
    const int64_t len = std::min(piece, mine_count - done), offset = (mine_lo + done) * es;
    std::byte* acc = in_place ? acc_store.get() : at(recvbuf, offset);
    e = fold_pieces(s, c, seq, sendbuf, offset, len, acc, operand.get(), op, func);
    if (e == XMSG_SUCCESS && in_place) copy_bytes(at(recvbuf, offset), acc, len * es);
  }
  // Published even after an error, so no peer waits for a chunk that never comes (they fail
  // on their own: the only errors here are a dead or unreadable peer).
  s.region.stage(me).store(seq, std::memory_order_release);
  if (e == XMSG_SUCCESS)
    e = visit_peers_when_ready(
        c, func, [&](int peer) { return s.region.stage(peer).load(std::memory_order_acquire) >= seq; },
        [&](int peer) -> int {
          const int64_t offset = first(peer) * es;
          return read_peer(s, c, peer, buffers_of(s, peer, seq).recv + static_cast<uint64_t>(offset),
                           at(recvbuf, offset), (first(peer + 1) - first(peer)) * es, func);
        });
  return finish_and_wait_all_done(s, c, seq, e, func);
}

// The first phase of shm_allreduce_cma alone: each rank reads its own segment of every peer's
// vector and folds it straight into its receive buffer. Not in place (the caller copies the
// vector first: peers read it while we write our segment).
int shm_reduce_scatter_cma(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, const int64_t* counts,
                           const ReduceOp& op) {
  const char* func = "xmsg_reduce_scatter";
  const uint64_t seq = start(s);
  const int64_t es = static_cast<int64_t>(op.elem_size);
  int64_t total = 0, mine_lo = 0;
  for (int r = 0; r < c.size; ++r) {
    if (r < c.rank) mine_lo += counts[r];
    total += counts[r];
  }
  std::byte* line = nullptr;
  if (int e = claim_slot(s, c, seq, sizeof(Buffers), func, &line)) return finish(s, c, seq, e);
  publish_buffers(s, c, seq, sendbuf, recvbuf, total * es);
  const int64_t piece = std::max<int64_t>(1, kCmaPieceBytes / es), mine_count = counts[c.rank];
  Scratch operand(std::min(piece, mine_count) * es);
  int e = wait_all_posted(s, c, seq, func);
  if (const int other = e == XMSG_SUCCESS ? first_other_size(s, c, seq, total * es) : -1; other >= 0)
    e = size_mismatch(c, other, func);
  for (int64_t done = 0; e == XMSG_SUCCESS && done < mine_count; done += piece) {
    const int64_t len = std::min(piece, mine_count - done);
    e = fold_pieces(s, c, seq, sendbuf, (mine_lo + done) * es, len, at(recvbuf, done * es), operand.get(), op, func);
  }
  return finish_and_wait_all_done(s, c, seq, e, func);
}

int shm_bcast_pipe(NodeShm& s, const Comm& c, Dst buf, int64_t bytes, int root) {
  const char* func = "xmsg_bcast";
  const uint64_t seq = start_rooted(s, root);
  const int64_t chunk = static_cast<int64_t>(s.region.pipe_chunk_bytes());
  const uint64_t chunks = static_cast<uint64_t>(chunks_for(bytes, chunk));
  turn_rings(s, chunks);
  int e = XMSG_SUCCESS;
  if (c.rank == root) {
    // Only the root posts (readers never wait for each other): a reader whose count differs
    // finds the mismatch in the root's post, and leaves; the root, whose ring may then stay
    // full, notices that the reader it waits for has finished.
    pipe_post(s, c, seq, bytes);
    PipeWriter out(s, c, seq, [](uint64_t) { return kAllReaders; });
    auto reader_left = [&]() -> int {
      const int r = out.blocking_reader();
      if (r < 0 || s.region.done(r).load(std::memory_order_acquire) < seq || out.blocking_reader() != r)
        return XMSG_SUCCESS;
      return fail(XMSG_ERR_TRUNCATE,
                  "%s: rank %d finished the broadcast without reading all of root %d's data: the ranks passed "
                  "different counts or datatypes",
                  func, r, root);
    };
    std::byte* dst = nullptr;
    while (e == XMSG_SUCCESS && out.written() < chunks) {
      e = wait_for(c, func, [&] { return (dst = out.try_claim()) != nullptr; }, reader_left);
      if (e != XMSG_SUCCESS) break;
      const int64_t offset = static_cast<int64_t>(out.written()) * chunk;
      copy_bytes(dst, at(buf, offset), std::min(chunk, bytes - offset));
      out.commit();
    }
    return finish(s, c, seq, e);
  }
  for (uint64_t k = 0; e == XMSG_SUCCESS && k < chunks; ++k) {
    const std::byte* src = nullptr;
    e = wait_for(
        c, func, [&] { return (src = pipe_chunk(s, root, seq, k)) != nullptr; },
        [&] { return size_disagreement(s, c, seq, bytes, func); });
    if (e != XMSG_SUCCESS) break;
    const int64_t offset = static_cast<int64_t>(k) * chunk;
    copy_bytes(at(buf, offset), src, std::min(chunk, bytes - offset));
    pipe_release(s, c, root, seq, k);
  }
  // The root posted before its first chunk, so its post is visible once a chunk was.
  if (e == XMSG_SUCCESS && (!has_posted(s, root, seq) || !same_size(s, root, seq, bytes)))
    e = size_mismatch(c, root, func);
  return finish(s, c, seq, e);
}

// Every rank streams its blocks for ranks rank+1, rank+2, ... through its pipeline and takes
// the chunks for it from whichever writer has one ready (a reader never waits for one writer
// while another's ring is full, so the rings never deadlock; when ranks outnumber cores a
// reader takes what the writers scheduled so far have written).
int shm_alltoall_pipe(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  const char* func = "xmsg_alltoall";
  const uint64_t seq = start(s);
  const int n = c.size, me = c.rank;
  const int64_t chunk = static_cast<int64_t>(s.region.pipe_chunk_bytes());
  const uint64_t per_block = static_cast<uint64_t>(chunks_for(block, chunk));
  const uint64_t total = per_block * static_cast<uint64_t>(n - 1);
  turn_rings(s, total);
  pipe_post(s, c, seq, block);
  PipeWriter out(s, c, seq, [=](uint64_t k) { return static_cast<uint64_t>((me + 1 + static_cast<int>(k / per_block)) % n); });
  std::vector<uint64_t> taken(static_cast<size_t>(n), 0);  // chunks taken from each writer
  uint64_t read = 0;
  // Our own block is copied a chunk at a time whenever a pass finds no ring work (the peers'
  // chunks not written yet, our ring full), so the copy fills the waits instead of delaying
  // our first chunk: at 2 ranks pinned, 1 MiB, that is 3 copies of the block on each core with
  // one of them overlapped.
  int64_t own_copied = 0;
  auto copy_own_piece = [&] {
    const int64_t len = std::min(chunk, block - own_copied);
    copy_bytes(at(recvbuf, me * block + own_copied), at(sendbuf, me * block + own_copied), len);
    own_copied += len;
  };
  int e = wait_for(c, func, [&] {
    const uint64_t before = out.written() + read;
    while (out.written() < total) {
      std::byte* dst = out.try_claim();
      if (!dst) break;
      const uint64_t k = out.written();
      const int dest = (me + 1 + static_cast<int>(k / per_block)) % n;
      const int64_t offset = static_cast<int64_t>(k % per_block) * chunk;
      copy_bytes(dst, at(sendbuf, dest * block + offset), std::min(chunk, block - offset));
      out.commit();
    }
    for (int step = 1; step < n; ++step) {
      const int from = (me - step + n) % n;
      uint64_t& got = taken[static_cast<size_t>(from)];
      while (got < per_block) {
        const uint64_t k = got + static_cast<uint64_t>(step - 1) * per_block;
        const std::byte* src = pipe_chunk(s, from, seq, k);
        if (!src) break;
        const int64_t offset = static_cast<int64_t>(got) * chunk;
        copy_bytes(at(recvbuf, from * block + offset), src, std::min(chunk, block - offset));
        pipe_release(s, c, from, seq, k);
        ++got;
        ++read;
      }
    }
    if (own_copied < block && (out.written() + read == before || (out.written() == total && read == total)))
      copy_own_piece();
    return out.written() == total && read == total && own_copied == block;
  }, [&] { return size_disagreement(s, c, seq, block, func); });
  return finish(s, c, seq, pipe_agreement(s, c, seq, block, e, func));
}

// Commutative ops only. Reduce-scatter: every rank streams segment j of its vector to rank j
// (pairwise order, as alltoall); rank j folds each into segment j of its recvbuf straight
// from the writer's chunk, in a fixed order (ranks j-1, j-2, ...), so results are the same
// from run to run. Allgather: every rank streams its finished segment once, read by all.
// In place, segment j of our buffer is overwritten by rank j's result only after rank j has
// folded everything, including the copy of that segment we streamed to it.
namespace {

// The pipelined reduce-scatter + allgather that allreduce runs, and its halves on their own:
// reduce_scatter is phase 1 only, allgather phase 2 only. Segment j (elements
// first[j] .. first[j + 1] of the vector) ends on rank j.
//   phase 1 (reduce): each rank streams segment j of `input` to rank j, which folds it into
//                     `result` (its own segment, which starts as a copy of input's) straight
//                     from the chunk, always in the order rank j-1, j-2, ... (same bits from
//                     run to run);
//   phase 2 (gather): each rank streams its finished segment once (from `result`, or from
//                     `own` when there was no phase 1) and every rank copies everyone's into
//                     `gathered` at its place, from whichever writer has a chunk ready (a fixed
//                     order deadlocks once a segment outgrows the ring: each writer would wait
//                     for a reader waiting for another writer).
// Without phase 1, the copy of our own segment into `gathered` is done a chunk at a time in the
// passes that find no ring work (as in the alltoall), so it fills waits instead of delaying
// our first chunk.
struct PipeJob {
  const char* func;
  int64_t total_bytes;       // posted: every rank must pass the same
  const int64_t* first;      // n + 1 segment boundaries, in elements
  int64_t es;                // element size
  const ReduceOp* op;        // phase 1 when set
  const void* input;         // phase 1: the whole vector
  std::byte* result;         // phase 1: our segment, folded here
  bool gather;               // phase 2
  Src own;                   // phase 2 without phase 1: our segment's data
  Dst gathered;              // phase 2: the whole vector lands here (our segment included)
};

int pipe_reduce_gather(NodeShm& s, const Comm& c, const PipeJob& job) {
  const char* func = job.func;
  const uint64_t seq = start(s);
  const int n = c.size, me = c.rank;
  const int64_t es = job.es;
  const bool reduce = job.op != nullptr;
  const int64_t per_chunk = std::max<int64_t>(1, static_cast<int64_t>(s.region.pipe_chunk_bytes()) / es);
  auto first = [&](int segment) { return job.first[segment]; };
  auto chunks_of = [&](int segment) { return static_cast<uint64_t>(chunks_for(first(segment + 1) - first(segment), per_chunk)); };
  // Where each writer's stream holds what: phase 1 sends segment (w + t) % n at step t, then
  // phase 2 its own segment.
  auto phase1_start = [&](int writer, int step) {
    uint64_t k = 0;
    if (reduce)
      for (int t = 1; t < step; ++t) k += chunks_of((writer + t) % n);
    return k;
  };
  const uint64_t my_phase1 = phase1_start(me, n), my_total = my_phase1 + (job.gather ? chunks_of(me) : 0);
  turn_rings(s, phase1_start(0, n) + (job.gather ? chunks_of(0) : 0));  // rank 0's stream: all ranks know it
  pipe_post(s, c, seq, job.total_bytes);
  PipeWriter out(s, c, seq, [&, my_phase1](uint64_t k) {
    if (k >= my_phase1) return kAllReaders;
    int step = 1;
    for (uint64_t start = 0; start + chunks_of((me + step) % n) <= k; ++step) start += chunks_of((me + step) % n);
    return static_cast<uint64_t>((me + step) % n);
  });
  const int64_t mine_lo = first(me), mine_count = first(me + 1) - mine_lo;
  const Src phase2_source = reduce ? Src(job.result) : job.own;
  if (reduce && at(job.input, mine_lo * es) != job.result)  // (in place: already there)
    copy_bytes(job.result, at(job.input, mine_lo * es), mine_count * es);
  int64_t own_copied = reduce || !job.gather || job.own.same_as(at(job.gathered, mine_lo * es)) ? mine_count : 0;

  int out_step = reduce ? 1 : n;  // phase 1: segment being written, and how much of it
  int64_t out_elem = 0;
  int in_step = reduce ? 1 : n;   // phase 1: writer being folded in (rank me - in_step), and how far
  int64_t in_elem = 0;
  uint64_t in_start = phase1_start((me - 1 + n) % n, 1);
  std::vector<int64_t> gathered(static_cast<size_t>(n), 0);  // phase 2: elements copied, per writer
  int gathered_segments = 0;
  for (int r = 0; r < n; ++r)
    if (r != me && first(r + 1) == first(r)) ++gathered_segments;
  int e = wait_for(c, func, [&] {
    const uint64_t progress_before = out.written();
    int64_t taken = 0;
    // Phase 1 out: segment (me + out_step) % n of our input.
    while (out_step < n) {
      const int segment = (me + out_step) % n;
      const int64_t seg_count = first(segment + 1) - first(segment);
      if (out_elem >= seg_count) {
        ++out_step;
        out_elem = 0;
        continue;
      }
      std::byte* dst = out.try_claim();
      if (!dst) break;
      const int64_t len = std::min(per_chunk, seg_count - out_elem);
      copy_bytes(dst, at(job.input, (first(segment) + out_elem) * es), len * es);
      out.commit();
      out_elem += len;
    }
    // Phase 1 in: fold rank (me - in_step)'s copy of our segment.
    while (in_step < n) {
      if (in_elem >= mine_count) {
        if (++in_step < n) in_start = phase1_start((me - in_step + n) % n, in_step);
        in_elem = 0;
        continue;
      }
      const int from = (me - in_step + n) % n;
      const uint64_t k = in_start + static_cast<uint64_t>(in_elem / per_chunk);
      const std::byte* src = pipe_chunk(s, from, seq, k);
      if (!src) break;
      const int64_t len = std::min(per_chunk, mine_count - in_elem);
      job.op->apply(src, job.result + in_elem * es, len);
      pipe_release(s, c, from, seq, k);
      in_elem += len;
    }
    if (in_step < n || out_step < n) return false;
    // Phase 2 out: our finished segment, once for everyone.
    while (out.written() < my_total) {
      std::byte* dst = out.try_claim();
      if (!dst) break;
      const int64_t done_elems = static_cast<int64_t>(out.written() - my_phase1) * per_chunk;
      copy_bytes(dst, at(phase2_source, done_elems * es), std::min(per_chunk, mine_count - done_elems) * es);
      out.commit();
    }
    // Phase 2 in: every rank's segment, from whichever writer has a chunk ready.
    if (job.gather)
      for (int step = 1; step < n; ++step) {
        const int from = (me - step + n) % n;
        const int64_t seg_count = first(from + 1) - first(from);
        int64_t& got = gathered[static_cast<size_t>(from)];
        while (got < seg_count) {
          const uint64_t k = phase1_start(from, n) + static_cast<uint64_t>(got / per_chunk);
          const std::byte* src = pipe_chunk(s, from, seq, k);
          if (!src) break;
          const int64_t len = std::min(per_chunk, seg_count - got);
          copy_bytes(at(job.gathered, (first(from) + got) * es), src, len * es);
          pipe_release(s, c, from, seq, k);
          got += len;
          taken += len;
          if (got == seg_count) ++gathered_segments;
        }
      }
    // Our own segment into place, a chunk per pass that found nothing else to do (or once
    // everything else is done).
    if (own_copied < mine_count &&
        ((out.written() == progress_before && taken == 0) || (out.written() == my_total && gathered_segments == n - 1))) {
      const int64_t len = std::min(per_chunk, mine_count - own_copied);
      copy_bytes(at(job.gathered, (mine_lo + own_copied) * es), at(job.own, own_copied * es), len * es);
      own_copied += len;
    }
    return out.written() == my_total && (!job.gather || gathered_segments == n - 1) && own_copied == mine_count;
  }, [&] { return size_disagreement(s, c, seq, job.total_bytes, func); });
  return finish(s, c, seq, pipe_agreement(s, c, seq, job.total_bytes, e, func));
}

}  // namespace

int shm_allreduce_pipe(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t count,
                       const ReduceOp& op) {
  std::vector<int64_t> first(static_cast<size_t>(c.size) + 1);
  for (int j = 0; j <= c.size; ++j) first[static_cast<size_t>(j)] = count * j / c.size;
  const int64_t es = static_cast<int64_t>(op.elem_size);
  auto* out = static_cast<std::byte*>(recvbuf);
  return pipe_reduce_gather(s, c, PipeJob{"xmsg_allreduce", count * es, first.data(), es, &op, sendbuf,
                                          out + first[static_cast<size_t>(c.rank)] * es, true, nullptr, out});
}

int shm_reduce_scatter_pipe(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, const int64_t* counts,
                            const ReduceOp& op) {
  std::vector<int64_t> first(static_cast<size_t>(c.size) + 1, 0);
  for (int j = 0; j < c.size; ++j) first[static_cast<size_t>(j) + 1] = first[static_cast<size_t>(j)] + counts[j];
  const int64_t es = static_cast<int64_t>(op.elem_size);
  return pipe_reduce_gather(s, c, PipeJob{"xmsg_reduce_scatter", first.back() * es, first.data(), es, &op, sendbuf,
                                          static_cast<std::byte*>(recvbuf), false, nullptr, nullptr});
}

int shm_allgather_pipe(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block) {
  std::vector<int64_t> first(static_cast<size_t>(c.size) + 1);
  for (int j = 0; j <= c.size; ++j) first[static_cast<size_t>(j)] = block * j;
  const Src own = sendbuf ? sendbuf : Src(at(recvbuf, c.rank * block));
  return pipe_reduce_gather(s, c, PipeJob{"xmsg_allgather", block, first.data(), 1, nullptr, nullptr, nullptr, true,
                                          own, recvbuf});
}

PostedSize::PostedSize(NodeShm* s, const Comm& c, int64_t bytes, const char* func)
    : s_(s), c_(c), bytes_(bytes), func_(func), notices_(c, bytes, func) {
  if (s_) {
    seq_ = start(*s_);
    pipe_post(*s_, c_, seq_, bytes_);  // no claim needed: see there
  } else if (c.members || c.size < 2 || c.handle < 0) {
    return;  // a node-aware part: the whole communicator's check is in force already
  } else {
    notices_.begin();
  }
  installed_ = true;
  outer_ = std::exchange(active_stall_check(), this);
}

PostedSize::~PostedSize() {
  if (!installed_) return;
  active_stall_check() = outer_;
  if (s_) finish(*s_, c_, seq_, XMSG_SUCCESS);
}

int PostedSize::check() { return s_ ? size_disagreement(*s_, c_, seq_, bytes_, func_) : notices_.check(); }

}  // namespace xmsg::coll

void xmsgi_coll_comm_freed(xmsg_comm_t comm) {
  auto& states = xmsg::coll::by_comm();
  if (comm >= 0 && static_cast<size_t>(comm) < states.size()) states[static_cast<size_t>(comm)].reset();
  xmsg::coll::forget_collective_count(comm);
  xmsg::coll::forget_collective_calls(comm);
}
