// SegmentRendezvous: how the ranks of one node hand each other their segments without any name
// in /dev/shm (XMSG_SHM_NAMELESS, the default). The node's lowest rank, its leader, listens on a
// unix seqpacket socket in the abstract namespace ("\0xmsg-<job_id>-shm-<leader>"), which the
// kernel removes with the process, so a job killed at any moment leaves nothing behind under any
// launcher. After the wire-up fence every other rank connects and sends its SegmentIdentity
// with its segment's descriptor (SCM_RIGHTS); once the leader has them all it sends each rank
// the identities and descriptors of all the others (at most 253 descriptors a message, the
// kernel's SCM_MAX_FD). So no rank needs ptrace permission (Yama) to reach a peer's segment, and
// the node exchanges 2 messages a rank instead of one per pair (at 256 ranks on 2 cores, one
// datagram per pair took 2.6-2.8 s: the kernel queues 10 datagrams a socket, so each rank had
// to be scheduled dozens of times to drain its queue).
// Trust: the leader takes a connection only from its own user (SO_PEERCRED, which the kernel
// vouches for) whose pid is the one its identity claims; a rank takes the table only from a
// leader of its own user with the leader's pid. Others' identities come through the leader, a
// process of the same user.
#pragma once

#include "Descriptor.hpp"
#include "Mailbox.hpp"

#include <span>
#include <string>
#include <vector>

namespace xmsg::transport::shm {

class SegmentRendezvous {
 public:
  struct Arrival {
    SegmentIdentity identity{};
    Descriptor segment;  // the sender's segment, open in this process (close-on-exec)
  };

  SegmentRendezvous() = default;
  // `leader`: the lowest rank of this node. The leader binds and listens now (call before the
  // wire-up fence); throws TransportError when it cannot (the name is taken: another process of
  // the same job id runs on this node, in this network namespace). Others only remember it.
  SegmentRendezvous(const std::string& job_id, int rank, int leader);
  SegmentRendezvous(SegmentRendezvous&& o) noexcept { *this = std::move(o); }
  SegmentRendezvous& operator=(SegmentRendezvous&& o) noexcept;
  SegmentRendezvous(const SegmentRendezvous&) = delete;
  SegmentRendezvous& operator=(const SegmentRendezvous&) = delete;
  ~SegmentRendezvous() { close(); }

  // Gives every rank of `peers` (this node's other ranks, the leader among them unless this is
  // it) `mine` and descriptor `fd`, and returns what each of them gave, in the order of `peers`.
  // Call after a fence that follows every rank's construction. Throws TransportError when the
  // leader cannot be reached (transport selection or XMSG_SHM_NAMELESS differs between ranks,
  // or another network namespace), when it ends before answering, or on anything that is not
  // what the protocol sends.
  std::vector<Arrival> exchange(std::span<const int> peers, const SegmentIdentity& mine, int fd);

  void close();

  // The leader's socket name in the abstract namespace, without the leading NUL.
  static std::string address_of(const std::string& job_id, int leader);

 private:
  std::vector<Arrival> lead(std::span<const int> peers, const SegmentIdentity& mine, int fd);
  std::vector<Arrival> join(std::span<const int> peers, const SegmentIdentity& mine, int fd);

  std::string job_id_;
  int rank_ = -1;
  int leader_ = -1;
  int listener_ = -1;  // the leader's, from construction to the end of exchange()
};

}  // namespace xmsg::transport::shm
