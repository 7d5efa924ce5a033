// Completion of requests (MPI-3.1 3.7.3-3.7.5, 3.9, 12.2): plain xmsg requests go straight to
// the C API; this library's own requests (tagged handles, see mpi_impl.hpp) are tested here.
// Requests that need this layer to move them on (collective schedules, buffered sends) are
// registered, and every wait or test advances all of them, so a rank blocked on one request
// still progresses its other collectives.
#include "mpi_impl.hpp"

#include <algorithm>
#include <climits>

namespace xmsg::mpi {
namespace {

std::vector<Request*>& registered() {
  static std::vector<Request*> list;
  return list;
}
// Requests freed with MPI_Request_free while still active: completed in the background.
std::vector<Request*>& detached() {
  static std::vector<Request*> list;
  return list;
}

struct CompletedRequest final : Request {
  int test(bool* done, MPI_Status* status) override {
    *done = true;
    empty_status(status);
    return MPI_SUCCESS;
  }
  bool peek(MPI_Status* status) override {
    empty_status(status);
    return true;
  }
};

// MPI-3.1 12.2: the program completes it; query and free run when MPI hands the status out.
struct GeneralizedRequest final : Request {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free_fn = nullptr;
  MPI_Grequest_cancel_function* cancel_fn = nullptr;
  void* extra = nullptr;
  bool completed = false;
  int test(bool* done, MPI_Status* status) override {
    *done = completed;
    if (!completed) return MPI_SUCCESS;
    MPI_Status st;
    empty_status(&st);
    int e = query ? query(extra, &st) : MPI_SUCCESS;
    if (status) *status = st;
    int f = free_fn ? free_fn(extra) : MPI_SUCCESS;
    return e != MPI_SUCCESS ? e : f;
  }
  int cancel() override { return cancel_fn ? cancel_fn(extra, completed ? 1 : 0) : MPI_SUCCESS; }
  bool peek(MPI_Status* status) override {
    if (completed && status) {
      empty_status(status);
      if (query) query(extra, status);
    }
    return completed;
  }
};

// Completes one request handle; *done tells whether it did. Completed non-persistent requests
// are freed and the handle set to MPI_REQUEST_NULL; persistent ones become inactive.
int test_one(MPI_Request* request, bool* done, MPI_Status* status) {
  MPI_Request r = *request;
  if (r == MPI_REQUEST_NULL) {
    *done = true;
    empty_status(status);
    return MPI_SUCCESS;
  }
  if (!is_layer_request(r)) {
    int flag = 0;
    xmsg_status_t st{};
    int e = xmsg_test(request, &flag, &st);
    *done = flag != 0 || e != MPI_SUCCESS;
    if (*done) {
      if (status) {
        status->MPI_SOURCE = st.source;
        status->MPI_TAG = st.tag;
        status->MPI_ERROR = e ? e : st.error;
        status->xmsg_cancelled = st.cancelled;
        status->xmsg_bytes = st.bytes;
      }
    }
    return e;
  }
  Request* req = layer_request(r);
  if (!req->active) {
    *done = true;
    empty_status(status);
    return MPI_SUCCESS;
  }
  int e = req->test(done, status);
  if (e != MPI_SUCCESS) *done = true;
  if (*done) {
    if (status && e != MPI_SUCCESS) status->MPI_ERROR = e;
    if (req->persistent()) {
      req->active = false;
    } else {
      unregister_progress(req);
      delete req;
      *request = MPI_REQUEST_NULL;
    }
  }
  return e;
}

MPI_Comm comm_of(MPI_Request r) {
  if (r != MPI_REQUEST_NULL && is_layer_request(r)) return layer_request(r)->comm;
  return MPI_COMM_WORLD;
}

bool all_plain(int count, const MPI_Request requests[]) {
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL && is_layer_request(requests[i])) return false;
  return true;
}

void idle_step(unsigned* spins) {
  if (progress_pending()) progress_all();
  xmsgi_progress();
  xmsgi_idle(spins);
}

int check_array(int count, const MPI_Request requests[], const char* func) {
  if (count < 0) return fail(MPI_ERR_COUNT, func, MPI_COMM_WORLD, "count %d is negative", count);
  if (count > 0 && !requests) return fail(MPI_ERR_REQUEST, func, MPI_COMM_WORLD, "array_of_requests is NULL");
  return MPI_SUCCESS;
}

}  // namespace

namespace {
bool g_in_progress = false;

// The runtime calls this from its wait loops while schedules are in flight.
void idle_hook() {
  if (g_in_progress) return;
  progress_all();
}

void update_hook() { xmsgi_set_idle_hook(progress_pending() ? &idle_hook : nullptr); }
}  // namespace

void register_progress(Request* r) {
  registered().push_back(r);
  if (registered().size() == 1) update_hook();
  if (r->wants_background()) engage_progress_thread();
}

void unregister_progress(Request* r) {
  auto& list = registered();
  auto it = std::remove(list.begin(), list.end(), r);
  if (it == list.end()) return;
  list.erase(it, list.end());
  update_hook();
}

bool progress_pending() { return !registered().empty() || !detached().empty(); }

bool background_work() {
  if (!detached().empty()) return true;
  for (const Request* r : registered())
    if (r->wants_background()) return true;
  return false;
}

void progress_all() {
  if (g_in_progress) return;
  g_in_progress = true;
  // A copy: a step may complete requests (which unregister themselves).
  std::vector<Request*> now = registered();
  for (Request* r : now) {
    bool done = false;
    MPI_Status st;
    if (std::find(registered().begin(), registered().end(), r) == registered().end()) continue;
    (void)r->test(&done, &st);
    (void)done;  // completion is reported when the program waits; the step only moves it on
  }
  auto& bg = detached();
  for (size_t i = 0; i < bg.size();) {
    bool done = false;
    MPI_Status st;
    int e = bg[i]->test(&done, &st);
    if (done || e != MPI_SUCCESS) {
      unregister_progress(bg[i]);
      delete bg[i];
      bg.erase(bg.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  g_in_progress = false;
  update_hook();
}

void empty_status(MPI_Status* status) {
  if (!status) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->xmsg_cancelled = 0;
  status->xmsg_bytes = 0;
}

void translate_inter_source(MPI_Comm comm, MPI_Status* out) { out->MPI_SOURCE -= state_of(comm)->remote_offset; }

int completed_request(MPI_Comm comm, MPI_Request* request) {
  auto* r = new CompletedRequest();
  r->comm = comm;
  *request = handle_of(r);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (!request) return fail(MPI_ERR_REQUEST, "MPI_Wait", MPI_COMM_WORLD, "request is NULL");
  if (!is_layer_request(*request)) {
    // The common case: a plain xmsg request (the runtime's wait loop runs the idle hook).
    xmsg_status_t st{};
    int code = xmsg_wait(request, &st);
    to_mpi_status(st, MPI_COMM_WORLD, status);
    return handle(code, "MPI_Wait");
  }
  MPI_Comm comm = comm_of(*request);
  unsigned spins = 0;
  for (;;) {
    bool done = false;
    int e = test_one(request, &done, status);
    if (done) return handle(e, "MPI_Wait", comm);
    idle_step(&spins);
  }
}
XMSG_MPI_ALIAS(Wait)

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (!request) return fail(MPI_ERR_REQUEST, "MPI_Test", MPI_COMM_WORLD, "request is NULL");
  if (!flag) return fail(MPI_ERR_ARG, "MPI_Test", MPI_COMM_WORLD, "flag is NULL");
  MPI_Comm comm = comm_of(*request);
  if (progress_pending()) progress_all();
  bool done = false;
  int e = test_one(request, &done, status);
  *flag = done;
  return handle(e, "MPI_Test", comm);
}
XMSG_MPI_ALIAS(Test)

int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  XMSG_MPI_ENTRY;
  if (int e = check_array(count, requests, "MPI_Waitall")) return e;
  if (all_plain(count, requests)) {
    std::vector<xmsg_status_t> st;
    if (statuses && count > 0) st.resize(static_cast<size_t>(count));
    int code = xmsg_waitall(count, requests, st.empty() ? XMSG_STATUSES_IGNORE : st.data());
    for (size_t i = 0; i < st.size(); ++i) to_mpi_status(st[i], MPI_COMM_WORLD, &statuses[i]);
    if (code != MPI_SUCCESS && !st.empty() && code != MPI_ERR_COUNT && code != MPI_ERR_ARG) {
      handle(code, "MPI_Waitall");
      return MPI_ERR_IN_STATUS;
    }
    return handle(code, "MPI_Waitall");
  }
  std::vector<char> finished(static_cast<size_t>(count), 0);
  int remaining = count, first_error = MPI_SUCCESS;
  MPI_Comm error_comm = MPI_COMM_WORLD;
  unsigned spins = 0;
  while (remaining > 0) {
    for (int i = 0; i < count; ++i) {
      if (finished[static_cast<size_t>(i)]) continue;
      MPI_Comm comm = comm_of(requests[i]);
      bool done = false;
      MPI_Status st;
      int e = test_one(&requests[i], &done, &st);
      if (!done) continue;
      finished[static_cast<size_t>(i)] = 1;
      --remaining;
      if (statuses) statuses[i] = st;
      if (e != MPI_SUCCESS && first_error == MPI_SUCCESS) {
        first_error = e;
        error_comm = comm;
      }
    }
    if (remaining > 0) idle_step(&spins);
  }
  if (first_error != MPI_SUCCESS) {
    handle(first_error, "MPI_Waitall", error_comm);
    return statuses ? MPI_ERR_IN_STATUS : first_error;
  }
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Waitall)

int PMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  XMSG_MPI_ENTRY;
  if (int e = check_array(count, requests, "MPI_Testall")) return e;
  if (!flag) return fail(MPI_ERR_ARG, "MPI_Testall", MPI_COMM_WORLD, "flag is NULL");
  if (progress_pending()) progress_all();
  // MPI: either all complete (and are freed) or none is touched: look first, without
  // completing anything, then complete them all.
  bool all = true;
  for (int i = 0; i < count && all; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    int f = 0;
    if (int e = PMPI_Request_get_status(requests[i], &f, MPI_STATUS_IGNORE)) return e;
    all = f != 0;
  }
  *flag = all;
  if (!all) return MPI_SUCCESS;
  return PMPI_Waitall(count, requests, statuses);
}
XMSG_MPI_ALIAS(Testall)

namespace {
// One pass of Waitany/Testany: completes the first active request that is done. Returns its
// index, MPI_UNDEFINED when none is active, or -1 when active ones are all still pending.
int any_pass(int count, MPI_Request requests[], MPI_Status* status, int* error, MPI_Comm* comm) {
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    MPI_Request r = requests[i];
    if (r == MPI_REQUEST_NULL || (is_layer_request(r) && !layer_request(r)->active)) continue;
    any_active = true;
    *comm = comm_of(r);
    bool done = false;
    *error = test_one(&requests[i], &done, status);
    if (done) return i;
  }
  if (any_active) return -1;
  empty_status(status);
  return MPI_UNDEFINED;
}
}  // namespace

int PMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (int e = check_array(count, requests, "MPI_Waitany")) return e;
  if (!index) return fail(MPI_ERR_ARG, "MPI_Waitany", MPI_COMM_WORLD, "index is NULL");
  unsigned spins = 0;
  int e = MPI_SUCCESS;
  MPI_Comm comm = MPI_COMM_WORLD;
  while ((*index = any_pass(count, requests, status, &e, &comm)) == -1) idle_step(&spins);
  return *index == MPI_UNDEFINED ? MPI_SUCCESS : handle(e, "MPI_Waitany", comm);
}
XMSG_MPI_ALIAS(Waitany)

int PMPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (int e = check_array(count, requests, "MPI_Testany")) return e;
  if (!index || !flag) return fail(MPI_ERR_ARG, "MPI_Testany", MPI_COMM_WORLD, "%s is NULL", index ? "flag" : "index");
  if (progress_pending()) progress_all();
  int e = MPI_SUCCESS;
  MPI_Comm comm = MPI_COMM_WORLD;
  int i = any_pass(count, requests, status, &e, &comm);
  *flag = i != -1;  // a completed request, or none active
  *index = i == -1 ? MPI_UNDEFINED : i;
  return i >= 0 ? handle(e, "MPI_Testany", comm) : MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Testany)

namespace {
int some(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[], bool wait,
         const char* func) {
  if (int e = check_array(incount, requests, func)) return e;
  if (!outcount) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "outcount is NULL");
  if (incount > 0 && !indices) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "array_of_indices is NULL");
  unsigned spins = 0;
  for (;;) {
    if (progress_pending()) progress_all();
    int n = 0, first_error = MPI_SUCCESS;
    bool any_active = false;
    for (int i = 0; i < incount; ++i) {
      MPI_Request r = requests[i];
      if (r == MPI_REQUEST_NULL || (is_layer_request(r) && !layer_request(r)->active)) continue;
      any_active = true;
      bool done = false;
      MPI_Status st;
      int e = test_one(&requests[i], &done, &st);
      if (!done) continue;
      if (statuses) statuses[n] = st;
      indices[n++] = i;
      if (e != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = e;
    }
    if (!any_active) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    if (n > 0 || !wait) {
      *outcount = n;
      if (first_error != MPI_SUCCESS) {
        handle(first_error, func);
        return MPI_ERR_IN_STATUS;
      }
      return MPI_SUCCESS;
    }
    idle_step(&spins);
  }
}
}  // namespace

int PMPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  XMSG_MPI_ENTRY;
  return some(incount, requests, outcount, indices, statuses, true, "MPI_Waitsome");
}
XMSG_MPI_ALIAS(Waitsome)

int PMPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  XMSG_MPI_ENTRY;
  return some(incount, requests, outcount, indices, statuses, false, "MPI_Testsome");
}
XMSG_MPI_ALIAS(Testsome)

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (!flag) return fail(MPI_ERR_ARG, "MPI_Request_get_status", MPI_COMM_WORLD, "flag is NULL");
  if (request == MPI_REQUEST_NULL) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  if (progress_pending()) progress_all();
  if (!is_layer_request(request)) {
    // Asks the runtime without completing (and so without freeing) the request.
    int done = 0;
    xmsg_status_t st{};
    int e = xmsgi_request_peek(request, &done, &st);
    *flag = done;
    if (done) to_mpi_status(st, MPI_COMM_WORLD, status);
    return handle(e, "MPI_Request_get_status");
  }
  Request* r = layer_request(request);
  if (!r->active) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  MPI_Status st;
  empty_status(&st);
  *flag = r->peek(&st) ? 1 : 0;
  if (*flag && status) *status = st;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Request_get_status)

int PMPI_Cancel(MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!request || *request == MPI_REQUEST_NULL)
    return fail(MPI_ERR_REQUEST, "MPI_Cancel", MPI_COMM_WORLD, "request is %s", request ? "MPI_REQUEST_NULL" : "NULL");
  if (!is_layer_request(*request)) return handle(xmsg_cancel(request), "MPI_Cancel");
  Request* r = layer_request(*request);
  return handle(r->cancel(), "MPI_Cancel", r->comm);
}
XMSG_MPI_ALIAS(Cancel)

int PMPI_Request_free(MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!request || *request == MPI_REQUEST_NULL)
    return fail(MPI_ERR_REQUEST, "MPI_Request_free", MPI_COMM_WORLD, "request is %s",
                request ? "MPI_REQUEST_NULL" : "NULL");
  if (!is_layer_request(*request)) return handle(xmsg_request_free(request), "MPI_Request_free");
  Request* r = layer_request(*request);
  *request = MPI_REQUEST_NULL;
  if (r->persistent() && !r->active) {
    unregister_progress(r);
    delete r;
    return MPI_SUCCESS;
  }
  detached().push_back(r);
  xmsgi_set_idle_hook(&idle_hook);
  engage_progress_thread();
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Request_free)

int PMPI_Start(MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!request || *request == MPI_REQUEST_NULL || !is_layer_request(*request) ||
      !layer_request(*request)->persistent())
    return fail(MPI_ERR_REQUEST, "MPI_Start", MPI_COMM_WORLD, "request is not a persistent request");
  Request* r = layer_request(*request);
  if (r->active) return fail(MPI_ERR_REQUEST, "MPI_Start", r->comm, "request is already active");
  int e = r->start();
  if (e == MPI_SUCCESS) r->active = true;
  return handle(e, "MPI_Start", r->comm);
}
XMSG_MPI_ALIAS(Start)

int PMPI_Startall(int count, MPI_Request requests[]) {
  XMSG_MPI_ENTRY;
  if (int e = check_array(count, requests, "MPI_Startall")) return e;
  for (int i = 0; i < count; ++i)
    if (int e = PMPI_Start(&requests[i])) return e;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Startall)

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!request) return fail(MPI_ERR_ARG, "MPI_Grequest_start", MPI_COMM_WORLD, "request is NULL");
  auto* g = new GeneralizedRequest();
  g->query = query_fn;
  g->free_fn = free_fn;
  g->cancel_fn = cancel_fn;
  g->extra = extra_state;
  *request = handle_of(g);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request) {
  XMSG_MPI_ENTRY;
  if (request == MPI_REQUEST_NULL || !is_layer_request(request))
    return fail(MPI_ERR_REQUEST, "MPI_Grequest_complete", MPI_COMM_WORLD, "request is not a generalized request");
  auto* g = dynamic_cast<GeneralizedRequest*>(layer_request(request));
  if (!g) return fail(MPI_ERR_REQUEST, "MPI_Grequest_complete", MPI_COMM_WORLD, "request is not a generalized request");
  g->completed = true;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Grequest_complete)

}  // extern "C"
