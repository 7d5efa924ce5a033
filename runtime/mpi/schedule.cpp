// Collective schedules (see mpi_impl.hpp): rounds of sends, receives and local steps on a
// communicator's hidden collective context, run as MPI requests. Each schedule takes the next
// number of its communicator's collective sequence for its tag: members start collectives
// in the same order, so the numbers agree, and two collectives in flight never match.
#include "mpi_impl.hpp"

#include <map>
#include <mutex>
#include <new>

namespace xmsg::mpi {
namespace {

// Scratch blocks of finished schedules, handed to the next ones. A large non-blocking
// collective called in a loop would otherwise allocate and free its scratch on every call, and
// glibc hands a freed block at the top of the heap back to the kernel (trim), so each call
// faulted its scratch in anew: osu_iallreduce at 1 MiB took 1.1-1.3 ms instead of 0.26-0.48 ms
// in the runs where the heap sat that way (113 000 page faults for 300 calls against 5 000).
// Small blocks are not worth it (malloc serves them from its bins); the cache holds at most
// XMSG_COLL_SCRATCH_CACHE bytes, evicting the smallest first. The lock is for the progress
// thread, which may finish (and destroy) a freed request's schedule.
// Cached blocks are page-aligned: with malloc's (16 bytes past a page boundary for a large
// block) osu_ialltoall at 128-256 KiB spent 60-90 us of its 80-150 us copying its own block out
// of OSU's page-aligned buffer into one, a third of memcpy's speed, and page-aligned blocks do
// not (4 KiB aliasing of the stores 16 bytes ahead of the loads is the likely cause).
class ScratchCache {
 public:
  static constexpr size_t kSmallest = 16 * 1024;
  static constexpr std::align_val_t kAlign{4096};

  // A block of at least `bytes` (at most twice that, so a big block is not spent on a small
  // need); `*got` is its real size.
  char* take(size_t bytes, size_t* got) {
    *got = bytes;
    if (!cached(bytes)) return new char[bytes];
    {
      std::lock_guard lock(mutex_);
      auto it = free_.lower_bound(bytes);
      if (it != free_.end() && it->first / 2 <= bytes) {
        char* p = it->second;
        *got = it->first;
        held_ -= it->first;
        free_.erase(it);
        return p;
      }
    }
    return static_cast<char*>(::operator new[](bytes, kAlign));
  }

  void give(char* p, size_t bytes) {
    if (cached(bytes)) {
      std::lock_guard lock(mutex_);
      if (static_cast<int64_t>(bytes) <= capacity_) {
        free_.emplace(bytes, p);
        held_ += bytes;
        while (static_cast<int64_t>(held_) > capacity_) {
          auto smallest = free_.begin();
          held_ -= smallest->first;
          ::operator delete[](smallest->second, kAlign);
          free_.erase(smallest);
        }
        return;
      }
      ::operator delete[](p, kAlign);
      return;
    }
    delete[] p;
  }

  void release() {
    std::lock_guard lock(mutex_);
    for (auto& [bytes, p] : free_) ::operator delete[](p, kAlign);
    free_.clear();
    held_ = 0;
  }

 private:
  // XMSG_COLL_SCRATCH_CACHE, read on first use (after MPI_Init); 0: plain new and delete.
  int64_t capacity() {
    std::call_once(read_, [this] { capacity_ = xmsgi_schedule_scratch_cache(); });
    return capacity_;
  }
  // Blocks of this size come aligned from (and go back to) the cache; others are plain new[].
  bool cached(size_t bytes) { return bytes >= kSmallest && capacity() > 0; }
  std::once_flag read_;
  std::mutex mutex_;
  std::multimap<size_t, char*> free_;
  size_t held_ = 0;
  int64_t capacity_ = 0;
};

// Never destroyed: a schedule may outlive static destruction's order (a request the program
// never completed); release() frees the blocks at MPI_Finalize.
ScratchCache& scratch_cache() {
  static auto* cache = new ScratchCache;
  return *cache;
}

// Above the blocking collectives' tags (below 16 << 10), below Intercomm_merge's tag and the
// runtime's reserved range.
constexpr int kScheduleTagBase = 1 << 21;
constexpr uint32_t kScheduleTagSpan = 1u << 28;

// A request that runs one schedule at a time: advanced by every test (and by the progress
// registry while it has work left).
struct ScheduleRunner : Request {
  std::unique_ptr<Schedule> schedule;
  bool finished = true;
  int error = MPI_SUCCESS;

  void run(std::unique_ptr<Schedule> s) {
    schedule = std::move(s);
    finished = false;
    error = MPI_SUCCESS;
    advance();
    if (!finished) register_progress(this);
  }
  void advance() {
    if (finished) return;
    bool done = false;
    error = schedule->advance(&done);
    finished = done || error != MPI_SUCCESS;
    if (finished) unregister_progress(this);
  }
  int test(bool* done, MPI_Status* status) override {
    advance();
    *done = finished;
    if (finished) {
      empty_status(status);
      if (status) status->MPI_ERROR = error;
    }
    return finished ? error : MPI_SUCCESS;
  }
  bool peek(MPI_Status* status) override {
    advance();
    if (finished) {
      empty_status(status);
      if (status) status->MPI_ERROR = error;
    }
    return finished;
  }
  // Holds its communicator: MPI_Comm_free while it runs (or, persistent, while it exists)
  // leaves the freeing to release_comm.
  void hold_comm(MPI_Comm c) {
    comm = c;
    retain_comm(c);
  }
  ~ScheduleRunner() override {
    unregister_progress(this);
    schedule.reset();
    release_comm(comm);
  }
};

// MPI-4.0 persistent collective: every MPI_Start builds and runs a fresh schedule with the
// tag reserved at init.
struct PersistentCollective final : ScheduleRunner {
  std::function<int(Schedule&)> build;
  int tag = 0;
  bool persistent() const override { return true; }
  int start() override {
    auto s = std::make_unique<Schedule>(comm, tag);
    if (int e = build(*s)) return e;
    run(std::move(s));
    return MPI_SUCCESS;
  }
};

}  // namespace

Schedule::Schedule(MPI_Comm comm) : Schedule(comm, reserve_tag(comm)) {}

Schedule::Schedule(MPI_Comm comm, int tag) : comm_(comm), transport_comm_(comm), tag_(tag) {
  xmsg_comm_rank(comm, &rank_);
  xmsg_comm_size(comm, &size_);
  rounds_.emplace_back();
}

int Schedule::reserve_tag(MPI_Comm comm) {
  CommState* s = state_of(comm);
  uint32_t seq = s ? s->collective_seq++ : 0;
  return kScheduleTagBase + static_cast<int>(seq % kScheduleTagSpan);
}

void Schedule::send(const void* buf, int64_t bytes, int peer) {
  rounds_.back().push_back(Op{Op::kSend, const_cast<void*>(buf), bytes, peer, {}});
}

void Schedule::recv(void* buf, int64_t bytes, int peer) {
  rounds_.back().push_back(Op{Op::kRecv, buf, bytes, peer, {}});
}

void Schedule::local(std::function<void()> step) {
  rounds_.back().push_back(Op{Op::kLocal, nullptr, 0, 0, std::move(step)});
}

void Schedule::local_after_posts(std::function<void()> step) {
  rounds_.back().push_back(Op{Op::kLocalAfterPosts, nullptr, 0, 0, std::move(step)});
}

void Schedule::next_round() {
  if (!rounds_.back().empty()) rounds_.emplace_back();
}

Schedule::~Schedule() {
  // Requests still out (the schedule ended on an error): a receive not matched yet must not
  // land in scratch handed back below.
  for (xmsg_request_t& r : pending_)
    if (r != XMSG_REQUEST_NULL) {
      xmsg_cancel(&r);
      xmsg_request_free(&r);
    }
  for (const Block& b : scratch_) scratch_cache().give(b.data, b.bytes);
}

char* Schedule::scratch(int64_t bytes) {
  size_t got = 0;
  char* p = scratch_cache().take(static_cast<size_t>(bytes > 0 ? bytes : 1), &got);
  scratch_.push_back(Block{p, got});
  return p;
}

void release_schedule_scratch() { scratch_cache().release(); }

int Schedule::post_round() {
  static char empty[1];
  pending_.clear();
  const auto& ops = rounds_[current_];
  for (const Op& op : ops)
    if (op.kind == Op::kLocal) op.step();
  for (const Op& op : ops) {
    if (op.kind == Op::kLocal || op.kind == Op::kLocalAfterPosts) continue;
    xmsg_request_t r = XMSG_REQUEST_NULL;
    int64_t send_bytes = op.bytes;
    if (op.kind == Op::kSend && disagreed_) send_bytes = op.bytes > 0 ? op.bytes - 1 : 1;
    int e = op.kind == Op::kSend
                ? xmsgi_coll_isend(op.bytes > 0 ? op.buf : empty, send_bytes, op.peer, tag_, transport_comm_, &r)
                : xmsgi_coll_irecv(op.bytes > 0 ? op.buf : empty, op.bytes, op.peer, tag_, transport_comm_, &r);
    if (e != MPI_SUCCESS) return e;
    pending_.push_back(r);
  }
  for (const Op& op : ops)
    if (op.kind == Op::kLocalAfterPosts) op.step();
  return MPI_SUCCESS;
}

int Schedule::advance(bool* done) {
  *done = false;
  if (!started_) {
    started_ = true;
    if (int e = post_round()) return e;
  }
  for (;;) {
    int flag = 1;
    if (!pending_.empty()) {
      statuses_.resize(pending_.size());
      int e = xmsg_testall(static_cast<int>(pending_.size()), pending_.data(), &flag, statuses_.data());
      if (!flag) return e;
      // Every message of a collective has the length its step posted (MPI requires matching
      // type signatures): a longer one fails in the receive (truncated), a shorter one would
      // leave part of the result stale. Either is a disagreement (disagreed_); other errors end
      // the schedule.
      // The requests are the round's messages in order (post_round).
      bool other_error = false;
      size_t i = 0;
      for (const Op& op : rounds_[current_]) {
        if (op.kind == Op::kLocal || op.kind == Op::kLocalAfterPosts) continue;
        const xmsg_status_t& st = statuses_[i++];
        if (op.kind == Op::kRecv &&
            (st.error == XMSG_ERR_TRUNCATE || (st.error == XMSG_SUCCESS && st.bytes != op.bytes)))
          disagreed_ = true;
        else if (st.error != XMSG_SUCCESS)
          other_error = true;
      }
      if (other_error) return e != MPI_SUCCESS ? e : MPI_ERR_OTHER;
    }
    if (!flag) return MPI_SUCCESS;
    pending_.clear();
    if (++current_ >= rounds_.size()) {
      *done = true;
      return disagreed_ ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    }
    if (int e = post_round()) return e;
  }
}

int start_schedule(std::unique_ptr<Schedule> schedule, MPI_Request* request) {
  auto* r = new ScheduleRunner();
  r->hold_comm(schedule->comm());
  r->run(std::move(schedule));
  *request = handle_of(r);
  return MPI_SUCCESS;
}

int run_schedule(std::unique_ptr<Schedule> schedule) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Comm comm = schedule->comm();
  if (int e = start_schedule(std::move(schedule), &request)) return e;
  MPI_Status st;
  int e = PMPI_Wait(&request, &st);
  (void)comm;
  return e;
}

int persistent_collective(MPI_Comm comm, std::function<int(Schedule&)> build, MPI_Request* request) {
  auto* r = new PersistentCollective();
  r->hold_comm(comm);
  r->tag = Schedule::reserve_tag(comm);
  r->build = std::move(build);
  r->active = false;
  *request = handle_of(r);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi
