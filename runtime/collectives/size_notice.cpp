// Size notices: how ranks that passed different counts to one collective find out on a
// communicator without a node region (it spans nodes, or the shared-memory path is off), where
// their different counts may have sent them down different point-to-point algorithms that wait
// for each other's messages forever (docs/collectives.md, "Ranks that disagree").
//
// A wait of such an algorithm that has lasted kSizeNoticeAfter sends every other rank of the
// communicator one SizeNotice (which collective: the communicator's collective count; which
// call; the byte count passed) and from then on reads the notices that come in. A notice of the
// same collective with another call or byte count ends the wait with XMSG_ERR_TRUNCATE naming
// that rank. Nothing is sent in a collective that does not stall, so a correct program pays
// one clock read per 256 polls of a stalled wait, and a notice per rank pair per collective
// that stalls past kSizeNoticeAfter (they wait in the receivers' queues of the hidden context until
// the receiver's next stalled collective reads them).
#include <algorithm>
#include <cinttypes>
#include <deque>
#include <vector>

#include "coll.hpp"
#include "xmsg_internal.h"

namespace xmsg::coll {

namespace {

// Long enough that a rank merely waiting for a late peer almost never sends; short enough that
// a job whose ranks disagree ends within a second or two.
constexpr auto kSizeNoticeAfter = std::chrono::milliseconds(500);

struct CommCounts {
  uint64_t collectives = 0;
  std::deque<SizeNotice> sent;      // kept until the communicator goes: a queued send reads its notice
  std::vector<std::pair<int, SizeNotice>> early;  // received for a collective not reached yet
};

// A deque: growing it for a new communicator leaves every CommCounts where it is (a queued send
// reads its notice from `sent`, and under MPI_THREAD_MULTIPLE another thread's first collective
// on a new communicator may grow it while this one waits).
std::deque<CommCounts>& by_comm() {
  static std::deque<CommCounts> counts;
  return counts;
}

CommCounts& counts_of(xmsg_comm_t comm) {
  auto& v = by_comm();
  if (static_cast<size_t>(comm) >= v.size()) v.resize(static_cast<size_t>(comm) + 1);
  return v[static_cast<size_t>(comm)];
}

uint64_t call_fingerprint(const char* func) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char* p = func; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  return h;
}

}  // namespace

void forget_collective_count(xmsg_comm_t comm) {
  auto& v = by_comm();
  if (comm >= 0 && static_cast<size_t>(comm) < v.size()) v[static_cast<size_t>(comm)] = CommCounts{};
}

SizeNotices::SizeNotices(const Comm& c, int64_t bytes, const char* func) : c_(c), bytes_(bytes), func_(func) {}

void SizeNotices::begin() { collective_ = ++counts_of(c_.handle).collectives; }

SizeNotices::~SizeNotices() {
  if (receive_ != XMSG_REQUEST_NULL) {
    xmsg_cancel(&receive_);
    xmsg_request_free(&receive_);
  }
}

void SizeNotices::send_ours(int only_to) {
  CommCounts& counts = counts_of(c_.handle);
  counts.sent.push_back(SizeNotice{collective_, bytes_, call_fingerprint(func_)});
  const SizeNotice& n = counts.sent.back();
  for (int r = 0; r < c_.size; ++r) {
    if (r == c_.rank || (only_to >= 0 && r != only_to)) continue;
    xmsg_request_t send = XMSG_REQUEST_NULL;
    if (xmsgi_coll_isend(&n, sizeof n, r, kTagSizeNotice, c_.handle, &send) == XMSG_SUCCESS)
      xmsg_request_free(&send);
  }
  sent_ = true;
}

int SizeNotices::compare(int from, const SizeNotice& n) {
  if (n.collective != collective_) return XMSG_SUCCESS;
  if (n.bytes == bytes_ && n.call == call_fingerprint(func_)) return XMSG_SUCCESS;
  if (!sent_) send_ours(from);  // so that `from` finds out too
  if (n.call != call_fingerprint(func_))
    return fail(XMSG_ERR_TRUNCATE, "%s: rank %d is in another collective call than rank %d (collective %" PRIu64
                " on this communicator): the ranks called different collectives", func_, from, c_.rank, collective_);
  return fail(XMSG_ERR_TRUNCATE,
              "%s: rank %d passed %" PRId64 " bytes, rank %d %" PRId64 ": the ranks passed different counts or "
              "datatypes (found by a size notice after a stalled wait)",
              func_, from, n.bytes, c_.rank, bytes_);
}

int SizeNotices::check() {
  const auto now = std::chrono::steady_clock::now();
  if (!stalled_) {
    // The first look: the wait has lasted 256 polls. Time it from here.
    stalled_ = true;
    since_ = now;
    return XMSG_SUCCESS;
  }
  if (!reading_) {
    if (now - since_ < kSizeNoticeAfter) return XMSG_SUCCESS;
    reading_ = true;
    if (!sent_) send_ours(-1);
    // SizeNotices that came early, for this collective, before it began here.
    auto& early = counts_of(c_.handle).early;
    for (const auto& [from, n] : early)
      if (int e = compare(from, n)) return e;
    std::erase_if(early, [&](const auto& e) { return e.second.collective <= collective_; });
  }
  for (;;) {
    if (receive_ == XMSG_REQUEST_NULL &&
        xmsgi_coll_irecv(&incoming_, sizeof incoming_, XMSG_ANY_SOURCE, kTagSizeNotice, c_.handle, &receive_) !=
            XMSG_SUCCESS)
      return XMSG_SUCCESS;
    int done = 0;
    xmsg_status_t st{};
    if (xmsg_test(&receive_, &done, &st) != XMSG_SUCCESS || !done) return XMSG_SUCCESS;
    receive_ = XMSG_REQUEST_NULL;
    if (st.bytes != static_cast<int64_t>(sizeof incoming_)) continue;
    if (incoming_.collective > collective_) {
      counts_of(c_.handle).early.emplace_back(st.source, incoming_);
      continue;
    }
    if (int e = compare(st.source, incoming_)) return e;
  }
}

}  // namespace xmsg::coll
