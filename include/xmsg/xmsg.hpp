// xmsg C++ API: RAII over the C API (xmsg.h).
//
// Error style: every failure throws xmsg::Error carrying the xmsg_error code and the detailed
// message (what()). Buffers are std::span of trivially copyable elements; the datatype is
// deduced from the element type (bytes for anything without a predefined datatype).
//
//   xmsg::World world(argc, argv);
//   auto comm = world.comm();
//   std::vector<double> v(100);
//   if (comm.rank() == 0) comm.send(std::span(v), 1, /*tag=*/0);
//   else { auto st = comm.recv(std::span(v), 0, 0); }
//   auto req = comm.irecv(std::span(v), xmsg::any_source, xmsg::any_tag);
//   xmsg::Status s = req.wait();
#pragma once

#include <xmsg/xmsg.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace xmsg {

inline constexpr int any_source = XMSG_ANY_SOURCE;
inline constexpr int any_tag = XMSG_ANY_TAG;
inline constexpr int proc_null = XMSG_PROC_NULL;

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {
inline void check(int rc) {
  if (rc != XMSG_SUCCESS) {
    std::string msg = xmsg_last_error_message();
    if (msg.empty()) msg = xmsg_error_string(rc);
    throw Error(rc, msg);
  }
}

template <class T>
constexpr xmsg_datatype_t datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, char>) return XMSG_CHAR;
  else if constexpr (std::is_same_v<U, signed char>) return XMSG_SIGNED_CHAR;
  else if constexpr (std::is_same_v<U, unsigned char>) return XMSG_UNSIGNED_CHAR;
  else if constexpr (std::is_same_v<U, short>) return XMSG_SHORT;
  else if constexpr (std::is_same_v<U, unsigned short>) return XMSG_UNSIGNED_SHORT;
  else if constexpr (std::is_same_v<U, int>) return XMSG_INT;
  else if constexpr (std::is_same_v<U, unsigned>) return XMSG_UNSIGNED;
  else if constexpr (std::is_same_v<U, long>) return XMSG_LONG;
  else if constexpr (std::is_same_v<U, unsigned long>) return XMSG_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<U, long long>) return XMSG_LONG_LONG;
  else if constexpr (std::is_same_v<U, unsigned long long>) return XMSG_UNSIGNED_LONG_LONG;
  else if constexpr (std::is_same_v<U, float>) return XMSG_FLOAT;
  else if constexpr (std::is_same_v<U, double>) return XMSG_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>) return XMSG_LONG_DOUBLE;
  else if constexpr (std::is_same_v<U, bool>) return XMSG_C_BOOL;
  else return XMSG_BYTE;
}

// (count, datatype) describing a span.
template <class T, size_t N>
std::pair<int64_t, xmsg_datatype_t> describe(std::span<T, N> s) {
  static_assert(std::is_trivially_copyable_v<std::remove_cv_t<T>>, "xmsg sends trivially copyable elements");
  constexpr xmsg_datatype_t t = datatype_of<T>();
  if constexpr (t == XMSG_BYTE) return {static_cast<int64_t>(s.size_bytes()), XMSG_BYTE};
  else return {static_cast<int64_t>(s.size()), t};
}
}  // namespace detail

struct Status {
  int source = XMSG_ANY_SOURCE;
  int tag = XMSG_ANY_TAG;
  int64_t bytes = 0;
  bool cancelled = false;
  explicit Status(const xmsg_status_t& s = {XMSG_ANY_SOURCE, XMSG_ANY_TAG, 0, 0, 0})
      : source(s.source), tag(s.tag), bytes(s.bytes), cancelled(s.cancelled != 0) {}
};

// A pending operation. Move-only; destroying a pending request waits for it (a buffer must not
// be released under an operation still using it).
class Request {
 public:
  Request() = default;
  explicit Request(xmsg_request_t r) : r_(r) {}
  Request(Request&& o) noexcept : r_(std::exchange(o.r_, XMSG_REQUEST_NULL)) {}
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      finish();
      r_ = std::exchange(o.r_, XMSG_REQUEST_NULL);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { finish(); }

  Status wait() {
    xmsg_status_t s{};
    detail::check(xmsg_wait(&r_, &s));
    return Status(s);
  }
  // True (and the status filled) once complete.
  bool test(Status* status = nullptr) {
    int flag = 0;
    xmsg_status_t s{};
    detail::check(xmsg_test(&r_, &flag, &s));
    if (flag && status) *status = Status(s);
    return flag != 0;
  }
  void cancel() { detail::check(xmsg_cancel(&r_)); }
  bool pending() const { return r_ != XMSG_REQUEST_NULL; }
  xmsg_request_t native() const { return r_; }

  static std::vector<Status> wait_all(std::span<Request> reqs) {
    std::vector<Status> out;
    out.reserve(reqs.size());
    int first_error = XMSG_SUCCESS;
    std::string message;
    for (auto& r : reqs) {
      xmsg_status_t s{};
      int rc = xmsg_wait(&r.r_, &s);
      if (rc != XMSG_SUCCESS && first_error == XMSG_SUCCESS) {
        first_error = rc;
        message = xmsg_last_error_message();
      }
      out.emplace_back(s);
    }
    if (first_error != XMSG_SUCCESS) throw Error(first_error, message);
    return out;
  }

 private:
  void finish() noexcept {
    if (r_ != XMSG_REQUEST_NULL) xmsg_wait(&r_, XMSG_STATUS_IGNORE);
  }
  xmsg_request_t r_ = XMSG_REQUEST_NULL;
};

class Communicator {
 public:
  Communicator() = default;
  // Borrows a handle (WORLD, SELF) or owns one created by dup/split (freed on destruction).
  explicit Communicator(xmsg_comm_t c, bool owned = false) : c_(c), owned_(owned) {}
  Communicator(Communicator&& o) noexcept
      : c_(std::exchange(o.c_, XMSG_COMM_NULL)), owned_(std::exchange(o.owned_, false)) {}
  Communicator& operator=(Communicator&& o) noexcept {
    if (this != &o) {
      release();
      c_ = std::exchange(o.c_, XMSG_COMM_NULL);
      owned_ = std::exchange(o.owned_, false);
    }
    return *this;
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() { release(); }

  int rank() const {
    int r = -1;
    detail::check(xmsg_comm_rank(c_, &r));
    return r;
  }
  int size() const {
    int s = -1;
    detail::check(xmsg_comm_size(c_, &s));
    return s;
  }
  bool valid() const { return c_ != XMSG_COMM_NULL; }
  xmsg_comm_t native() const { return c_; }

  Communicator dup() const {
    xmsg_comm_t n;
    detail::check(xmsg_comm_dup(c_, &n));
    return Communicator(n, true);
  }
  // Ranks passing `color` = XMSG_UNDEFINED get an invalid communicator.
  Communicator split(int color, int key) const {
    xmsg_comm_t n;
    detail::check(xmsg_comm_split(c_, color, key, &n));
    return Communicator(n, n != XMSG_COMM_NULL);
  }

  template <class T, size_t N>
  void send(std::span<T, N> buf, int dest, int tag) const {
    auto [n, t] = detail::describe(buf);
    detail::check(xmsg_send(buf.data(), n, t, dest, tag, c_));
  }
  template <class T, size_t N>
  Status recv(std::span<T, N> buf, int source, int tag) const {
    auto [n, t] = detail::describe(buf);
    xmsg_status_t s{};
    detail::check(xmsg_recv(buf.data(), n, t, source, tag, c_, &s));
    return Status(s);
  }
  template <class T, size_t N>
  [[nodiscard]] Request isend(std::span<T, N> buf, int dest, int tag) const {
    auto [n, t] = detail::describe(buf);
    xmsg_request_t r;
    detail::check(xmsg_isend(buf.data(), n, t, dest, tag, c_, &r));
    return Request(r);
  }
  template <class T, size_t N>
  [[nodiscard]] Request irecv(std::span<T, N> buf, int source, int tag) const {
    auto [n, t] = detail::describe(buf);
    xmsg_request_t r;
    detail::check(xmsg_irecv(buf.data(), n, t, source, tag, c_, &r));
    return Request(r);
  }
  template <class S, size_t SN, class R, size_t RN>
  Status sendrecv(std::span<S, SN> out, int dest, int send_tag, std::span<R, RN> in, int source, int recv_tag) const {
    auto [sn, st] = detail::describe(out);
    auto [rn, rt] = detail::describe(in);
    xmsg_status_t s{};
    detail::check(xmsg_sendrecv(out.data(), sn, st, dest, send_tag, in.data(), rn, rt, source, recv_tag, c_, &s));
    return Status(s);
  }
  Status probe(int source, int tag) const {
    xmsg_status_t s{};
    detail::check(xmsg_probe(source, tag, c_, &s));
    return Status(s);
  }
  bool iprobe(int source, int tag, Status* status = nullptr) const {
    int flag = 0;
    xmsg_status_t s{};
    detail::check(xmsg_iprobe(source, tag, c_, &flag, &s));
    if (flag && status) *status = Status(s);
    return flag != 0;
  }

 private:
  void release() noexcept {
    if (owned_ && c_ != XMSG_COMM_NULL) xmsg_comm_free(&c_);
    c_ = XMSG_COMM_NULL;
    owned_ = false;
  }
  xmsg_comm_t c_ = XMSG_COMM_NULL;
  bool owned_ = false;
};

// Initialises xmsg for its lifetime (one per process).
class World {
 public:
  World(int& argc, char**& argv) { detail::check(xmsg_init(&argc, &argv)); }
  World() { detail::check(xmsg_init(nullptr, nullptr)); }
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  ~World() { xmsg_finalize(); }

  Communicator comm() const { return Communicator(XMSG_COMM_WORLD); }
  Communicator self() const { return Communicator(XMSG_COMM_SELF); }
  int rank() const { return comm().rank(); }
  int size() const { return comm().size(); }
  static double wtime() { return xmsg_wtime(); }
};

}  // namespace xmsg
