// The Fortran bindings' shared pieces: mpif.h's sentinel common blocks, CHARACTER conversion,
// the request table (Fortran INTEGER handle <-> C MPI_Request) and the C-side conversions of
// requests and statuses. Single-threaded like the rest of the library (MPI_THREAD_FUNNELED).
#include "fortran.hpp"

#include <unordered_map>
#include <vector>

extern "C" {
// Zero-filled like the Fortran COMMON blocks they stand for; never read.
MPI_Fint xmsg_mpif_bottom_ = 0;
MPI_Fint xmsg_mpif_in_place_ = 0;
MPI_Fint xmsg_mpif_status_ignore_[kStatusInts] = {};
MPI_Fint xmsg_mpif_statuses_ignore_[kStatusInts] = {};
MPI_Fint xmsg_mpif_errcodes_ignore_[1] = {};
}

namespace xmsg::mpi::fortran {

std::string string_in(const char* f, size_t len) {
  if (!f) return {};
  size_t end = len;
  while (end > 0 && f[end - 1] == ' ') --end;
  size_t begin = 0;
  while (begin < end && f[begin] == ' ') ++begin;
  return std::string(f + begin, end - begin);
}

void string_out(const char* c, char* f, size_t len) {
  if (!f) return;
  size_t n = c ? strnlen(c, len) : 0;
  if (n) std::memcpy(f, c, n);
  if (len > n) std::memset(f + n, ' ', len - n);
}

namespace {

struct RequestTable {
  std::vector<MPI_Request> slots{MPI_REQUEST_NULL};  // slot 0: MPI_REQUEST_NULL
  std::vector<MPI_Fint> free;
  std::unordered_map<MPI_Request, MPI_Fint> index;  // C request -> its slot
};

// Never destroyed: requests may still be converted while static destructors run.
RequestTable& table() {
  static auto* t = new RequestTable;
  return *t;
}

void release(MPI_Fint f) {
  auto& t = table();
  t.index.erase(t.slots[static_cast<size_t>(f)]);
  t.slots[static_cast<size_t>(f)] = MPI_REQUEST_NULL;
  t.free.push_back(f);
}

}  // namespace

MPI_Request request_f2c(MPI_Fint f, bool* ok) {
  auto& t = table();
  *ok = true;
  if (f == 0) return MPI_REQUEST_NULL;
  if (f < 0 || static_cast<size_t>(f) >= t.slots.size() || t.slots[static_cast<size_t>(f)] == MPI_REQUEST_NULL) {
    *ok = false;
    return MPI_REQUEST_NULL;
  }
  return t.slots[static_cast<size_t>(f)];
}

MPI_Fint request_c2f(MPI_Request c) {
  if (c == MPI_REQUEST_NULL) return 0;
  auto& t = table();
  auto it = t.index.find(c);
  if (it != t.index.end()) return it->second;
  MPI_Fint f;
  if (!t.free.empty()) {
    f = t.free.back();
    t.free.pop_back();
    t.slots[static_cast<size_t>(f)] = c;
  } else {
    f = static_cast<MPI_Fint>(t.slots.size());
    t.slots.push_back(c);
  }
  t.index.emplace(c, f);
  return f;
}

void request_update(MPI_Fint* f, MPI_Request c) {
  auto& t = table();
  const MPI_Fint old = *f;
  const bool had = old > 0 && static_cast<size_t>(old) < t.slots.size() &&
                   t.slots[static_cast<size_t>(old)] != MPI_REQUEST_NULL;
  if (had && t.slots[static_cast<size_t>(old)] == c) return;  // unchanged (inactive persistent, not done)
  if (had) release(old);
  *f = request_c2f(c);
}

int bad_request(const char* func, MPI_Fint f) {
  return fail(MPI_ERR_REQUEST, func, MPI_COMM_WORLD,
              "request %d is not a Fortran request handle of this process (never created, or already "
              "completed or freed)",
              static_cast<int>(f));
}

}  // namespace xmsg::mpi::fortran

using namespace xmsg::mpi::fortran;

extern "C" {

MPI_Fint PMPI_Request_c2f(MPI_Request request) { XMSG_MPI_ENTRY; return request_c2f(request); }

MPI_Request PMPI_Request_f2c(MPI_Fint request) {
  XMSG_MPI_ENTRY;
  bool ok = false;
  return request_f2c(request, &ok);
}

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  XMSG_MPI_ENTRY;
  if (!c_status || !f_status || status_ignored(f_status))
    return xmsg::mpi::fail(MPI_ERR_ARG, "MPI_Status_c2f", MPI_COMM_WORLD, "%s is NULL or MPI_STATUS_IGNORE",
                           c_status ? "f_status" : "c_status");
  std::memcpy(f_status, c_status, sizeof *c_status);
  return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  XMSG_MPI_ENTRY;
  if (!c_status || !f_status || status_ignored(f_status))
    return xmsg::mpi::fail(MPI_ERR_ARG, "MPI_Status_f2c", MPI_COMM_WORLD, "%s is NULL or MPI_STATUS_IGNORE",
                           c_status ? "f_status" : "c_status");
  std::memcpy(c_status, f_status, sizeof *c_status);
  return MPI_SUCCESS;
}

}  // extern "C"

XMSG_MPI_ALIAS(Request_c2f)
XMSG_MPI_ALIAS(Request_f2c)
XMSG_MPI_ALIAS(Status_c2f)
XMSG_MPI_ALIAS(Status_f2c)
