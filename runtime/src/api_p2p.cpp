// C API: point-to-point, completion and probe. Validates arguments (naming the bad one), then
// hands over to World.
#include "World.hpp"
#include "xmsg_internal.h"

#include <cstdio>
#include <limits>

using xmsg::rt::Comm;
using xmsg::rt::Request;
using xmsg::rt::World;

namespace {

// Everything a point-to-point call needs after validation.
struct Target {
  World* world = nullptr;
  Comm* comm = nullptr;
  int peer = XMSG_PROC_NULL;  // world rank, -1 = any source, XMSG_PROC_NULL
  uint64_t bytes = 0;
};

inline int check_common(xmsg_comm_t comm, const void* buf, int64_t count, xmsg_datatype_t type, const char* func,
                        Target& t) {
  World* w = World::current;
  Comm* c = w ? w->comm(comm) : nullptr;
  if (!c) {
    int rc = xmsgi_check_comm(comm, func, nullptr, nullptr);
    return rc ? rc : XMSG_ERR_INTERNAL;
  }
  size_t elem = xmsgi_type_size(type);
  if (elem == 0) [[unlikely]]
    return xmsgi_check_type(type, func, &elem);
  if (count < 0) return xmsgi_error(XMSG_ERR_COUNT, "%s: count %lld is negative", func, static_cast<long long>(count));
  if (!buf && count > 0)
    return xmsgi_error(XMSG_ERR_BUFFER, "%s: buf is NULL but count is %lld", func, static_cast<long long>(count));
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(elem), &bytes))
    return xmsgi_error(XMSG_ERR_COUNT, "%s: count %lld overflows the message size", func, static_cast<long long>(count));
  t.world = w;
  t.comm = c;
  t.bytes = bytes;
  return XMSG_SUCCESS;
}

inline int check_dest(Target& t, int dest, int tag, const char* func) {
  if (dest == XMSG_PROC_NULL) {
    t.peer = XMSG_PROC_NULL;
  } else if (dest < 0 || dest >= t.comm->size) {
    return xmsgi_error(XMSG_ERR_RANK, "%s: dest %d out of range [0, %d)", func, dest, t.comm->size);
  } else {
    t.peer = t.comm->world_rank(dest);
  }
  if (tag < 0 || tag > XMSG_TAG_UB)
    return xmsgi_error(XMSG_ERR_TAG, "%s: tag %d out of range [0, XMSG_TAG_UB=%d]", func, tag, XMSG_TAG_UB);
  return XMSG_SUCCESS;
}

inline int check_source(Target& t, int source, int tag, const char* func) {
  if (source == XMSG_PROC_NULL) {
    t.peer = XMSG_PROC_NULL;
  } else if (source == XMSG_ANY_SOURCE) {
    t.peer = -1;
  } else if (source < 0 || source >= t.comm->size) {
    return xmsgi_error(XMSG_ERR_RANK, "%s: source %d out of range [0, %d) (or XMSG_ANY_SOURCE)", func, source,
                       t.comm->size);
  } else {
    t.peer = t.comm->world_rank(source);
  }
  if (tag != XMSG_ANY_TAG && (tag < 0 || tag > XMSG_TAG_UB))
    return xmsgi_error(XMSG_ERR_TAG, "%s: tag %d out of range [0, XMSG_TAG_UB=%d] (or XMSG_ANY_TAG)", func, tag,
                       XMSG_TAG_UB);
  return XMSG_SUCCESS;
}

void empty_status(xmsg_status_t* s, int source) {
  if (!s) return;
  s->source = source;
  s->tag = XMSG_ANY_TAG;
  s->error = XMSG_SUCCESS;
  s->cancelled = 0;
  s->bytes = 0;
}

// A request that is complete from the start (PROC_NULL operations).
Request* null_request(World* w, xmsg_request_t* out) {
  Request* r = nullptr;
  w->irecv_completed_proc_null(&r);
  *out = r;
  return r;
}

int check_request_ptr(xmsg_request_t* request, const char* func) {
  if (!request) return xmsgi_error(XMSG_ERR_ARG, "%s: request is NULL", func);
  if (*request && (*request)->magic != Request::kMagic)
    return xmsgi_error(XMSG_ERR_REQUEST, "%s: *request is not a live request (already completed or freed?)", func);
  if (!World::current) return xmsgi_error(XMSG_ERR_NOT_INITIALIZED, "%s: xmsg is not initialized", func);
  return XMSG_SUCCESS;
}

}  // namespace

namespace {

// xmsg_send with every check spelled out and an error message for each; the fast path below
// falls back to it whenever one of its combined checks fails.
[[gnu::noinline, gnu::cold]] int send_checked(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest,
                                               int tag, xmsg_comm_t comm) {
  Target t;
  if (int rc = check_common(comm, buf, count, datatype, "xmsg_send", t)) return rc;
  if (int rc = check_dest(t, dest, tag, "xmsg_send")) return rc;
  if (t.peer == XMSG_PROC_NULL) return XMSG_SUCCESS;
  return t.world->send(t.comm->user_context(), t.comm, t.peer, tag, buf, t.bytes, "xmsg_send");
}

}  // namespace

// The blocking send is on the latency path of every ping-pong: the valid common case passes
// one chain of checks, with no error reporting in reach (that keeps it free of the registers
// and stack the messages need).
extern "C" int xmsg_send(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag,
                         xmsg_comm_t comm) {
  return xmsgi_guard("xmsg_send", [&]() -> int {
    World* w = World::current;
    Comm* c = w ? w->comm(comm) : nullptr;
    const uint64_t elem = xmsgi_type_size(datatype);
    uint64_t bytes;
    if (c && elem && count >= 0 && (buf || count == 0) && static_cast<unsigned>(dest) < static_cast<unsigned>(c->size) &&
        static_cast<unsigned>(tag) <= static_cast<unsigned>(XMSG_TAG_UB) &&
        !__builtin_mul_overflow(static_cast<uint64_t>(count), elem, &bytes)) [[likely]]
      return w->send(c->user_context(), c, c->world_rank(dest), tag, buf, bytes, "xmsg_send");
    return send_checked(buf, count, datatype, dest, tag, comm);
  });
}

extern "C" int xmsg_isend(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag,
                          xmsg_comm_t comm, xmsg_request_t* request) {
  return xmsgi_guard("xmsg_isend", [&]() -> int {
    if (!request) return xmsgi_error(XMSG_ERR_ARG, "xmsg_isend: request is NULL");
    Target t;
    if (int rc = check_common(comm, buf, count, datatype, "xmsg_isend", t)) return rc;
    if (int rc = check_dest(t, dest, tag, "xmsg_isend")) return rc;
    if (t.peer == XMSG_PROC_NULL) {
      null_request(t.world, request);
      return XMSG_SUCCESS;
    }
    return t.world->isend(t.comm->user_context(), t.comm, t.peer, tag, buf, t.bytes, request, "xmsg_isend");
  });
}

extern "C" int xmsg_issend(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag,
                           xmsg_comm_t comm, xmsg_request_t* request) {
  return xmsgi_guard("xmsg_issend", [&]() -> int {
    if (!request) return xmsgi_error(XMSG_ERR_ARG, "xmsg_issend: request is NULL");
    Target t;
    if (int rc = check_common(comm, buf, count, datatype, "xmsg_issend", t)) return rc;
    if (int rc = check_dest(t, dest, tag, "xmsg_issend")) return rc;
    if (t.peer == XMSG_PROC_NULL) {
      null_request(t.world, request);
      return XMSG_SUCCESS;
    }
    return t.world->isend(t.comm->user_context(), t.comm, t.peer, tag, buf, t.bytes, request, "xmsg_issend", true);
  });
}

extern "C" int xmsg_ssend(const void* buf, int64_t count, xmsg_datatype_t datatype, int dest, int tag,
                          xmsg_comm_t comm) {
  return xmsgi_guard("xmsg_ssend", [&]() -> int {
    xmsg_request_t request = XMSG_REQUEST_NULL;
    if (int rc = xmsg_issend(buf, count, datatype, dest, tag, comm, &request)) return rc;
    return xmsg_wait(&request, XMSG_STATUS_IGNORE);
  });
}

extern "C" int xmsg_irecv(void* buf, int64_t count, xmsg_datatype_t datatype, int source, int tag, xmsg_comm_t comm,
                          xmsg_request_t* request) {
  return xmsgi_guard("xmsg_irecv", [&]() -> int {
    if (!request) return xmsgi_error(XMSG_ERR_ARG, "xmsg_irecv: request is NULL");
    Target t;
    if (int rc = check_common(comm, buf, count, datatype, "xmsg_irecv", t)) return rc;
    if (int rc = check_source(t, source, tag, "xmsg_irecv")) return rc;
    if (t.peer == XMSG_PROC_NULL) {
      null_request(t.world, request);
      return XMSG_SUCCESS;
    }
    return t.world->irecv(t.comm->user_context(), t.comm, t.peer, tag, buf, t.bytes, request, "xmsg_irecv");
  });
}

// Packed sends and receives (the MPI layer's non-contiguous datatypes): the checks of
// xmsg_isend / xmsg_irecv on a stream of `bytes` bytes.
int xmsgi_isend_packed(const xmsgi_layout* layout, int64_t bytes, int dest, int tag, xmsg_comm_t comm,
                       int synchronous, xmsg_request_t* request) {
  const char* func = synchronous ? "xmsg_issend" : "xmsg_isend";
  return xmsgi_guard(func, [&]() -> int {
    if (!request) return xmsgi_error(XMSG_ERR_ARG, "%s: request is NULL", func);
    if (!layout) return xmsgi_error(XMSG_ERR_ARG, "%s: layout is NULL", func);
    Target t;
    if (int rc = check_common(comm, layout, bytes, XMSG_BYTE, func, t)) return rc;
    if (int rc = check_dest(t, dest, tag, func)) return rc;
    if (t.peer == XMSG_PROC_NULL) {
      null_request(t.world, request);
      return XMSG_SUCCESS;
    }
    return t.world->isend_packed(t.comm->user_context(), t.comm, t.peer, tag, layout, t.bytes, request, func,
                                 synchronous != 0);
  });
}

int xmsgi_irecv_packed(const xmsgi_layout* layout, int64_t bytes, int source, int tag, xmsg_comm_t comm,
                       xmsg_request_t* request) {
  return xmsgi_guard("xmsg_irecv", [&]() -> int {
    if (!request) return xmsgi_error(XMSG_ERR_ARG, "xmsg_irecv: request is NULL");
    if (!layout) return xmsgi_error(XMSG_ERR_ARG, "xmsg_irecv: layout is NULL");
    Target t;
    if (int rc = check_common(comm, layout, bytes, XMSG_BYTE, "xmsg_irecv", t)) return rc;
    if (int rc = check_source(t, source, tag, "xmsg_irecv")) return rc;
    if (t.peer == XMSG_PROC_NULL) {
      null_request(t.world, request);
      return XMSG_SUCCESS;
    }
    return t.world->irecv(t.comm->user_context(), t.comm, t.peer, tag, nullptr, t.bytes, request, "xmsg_irecv",
                          layout);
  });
}

extern "C" int xmsg_recv(void* buf, int64_t count, xmsg_datatype_t datatype, int source, int tag, xmsg_comm_t comm,
                         xmsg_status_t* status) {
  return xmsgi_guard("xmsg_recv", [&]() -> int {
    Target t;
    if (int rc = check_common(comm, buf, count, datatype, "xmsg_recv", t)) return rc;
    if (int rc = check_source(t, source, tag, "xmsg_recv")) return rc;
    if (t.peer == XMSG_PROC_NULL) {
      empty_status(status, XMSG_PROC_NULL);
      return XMSG_SUCCESS;
    }
    return t.world->recv(t.comm->user_context(), t.comm, t.peer, tag, buf, t.bytes, status, "xmsg_recv");
  });
}

extern "C" int xmsg_sendrecv(const void* sendbuf, int64_t sendcount, xmsg_datatype_t sendtype, int dest, int sendtag,
                             void* recvbuf, int64_t recvcount, xmsg_datatype_t recvtype, int source, int recvtag,
                             xmsg_comm_t comm, xmsg_status_t* status) {
  return xmsgi_guard("xmsg_sendrecv", [&]() -> int {
    xmsg_request_t rr = XMSG_REQUEST_NULL, sr = XMSG_REQUEST_NULL;
    if (int rc = xmsg_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &rr)) return rc;
    if (int rc = xmsg_isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sr)) {
      xmsg_cancel(&rr);
      xmsg_wait(&rr, XMSG_STATUS_IGNORE);
      return rc;
    }
    int rc_send = xmsg_wait(&sr, XMSG_STATUS_IGNORE);
    int rc_recv = xmsg_wait(&rr, status);
    return rc_recv ? rc_recv : rc_send;
  });
}

// ---- completion ------------------------------------------------------------------------

extern "C" int xmsg_wait(xmsg_request_t* request, xmsg_status_t* status) {
  return xmsgi_guard("xmsg_wait", [&]() -> int {
    if (int rc = check_request_ptr(request, "xmsg_wait")) return rc;
    Request* r = *request;
    if (!r) {
      empty_status(status, XMSG_ANY_SOURCE);
      return XMSG_SUCCESS;
    }
    World* w = World::current;
    w->wait(r, "xmsg_wait");
    w->fill_status(r, status);
    int rc = w->report(r, "xmsg_wait");
    w->release(r);
    *request = XMSG_REQUEST_NULL;
    return rc;
  });
}

extern "C" int xmsg_test(xmsg_request_t* request, int* flag, xmsg_status_t* status) {
  return xmsgi_guard("xmsg_test", [&]() -> int {
    if (int rc = check_request_ptr(request, "xmsg_test")) return rc;
    if (!flag) return xmsgi_error(XMSG_ERR_ARG, "xmsg_test: flag is NULL");
    Request* r = *request;
    if (!r) {
      *flag = 1;
      empty_status(status, XMSG_ANY_SOURCE);
      return XMSG_SUCCESS;
    }
    World* w = World::current;
    if (!r->done) w->progress();
    if (!r->done) {
      *flag = 0;
      return XMSG_SUCCESS;
    }
    *flag = 1;
    w->fill_status(r, status);
    int rc = w->report(r, "xmsg_test");
    w->release(r);
    *request = XMSG_REQUEST_NULL;
    return rc;
  });
}

// Like xmsg_test, but a completed request stays as it is (MPI_Request_get_status).
int xmsgi_request_peek(xmsg_request_t request, int* done, xmsg_status_t* status) {
  xmsg_request_t copy = request;
  if (int rc = check_request_ptr(&copy, "xmsgi_request_peek")) return rc;
  if (!done) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_request_peek: done is NULL");
  if (!request) {
    *done = 1;
    empty_status(status, XMSG_ANY_SOURCE);
    return XMSG_SUCCESS;
  }
  World* w = World::current;
  if (!request->done) w->progress();
  *done = request->done ? 1 : 0;
  if (*done) w->fill_status(request, status);
  return XMSG_SUCCESS;
}

static int check_request_array(int count, xmsg_request_t requests[], const char* func) {
  if (count < 0) return xmsgi_error(XMSG_ERR_COUNT, "%s: count %d is negative", func, count);
  if (count > 0 && !requests) return xmsgi_error(XMSG_ERR_ARG, "%s: requests is NULL but count is %d", func, count);
  if (!World::current) return xmsgi_error(XMSG_ERR_NOT_INITIALIZED, "%s: xmsg is not initialized", func);
  for (int i = 0; i < count; ++i)
    if (requests[i] && requests[i]->magic != Request::kMagic)
      return xmsgi_error(XMSG_ERR_REQUEST, "%s: requests[%d] is not a live request", func, i);
  return XMSG_SUCCESS;
}

extern "C" int xmsg_waitall(int count, xmsg_request_t requests[], xmsg_status_t statuses[]) {
  return xmsgi_guard("xmsg_waitall", [&]() -> int {
    if (int rc = check_request_array(count, requests, "xmsg_waitall")) return rc;
    World* w = World::current;
    int first = XMSG_SUCCESS;
    for (int i = 0; i < count; ++i) {
      Request* r = requests[i];
      xmsg_status_t* s = statuses ? &statuses[i] : nullptr;
      if (!r) {
        empty_status(s, XMSG_ANY_SOURCE);
        continue;
      }
      w->wait(r, "xmsg_waitall");
      w->fill_status(r, s);
      if (r->error != XMSG_SUCCESS && first == XMSG_SUCCESS) {
        char func[64];
        std::snprintf(func, sizeof func, "xmsg_waitall (requests[%d])", i);
        first = w->report(r, func);
      }
      w->release(r);
      requests[i] = XMSG_REQUEST_NULL;
    }
    return first;
  });
}

extern "C" int xmsg_testall(int count, xmsg_request_t requests[], int* flag, xmsg_status_t statuses[]) {
  return xmsgi_guard("xmsg_testall", [&]() -> int {
    if (int rc = check_request_array(count, requests, "xmsg_testall")) return rc;
    if (!flag) return xmsgi_error(XMSG_ERR_ARG, "xmsg_testall: flag is NULL");
    World* w = World::current;
    w->progress();
    for (int i = 0; i < count; ++i)
      if (requests[i] && !requests[i]->done) {
        *flag = 0;
        return XMSG_SUCCESS;
      }
    *flag = 1;
    return xmsg_waitall(count, requests, statuses);
  });
}

extern "C" int xmsg_waitany(int count, xmsg_request_t requests[], int* index, xmsg_status_t* status) {
  return xmsgi_guard("xmsg_waitany", [&]() -> int {
    if (int rc = check_request_array(count, requests, "xmsg_waitany")) return rc;
    if (!index) return xmsgi_error(XMSG_ERR_ARG, "xmsg_waitany: index is NULL");
    World* w = World::current;
    bool any = false;
    for (int i = 0; i < count; ++i) any = any || requests[i];
    if (!any) {
      *index = XMSG_UNDEFINED;
      empty_status(status, XMSG_ANY_SOURCE);
      return XMSG_SUCCESS;
    }
    World::Idle idle;
    for (;;) {
      for (int i = 0; i < count; ++i) {
        Request* r = requests[i];
        if (r && r->done) {
          *index = i;
          w->fill_status(r, status);
          int rc = w->report(r, "xmsg_waitany");
          w->release(r);
          requests[i] = XMSG_REQUEST_NULL;
          return rc;
        }
      }
      if (w->progress() > 0) idle.reset();
      else idle.pause(*w);
    }
  });
}

extern "C" int xmsg_cancel(xmsg_request_t* request) {
  return xmsgi_guard("xmsg_cancel", [&]() -> int {
    if (int rc = check_request_ptr(request, "xmsg_cancel")) return rc;
    if (!*request) return xmsgi_error(XMSG_ERR_REQUEST, "xmsg_cancel: *request is XMSG_REQUEST_NULL");
    return World::current->cancel(*request);
  });
}

extern "C" int xmsg_request_free(xmsg_request_t* request) {
  return xmsgi_guard("xmsg_request_free", [&]() -> int {
    if (int rc = check_request_ptr(request, "xmsg_request_free")) return rc;
    if (!*request) return xmsgi_error(XMSG_ERR_REQUEST, "xmsg_request_free: *request is XMSG_REQUEST_NULL");
    World::current->free_request(*request);
    *request = XMSG_REQUEST_NULL;
    return XMSG_SUCCESS;
  });
}

// ---- probe -----------------------------------------------------------------------------

extern "C" int xmsg_iprobe(int source, int tag, xmsg_comm_t comm, int* flag, xmsg_status_t* status) {
  return xmsgi_guard("xmsg_iprobe", [&]() -> int {
    Target t;
    if (int rc = check_common(comm, nullptr, 0, XMSG_BYTE, "xmsg_iprobe", t)) return rc;
    if (int rc = check_source(t, source, tag, "xmsg_iprobe")) return rc;
    if (!flag) return xmsgi_error(XMSG_ERR_ARG, "xmsg_iprobe: flag is NULL");
    if (t.peer == XMSG_PROC_NULL) {
      *flag = 1;
      empty_status(status, XMSG_PROC_NULL);
      return XMSG_SUCCESS;
    }
    bool found = false;
    int rc = t.world->iprobe(t.comm->user_context(), t.comm, t.peer, tag, &found, status, "xmsg_iprobe");
    *flag = found;
    return rc;
  });
}

extern "C" int xmsg_probe(int source, int tag, xmsg_comm_t comm, xmsg_status_t* status) {
  return xmsgi_guard("xmsg_probe", [&]() -> int {
    Target t;
    if (int rc = check_common(comm, nullptr, 0, XMSG_BYTE, "xmsg_probe", t)) return rc;
    if (int rc = check_source(t, source, tag, "xmsg_probe")) return rc;
    if (t.peer == XMSG_PROC_NULL) {
      empty_status(status, XMSG_PROC_NULL);
      return XMSG_SUCCESS;
    }
    World::Idle idle;
    for (;;) {
      bool found = false;
      if (int rc = t.world->iprobe(t.comm->user_context(), t.comm, t.peer, tag, &found, status, "xmsg_probe")) return rc;
      if (found) return XMSG_SUCCESS;
      if (t.peer < 0)
        for (int w : t.comm->world_of)
          if (t.world->peer_dead(w)) return t.world->peer_failed_error("xmsg_probe", t.comm, w);
      idle.pause(*t.world);
    }
  });
}

// ---- collective context (runtime/collectives) ------------------------------------------

int xmsgi_coll_isend(const void* buf, int64_t bytes, int dest, int tag, xmsg_comm_t comm, xmsg_request_t* req) {
  if (!req) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_coll_isend: req is NULL");
  Target t;
  if (int rc = check_common(comm, buf, bytes, XMSG_BYTE, "xmsgi_coll_isend", t)) return rc;
  if (int rc = check_dest(t, dest, tag, "xmsgi_coll_isend")) return rc;
  if (t.peer == XMSG_PROC_NULL) {
    null_request(t.world, req);
    return XMSG_SUCCESS;
  }
  return t.world->isend(t.comm->coll_context(), t.comm, t.peer, tag, buf, t.bytes, req, "xmsgi_coll_isend");
}

int xmsgi_coll_irecv(void* buf, int64_t bytes, int source, int tag, xmsg_comm_t comm, xmsg_request_t* req) {
  if (!req) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_coll_irecv: req is NULL");
  Target t;
  if (int rc = check_common(comm, buf, bytes, XMSG_BYTE, "xmsgi_coll_irecv", t)) return rc;
  if (int rc = check_source(t, source, tag, "xmsgi_coll_irecv")) return rc;
  if (t.peer == XMSG_PROC_NULL) {
    null_request(t.world, req);
    return XMSG_SUCCESS;
  }
  return t.world->irecv(t.comm->coll_context(), t.comm, t.peer, tag, buf, t.bytes, req, "xmsgi_coll_irecv");
}

int xmsgi_coll_isend_packed(const xmsgi_layout* layout, int64_t bytes, int dest, int tag, xmsg_comm_t comm,
                            xmsg_request_t* req) {
  if (!req) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_coll_isend_packed: req is NULL");
  if (!layout) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_coll_isend_packed: layout is NULL");
  Target t;
  if (int rc = check_common(comm, layout, bytes, XMSG_BYTE, "xmsgi_coll_isend_packed", t)) return rc;
  if (int rc = check_dest(t, dest, tag, "xmsgi_coll_isend_packed")) return rc;
  if (t.peer == XMSG_PROC_NULL) {
    null_request(t.world, req);
    return XMSG_SUCCESS;
  }
  return t.world->isend_packed(t.comm->coll_context(), t.comm, t.peer, tag, layout, t.bytes, req,
                               "xmsgi_coll_isend_packed", false);
}

int xmsgi_coll_irecv_packed(const xmsgi_layout* layout, int64_t bytes, int source, int tag, xmsg_comm_t comm,
                            xmsg_request_t* req) {
  if (!req) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_coll_irecv_packed: req is NULL");
  if (!layout) return xmsgi_error(XMSG_ERR_ARG, "xmsgi_coll_irecv_packed: layout is NULL");
  Target t;
  if (int rc = check_common(comm, layout, bytes, XMSG_BYTE, "xmsgi_coll_irecv_packed", t)) return rc;
  if (int rc = check_source(t, source, tag, "xmsgi_coll_irecv_packed")) return rc;
  if (t.peer == XMSG_PROC_NULL) {
    null_request(t.world, req);
    return XMSG_SUCCESS;
  }
  return t.world->irecv(t.comm->coll_context(), t.comm, t.peer, tag, nullptr, t.bytes, req,
                        "xmsgi_coll_irecv_packed", layout);
}

void xmsgi_request_orphan(xmsg_request_t request) {
  if (request && World::current) World::current->orphan(request);
}
