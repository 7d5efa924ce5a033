// MPI-3.1 chapter 3: point-to-point. Contiguous data on an intracommunicator goes straight to
// the C API (the fast path: no allocation, no copy); derived datatypes go through Send/RecvView
// (packed when not contiguous), intercommunicator ranks are translated to the union's, and the
// send modes, buffered sends, persistent requests and matched probes are built here.
#include "mpi_impl.hpp"

#include <climits>
#include <cstring>
#include <new>
#include <vector>

namespace xmsg::mpi {
namespace {

// Rank in the communicator the C API sees (an intercommunicator's union).
inline int transport_rank(MPI_Comm comm, int rank) {
  if (rank < 0 || !is_inter(comm)) return rank;  // MPI_PROC_NULL, MPI_ANY_SOURCE
  return rank + state_of(comm)->remote_offset;
}

int check_rank_arg(MPI_Comm comm, int rank, const char* func, const char* arg, bool any_allowed) {
  if (!is_inter(comm)) return MPI_SUCCESS;  // the C API checks intracommunicator ranks
  CommState* s = state_of(comm);
  if (rank == MPI_PROC_NULL || (any_allowed && rank == MPI_ANY_SOURCE)) return MPI_SUCCESS;
  if (rank < 0 || rank >= s->remote_size)
    return fail(MPI_ERR_RANK, func, comm, "%s %d out of range [0, %d) of the remote group", arg, rank, s->remote_size);
  return MPI_SUCCESS;
}

// A point-to-point operation through this library: the xmsg request underneath plus what has
// to happen when it completes (unpack, release a packed copy, translate the source).
struct P2PRequest : Request {
  xmsg_request_t inner = XMSG_REQUEST_NULL;
  SendView send;
  RecvView recv;
  bool is_recv = false;
  bool finished = false;
  MPI_Status result{};

  int test(bool* done, MPI_Status* status) override {
    if (finished) {
      *done = true;
      if (status) *status = result;
      return result.MPI_ERROR;
    }
    int flag = 0;
    xmsg_status_t st{};
    int e = inner == XMSG_REQUEST_NULL ? (flag = 1, st.source = MPI_PROC_NULL, st.tag = MPI_ANY_TAG, 0)
                                       : xmsg_test(&inner, &flag, &st);
    if (!flag && e == MPI_SUCCESS) {
      *done = false;
      return MPI_SUCCESS;
    }
    *done = true;
    if (is_recv && e == MPI_SUCCESS) recv.finish(st.bytes);
    to_mpi_status(st, comm, &result);
    if (e) result.MPI_ERROR = e;
    send.owned.reset();
    finished = !persistent();
    if (status) *status = result;
    return e;
  }
  bool peek(MPI_Status* status) override {
    if (finished || inner == XMSG_REQUEST_NULL) {
      if (finished && status) *status = result;
      return true;
    }
    int done = 0;
    xmsg_status_t st{};
    xmsgi_request_peek(inner, &done, &st);
    if (done) to_mpi_status(st, comm, status);
    return done != 0;
  }
  int cancel() override { return inner == XMSG_REQUEST_NULL ? MPI_SUCCESS : xmsg_cancel(&inner); }

  // Recycled through a free list: a window of nonblocking calls (OSU's bw keeps 64 in flight)
  // outgrows malloc's per-thread cache (7 blocks a size), and every further new and delete took
  // malloc's slow path (~30 % of the samples of 64-byte windowed bandwidth with a derived type).
  // One thread at a time calls MPI (MPI_THREAD_FUNNELED). Off under ASan, which should see
  // every use after free.
  static void* operator new(size_t bytes) {
    if (kRecycle && bytes == sizeof(P2PRequest) && !spare().empty()) {
      void* p = spare().back();
      spare().pop_back();
      return p;
    }
    return ::operator new(bytes);
  }
  static void operator delete(void* p, size_t bytes) noexcept {
    if (kRecycle && bytes == sizeof(P2PRequest) && spare().size() < kSpareMax) {
      try {
        spare().push_back(p);
        return;
      } catch (const std::bad_alloc&) {
      }
    }
    ::operator delete(p);
  }

 private:
#if defined(__SANITIZE_ADDRESS__)
  static constexpr bool kRecycle = false;
#else
  static constexpr bool kRecycle = true;
#endif
  static constexpr size_t kSpareMax = 4096;
  // Never destroyed: requests may be deleted during static destruction.
  static std::vector<void*>& spare() {
    static auto* list = new std::vector<void*>;
    return *list;
  }
};

int start_send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               P2PRequest* r, const char* func, bool synchronous = false) {
  if (int e = r->send.init(buf, count, datatype, func, comm, true)) return e;
  if (int e = check_rank_arg(comm, dest, func, "dest", false)) return e;
  r->comm = comm;
  r->is_recv = false;
  r->finished = false;
  int code = r->send.packed ? xmsgi_isend_packed(&r->send.layout, r->send.bytes, transport_rank(comm, dest), tag,
                                                 comm, synchronous, &r->inner)
                            : (synchronous ? xmsg_issend : xmsg_isend)(r->send.data, r->send.count, r->send.xtype,
                                                                       transport_rank(comm, dest), tag, comm, &r->inner);
  return code ? handle(code, func, comm) : MPI_SUCCESS;
}

int start_recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, P2PRequest* r,
               const char* func) {
  if (int e = r->recv.init(buf, count, datatype, func, comm, true)) return e;
  if (int e = check_rank_arg(comm, source, func, "source", true)) return e;
  r->comm = comm;
  r->is_recv = true;
  r->finished = false;
  int code = r->recv.packed
                 ? xmsgi_irecv_packed(&r->recv.layout, r->recv.bytes, transport_rank(comm, source), tag, comm, &r->inner)
                 : xmsg_irecv(r->recv.data, r->recv.count, r->recv.xtype, transport_rank(comm, source), tag, comm,
                              &r->inner);
  return code ? handle(code, func, comm) : MPI_SUCCESS;
}

// Blocking completion of a layer request with MPI_Wait's progress rules.
int finish(P2PRequest* r, MPI_Status* status) {
  MPI_Request h = handle_of(r);
  return PMPI_Wait(&h, status);
}

// ---- buffered sends (MPI-3.1 3.6) -------------------------------------------------------------
// The attached buffer is carved into regions, one per message still in flight.
struct BsendPool {
  char* base = nullptr;
  int size = 0;
  std::map<int64_t, int64_t> used;  // offset -> length
  std::vector<std::pair<xmsg_request_t, int64_t>> inflight;  // request, offset

  void reap() {
    for (size_t i = 0; i < inflight.size();) {
      int flag = 0;
      xmsg_test(&inflight[i].first, &flag, XMSG_STATUS_IGNORE);
      if (flag) {
        used.erase(inflight[i].second);
        inflight.erase(inflight.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }
  // First fit; -1 when nothing fits.
  int64_t take(int64_t bytes) {
    int64_t need = bytes + MPI_BSEND_OVERHEAD;
    int64_t at = 0;
    for (const auto& [offset, length] : used) {
      if (offset - at >= need) break;
      at = offset + length;
    }
    if (at + need > size) return -1;
    used[at] = need;
    return at;
  }
};
BsendPool g_bsend;

int buffered_send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  const char* func) {
  SendView view;  // packed (non-contiguous) data goes straight into the attached buffer
  if (int e = view.init(buf, count, datatype, func, comm, true)) return e;
  if (int e = check_rank_arg(comm, dest, func, "dest", false)) return e;
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  g_bsend.reap();
  int64_t at = g_bsend.take(view.bytes);
  if (at < 0)
    return fail(MPI_ERR_BUFFER, func, comm,
                "the attached buffer (%d bytes) has no room for %lld bytes + MPI_BSEND_OVERHEAD (attach a larger "
                "one with MPI_Buffer_attach)",
                g_bsend.size, static_cast<long long>(view.bytes));
  char* copy = g_bsend.base + at;
  if (view.packed) view.layout.pack(0, copy, static_cast<uint64_t>(view.bytes));
  else if (view.bytes > 0) std::memcpy(copy, view.data, static_cast<size_t>(view.bytes));
  xmsg_request_t r = XMSG_REQUEST_NULL;
  int code = xmsg_isend(copy, view.bytes, XMSG_BYTE, transport_rank(comm, dest), tag, comm, &r);
  if (code) {
    g_bsend.used.erase(at);
    return handle(code, func, comm);
  }
  g_bsend.inflight.emplace_back(r, at);
  return MPI_SUCCESS;
}

// ---- matched probe (MPI-3.1 3.8.2) ---------------------------------------------------------------
// A matched message is received at once into a buffer of its own, so no other receive can
// take it; MPI_Mrecv copies it out.
struct Message {
  std::unique_ptr<char[]> data;
  int64_t bytes = 0;
  MPI_Status status{};
  MPI_Comm comm = MPI_COMM_NULL;
  bool live = false;
};
std::vector<Message>& messages() {
  static std::vector<Message> table(1);  // MPI_MESSAGE_NULL
  return table;
}

int match_message(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status, bool block,
                  int* flag, const char* func) {
  if (!message) return fail(MPI_ERR_ARG, func, comm, "message is NULL");
  if (int e = check_rank_arg(comm, source, func, "source", true)) return e;
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    if (flag) *flag = 1;
    if (status) {
      empty_status(status);
      status->MPI_SOURCE = MPI_PROC_NULL;
    }
    return MPI_SUCCESS;
  }
  xmsg_status_t st{};
  int found = 1;
  int code = block ? xmsg_probe(transport_rank(comm, source), tag, comm, &st)
                   : xmsg_iprobe(transport_rank(comm, source), tag, comm, &found, &st);
  if (code) return handle(code, func, comm);
  if (flag) *flag = found;
  if (!found) return MPI_SUCCESS;
  Message m;
  m.bytes = st.bytes;
  m.data.reset(new char[static_cast<size_t>(st.bytes > 0 ? st.bytes : 1)]);
  m.comm = comm;
  xmsg_status_t got{};
  code = xmsg_recv(m.data.get(), st.bytes, XMSG_BYTE, st.source, st.tag, comm, &got);
  if (code) return handle(code, func, comm);
  to_mpi_status(got, comm, &m.status);
  m.live = true;
  auto& table = messages();
  size_t slot = 1;
  while (slot < table.size() && table[slot].live) ++slot;
  if (slot == table.size()) table.emplace_back();
  table[slot] = std::move(m);
  *message = static_cast<MPI_Message>(slot);
  if (status) *status = table[slot].status;
  return MPI_SUCCESS;
}

int take_message(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status,
                 const char* func) {
  if (!message) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "message is NULL");
  if (*message == MPI_MESSAGE_NO_PROC) {
    *message = MPI_MESSAGE_NULL;
    if (status) {
      empty_status(status);
      status->MPI_SOURCE = MPI_PROC_NULL;
    }
    return MPI_SUCCESS;
  }
  auto& table = messages();
  if (*message <= 0 || *message >= static_cast<int>(table.size()) || !table[*message].live)
    return fail(MPI_ERR_REQUEST, func, MPI_COMM_WORLD, "message %d is not a matched message", *message);
  Message& m = table[*message];
  RecvView view;  // non-contiguous data is unpacked straight from the message's buffer
  if (int e = view.init(buf, count, datatype, func, m.comm, true)) return e;
  int64_t n = m.bytes <= view.bytes ? m.bytes : view.bytes;
  if (view.packed) view.layout.unpack(0, m.data.get(), static_cast<uint64_t>(n));
  else if (n > 0) std::memcpy(view.data, m.data.get(), static_cast<size_t>(n));
  view.finish(n);
  MPI_Status st = m.status;
  st.xmsg_bytes = n;
  const bool truncated = m.bytes > view.bytes;
  const long long message_bytes = static_cast<long long>(m.bytes);
  MPI_Comm comm = m.comm;
  m = Message{};
  *message = MPI_MESSAGE_NULL;
  if (truncated) {
    st.MPI_ERROR = MPI_ERR_TRUNCATE;
    if (status) *status = st;
    return fail(MPI_ERR_TRUNCATE, func, comm, "the matched message (%lld bytes) is longer than the buffer (%lld bytes)",
                message_bytes, static_cast<long long>(view.bytes));
  }
  if (status) *status = st;
  return MPI_SUCCESS;
}

// MPI_Recv of a predefined datatype on an intracommunicator: the runtime's own receive.
inline int recv_contiguous(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                           MPI_Status* status) {
  xmsg_status_t st{};
  int code = xmsg_recv(buf, count, datatype, source, tag, comm, &st);
  to_mpi_status(st, comm, status);
  return handle(code, "MPI_Recv", comm);
}

}  // namespace
}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  if (is_xmsg_type(datatype) && !is_inter(comm) && progress_thread_idle()) [[likely]]
    return handle(xmsg_send(buf, count, datatype, dest, tag, comm), "MPI_Send", comm);
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_send(buf, count, datatype, dest, tag, comm), "MPI_Send", comm);
  auto* r = new P2PRequest();
  if (int e = start_send(buf, count, datatype, dest, tag, comm, r, "MPI_Send")) {
    delete r;
    return e;
  }
  return finish(r, MPI_STATUS_IGNORE);
}
XMSG_MPI_ALIAS(Send)

// Synchronous mode: the runtime's rendezvous, whose completion follows the receiver's match.
int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_ssend(buf, count, datatype, dest, tag, comm), "MPI_Ssend", comm);
  auto* r = new P2PRequest();
  if (int e = start_send(buf, count, datatype, dest, tag, comm, r, "MPI_Ssend", true)) {
    delete r;
    return e;
  }
  return finish(r, MPI_STATUS_IGNORE);
}
XMSG_MPI_ALIAS(Ssend)

int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}
XMSG_MPI_ALIAS(Rsend)

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  return buffered_send(buf, count, datatype, dest, tag, comm, "MPI_Bsend");
}
XMSG_MPI_ALIAS(Bsend)

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (is_xmsg_type(datatype) && !is_inter(comm) && progress_thread_idle()) [[likely]]
    return recv_contiguous(buf, count, datatype, source, tag, comm, status);
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm)) return recv_contiguous(buf, count, datatype, source, tag, comm, status);
  auto* r = new P2PRequest();
  if (int e = start_recv(buf, count, datatype, source, tag, comm, r, "MPI_Recv")) {
    delete r;
    return e;
  }
  return finish(r, status);
}
XMSG_MPI_ALIAS(Recv)

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  if (is_xmsg_type(datatype) && !is_inter(comm) && progress_thread_idle()) [[likely]]
    return handle(xmsg_isend(buf, count, datatype, dest, tag, comm, request), "MPI_Isend", comm);
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_isend(buf, count, datatype, dest, tag, comm, request), "MPI_Isend", comm);
  if (!request) return fail(MPI_ERR_REQUEST, "MPI_Isend", comm, "request is NULL");
  auto* r = new P2PRequest();
  if (int e = start_send(buf, count, datatype, dest, tag, comm, r, "MPI_Isend")) {
    delete r;
    return e;
  }
  *request = handle_of(r);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Isend)

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_issend(buf, count, datatype, dest, tag, comm, request), "MPI_Issend", comm);
  if (!request) return fail(MPI_ERR_REQUEST, "MPI_Issend", comm, "request is NULL");
  auto* r = new P2PRequest();
  if (int e = start_send(buf, count, datatype, dest, tag, comm, r, "MPI_Issend", true)) {
    delete r;
    return e;
  }
  *request = handle_of(r);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Issend)

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}
XMSG_MPI_ALIAS(Irsend)

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!request) return fail(MPI_ERR_REQUEST, "MPI_Ibsend", comm, "request is NULL");
  if (int e = buffered_send(buf, count, datatype, dest, tag, comm, "MPI_Ibsend")) return e;
  return completed_request(comm, request);
}
XMSG_MPI_ALIAS(Ibsend)

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  if (is_xmsg_type(datatype) && !is_inter(comm) && progress_thread_idle()) [[likely]]
    return handle(xmsg_irecv(buf, count, datatype, source, tag, comm, request), "MPI_Irecv", comm);
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(datatype) && !is_inter(comm))
    return handle(xmsg_irecv(buf, count, datatype, source, tag, comm, request), "MPI_Irecv", comm);
  if (!request) return fail(MPI_ERR_REQUEST, "MPI_Irecv", comm, "request is NULL");
  auto* r = new P2PRequest();
  if (int e = start_recv(buf, count, datatype, source, tag, comm, r, "MPI_Irecv")) {
    delete r;
    return e;
  }
  *request = handle_of(r);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Irecv)

int PMPI_Buffer_attach(void* buffer, int size) {
  XMSG_MPI_ENTRY;
  if (size < 0) return fail(MPI_ERR_ARG, "MPI_Buffer_attach", MPI_COMM_WORLD, "size %d is negative", size);
  if (!buffer && size > 0) return fail(MPI_ERR_BUFFER, "MPI_Buffer_attach", MPI_COMM_WORLD, "buffer is NULL");
  if (g_bsend.base)
    return fail(MPI_ERR_BUFFER, "MPI_Buffer_attach", MPI_COMM_WORLD,
                "a buffer is already attached (MPI_Buffer_detach it first)");
  g_bsend.base = static_cast<char*>(buffer);
  g_bsend.size = size;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Buffer_attach)

// Blocks until every buffered message has left the buffer (MPI-3.1 3.6.1).
int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  XMSG_MPI_ENTRY;
  if (!buffer_addr || !size)
    return fail(MPI_ERR_ARG, "MPI_Buffer_detach", MPI_COMM_WORLD, "%s is NULL", size ? "buffer_addr" : "size");
  unsigned spins = 0;
  for (g_bsend.reap(); !g_bsend.inflight.empty(); g_bsend.reap()) {
    if (progress_pending()) progress_all();
    xmsgi_progress();
    xmsgi_idle(&spins);
  }
  *static_cast<void**>(buffer_addr) = g_bsend.base;
  *size = g_bsend.size;
  g_bsend = BsendPool{};
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Buffer_detach)

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (is_xmsg_type(sendtype) && is_xmsg_type(recvtype) && !is_inter(comm)) {
    xmsg_status_t st{};
    int code = xmsg_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                             recvtag, comm, &st);
    to_mpi_status(st, comm, status);
    return handle(code, "MPI_Sendrecv", comm);
  }
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  if (int e = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &reqs[0])) return e;
  if (int e = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &reqs[1])) {
    PMPI_Cancel(&reqs[0]);
    PMPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    return e;
  }
  MPI_Status st[2];
  int e = PMPI_Waitall(2, reqs, st);
  if (status) *status = st[0];
  return e == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR ? st[0].MPI_ERROR : st[1].MPI_ERROR) : e;
}
XMSG_MPI_ALIAS(Sendrecv)

// The outgoing data is packed first, so the same buffer can take the incoming message.
int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  const Type* t = nullptr;
  if (int e = check_type(datatype, "MPI_Sendrecv_replace", "datatype", comm, &t)) return e;
  if (count < 0) return fail(MPI_ERR_COUNT, "MPI_Sendrecv_replace", comm, "count %d is negative", count);
  const int64_t bytes = static_cast<int64_t>(count) * t->size;
  std::unique_ptr<char[]> copy(new char[static_cast<size_t>(bytes > 0 ? bytes : 1)]);
  pack(buf, count, *t, copy.get());
  return PMPI_Sendrecv(copy.get(), static_cast<int>(bytes), MPI_BYTE, dest, sendtag, buf, count, datatype, source,
                       recvtag, comm, status);
}
XMSG_MPI_ALIAS(Sendrecv_replace)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (int e = check_rank_arg(comm, source, "MPI_Probe", "source", true)) return e;
  xmsg_status_t st{};
  int code;
  if (!progress_pending()) {
    code = xmsg_probe(transport_rank(comm, source), tag, comm, &st);
  } else {
    int found = 0;
    unsigned spins = 0;
    while ((code = xmsg_iprobe(transport_rank(comm, source), tag, comm, &found, &st)) == MPI_SUCCESS && !found) {
      progress_all();
      xmsgi_idle(&spins);
    }
  }
  to_mpi_status(st, comm, status);
  return handle(code, "MPI_Probe", comm);
}
XMSG_MPI_ALIAS(Probe)

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (int e = check_rank_arg(comm, source, "MPI_Iprobe", "source", true)) return e;
  if (progress_pending()) progress_all();
  xmsg_status_t st{};
  int code = xmsg_iprobe(transport_rank(comm, source), tag, comm, flag, &st);
  if (code == MPI_SUCCESS && flag && *flag) to_mpi_status(st, comm, status);
  return handle(code, "MPI_Iprobe", comm);
}
XMSG_MPI_ALIAS(Iprobe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  return match_message(source, tag, comm, message, status, true, nullptr, "MPI_Mprobe");
}
XMSG_MPI_ALIAS(Mprobe)

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  if (!flag) return fail(MPI_ERR_ARG, "MPI_Improbe", comm, "flag is NULL");
  if (progress_pending()) progress_all();
  return match_message(source, tag, comm, message, status, false, flag, "MPI_Improbe");
}
XMSG_MPI_ALIAS(Improbe)

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  XMSG_MPI_ENTRY;
  return take_message(buf, count, datatype, message, status, "MPI_Mrecv");
}
XMSG_MPI_ALIAS(Mrecv)

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  XMSG_MPI_ENTRY;
  if (!request) return fail(MPI_ERR_ARG, "MPI_Imrecv", MPI_COMM_WORLD, "request is NULL");
  auto* r = new P2PRequest();
  r->is_recv = true;
  if (int e = take_message(buf, count, datatype, message, &r->result, "MPI_Imrecv")) {
    delete r;
    return e;
  }
  r->finished = true;
  *request = handle_of(r);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Imrecv)

// ---- persistent requests (MPI-3.1 3.9) ---------------------------------------------------------
namespace {
struct PersistentP2P final : P2PRequest {
  enum Mode { kSend, kSsend, kBsend, kRecv } mode = kSend;
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int peer = 0;
  int tag = 0;
  // A derived `datatype` is the request's own handle of the init call's type (private_type):
  // the program may free its handle right after the init call.
  ~PersistentP2P() override {
    if (owns_type) free_private_type(datatype);
    release_comm(comm);
  }
  bool owns_type = false;
  bool persistent() const override { return true; }
  int start() override {
    finished = false;
    inner = XMSG_REQUEST_NULL;
    switch (mode) {
      case kSend: return start_send(sbuf, count, datatype, peer, tag, comm, this, "MPI_Start");
      case kSsend: return start_send(sbuf, count, datatype, peer, tag, comm, this, "MPI_Start", true);
      case kRecv: return start_recv(rbuf, count, datatype, peer, tag, comm, this, "MPI_Start");
      case kBsend: return buffered_send(sbuf, count, datatype, peer, tag, comm, "MPI_Start");
    }
    return MPI_ERR_INTERN;
  }
};

int make_persistent(PersistentP2P::Mode mode, const void* sbuf, void* rbuf, int count, MPI_Datatype datatype,
                    int peer, int tag, MPI_Comm comm, MPI_Request* request, const char* func) {
  if (!request) return fail(MPI_ERR_REQUEST, func, comm, "request is NULL");
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, func, MPI_COMM_WORLD);
  if (count < 0) return fail(MPI_ERR_COUNT, func, comm, "count %d is negative", count);
  const Type* t = nullptr;
  if (int e = check_type(datatype, func, "datatype", comm, &t)) return e;
  if (int e = check_rank_arg(comm, peer, func, mode == PersistentP2P::kRecv ? "source" : "dest",
                             mode == PersistentP2P::kRecv))
    return e;
  auto* r = new PersistentP2P();
  r->mode = mode;
  r->sbuf = sbuf;
  r->rbuf = rbuf;
  r->count = count;
  r->datatype = private_type(datatype);
  r->owns_type = r->datatype != datatype;
  r->peer = peer;
  r->tag = tag;
  r->comm = comm;
  retain_comm(comm);
  r->active = false;
  *request = handle_of(r);
  return MPI_SUCCESS;
}
}  // namespace

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return make_persistent(PersistentP2P::kSend, buf, nullptr, count, datatype, dest, tag, comm, request,
                         "MPI_Send_init");
}
XMSG_MPI_ALIAS(Send_init)

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return make_persistent(PersistentP2P::kSsend, buf, nullptr, count, datatype, dest, tag, comm, request,
                         "MPI_Ssend_init");
}
XMSG_MPI_ALIAS(Ssend_init)

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return make_persistent(PersistentP2P::kSend, buf, nullptr, count, datatype, dest, tag, comm, request,
                         "MPI_Rsend_init");
}
XMSG_MPI_ALIAS(Rsend_init)

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return make_persistent(PersistentP2P::kBsend, buf, nullptr, count, datatype, dest, tag, comm, request,
                         "MPI_Bsend_init");
}
XMSG_MPI_ALIAS(Bsend_init)

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  XMSG_MPI_ENTRY;
  return make_persistent(PersistentP2P::kRecv, nullptr, buf, count, datatype, source, tag, comm, request,
                         "MPI_Recv_init");
}
XMSG_MPI_ALIAS(Recv_init)

}  // extern "C"
