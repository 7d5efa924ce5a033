// Communicator creation (split by color, create from a group) and release. Both agree a new
// context id among the members with point-to-point messages on the parent's collective
// context.
#include "World.hpp"

#include "xmsg_internal.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace xmsg::rt {

using transport::MessageKind;
using transport::WireHeader;
namespace protocol = transport::protocol;

// ---- Context ids under threads ----------------------------------------------------------------
// A new context id is the largest next_cid_ the members offer; each then moves next_cid_ past
// it. With one thread per process that is safe: a rank has one creation in progress. Threads
// (MPI_THREAD_MULTIPLE) may run several at once on different parents, and two of them offering
// the same next_cid_ could agree the same id with different members (messages of one
// communicator then match receives of another). So under threads a creation, once its members
// have exchanged and checked their arguments, agrees its id again in rounds among them:
//   every member tells the leader it has arrived; once all have, the leader says go;
//   at go a member offers next_cid_ if it can take this rank's right to offer (one creation
//   at a time holds it), or NONE; the leader answers the largest offer, or NONE if any member
//   offered NONE, and every member moves next_cid_ past it and gives the right back.
//   A NONE round is tried again.
// The right is taken only once every member has arrived, so its holder waits on nobody but
// the members answering: it is given back within the round. A member that finds it held offers
// NONE, except the creation with the lowest key among those in progress on its rank, which
// waits for it: every rank of the creation with the lowest key of all then offers at its next
// round, so some creation always completes, and holding the right never waits on the right.
namespace {
struct AgreeMessage {
  uint32_t kind;  // kArrive, kGo, kOffer, kResult
  uint32_t cid;   // kOffer, kResult: the id, or kNoOffer
};
constexpr uint32_t kArrive = 1, kGo = 2, kOffer = 3, kResult = 4;
constexpr uint32_t kNoOffer = ~0u;
}  // namespace

int World::agree_cid_threaded(const Comm& parent, const std::vector<int>& members, int wire_tag, uint64_t key,
                              uint32_t* cid, const char* func) {
  const uint32_t ctx = parent.coll_context();
  const bool leader = members[0] == rank_;
  creating_keys_.push_back(key);
  struct Forget {
    World& w;
    uint64_t key;
    ~Forget() {
      auto it = std::find(w.creating_keys_.begin(), w.creating_keys_.end(), key);
      if (it != w.creating_keys_.end()) w.creating_keys_.erase(it);
    }
  } forget{*this, key};
  auto tell = [&](int peer, uint32_t kind, uint32_t value) {
    const AgreeMessage out{kind, value};
    return send(ctx, &parent, peer, wire_tag, &out, sizeof out, func);
  };
  auto hear = [&](int peer, uint32_t kind, AgreeMessage* in) {
    int e = recv(ctx, &parent, peer, wire_tag, in, sizeof *in, nullptr, func);
    if (e == XMSG_SUCCESS && in->kind != kind)
      e = xmsgi_error(XMSG_ERR_INTERNAL, "%s: rank %d sent step %u of the context id agreement, expected %u", func,
                      peer, in->kind, kind);
    return e;
  };
  for (;;) {
    AgreeMessage msg{};
    if (leader) {
      for (size_t i = 1; i < members.size(); ++i)
        if (int e = hear(members[i], kArrive, &msg)) return e;
      for (size_t i = 1; i < members.size(); ++i)
        if (int e = tell(members[i], kGo, 0)) return e;
    } else {
      if (int e = tell(members[0], kArrive, 0)) return e;
      if (int e = hear(members[0], kGo, &msg)) return e;
    }
    // Go: every member has arrived.
    // Waiting, look again at every pause: a creation with a lower key may have begun here
    // meanwhile, and then this one must not wait (its holder may wait on this one's members).
    auto lowest = [&] { return key == *std::min_element(creating_keys_.begin(), creating_keys_.end()); };
    for (Idle idle; cid_offer_held_ && lowest();) {
      progress();
      idle.pause(*this);
    }
    const bool offering = !cid_offer_held_;
    if (offering) cid_offer_held_ = true;
    struct OfferRight {
      World& w;
      bool held;
      void give_back() {
        if (held) w.cid_offer_held_ = false;
        held = false;
      }
      ~OfferRight() { give_back(); }
    } right{*this, offering};
    uint32_t result = offering ? next_cid_ : kNoOffer;
    if (leader) {
      for (size_t i = 1; i < members.size(); ++i) {
        if (int e = hear(members[i], kOffer, &msg)) return e;
        result = (result == kNoOffer || msg.cid == kNoOffer) ? kNoOffer : std::max(result, msg.cid);
      }
      for (size_t i = 1; i < members.size(); ++i)
        if (int e = tell(members[i], kResult, result)) return e;
    } else {
      if (int e = tell(members[0], kOffer, result)) return e;
      if (int e = hear(members[0], kResult, &msg)) return e;
      result = msg.cid;
    }
    if (result != kNoOffer) {
      next_cid_ = std::max(next_cid_, result + 1);
      *cid = result;
      return XMSG_SUCCESS;
    }
    // Another creation holds the right here or at a member: let it finish before the next
    // round (holding nothing, this waits on nobody's members).
    right.give_back();
    for (Idle idle; cid_offer_held_ && !lowest();) {
      progress();
      idle.pause(*this);
    }
  }
}

int World::create_comm(Comm& parent, int color, int key, int* handle, const char* func) {
  struct Entry {
    int32_t color;
    int32_t key;
    uint32_t next_cid;
  };
  const int tag = XMSGI_TAG_RESERVED + 1;
  const uint32_t ctx = parent.coll_context();
  std::vector<Entry> all(parent.size);
  Entry mine{color, key, next_cid_};
  int rc = XMSG_SUCCESS;
  auto wait_one = [&](Request* r) {
    wait(r, func);
    int e = report(r, func);
    release(r);
    return e;
  };
  // Gather at parent rank 0, then send everyone the full table: O(size), done once per split.
  if (parent.rank == 0) {
    all[0] = mine;
    for (int i = 1; i < parent.size && rc == XMSG_SUCCESS; ++i) {
      Request* r = nullptr;
      rc = irecv(ctx, &parent, parent.world_of[i], tag, &all[i], sizeof(Entry), &r, func);
      if (rc == XMSG_SUCCESS) rc = wait_one(r);
    }
    for (int i = 1; i < parent.size && rc == XMSG_SUCCESS; ++i)
      rc = send(ctx, &parent, parent.world_of[i], tag, all.data(), all.size() * sizeof(Entry), func);
  } else {
    rc = send(ctx, &parent, parent.world_of[0], tag, &mine, sizeof mine, func);
    if (rc == XMSG_SUCCESS) {
      Request* r = nullptr;
      rc = irecv(ctx, &parent, parent.world_of[0], tag, all.data(), all.size() * sizeof(Entry), &r, func);
      if (rc == XMSG_SUCCESS) rc = wait_one(r);
    }
  }
  if (rc != XMSG_SUCCESS) return rc;
  uint32_t cid = 0;
  for (const Entry& e : all) cid = std::max(cid, e.next_cid);
  if (yield_hook) {
    // Under threads the offers above may collide with another creation's: agree again.
    const uint64_t order = (static_cast<uint64_t>(parent.cid) << 32) | 0xffffffffu;
    if (int e = agree_cid_threaded(parent, parent.world_of, tag, order, &cid, func)) return e;
  }
  next_cid_ = std::max(next_cid_, cid + 1);
  if (color == XMSG_UNDEFINED) {
    *handle = XMSG_COMM_NULL;
    return XMSG_SUCCESS;
  }
  std::vector<std::pair<std::pair<int, int>, int>> members;  // ((key, parent rank), world rank)
  for (int i = 0; i < parent.size; ++i)
    if (all[i].color == color) members.push_back({{all[i].key, i}, parent.world_of[i]});
  std::sort(members.begin(), members.end());
  std::vector<int> world_ranks;
  for (const auto& m : members) world_ranks.push_back(m.second);
  *handle = add_comm(cid, world_ranks);
  return XMSG_SUCCESS;
}

namespace {

// Tags of xmsg_comm_create_group on the parent's collective context: a slice of the reserved
// range above the one create_comm uses, indexed by the user's tag. The slice is smaller than
// the user's tag range, so two tags may share a wire tag; what keeps calls apart is then what
// also keeps them apart with distinct tags in a single-threaded process: every receive names
// its source (a member of this very call, which has no other create_group in progress with
// this rank), and one sender's messages arrive in the order sent. The user's tag also travels
// in the message: members that disagree on it but share a wire tag are reported, not matched.
constexpr int kGroupTagBase = XMSGI_TAG_RESERVED + 0x100;
constexpr int kGroupTagSlots = XMSG_TAG_UB - kGroupTagBase + 1;
static_assert(kGroupTagSlots > 0);

int group_wire_tag(int tag) { return kGroupTagBase + tag % kGroupTagSlots; }

// Identifies the (n, ranks) a member passed, so the first member can tell a member that passed
// a different list.
uint64_t ranks_digest(int n, const int* ranks) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over n and the ranks
  auto mix = [&h](uint32_t v) {
    for (int b = 0; b < 4; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<uint32_t>(n));
  for (int i = 0; i < n; ++i) mix(static_cast<uint32_t>(ranks[i]));
  return h;
}

}  // namespace

int World::create_group_comm(Comm& parent, int n, const int* ranks, int tag, int* handle, const char* func) {
  // Members report to the first listed rank (the new rank 0), which agrees the context id as
  // the largest next_cid_ among them and answers each. Non-members take no part: the id is
  // free at every member, and a communicator a non-member holds with some member has an id
  // below that member's next_cid_, so no traffic can share the new contexts.
  struct Report {
    int32_t tag;
    int32_t n;
    uint64_t digest;
    uint32_t next_cid;
    int32_t pad;
  };
  struct Answer {
    uint32_t cid;
    int32_t error;       // XMSG_SUCCESS, or why the call fails at every member
    int32_t culprit;     // parent rank that disagreed with ranks[0] (XMSG_ERR_TAG, XMSG_ERR_ARG)
    int32_t their_tag;   // the tag it passed (XMSG_ERR_TAG)
    int32_t leader_tag;  // the tag ranks[0] passed
  };
  const int wire_tag = group_wire_tag(tag);
  const uint32_t ctx = parent.coll_context();
  const Report mine{tag, n, ranks_digest(n, ranks), next_cid_, 0};
  const bool leader = parent.rank == ranks[0];
  Answer answer{next_cid_, XMSG_SUCCESS, -1, 0, tag};
  int rc = XMSG_SUCCESS;
  std::string why;  // message of the first local failure
  auto note = [&](int e) {
    if (e != XMSG_SUCCESS && rc == XMSG_SUCCESS) {
      rc = e;
      why = xmsg_last_error_message();
    }
  };
  if (leader) {
    // Hear every member, also after a failure, so no report is left behind to match a later
    // call; then answer every member, so none waits on this rank.
    for (int i = 1; i < n; ++i) {
      Report theirs{};
      Request* r = nullptr;
      int e = irecv(ctx, &parent, parent.world_of[ranks[i]], wire_tag, &theirs, sizeof theirs, &r, func);
      if (e == XMSG_SUCCESS) {
        wait(r, func);
        e = report(r, func);
        release(r);
      }
      note(e);
      if (e != XMSG_SUCCESS) continue;
      answer.cid = std::max(answer.cid, theirs.next_cid);
      if (answer.error != XMSG_SUCCESS) continue;
      if (theirs.tag != tag) {
        answer.error = XMSG_ERR_TAG;
        answer.culprit = ranks[i];
        answer.their_tag = theirs.tag;
      } else if (theirs.n != n || theirs.digest != mine.digest) {
        answer.error = XMSG_ERR_ARG;
        answer.culprit = ranks[i];
      }
    }
    if (rc != XMSG_SUCCESS) answer.error = rc;
    for (int i = 1; i < n; ++i)
      note(send(ctx, &parent, parent.world_of[ranks[i]], wire_tag, &answer, sizeof answer, func));
  } else {
    const int first = parent.world_of[ranks[0]];
    note(send(ctx, &parent, first, wire_tag, &mine, sizeof mine, func));
    if (rc == XMSG_SUCCESS) {
      Request* r = nullptr;
      int e = irecv(ctx, &parent, first, wire_tag, &answer, sizeof answer, &r, func);
      if (e == XMSG_SUCCESS) {
        wait(r, func);
        e = report(r, func);
        release(r);
      }
      note(e);
    }
  }
  if (rc != XMSG_SUCCESS) return xmsgi_error(rc, "%s", why.c_str());
  switch (answer.error) {
    case XMSG_SUCCESS:
      break;
    case XMSG_ERR_TAG:
      return xmsgi_error(XMSG_ERR_TAG,
                         "%s: rank %d of comm passed tag %d where rank %d (ranks[0]) passed tag %d: every listed "
                         "rank must pass the same tag",
                         func, answer.culprit, answer.their_tag, ranks[0], answer.leader_tag);
    case XMSG_ERR_ARG:
      return xmsgi_error(XMSG_ERR_ARG,
                         "%s: rank %d of comm passed a different n or ranks[] than rank %d (ranks[0]): every listed "
                         "rank must pass the same list",
                         func, answer.culprit, ranks[0]);
    default:
      return xmsgi_error(answer.error, "%s: rank %d (ranks[0]) could not hear from every listed rank: %s", func,
                         ranks[0], xmsg_error_string(answer.error));
  }
  std::vector<int> world_ranks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) world_ranks[static_cast<size_t>(i)] = parent.world_of[ranks[i]];
  if (yield_hook) {
    // The members agree on the arguments: under threads agree the id again (see above).
    const uint64_t order = (static_cast<uint64_t>(parent.cid) << 32) | static_cast<uint32_t>(tag);
    if (int e = agree_cid_threaded(parent, world_ranks, wire_tag, order, &answer.cid, func)) return e;
  }
  next_cid_ = std::max(next_cid_, answer.cid + 1);
  *handle = add_comm(answer.cid, world_ranks);
  return XMSG_SUCCESS;
}

int World::add_comm(uint32_t cid, const std::vector<int>& world_ranks) {
  auto c = std::make_unique<Comm>();
  c->cid = cid;
  c->size = static_cast<int>(world_ranks.size());
  c->comm_of.assign(size_, -1);
  for (int i = 0; i < c->size; ++i) {
    c->world_of.push_back(world_ranks[static_cast<size_t>(i)]);
    c->comm_of[world_ranks[static_cast<size_t>(i)]] = i;
  }
  c->rank = c->comm_of[rank_];
  c->note_order();
  if (comm_by_cid_.size() <= cid) comm_by_cid_.resize(cid + 1, nullptr);
  comm_by_cid_[cid] = c.get();
  if (comms_.size() < kDirectComms) direct_comms_[comms_.size()] = c.get();
  comms_.push_back(std::move(c));
  return static_cast<int>(comms_.size() - 1);
}

int World::free_comm(int handle) {
  // The object stays (pending requests may still point at it); the handle becomes invalid.
  comms_[handle]->valid = false;
  if (static_cast<unsigned>(handle) < kDirectComms) direct_comms_[static_cast<unsigned>(handle)] = nullptr;
  return XMSG_SUCCESS;
}

}  // namespace xmsg::rt
