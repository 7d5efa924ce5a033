// Settings of the tcp transport, from the environment (documented in docs/tcp.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace xmsg::transport::tcp {

struct TcpConfig {
  std::string interface;                        // XMSG_TCP_IF: interface name or IPv4 address
  size_t max_payload = 512 * 1024;              // XMSG_TCP_MAX_PAYLOAD: largest try_send payload
  size_t queue_limit = 4 * 1024 * 1024;         // XMSG_TCP_QUEUE_BYTES: per-peer unsent bytes
  size_t rendezvous_push = 64 * 1024;           // XMSG_TCP_RNDV_PUSH: head of a rendezvous sent with its RTS
  // Rendezvous messages up to push_max_message get their head pushed with the RTS, those up to
  // push_whole_message all of it (the receiver then asks for nothing). Measured (2 ranks, 2
  // virtual nodes, same run): pushing whole saves the request's round trip up to 256 KiB
  // (128 KiB one-way 16.6-18.3 vs 24.7-46.9 us); from 2 MiB any push is 20-35% slower than
  // reading (see docs/tcp.md).
  size_t push_max_message = 1 << 20;            // XMSG_TCP_PUSH_MAX
  size_t push_whole_message = 256 * 1024;       // XMSG_TCP_PUSH_WHOLE
  // Messages up to push_large_message are pushed whole too while the peer's unreleased large
  // whole pushes stay within push_budget (what a late receive may have to stage). With reno
  // (the bbr measurement above no longer holds), same runs, ping-pong vs Open MPI: 512 KiB
  // 0.73 vs 0.83, 2 MiB 0.92 vs 0.95 (docs/tcp.md).
  size_t push_large_message = 4 << 20;          // XMSG_TCP_PUSH_LARGE
  size_t push_budget = 4 << 20;                 // XMSG_TCP_PUSH_BUDGET
  // Eager payloads at least this long that are still arriving when their header is parsed go
  // straight into a posted receive's buffer (0: never).
  size_t land_min = 1024;                       // XMSG_TCP_LAND_MIN
  std::chrono::milliseconds handshake_timeout{10000};  // XMSG_TCP_HANDSHAKE_TIMEOUT_MS
  // A call of ours whose handshake has not finished within this fails the peer: it accepted
  // nothing or never answered (hung, stopped, out of file descriptors, or not calling into
  // xmsg for that long). Only the handshake is timed: an established peer may be as slow as it
  // likes. Generous, because a live peer that computes without progressing looks the same.
  std::chrono::milliseconds connect_timeout{30000};    // XMSG_TCP_CONNECT_TIMEOUT_MS
  bool poll_by_recv = true;                     // XMSG_TCP_POLL=recv|epoll: how an idle rank polls
  // XMSG_TCP_CONGESTION: congestion control of every socket ("system": the kernel's default).
  // Not the kernel's default because a pacing one (bbr, the default here) holds back the bulk
  // of a rendezvous behind timers and sends it from both cores, which reorders segments on
  // loopback/veth and costs retransmissions: same runs, 2 ranks on 2 virtual nodes, bandwidth
  // 1-4 MiB 7.9 GB/s with reno vs 4.0-4.7 with bbr (Open MPI, bbr: 4.2-4.4).
  std::string congestion = "reno";
  bool congestion_explicit = false;             // set by the user: failing to apply it is an error
  bool verbose = false;                         // XMSG_VERBOSE: connection events on stderr

  // Throws TransportError naming the variable when one is not a valid number or is out of range.
  static TcpConfig from_environment();
};

// The IPv4 address other nodes reach this rank at: `choice` when it is an address, the address
// of the interface it names, else the first non-loopback interface that is up, else 127.0.0.1.
// Throws TransportError when `choice` names an interface without an IPv4 address.
std::string choose_listen_address(const std::string& choice);

}  // namespace xmsg::transport::tcp
