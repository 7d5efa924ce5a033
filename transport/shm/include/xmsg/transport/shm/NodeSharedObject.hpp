// NodeSharedObject: memory that one rank creates and the other ranks of its node join (a
// communicator's collective region, an MPI_Win_allocate_shared window).
//
// Where the node's ranks can take one another's descriptors (pidfd_getfd(2): same user, Yama
// ptrace_scope 0, dumpable; docs/shm.md) and XMSG_SHM_NAMELESS is on, the object is a memfd
// that never has a name: the others take the creator's descriptor, so a job killed with
// kill -9 at any moment, under any launcher, leaves nothing in /dev/shm. Elsewhere it is the
// named /dev/shm object of the transport's segments (0600), joined by name, until the creator
// calls done_sharing() (or goes). Either way every page is reserved at creation
// (posix_fallocate): a shortage is an error naming the object, never a SIGBUS at first touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace xmsg::transport::shm {

class Segment;

// What the creator sends the ranks that join (plain bytes: it travels in a message).
struct JoinTicket {
  int64_t creator_pid = 0;
  int32_t descriptor = -1;  // the creator's descriptor of a nameless object
  int32_t nameless = 0;
};

class NodeSharedObject {
 public:
  NodeSharedObject();
  NodeSharedObject(NodeSharedObject&&) noexcept;
  NodeSharedObject& operator=(NodeSharedObject&&) noexcept;
  ~NodeSharedObject();

  // Creates and maps `bytes` (zero-filled); `name` is the /dev/shm name where the object needs
  // one (see above) and names it in messages. Throws TransportError.
  static NodeSharedObject create(const std::string& name, size_t bytes, bool nameless_wanted);
  // Maps the object of `ticket`; `populate` fills the page tables now. Throws TransportError
  // naming the object and the reason (a refused pidfd_getfd says so and names
  // XMSG_SHM_NAMELESS=off).
  static NodeSharedObject join(const std::string& name, size_t bytes, const JoinTicket& ticket, bool populate);

  JoinTicket ticket() const;
  // The creator, once every rank joined or gave up: the name (if any) and the kept descriptor go;
  // the mappings stay valid. Idempotent; a no-op for the ranks that joined.
  void done_sharing();

  bool nameless() const { return nameless_; }
  void* data() const;
  size_t size() const;

 private:
  std::unique_ptr<Segment> segment_;
  bool nameless_ = false;
};

}  // namespace xmsg::transport::shm
