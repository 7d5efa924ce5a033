// The collectives' only contact with the point-to-point runtime: requests on the
// communicator's hidden collective context (so collective traffic never matches a user
// receive), argument checks shared with the rest of the C API, and error messages.
#include <xmsg/bootstrap/parameters.hpp>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "coll.hpp"
#include "plain_copy.hpp"
#include "xmsg_internal.h"

namespace xmsg::coll {

namespace {

// Blocking collective calls so far, by communicator handle (Comm::call).
std::vector<uint32_t>& calls_by_comm() {
  static std::vector<uint32_t> calls;
  return calls;
}

}  // namespace

int check_comm(xmsg_comm_t comm, const char* func, Comm* out) {
  int rank = 0, size = 0;
  if (int e = xmsgi_check_comm(comm, func, &rank, &size)) return e;
  auto& calls = calls_by_comm();
  if (static_cast<size_t>(comm) >= calls.size()) calls.resize(static_cast<size_t>(comm) + 1, 0);
  *out = Comm{comm, rank, size, nullptr, calls[static_cast<size_t>(comm)]++};
  return XMSG_SUCCESS;
}

void forget_collective_calls(xmsg_comm_t comm) {
  auto& calls = calls_by_comm();
  if (comm >= 0 && static_cast<size_t>(comm) < calls.size()) calls[static_cast<size_t>(comm)] = 0;
}

int check_type(xmsg_datatype_t type, const char* func, const char* arg, size_t* elem_size) {
  if (type <= 0 || type >= XMSG_DATATYPE_LAST)
    return fail(XMSG_ERR_TYPE, "%s: %s %d is not a valid datatype", func, arg, type);
  size_t size = 0;
  if (int e = xmsgi_check_type(type, func, &size)) return e;
  *elem_size = size;
  return XMSG_SUCCESS;
}

int most_world_ranks_on_one_node() {
  int size = 0;
  if (xmsg_comm_size(XMSG_COMM_WORLD, &size) != XMSG_SUCCESS) return 1;
  std::vector<int> node_ids(static_cast<size_t>(size));
  if (xmsgi_comm_node_ids(XMSG_COMM_WORLD, node_ids.data()) != XMSG_SUCCESS) return 1;
  std::vector<int> per_node(static_cast<size_t>(size), 0);
  int most = 1;
  for (int id : node_ids)
    if (id >= 0 && id < size) most = std::max(most, ++per_node[static_cast<size_t>(id)]);
  // Virtual nodes of one host (xmsgrun --nodes K) share its CPUs; every rank reads the same
  // value from the launcher, so the answer stays the same everywhere.
  if (auto host = params::integer_if_set("XMSG_HOST_RANKS")) most = std::max<int>(most, static_cast<int>(*host));
  return most;
}

int comm_node_ids(xmsg_comm_t comm, int size, std::vector<int>* node_ids) {
  node_ids->assign(static_cast<size_t>(size), 0);
  return xmsgi_comm_node_ids(comm, node_ids->data());
}

int fail(int code, const char* fmt, ...) {
  char message[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  return xmsgi_error(code, "%s", message);
}

StallCheck*& active_stall_check() {
  static thread_local StallCheck* current = nullptr;
  return current;
}

namespace {

// xmsg_waitall, asking `check` every 256 polls. When it says to give up, receives still posted
// are cancelled (they would match a later collective's messages) and sends are left to finish
// on their own (a peer may never take a large one).
int wait_all_checked(int count, xmsg_request_t* requests, xmsg_status_t* statuses, StallCheck& check,
                     bool* withdrawn) {
  unsigned spins = 0;
  for (uint32_t polls = 1;; ++polls) {
    int done = 0;
    if (int e = xmsg_testall(count, requests, &done, statuses); e != XMSG_SUCCESS || done) return e;
    xmsgi_idle(&spins);
    if ((polls & 255) != 0) continue;
    const int stop = check.check();
    if (stop == XMSG_SUCCESS) continue;
    for (int i = 0; i < count; ++i)
      if (requests[i] != XMSG_REQUEST_NULL) {
        xmsgi_request_orphan(requests[i]);  // a laid buffer's layout goes with this call
        xmsg_cancel(&requests[i]);
        xmsg_request_free(&requests[i]);
      }
    *withdrawn = true;
    return stop;
  }
}

}  // namespace

Step::~Step() {
  if (count_ > 0) wait();
}

void Step::add(xmsg_request_t request, int64_t expected_bytes) {
  constexpr int kInline = static_cast<int>(sizeof inline_ / sizeof inline_[0]);
  if (count_ < kInline) {
    inline_[count_] = request;
    inline_expected_[count_] = expected_bytes;
  } else {
    if (more_.empty()) {
      more_.assign(inline_, inline_ + count_);
      more_expected_.assign(inline_expected_, inline_expected_ + count_);
    }
    more_.push_back(request);
    more_expected_.push_back(expected_bytes);
  }
  ++count_;
}

namespace {

// A laid buffer's stream from `offset` on, as a stream of its own.
struct LayoutPiece final : xmsgi_layout {
  const xmsgi_layout* whole;
  uint64_t offset;
  LayoutPiece(const xmsgi_layout* w, uint64_t o) : whole(w), offset(o) {}
  void pack(uint64_t at, void* dst, uint64_t n) const override { whole->pack(offset + at, dst, n); }
  void unpack(uint64_t at, const void* src, uint64_t n) const override { whole->unpack(offset + at, src, n); }
};

}  // namespace

const xmsgi_layout* Step::piece(const xmsgi_layout* layout, int64_t offset) {
  if (offset == 0) return layout;
  pieces_.emplace_back(new LayoutPiece(layout, static_cast<uint64_t>(offset)),
                       [](xmsgi_layout* p) { delete static_cast<LayoutPiece*>(p); });
  return pieces_.back().get();
}

void Step::send(Src buf, int64_t bytes, int peer, int tag) {
  static const char empty = 0;
  // Passes a disagreement on: one byte short, or one byte where none was expected (a rank whose
  // every message in the call is empty has no byte to leave out).
  const bool disagreed = SizeDisagreement::current() && SizeDisagreement::current()->seen();
  const bool extra_byte = disagreed && bytes == 0;
  if (disagreed && bytes > 0) --bytes;
  xmsg_request_t request = XMSG_REQUEST_NULL;
  int e = bytes > 0 && buf.layout
              ? xmsgi_coll_isend_packed(piece(buf.layout, buf.offset), bytes, comm_.real(peer), comm_.call_tag(tag),
                                        comm_.handle, &request)
              : xmsgi_coll_isend(bytes > 0 ? static_cast<const void*>(buf.ptr) : &empty, extra_byte ? 1 : bytes,
                                 comm_.real(peer), comm_.call_tag(tag), comm_.handle, &request);
  if (e != XMSG_SUCCESS) {
    if (error_ == XMSG_SUCCESS) error_ = e;
    return;
  }
  add(request, -1);
}

void Step::recv(Dst buf, int64_t bytes, int peer, int tag) {
  static char empty[1];
  xmsg_request_t request = XMSG_REQUEST_NULL;
  int e = bytes > 0 && buf.layout
              ? xmsgi_coll_irecv_packed(piece(buf.layout, buf.offset), bytes, comm_.real(peer), comm_.call_tag(tag),
                                        comm_.handle, &request)
              : xmsgi_coll_irecv(bytes > 0 ? static_cast<void*>(buf.ptr) : empty, bytes, comm_.real(peer),
                                 comm_.call_tag(tag), comm_.handle, &request);
  if (e != XMSG_SUCCESS) {
    if (error_ == XMSG_SUCCESS) error_ = e;
    return;
  }
  add(request, bytes);
}

int Step::wait() {
  if (count_ > 0) {
    const bool inline_only = more_.empty();
    xmsg_request_t* requests = inline_only ? inline_ : more_.data();
    const int64_t* expected = inline_only ? inline_expected_ : more_expected_.data();
    xmsg_status_t inline_statuses[8];
    std::vector<xmsg_status_t> more_statuses;
    if (!inline_only) more_statuses.resize(static_cast<size_t>(count_));
    xmsg_status_t* statuses = inline_only ? inline_statuses : more_statuses.data();
    StallCheck* check = active_stall_check();
    bool withdrawn = false;
    int e = check ? wait_all_checked(count_, requests, statuses, *check, &withdrawn)
                  : xmsg_waitall(count_, requests, statuses);
    if (withdrawn) {  // the statuses say nothing
      if (e != XMSG_SUCCESS && error_ == XMSG_SUCCESS) error_ = e;
      count_ = 0;
      more_.clear();
      more_expected_.clear();
      return error_;
    }
    // A shorter message than expected is no p2p error, but in a collective it means the ranks
    // disagree on the count or the datatype: the rest of the buffer would hold stale bytes. A
    // longer one the runtime truncated. Either is a disagreement; any other error ends the step.
    char disagreement[256] = "";
    bool other_error = false;
    for (int i = 0; i < count_; ++i) {
      const xmsg_status_t& st = statuses[i];
      const bool longer = st.error == XMSG_ERR_TRUNCATE;
      if (st.error != XMSG_SUCCESS && !longer) other_error = true;
      if (expected[i] < 0 || (st.error == XMSG_SUCCESS && st.bytes == expected[i]) || (st.error && !longer) ||
          disagreement[0])
        continue;
      std::snprintf(disagreement, sizeof disagreement,
                    "collective: rank %d sent %s bytes where rank %d expected %lld: the ranks passed different "
                    "counts or datatypes",
                    st.source, longer ? "more" : std::to_string(st.bytes).c_str(), comm_.rank,
                    static_cast<long long>(expected[i]));
    }
    if (e != XMSG_SUCCESS && (other_error || !disagreement[0])) {
      if (error_ == XMSG_SUCCESS) error_ = e;
    } else if (disagreement[0] && error_ == XMSG_SUCCESS) {
      if (SizeDisagreement* d = SizeDisagreement::current()) d->note(disagreement);
      else error_ = fail(XMSG_ERR_TRUNCATE, "%s", disagreement);
    }
    count_ = 0;
    more_.clear();
    more_expected_.clear();
  }
  return error_;
}

SizeDisagreement*& SizeDisagreement::current() {
  static thread_local SizeDisagreement* current = nullptr;
  return current;
}

int SizeDisagreement::result(int error) const {
  if (error != XMSG_SUCCESS || !seen_) return error;
  return fail(XMSG_ERR_TRUNCATE, "%s", message_.c_str());
}

int sendrecv(const Comm& comm, const void* sbuf, int64_t sbytes, int dest, void* rbuf, int64_t rbytes, int source,
             int tag) {
  Step step(comm);
  if (source >= 0) step.recv(rbuf, rbytes, source, tag);
  if (dest >= 0) step.send(sbuf, sbytes, dest, tag);
  return step.wait();
}

void copy_bytes(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0 && dst != src) plain_copy(dst, src, static_cast<size_t>(bytes));
}

void copy_bytes(Dst dst, Src src, int64_t bytes) {
  if (bytes <= 0 || src.same_as(dst)) return;
  if (!dst.layout && !src.layout) return copy_bytes(static_cast<void*>(dst.ptr), src.ptr, bytes);
  const auto d = static_cast<uint64_t>(dst.offset), s = static_cast<uint64_t>(src.offset);
  const auto n = static_cast<uint64_t>(bytes);
  if (!dst.layout) return src.layout->pack(s, dst.ptr, n);
  if (!src.layout) return dst.layout->unpack(d, src.ptr, n);
  // Both laid (alltoall's own block between two derived types): through a cache-sized bounce.
  constexpr uint64_t kBounce = 16 << 10;
  alignas(64) std::byte bounce[kBounce];
  for (uint64_t done = 0; done < n; done += kBounce) {
    const uint64_t piece = std::min(kBounce, n - done);
    src.layout->pack(s + done, bounce, piece);
    dst.layout->unpack(d + done, bounce, piece);
  }
}

std::byte* kept_scratch(KeptScratch which, int64_t bytes) {
  struct Kept {
    std::unique_ptr<std::byte[]> data;
    int64_t capacity = 0;
  };
  static thread_local Kept kept[2];
  Kept& k = kept[static_cast<int>(which)];
  if (bytes > k.capacity) {
    k.data.reset(new std::byte[static_cast<size_t>(bytes)]);
    k.capacity = bytes;
  }
  return k.data.get();
}

Src plain_for_peers(Src buf, int64_t bytes, Scratch& staging) {
  if (!buf.layout || bytes <= 0) return buf;
  std::byte* out = nullptr;
  if (bytes <= kKeptStagingBytes) {
    out = kept_scratch(KeptScratch::kStaging, bytes);
  } else {
    staging.resize(bytes);
    out = staging.get();
  }
  buf.layout->pack(static_cast<uint64_t>(buf.offset), out, static_cast<uint64_t>(bytes));
  return out;
}

}  // namespace xmsg::coll
