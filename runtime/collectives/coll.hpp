// Internal interface of the collectives: the point-to-point step they are built from, the
// resolved reduction op, scratch buffers, and the algorithm entry points (one per algorithm,
// chosen in algorithm_selection.cpp). Sizes are bytes; a rank's own buffers are Src / Dst:
// plain bytes, or the packed stream of a datatype that is not contiguous.
#pragma once

#include <xmsg/xmsg.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "node_profile.hpp"

struct xmsgi_layout;  // xmsg_internal.h: the MPI layer's datatype engine

namespace xmsg::coll {

// A rank's own buffer in a collective: plain bytes, or the packed stream of an MPI datatype that
// is not contiguous (a layout). Offsets into a laid buffer count packed bytes, and each access
// packs or unpacks just the piece it touches, so a derived datatype never costs a copy of the
// whole buffer. MPI lets every rank pass its own datatype of the same signature, so a rank's
// layout changes how it touches its own memory, never which algorithm runs or what travels:
// the algorithms address both kinds alike (at, block_at, copy_bytes, Step::send / recv). Only
// single copy, which hands a peer an address to read, needs plain bytes (plain_for_peers).
template <class Byte>  // std::byte: a buffer written (Dst); const std::byte: read (Src)
struct Buffer {
  using Void = std::conditional_t<std::is_const_v<Byte>, const void, void>;
  Byte* ptr = nullptr;
  const xmsgi_layout* layout = nullptr;
  int64_t offset = 0;  // into the layout's stream
  Buffer(Void* p) : ptr(static_cast<Byte*>(p)) {}  // NOLINT(google-explicit-constructor): plain is the common case
  // A written buffer may be read (bcast forwards what it received).
  template <class Writable>
    requires(std::is_const_v<Byte> && std::is_same_v<Writable, std::byte>)
  Buffer(const Buffer<Writable>& w) : ptr(w.ptr), layout(w.layout), offset(w.offset) {}  // NOLINT
  static Buffer laid(const xmsgi_layout* l, int64_t offset = 0) {
    Buffer b(nullptr);
    b.layout = l;
    b.offset = offset;
    return b;
  }
  bool operator==(const void* p) const { return !layout && ptr == p; }
  explicit operator bool() const { return layout || ptr; }
  // The same bytes (an in-place argument): nothing to copy.
  bool same_as(const Buffer<const std::byte>& o) const { return ptr == o.ptr && layout == o.layout && offset == o.offset; }
};
using Dst = Buffer<std::byte>;
using Src = Buffer<const std::byte>;

// A communicator as an algorithm sees it. `members`, when set, makes it a subset of the
// handle's ranks (rank i of the subset is rank members[i] of the handle): the node-aware
// collectives run the ordinary algorithms among node leaders and inside a node this way.
struct Comm {
  xmsg_comm_t handle;
  int rank;
  int size;
  const int* members = nullptr;
  // This call's number among the blocking collectives on `handle` (check_comm counts them; every
  // rank of a correct program calls them in the same order). Step folds it into every tag, so
  // a message of an earlier call that another rank abandoned (ranks that disagreed) can never
  // match a receive of a later one.
  uint32_t call = 0;
  int real(int r) const { return members ? members[r] : r; }
  // `tag` (one of Tag below, plus a round) as this call sends it: above the MPI layer's schedule
  // tags ([2^21, 2^21 + 2^28), runtime/mpi/schedule.cpp) on the same hidden context, the call's
  // number modulo 2^15 above the tag. A message abandoned 2^15 calls earlier could match again.
  int call_tag(int tag) const { return static_cast<int>(kCallBase | ((call & kCallMask) << kCallShift)) | tag; }
  static constexpr uint32_t kCallBase = 1u << 29, kCallShift = 14, kCallMask = (1u << 15) - 1;
};

// Tags on the communicator's hidden collective context. Collectives are called in the same
// order everywhere and point-to-point between a pair is non-overtaking, so one tag per
// collective (plus the round where a pair talks more than once) keeps every match exact.
enum Tag : int {
  kTagBarrier = 1 << 10,
  kTagBcast = 2 << 10,
  kTagReduce = 3 << 10,
  kTagAllreduce = 4 << 10,
  kTagGather = 5 << 10,
  kTagScatter = 6 << 10,
  kTagAllgather = 7 << 10,
  kTagAlltoall = 8 << 10,
  kTagNodeRegion = 9 << 10,  // setting up a communicator's shared-memory region
  kTagSizeNotice = 10 << 10,  // a stalled collective's byte count (SizeNotices)
};
static_assert(kTagSizeNotice + (1 << 10) <= (1 << Comm::kCallShift), "the call number sits above every tag");
static_assert(Comm::kCallBase + ((Comm::kCallMask + 1) << Comm::kCallShift) - 1 <= XMSG_TAG_UB, "call tags fit a tag");

// Asked by Step::wait, once a wait has lasted (every 256 polls), whether to give up on it: a
// point-to-point algorithm on a communicator whose peers may have gone another way sets one
// (PostedSize) for as long as it runs. Its error ends the wait; the step's receives are then
// cancelled and its sends left to finish on their own.
class StallCheck {
 public:
  virtual int check() = 0;

 protected:
  ~StallCheck() = default;
};
// The one in force on this thread, or nullptr.
StallCheck*& active_stall_check();

// One collective call's record of a size disagreement (ranks that passed different counts or
// datatypes: erroneous per MPI, an easy mistake). A step that meets a message of another length
// notes XMSG_ERR_TRUNCATE here and lets the algorithm go on instead of returning: every rank then
// finishes every step of a schedule whose shape the sizes do not change, where returning at once
// left the peers of its later steps waiting forever (over tcp, or without a node region). The
// collective returns the error at its end (result()). From then on the rank's sends in that
// collective go one byte short (Step::send), so a rank that receives only forwarded data (a
// ring's, a tree's, a node leader's) finds the disagreement too instead of returning success
// with the wrong bytes.
class SizeDisagreement {
 public:
  SizeDisagreement() : outer_(std::exchange(current(), this)) {}
  ~SizeDisagreement() { current() = outer_; }
  SizeDisagreement(const SizeDisagreement&) = delete;
  SizeDisagreement& operator=(const SizeDisagreement&) = delete;
  // The first disagreement is the one reported.
  void note(const char* message) {
    if (!seen_) seen_ = true, message_ = message;
  }
  bool seen() const { return seen_; }
  // `error` of the algorithm, or the disagreement it went on past.
  int result(int error) const;
  static SizeDisagreement*& current();

 private:
  SizeDisagreement* outer_;
  bool seen_ = false;
  std::string message_;
};

// Runs one collective algorithm (a callable returning an xmsg error) under a SizeDisagreement.
template <class Run>
int run_noting_disagreement(Run&& run) {
  SizeDisagreement disagreement;
  return disagreement.result(run());
}

// The sends and receives of one step of an algorithm; wait() completes all of them and
// returns the first error. The destructor waits too, so no request outlives its buffers.
class Step {
 public:
  explicit Step(const Comm& comm) : comm_(comm) {}
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  ~Step();

  // A laid buffer travels as a packed message: pieces packed straight into the transport's
  // buffers (runtime/src/packed.cpp), unpacked straight out of them on the other side.
  void send(Src buf, int64_t bytes, int peer, int tag);
  // A receive of exactly `bytes`: a message of another length (ranks disagreeing on counts or
  // datatypes) makes wait() return XMSG_ERR_TRUNCATE naming the sender, never wrong data; under
  // a SizeDisagreement wait() notes it there and returns success, so the algorithm goes on.
  void recv(Dst buf, int64_t bytes, int peer, int tag);
  int wait();

 private:
  void add(xmsg_request_t request, int64_t expected_bytes);
  // The layout a packed request of a laid buffer at a non-zero offset reads or writes through.
  const xmsgi_layout* piece(const xmsgi_layout* layout, int64_t offset);

  const Comm& comm_;
  int error_ = XMSG_SUCCESS;
  int count_ = 0;
  xmsg_request_t inline_[8];
  int64_t inline_expected_[8];  // receives: bytes expected; sends: -1
  std::vector<xmsg_request_t> more_;
  std::vector<int64_t> more_expected_;
  std::vector<std::unique_ptr<xmsgi_layout, void (*)(xmsgi_layout*)>> pieces_;
};

// ---- the few things the collectives need from the point-to-point runtime (coll_p2p.cpp) ----
// Validates `comm` and fills rank/size; the error message names `func`.
int check_comm(xmsg_comm_t comm, const char* func, Comm* out);
// Validates a datatype argument named `arg` of `func` and gives its element size.
int check_type(xmsg_datatype_t type, const char* func, const char* arg, size_t* elem_size);
// The largest number of ranks of the job on one node (the same answer on every rank).
int most_world_ranks_on_one_node();
// Node id of every rank of `comm` (size entries).
int comm_node_ids(xmsg_comm_t comm, int size, std::vector<int>* node_ids);
// Records the detailed message of a failed call and returns `code`.
int fail(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Blocking exchange with one peer (either side may be skipped with peer < 0).
int sendrecv(const Comm& comm, const void* sbuf, int64_t sbytes, int dest, void* rbuf, int64_t rbytes,
             int source, int tag);

// A reduction op resolved for one datatype: apply(in, inout, n) computes inout = in (op) inout,
// `in` being the operand of the lower ranks.
struct ReduceOp {
  using Builtin = void (*)(const void* in, void* inout, int64_t count);
  Builtin builtin = nullptr;
  xmsg_user_function* user = nullptr;
  void* user_data = nullptr;
  xmsg_datatype_t type = 0;
  size_t elem_size = 0;
  bool commutative = true;

  void apply(const void* in, void* inout, int64_t count) const {
    if (count <= 0) return;
    if (builtin) builtin(in, inout, count);
    else user(in, inout, count, type, user_data);
  }
};

// The built-in reduction of `op` over `type`, or nullptr when MPI does not define that pair.
ReduceOp::Builtin builtin_op(xmsg_op_t op, xmsg_datatype_t type);
bool builtin_commutative(xmsg_op_t op);
const char* op_name(xmsg_op_t op);
const char* type_name(xmsg_datatype_t type);

// Resolves `op` for `type` (built-in or user-created), setting the error message on failure.
int resolve_op(xmsg_op_t op, xmsg_datatype_t type, size_t elem_size, const char* func, ReduceOp* out);

// Uninitialised scratch memory (collectives overwrite it before reading).
class Scratch {
 public:
  // Small requests (count and displacement tables of small communicators, a few blocks) stay in
  // the object: alltoallv and friends make several per call, and a heap allocation each was a
  // fifth of a 2-rank alltoallv of a few bytes.
  static constexpr int64_t kInlineBytes = 512;
  Scratch() = default;
  explicit Scratch(int64_t bytes) { resize(bytes); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void resize(int64_t bytes) {
    if (bytes > capacity_) {
      data_.reset(new std::byte[static_cast<size_t>(bytes)]);
      capacity_ = bytes;
    }
  }
  std::byte* get() { return data_ ? data_.get() : inline_; }

 private:
  std::unique_ptr<std::byte[]> data_;
  int64_t capacity_ = kInlineBytes;
  alignas(16) std::byte inline_[kInlineBytes];
};

inline std::byte* at(void* base, int64_t offset) { return static_cast<std::byte*>(base) + offset; }
inline const std::byte* at(const void* base, int64_t offset) {
  return static_cast<const std::byte*>(base) + offset;
}
void copy_bytes(void* dst, const void* src, int64_t bytes);
void copy_bytes(Dst dst, Src src, int64_t bytes);
template <class Byte>
Buffer<Byte> at(const Buffer<Byte>& b, int64_t offset) {
  return b.layout ? Buffer<Byte>::laid(b.layout, b.offset + offset) : Buffer<Byte>(b.ptr + offset);
}
template <class Byte>
Buffer<Byte> block_at(const Buffer<Byte>& b, int64_t offset, int64_t bytes) {
  return bytes > 0 ? at(b, offset) : b;
}
// What single copy lets peers read: `buf` itself when plain, else its `bytes` packed into
// `staging` (the one whole copy a laid buffer costs: a peer's process_vm_readv cannot run the
// datatype engine).
Src plain_for_peers(Src buf, int64_t bytes, Scratch& staging);
// Memory a thread keeps between collectives for one purpose, valid until its next call for the
// same purpose: single copy's staging (up to kKeptStagingBytes; larger goes through the caller's
// Scratch) and its bounce buffer. Fresh memory each call cost a map and page faults past glibc's
// mmap threshold: OSU bcast -D vect:8:4 at 2 ranks, 64 KiB-1 MiB, took 1.15-1.20x the time of
// staging through the MPI layer's pool.
enum class KeptScratch { kStaging, kBounce };
constexpr int64_t kKeptStagingBytes = int64_t{64} << 20;
std::byte* kept_scratch(KeptScratch which, int64_t bytes);
// The block of `bytes` at `offset` of `base`: `base` itself for an empty block, whose
// displacement may point anywhere (and `base` be null).
inline std::byte* block_at(void* base, int64_t offset, int64_t bytes) { return bytes > 0 ? at(base, offset) : static_cast<std::byte*>(base); }
inline const std::byte* block_at(const void* base, int64_t offset, int64_t bytes) {
  return bytes > 0 ? at(base, offset) : static_cast<const std::byte*>(base);
}

// ---- algorithms (buffers already validated; sizes in bytes) -------------------------------
int barrier_dissemination(const Comm& c);
int barrier_linear(const Comm& c);

int bcast_binomial(const Comm& c, Dst buf, int64_t bytes, int root);
int bcast_scatter_allgather(const Comm& c, Dst buf, int64_t bytes, int root);
int bcast_linear(const Comm& c, Dst buf, int64_t bytes, int root);

// `sendbuf` never XMSG_IN_PLACE here; recvbuf significant at root only.
int reduce_binomial(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op,
                    int root);

int reduce_linear(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op, int root);

int allreduce_recursive_doubling(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count,
                                 const ReduceOp& op);
int allreduce_linear(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op);
int allreduce_rabenseifner(const Comm& c, const void* sendbuf, void* recvbuf, int64_t count,
                           const ReduceOp& op);

// Blocks of rank i: bytes counts[i] at displs[i] (bytes) of the root's buffer. sendbuf
// may be XMSG_IN_PLACE at the root (gather) / recvbuf at the root (scatter).
int gatherv_linear(const Comm& c, Src sendbuf, int64_t sendbytes, Dst recvbuf, const int64_t* counts,
                   const int64_t* displs, int root);
int gather_binomial(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root);
int scatterv_linear(const Comm& c, Src sendbuf, const int64_t* counts, const int64_t* displs,
                    Dst recvbuf, int64_t recvbytes, int root);
int scatter_binomial(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block, int root);

// Own block already in place in recvbuf.
int allgather_bruck(const Comm& c, Dst recvbuf, int64_t block);
int allgatherv_ring(const Comm& c, Dst recvbuf, const int64_t* counts, const int64_t* displs);

int alltoall_bruck(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
int alltoall_pairwise(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
int alltoall_linear(const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
// Shared-memory collectives (shm_collectives.cpp) for a communicator whose ranks all live on
// one node. node_shm() is collective on the first call for a communicator (it sets up the
// region) and gives the same answer on every rank: nullptr when the path is off, the
// communicator spans nodes or is a subset Comm, or the region could not be set up. Data goes
// through one slot per rank, so bytes (n * block for alltoall) must fit XMSG_COLL_SHM_SLOT.
struct NodeShm;
NodeShm* node_shm(const Comm& c);
int shm_barrier(NodeShm& s, const Comm& c);
int shm_bcast(NodeShm& s, const Comm& c, Dst buf, int64_t bytes, int root);
// everyone = allreduce; otherwise only `root` gets the result in recvbuf.
int shm_reduce(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t count, const ReduceOp& op,
               int root, bool everyone);
int shm_alltoall(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
// sendbuf null: in place (this rank's block already in recvbuf).
int shm_allgather(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
// Pipelined variants for data larger than a slot: chunks stream through each writer's ring in
// the region (copy in, copy out). allreduce: commutative ops only.
int shm_bcast_pipe(NodeShm& s, const Comm& c, Dst buf, int64_t bytes, int root);
int shm_alltoall_pipe(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
int shm_allreduce_pipe(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t count,
                       const ReduceOp& op);
// Phase 1 of the allreduce pipeline alone (segment j, counts[j] elements, ends on rank j, in
// recvbuf; sendbuf the whole vector, never in place; commutative ops), and phase 2 alone
// (sendbuf: our block, nullptr when it is in place in recvbuf already).
int shm_reduce_scatter_pipe(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, const int64_t* counts,
                            const ReduceOp& op);
int shm_allgather_pipe(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
// Single-copy variants for data of any size: ranks read each other's buffers with CMA
// (process_vm_readv). Only when node_shm_cma(s): every pair of members was allowed to.
bool node_shm_cma(const NodeShm& s);
// The sizes at which single copy is predicted faster than the pipelines for `kind` on this
// communicator (node_profile.hpp), the same on every rank.
SingleCopySizes node_shm_single_copy(const NodeShm& s, LargeCollective kind);
int shm_bcast_cma(NodeShm& s, const Comm& c, Dst buf, int64_t bytes, int root);
int shm_alltoall_cma(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
int shm_allgather_cma(NodeShm& s, const Comm& c, Src sendbuf, Dst recvbuf, int64_t block);
// Where a large one-node collective of `kind` leaves the pipelines for single copy
// (algorithm_selection.cpp: large_limits).
struct LargeLimits {
  int64_t pipe_max;
  int64_t cma_min;
  // From here on the pipelines again (the profile predicts single copy to lose past the caches).
  int64_t pipe_again_from = kNeverBytes;
  bool pipelines(int64_t bytes) const { return bytes <= pipe_max || bytes >= pipe_again_from; }
};
// The table each writer of shm_alltoallv publishes: mode, sendbuf address, one word per rank.
inline int64_t shm_alltoallv_table_bytes(int n) { return static_cast<int64_t>(sizeof(uint64_t)) * (n + 2); }
// *how: the way this rank's own blocks went (for the trace), a string literal.
int shm_alltoallv(NodeShm& s, const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls,
                  Dst recvbuf, const int64_t* rcounts, const int64_t* rdispls, const LargeLimits& large,
                  const char** how);
int shm_allreduce_cma(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, int64_t count,
                      const ReduceOp& op);
int shm_reduce_scatter_cma(NodeShm& s, const Comm& c, const void* sendbuf, void* recvbuf, const int64_t* counts,
                           const ReduceOp& op);

// A point-to-point algorithm on a communicator that has a region (`s` not null) takes the
// collective's number there and posts its byte count like the shared-memory algorithms, for as
// long as this object lives. A rank whose different count sent it down a shared-memory
// algorithm then sees the mismatch instead of waiting for a post that never comes, and this
// rank's point-to-point waits look for such a post (StallCheck) instead of waiting for messages
// that never come. Numbering every collective alike also keeps the ranks' region sequence in
// step after such an error. With `s` null, on a whole communicator, its waits exchange
// SizeNotices instead once they stall.
// Forgets a freed communicator's collective count (SizeNotices).
void forget_collective_count(xmsg_comm_t comm);
// Forgets a freed communicator's blocking collective calls (Comm::call), so a handle reused for a
// new communicator numbers its calls from 0 on every rank.
void forget_collective_calls(xmsg_comm_t comm);

// What a stalled point-to-point collective tells the other ranks (size_notice.cpp).
struct SizeNotice {
  uint64_t collective;  // the collective's number on the communicator (SizeNotices::begin)
  int64_t bytes;        // the byte count this rank passed
  uint64_t call;        // fingerprint of the collective's name
};

// The StallCheck of a point-to-point algorithm on a whole communicator without a node region:
// after a wait has lasted 500 ms, sends this rank's SizeNotice to every other rank and reads
// theirs; one of this collective with another byte count or call ends the wait with
// XMSG_ERR_TRUNCATE naming the rank (size_notice.cpp has the rules and the costs).
class SizeNotices {
 public:
  SizeNotices(const Comm& c, int64_t bytes, const char* func);
  ~SizeNotices();
  SizeNotices(const SizeNotices&) = delete;
  SizeNotices& operator=(const SizeNotices&) = delete;
  // The algorithm starts: takes the communicator's next collective number. Every point-to-point
  // algorithm on a whole communicator without a region calls it, and the ranks of a correct
  // program take the same paths, so they number their collectives alike.
  void begin();
  int check();

 private:
  void send_ours(int only_to);
  int compare(int from, const SizeNotice& n);

  const Comm& c_;
  int64_t bytes_;
  const char* func_;
  uint64_t collective_ = 0;
  bool stalled_ = false, reading_ = false, sent_ = false;
  std::chrono::steady_clock::time_point since_{};
  xmsg_request_t receive_ = XMSG_REQUEST_NULL;
  SizeNotice incoming_{};
};

class PostedSize final : public StallCheck {
 public:
  PostedSize(NodeShm* s, const Comm& c, int64_t bytes, const char* func);
  ~PostedSize();
  PostedSize(const PostedSize&) = delete;
  PostedSize& operator=(const PostedSize&) = delete;
  int check() override;

 private:
  NodeShm* s_;
  const Comm& c_;
  int64_t bytes_;
  const char* func_;
  uint64_t seq_ = 0;
  bool installed_ = false;
  StallCheck* outer_ = nullptr;
  SizeNotices notices_;
};

int alltoallv_linear(const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls,
                     Dst recvbuf, const int64_t* rcounts, const int64_t* rdispls);
int alltoallv_pairwise(const Comm& c, Src sendbuf, const int64_t* scounts, const int64_t* sdispls,
                       Dst recvbuf, const int64_t* rcounts, const int64_t* rdispls);

}  // namespace xmsg::coll
