#include "SegmentRendezvous.hpp"

#include "AbstractSocket.hpp"

#include <xmsg/transport/transport.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <unordered_map>

namespace xmsg::transport::shm {

namespace {

const std::string kWhat = "rendezvous";

void send_entries(int sock, const SegmentIdentity* entries, const int* fds, size_t n) {
  send_with_descriptors(sock, entries, n * sizeof(SegmentIdentity), fds, n, kWhat);
}

// Receives one message of whole entries, each with its descriptor (owned by `out`). Returns
// false at the end of the stream; throws on anything else that is not that.
bool receive_entries(int sock, std::vector<SegmentRendezvous::Arrival>& out, const char* from) {
  SegmentIdentity entries[kFdsPerMessage];
  Received got =
      receive_with_descriptors(sock, entries, sizeof entries, std::string("rendezvous receive from ") + from);
  if (got.bytes == 0 && got.descriptors.empty()) return false;
  const size_t n = static_cast<size_t>(got.bytes) / sizeof(SegmentIdentity);
  if (got.descriptors_lost)
    throw TransportError(std::string("shm: rendezvous: descriptors from ") + from +
                         " were lost: this process is out of descriptors (RLIMIT_NOFILE)");
  if (got.truncated || got.bytes % sizeof(SegmentIdentity) != 0 || n == 0 || got.descriptors.size() != n)
    throw TransportError(std::string("shm: rendezvous: ") + from + " sent " + std::to_string(got.bytes) +
                         " bytes with " + std::to_string(got.descriptors.size()) +
                         " descriptors, not identities with one each");
  for (size_t i = 0; i < n; ++i) out.push_back({entries[i], std::move(got.descriptors[i])});
  return true;
}

// Puts `got` in the order of `peers`, checking each is a peer and there once.
std::vector<SegmentRendezvous::Arrival> in_order(std::span<const int> peers,
                                                 std::vector<SegmentRendezvous::Arrival> got, const char* from) {
  std::unordered_map<int, size_t> index_of;
  index_of.reserve(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) index_of.emplace(peers[i], i);
  std::vector<SegmentRendezvous::Arrival> ordered(peers.size());
  for (auto& a : got) {
    const auto at = index_of.find(static_cast<int>(a.identity.owner_rank));
    if (at == index_of.end() || ordered[at->second].segment)
      throw TransportError(std::string("shm: rendezvous: ") + from + " sent " +
                           (at == index_of.end() ? "an identity of rank " : "a second identity of rank ") +
                           std::to_string(a.identity.owner_rank) +
                           (at == index_of.end() ? ", which is not a local peer (transport selection differs?)" : ""));
    ordered[at->second] = std::move(a);
  }
  return ordered;
}

}  // namespace

std::string SegmentRendezvous::address_of(const std::string& job_id, int leader) {
  const std::string tail = "-shm-" + std::to_string(leader);
  const std::string name = "xmsg-" + job_id + tail;
  return name.size() <= kAbstractNameMax ? name : "xmsg-" + hex64(fnv1a(job_id)) + tail;
}

SegmentRendezvous::SegmentRendezvous(const std::string& job_id, int rank, int leader)
    : job_id_(job_id), rank_(rank), leader_(leader) {
  if (rank != leader) return;
  listener_ = listen_abstract(address_of(job_id, leader), kWhat).release();
}

SegmentRendezvous& SegmentRendezvous::operator=(SegmentRendezvous&& o) noexcept {
  if (this != &o) {
    close();
    job_id_ = std::move(o.job_id_);
    rank_ = o.rank_;
    leader_ = o.leader_;
    listener_ = o.listener_;
    o.listener_ = -1;
  }
  return *this;
}

void SegmentRendezvous::close() {
  if (listener_ >= 0) ::close(listener_);
  listener_ = -1;
}

std::vector<SegmentRendezvous::Arrival> SegmentRendezvous::exchange(std::span<const int> peers,
                                                                     const SegmentIdentity& mine, int fd) {
  if (peers.empty()) return {};
  auto got = rank_ == leader_ ? lead(peers, mine, fd) : join(peers, mine, fd);
  close();
  return got;
}

std::vector<SegmentRendezvous::Arrival> SegmentRendezvous::lead(std::span<const int> peers,
                                                                 const SegmentIdentity& mine, int fd) {
  if (listener_ < 0) throw TransportError("shm: rendezvous: the leader has no listening socket");
  const uid_t me = ::getuid();
  std::vector<Descriptor> members;  // connections, in the order they came
  std::vector<uint64_t> member_rank;  // the rank each connection's identity names
  std::vector<Arrival> got;
  members.reserve(peers.size());
  member_rank.reserve(peers.size());
  got.reserve(peers.size());
  while (members.size() < peers.size()) {
    Descriptor conn(::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      throw TransportError("shm: rendezvous " + errno_text("accept"));
    }
    // Another user's connection is not a rank of this job, whatever it would say: drop it.
    const ucred who = peer_credentials(conn.get(), kWhat);
    if (who.uid != me) continue;
    const size_t before = got.size();
    if (!receive_entries(conn.get(), got, "a local rank") || got.size() != before + 1)
      throw TransportError("shm: rendezvous: pid " + std::to_string(who.pid) + " connected but sent " +
                           (got.size() == before ? "nothing" : "more than its identity"));
    if (got.back().identity.owner_pid != who.pid)
      throw TransportError("shm: rendezvous: pid " + std::to_string(who.pid) + " sent an identity claiming pid " +
                           std::to_string(got.back().identity.owner_pid) + " (different PID namespaces?)");
    members.push_back(std::move(conn));
    member_rank.push_back(got.back().identity.owner_rank);
  }
  auto ordered = in_order(peers, std::move(got), "a local rank");
  // The table: every rank of the node, the leader's own entry first. Each member gets all but
  // its own, in this order (a member puts them in its own order of peers).
  std::vector<SegmentIdentity> table{mine};
  std::vector<int> fds{fd};
  table.reserve(peers.size() + 1);
  fds.reserve(peers.size() + 1);
  for (const Arrival& a : ordered) {
    table.push_back(a.identity);
    fds.push_back(a.segment.get());
  }
  std::vector<SegmentIdentity> others;
  std::vector<int> other_fds;
  for (size_t m = 0; m < members.size(); ++m) {
    others.clear();
    other_fds.clear();
    for (size_t k = 0; k < table.size(); ++k)
      if (table[k].owner_rank != member_rank[m]) {
        others.push_back(table[k]);
        other_fds.push_back(fds[k]);
      }
    for (size_t at = 0; at < others.size(); at += kFdsPerMessage)
      send_entries(members[m].get(), others.data() + at, other_fds.data() + at,
                   std::min(kFdsPerMessage, others.size() - at));
  }
  return ordered;
}

std::vector<SegmentRendezvous::Arrival> SegmentRendezvous::join(std::span<const int> peers,
                                                                 const SegmentIdentity& mine, int fd) {
  const std::string name = address_of(job_id_, leader_);
  Descriptor conn = connect_abstract(name);
  if (!conn) {
    const int err = errno;
    throw TransportError(
        "shm: cannot reach rank " + std::to_string(leader_) + "'s rendezvous socket @" + name + ": " +
        std::strerror(err) +
        (err == ECONNREFUSED || err == ENOENT
             ? " (it has none: transport selection or XMSG_SHM_NAMELESS differs between ranks, or the ranks of this "
               "node are in different network namespaces; XMSG_SHM_NAMELESS=off meets by /dev/shm names)"
             : ""));
  }
  const ucred leader = peer_credentials(conn.get(), kWhat);
  if (leader.uid != ::getuid())
    throw TransportError("shm: the rendezvous socket @" + name + " belongs to uid " + std::to_string(leader.uid) +
                         ", not to this job's user: another user took rank " + std::to_string(leader_) + "'s address");
  send_entries(conn.get(), &mine, &fd, 1);
  std::vector<Arrival> got;
  got.reserve(peers.size());
  const std::string from = "rank " + std::to_string(leader_);
  while (got.size() < peers.size())
    if (!receive_entries(conn.get(), got, from.c_str()))
      throw TransportError("shm: rendezvous: rank " + std::to_string(leader_) + " (pid " + std::to_string(leader.pid) +
                           ") ended the exchange after " + std::to_string(got.size()) + " of " +
                           std::to_string(peers.size()) + " identities (it failed?)");
  auto ordered = in_order(peers, std::move(got), from.c_str());
  for (const Arrival& a : ordered)
    if (static_cast<int>(a.identity.owner_rank) == leader_ && a.identity.owner_pid != leader.pid)
      throw TransportError("shm: rendezvous: the leader's identity claims pid " +
                           std::to_string(a.identity.owner_pid) + ", its socket belongs to pid " +
                           std::to_string(leader.pid));
  return ordered;
}

}  // namespace xmsg::transport::shm
