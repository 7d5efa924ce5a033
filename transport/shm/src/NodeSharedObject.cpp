#include <xmsg/transport/shm/NodeSharedObject.hpp>

#include "DescriptorTaking.hpp"
#include "Segment.hpp"

#include <xmsg/transport/transport.hpp>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace xmsg::transport::shm {

NodeSharedObject::NodeSharedObject() = default;
NodeSharedObject::NodeSharedObject(NodeSharedObject&&) noexcept = default;
NodeSharedObject& NodeSharedObject::operator=(NodeSharedObject&&) noexcept = default;
NodeSharedObject::~NodeSharedObject() = default;

NodeSharedObject NodeSharedObject::create(const std::string& name, size_t bytes, bool nameless_wanted) {
  NodeSharedObject o;
  if (nameless_wanted) {
    auto s = std::make_unique<Segment>(Segment::create_nameless(name, bytes));
    if (descriptors_takable(s->descriptor())) {
      o.segment_ = std::move(s);
      o.nameless_ = true;
      return o;
    }
  }
  o.segment_ = std::make_unique<Segment>(Segment::create(name, bytes));
  return o;
}

NodeSharedObject NodeSharedObject::join(const std::string& name, size_t bytes, const JoinTicket& ticket,
                                        bool populate) {
  NodeSharedObject o;
  if (!ticket.nameless) {
    o.segment_ = std::make_unique<Segment>(Segment::open(name, bytes, populate));
    return o;
  }
#if defined(SYS_pidfd_open)
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(ticket.creator_pid), 0));
#else
  const int pidfd = -1;
  errno = ENOSYS;
#endif
  const int fd = pidfd < 0 ? -1 : take_descriptor(pidfd, ticket.descriptor);
  const int saved = errno;
  if (pidfd >= 0) ::close(pidfd);
  if (fd < 0)
    throw TransportError("shm: cannot take the descriptor of " + name + " from pid " +
                         std::to_string(ticket.creator_pid) + " (pidfd_getfd: " + std::strerror(saved) +
                         "); XMSG_SHM_NAMELESS=off joins by name instead");
  // The descriptor must be the object the creator announced: a pid reused by another process
  // (a creator that died meanwhile) would hand over something else entirely.
  struct stat st{};
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != bytes) {
    ::close(fd);
    throw TransportError("shm: the descriptor taken from pid " + std::to_string(ticket.creator_pid) + " for " + name +
                         " is not a " + std::to_string(bytes) + "-byte shared object");
  }
  try {
    o.segment_ = std::make_unique<Segment>(Segment::map(fd, name, 0, bytes, populate));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  o.nameless_ = true;
  return o;
}

JoinTicket NodeSharedObject::ticket() const {
  JoinTicket t;
  t.creator_pid = ::getpid();
  t.nameless = nameless_ ? 1 : 0;
  t.descriptor = nameless_ && segment_ ? segment_->descriptor() : -1;
  return t;
}

void NodeSharedObject::done_sharing() {
  if (!segment_) return;
  segment_->unlink();
  segment_->close_descriptor();
}

void* NodeSharedObject::data() const { return segment_ ? segment_->data() : nullptr; }
size_t NodeSharedObject::size() const { return segment_ ? segment_->size() : 0; }

}  // namespace xmsg::transport::shm
