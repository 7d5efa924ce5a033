// AbstractSocket: the few unix-socket steps by which ranks of one node hand each other memfds
// (SegmentRendezvous for the ranks' segments, NodeSharedObject for a communicator's objects).
// The sockets live in the abstract namespace, so the kernel removes a name with its process:
// nothing is left behind in any file system, whatever kills the job. Trust comes from
// SO_PEERCRED, which the kernel vouches for.
#pragma once

#include "Descriptor.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <vector>

namespace xmsg::transport::shm {

// sun_path holds 108 bytes; the abstract name takes them all but the leading NUL.
inline constexpr size_t kAbstractNameMax = sizeof(sockaddr_un::sun_path) - 1;
// The kernel's SCM_MAX_FD: descriptors one message may carry.
inline constexpr size_t kFdsPerMessage = 253;

// FNV-1a: a name too long for an abstract address is shortened to its hash.
uint64_t fnv1a(const std::string& text);
std::string hex64(uint64_t value);

// Fills `sa` with abstract address `name` (no leading NUL, at most kAbstractNameMax bytes) and
// returns its length.
socklen_t abstract_address(const std::string& name, sockaddr_un& sa);

// A SOCK_SEQPACKET socket bound to `name` and listening; throws TransportError naming it.
Descriptor listen_abstract(const std::string& name, const std::string& what);
// A SOCK_SEQPACKET socket connected to `name`, or an invalid one with errno set.
Descriptor connect_abstract(const std::string& name);

// The kernel's word on who is at the other end of `sock`; throws TransportError.
ucred peer_credentials(int sock, const std::string& what);

std::string errno_text(const char* call);

// Sends `bytes` of `data` with descriptors `fds` (n <= kFdsPerMessage) as one message. Waits
// out ETOOMANYREFS (this user has more descriptors in flight than RLIMIT_NOFILE; they leave
// flight as the receivers take them); throws TransportError otherwise.
void send_with_descriptors(int sock, const void* data, size_t bytes, const int* fds, size_t n,
                           const std::string& what);

// What one message brought: its bytes and its descriptors (owned, close-on-exec).
struct Received {
  ssize_t bytes = 0;
  std::vector<Descriptor> descriptors;
  bool truncated = false;          // the message was longer than the buffer
  bool descriptors_lost = false;   // out of descriptors (RLIMIT_NOFILE): the kernel dropped some
};
// Receives one message into `buffer`; throws TransportError on a failed recvmsg.
Received receive_with_descriptors(int sock, void* buffer, size_t capacity, const std::string& what);

}  // namespace xmsg::transport::shm
