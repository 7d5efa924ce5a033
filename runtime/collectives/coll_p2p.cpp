// The collectives' only contact with the point-to-point runtime: requests on the
// communicator's hidden collective context (so collective traffic never matches a user
// receive), argument checks shared with the rest of the C API, and error messages.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "coll.hpp"
#include "xmsg_internal.h"

namespace xmsg::coll {

int check_comm(xmsg_comm_t comm, const char* func, Comm* out) {
  int rank = 0, size = 0;
  if (int e = xmsgi_check_comm(comm, func, &rank, &size)) return e;
  *out = Comm{comm, rank, size};
  return XMSG_SUCCESS;
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

Step::~Step() {
  if (count_ > 0) wait();
}

void Step::add(xmsg_request_t request) {
  if (count_ < static_cast<int>(sizeof inline_ / sizeof inline_[0])) {
    inline_[count_] = request;
  } else {
    if (more_.empty()) more_.assign(inline_, inline_ + count_);
    more_.push_back(request);
  }
  ++count_;
}

void Step::send(const void* buf, int64_t bytes, int peer, int tag) {
  static const char empty = 0;
  xmsg_request_t request = XMSG_REQUEST_NULL;
  int e = xmsgi_coll_isend(bytes > 0 ? buf : &empty, bytes, comm_.real(peer), tag, comm_.handle, &request);
  if (e != XMSG_SUCCESS) {
    if (error_ == XMSG_SUCCESS) error_ = e;
    return;
  }
  add(request);
}

void Step::recv(void* buf, int64_t bytes, int peer, int tag) {
  static char empty[1];
  xmsg_request_t request = XMSG_REQUEST_NULL;
  int e = xmsgi_coll_irecv(bytes > 0 ? buf : empty, bytes, comm_.real(peer), tag, comm_.handle, &request);
  if (e != XMSG_SUCCESS) {
    if (error_ == XMSG_SUCCESS) error_ = e;
    return;
  }
  add(request);
}

int Step::wait() {
  if (count_ > 0) {
    xmsg_request_t* requests = more_.empty() ? inline_ : more_.data();
    int e = xmsg_waitall(count_, requests, XMSG_STATUSES_IGNORE);
    if (e != XMSG_SUCCESS && error_ == XMSG_SUCCESS) error_ = e;
    count_ = 0;
    more_.clear();
  }
  return error_;
}

int sendrecv(const Comm& comm, const void* sbuf, int64_t sbytes, int dest, void* rbuf, int64_t rbytes, int source,
             int tag) {
  Step step(comm);
  if (source >= 0) step.recv(rbuf, rbytes, source, tag);
  if (dest >= 0) step.send(sbuf, sbytes, dest, tag);
  return step.wait();
}

void copy_bytes(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0 && dst != src) std::memcpy(dst, src, static_cast<size_t>(bytes));
}

}  // namespace xmsg::coll
