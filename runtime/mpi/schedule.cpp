// Collective schedules (see mpi_impl.hpp): rounds of sends, receives and local steps on a
// communicator's hidden collective context, run as MPI requests. Each schedule takes the next
// number of its communicator's collective sequence for its tag: members start collectives
// in the same order, so the numbers agree, and two collectives in flight never match.
#include "mpi_impl.hpp"

namespace xmsg::mpi {
namespace {

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
  ~ScheduleRunner() override { unregister_progress(this); }
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

void Schedule::next_round() {
  if (!rounds_.back().empty()) rounds_.emplace_back();
}

char* Schedule::scratch(int64_t bytes) {
  scratch_.emplace_back(new char[static_cast<size_t>(bytes > 0 ? bytes : 1)]);
  return scratch_.back().get();
}

int Schedule::post_round() {
  static char empty[1];
  pending_.clear();
  const auto& ops = rounds_[current_];
  for (const Op& op : ops)
    if (op.kind == Op::kLocal) op.step();
  for (const Op& op : ops) {
    if (op.kind == Op::kLocal) continue;
    xmsg_request_t r = XMSG_REQUEST_NULL;
    int e = op.kind == Op::kSend
                ? xmsgi_coll_isend(op.bytes > 0 ? op.buf : empty, op.bytes, op.peer, tag_, transport_comm_, &r)
                : xmsgi_coll_irecv(op.bytes > 0 ? op.buf : empty, op.bytes, op.peer, tag_, transport_comm_, &r);
    if (e != MPI_SUCCESS) return e;
    pending_.push_back(r);
  }
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
      int e = xmsg_testall(static_cast<int>(pending_.size()), pending_.data(), &flag, XMSG_STATUSES_IGNORE);
      if (e != MPI_SUCCESS) return e;
    }
    if (!flag) return MPI_SUCCESS;
    pending_.clear();
    if (++current_ >= rounds_.size()) {
      *done = true;
      return MPI_SUCCESS;
    }
    if (int e = post_round()) return e;
  }
}

int start_schedule(std::unique_ptr<Schedule> schedule, MPI_Request* request) {
  auto* r = new ScheduleRunner();
  r->comm = schedule->comm();
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
  r->comm = comm;
  r->tag = Schedule::reserve_tag(comm);
  r->build = std::move(build);
  r->active = false;
  *request = handle_of(r);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi
