// NodeSharedObject: memory that one rank creates and the other ranks of its node join (a
// communicator's collective region, an MPI_Win_allocate_shared window).
//
// With XMSG_SHM_NAMELESS (the default) the object is a memfd that never has a name: the creator
// listens on a unix socket in the abstract namespace for as long as the others take their
// copy of its descriptor (share()), and the kernel removes that socket with the process, so a
// job killed with kill -9 at any moment, under any launcher, leaves nothing in /dev/shm. Nothing
// here needs ptrace permission, so Yama's ptrace_scope and non-dumpable ranks change nothing.
// With XMSG_SHM_NAMELESS=off it is a named /dev/shm object (0600), joined by name, until the
// creator calls done_sharing() (or goes). Either way every page is reserved at creation
// (posix_fallocate): a shortage is an error naming the object, never a SIGBUS at first touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace xmsg::transport::shm {

class Descriptor;
class Segment;

// What the creator sends the ranks that join (plain bytes: it travels in the job's own
// messages, which is what makes `token` a proof that a caller of the socket got it).
struct JoinTicket {
  int64_t creator_pid = 0;
  uint64_t token[2] = {0, 0};
  int32_t nameless = 0;
  int32_t unused = 0;
};

class NodeSharedObject {
 public:
  // What a caller does while share() or join() waits on the other side: the runtime moves its
  // own progress on and, under MPI_THREAD_MULTIPLE, lets its other threads in (a thread that
  // blocked here holding the layer's lock could keep out the very thread another rank's
  // creator or joiner waits for). Called once per millisecond of waiting (sleeping in poll(2)
  // between calls, so that 500 waiting ranks on a few cores leave the CPU to the creator).
  // Empty: block in poll(2).
  using Pause = std::function<void()>;

  NodeSharedObject();
  NodeSharedObject(NodeSharedObject&&) noexcept;
  NodeSharedObject& operator=(NodeSharedObject&&) noexcept;
  ~NodeSharedObject();

  // Creates and maps `bytes` (zero-filled); `name` is the /dev/shm name where the object needs
  // one and names it in messages (and, nameless, its socket). Throws TransportError.
  static NodeSharedObject create(const std::string& name, size_t bytes, bool nameless_wanted);
  // Maps the object of `ticket`; `populate` fills the page tables now. Throws TransportError
  // naming the object and the reason.
  static NodeSharedObject join(const std::string& name, size_t bytes, const JoinTicket& ticket, bool populate,
                               const Pause& pause = {});

  JoinTicket ticket() const;
  // The creator, after sending the ticket: hands the descriptor of a nameless object to
  // `joiners` callers of join() that show the ticket's token, then closes the socket. A named
  // object needs nothing and returns at once. Throws TransportError when no caller has come
  // for `patience_ms` while some are still missing (they cannot reach the socket: ranks of
  // one node in different network namespaces); the callers already queued then fail too.
  void share(int joiners, const Pause& pause = {}, int patience_ms = kJoinPatienceMs);
  static constexpr int kJoinPatienceMs = 30000;
  // The creator, once every rank joined or gave up: the name (if any) and the kept descriptor go;
  // the mappings stay valid. Idempotent; a no-op for the ranks that joined.
  void done_sharing();

  bool nameless() const { return ticket_.nameless != 0; }
  void* data() const;
  size_t size() const;

  // The abstract socket name of the nameless object `name` (without the leading NUL).
  static std::string address_of(const std::string& name);

 private:
  std::unique_ptr<Segment> segment_;
  std::unique_ptr<Descriptor> listener_;  // the creator's, from create() to the end of share()
  JoinTicket ticket_{};  // the creator's own, or the one a member joined with
  std::string name_;
};

}  // namespace xmsg::transport::shm
