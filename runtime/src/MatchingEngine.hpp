// MatchingEngine: MPI matching on (context, source, tag) with ANY_SOURCE / ANY_TAG.
//
// Per context: posted receives in a per-source bucket plus one wildcard (ANY_SOURCE) list, and
// unexpected messages in a per-source bucket plus one arrival-ordered list. The common case
// (specific source, tag matches the first entry) is O(1). An arriving message takes the
// earliest-posted matching receive: the first match of its source bucket or of the wildcard
// list, whichever has the smaller posting sequence number. A receive takes the earliest
// matching unexpected message from its source (or from all sources). Transports deliver each
// sender's messages in order, so this keeps MPI's non-overtaking rule.
#pragma once

#include <xmsg/transport/protocol.hpp>
#include <xmsg/transport/transport.hpp>

#include "IntrusiveList.hpp"
#include "Request.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace xmsg::rt {

// A message that arrived before its receive was posted.
struct Unexpected {
  int source = -1;  // world rank
  int tag = 0;
  transport::MessageKind kind{};
  uint64_t length = 0;      // message length
  std::byte* data = nullptr;  // eager: copy of the payload (malloc'd)
  transport::protocol::RendezvousRts rts{};  // rendezvous: the sender's request and buffer
  bool packed = false;                        // rendezvous: the sender streams a packed buffer
  Link<Unexpected> by_source;
  Link<Unexpected> by_arrival;
};

inline bool tag_matches(int want, int have) { return want == XMSG_ANY_TAG || want == have; }

class ContextQueues {
 public:
  explicit ContextQueues(int world_size) : posted_(world_size), unexpected_(world_size) {}

  // Earliest posted receive matching (source, tag), removed from its list; nullptr if none.
  Request* take_posted(int source, int tag) {
    Request* a = first_posted(posted_[source].front(), tag);
    Request* w = first_posted(wildcard_.front(), tag);
    Request* r = (a && w) ? (a->seq < w->seq ? a : w) : (a ? a : w);
    if (r) unpost(r);
    return r;
  }

  void post(Request* r) {
    r->posted = true;
    if (r->peer < 0) wildcard_.push_back(r);
    else posted_[r->peer].push_back(r);
  }
  void unpost(Request* r) {
    r->posted = false;
    if (r->peer < 0) wildcard_.remove(r);
    else posted_[r->peer].remove(r);
  }

  // Earliest unexpected message matching (source or -1, tag); stays queued.
  Unexpected* find_unexpected(int source, int tag) const {
    if (source >= 0) {
      for (Unexpected* u = unexpected_[source].front(); u; u = BySource::next(u))
        if (tag_matches(tag, u->tag)) return u;
    } else {
      for (Unexpected* u = arrival_.front(); u; u = ByArrival::next(u))
        if (tag_matches(tag, u->tag)) return u;
    }
    return nullptr;
  }
  void add_unexpected(Unexpected* u) {
    unexpected_[u->source].push_back(u);
    arrival_.push_back(u);
  }
  void remove_unexpected(Unexpected* u) {
    unexpected_[u->source].remove(u);
    arrival_.remove(u);
  }

  using Posted = IntrusiveList<Request, &Request::link>;
  using BySource = IntrusiveList<Unexpected, &Unexpected::by_source>;
  using ByArrival = IntrusiveList<Unexpected, &Unexpected::by_arrival>;

  Posted& posted_from(int source) { return posted_[source]; }
  Posted& wildcard() { return wildcard_; }
  ByArrival& arrivals() { return arrival_; }

 private:
  static Request* first_posted(Request* r, int tag) {
    for (; r; r = Posted::next(r))
      if (tag_matches(r->tag, tag)) return r;
    return nullptr;
  }
  std::vector<Posted> posted_;
  Posted wildcard_;
  std::vector<BySource> unexpected_;
  ByArrival arrival_;
};

// All contexts of this process, created lazily (a peer may send on a communicator this rank
// has not finished creating yet).
class MatchingEngine {
 public:
  explicit MatchingEngine(int world_size) : world_size_(world_size) {}
  // Inline for the contexts that exist (every message looks one up); creation out of line.
  ContextQueues& context(uint32_t id) {
    if (id < contexts_.size() && contexts_[id]) [[likely]]
      return *contexts_[id];
    return create(id);
  }
  template <class Fn>
  void for_each(Fn&& fn) {
    for (size_t i = 0; i < contexts_.size(); ++i)
      if (contexts_[i]) fn(static_cast<uint32_t>(i), *contexts_[i]);
  }

 private:
  [[gnu::noinline]] ContextQueues& create(uint32_t id) {
    if (id >= contexts_.size()) contexts_.resize(id + 1);
    auto& c = contexts_[id];
    if (!c) c = std::make_unique<ContextQueues>(world_size_);
    return *c;
  }
  int world_size_;
  std::vector<std::unique_ptr<ContextQueues>> contexts_;
};

}  // namespace xmsg::rt
