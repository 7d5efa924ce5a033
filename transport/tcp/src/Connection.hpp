// One socket between this rank and another, from connect/accept through the handshake to the
// data phase. Owned by TcpTransport; a peer has at most one established connection.
#pragma once

#include "Frame.hpp"
#include "Handshake.hpp"

#include <unistd.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace xmsg::transport::tcp {

enum class ConnectionState {
  kConnecting,    // we called: non-blocking connect() in flight (connect deadline applies)
  kAwaitWelcome,  // we called and sent kHello (connect deadline applies)
  kAwaitHello,    // accepted: caller not identified yet (deadline applies)
  kAwaitProof,    // accepted, sent kWelcome: caller has not proven the secret yet (deadline applies)
  kEstablished,   // data frames flow
  kClosed,        // fd closed; reaped at the end of progress()
};

struct Connection {
  Connection(int fd_, ConnectionState state_, std::string remote_)
      : fd(fd_), state(state_), remote(std::move(remote_)), rx(64 * 1024) {}
  ~Connection() {
    if (fd >= 0) ::close(fd);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool outgoing() const { return state == ConnectionState::kConnecting || state == ConnectionState::kAwaitWelcome; }
  bool unproven() const { return state == ConnectionState::kAwaitHello || state == ConnectionState::kAwaitProof; }

  int fd;
  ConnectionState state;
  std::string remote;  // address of the other end as the socket reports it, for messages
  int peer = -1;       // world rank once known
  Nonce my_nonce{}, their_nonce{};
  // Unproven: accept + XMSG_TCP_HANDSHAKE_TIMEOUT_MS; our call: start + XMSG_TCP_CONNECT_TIMEOUT_MS.
  std::chrono::steady_clock::time_point deadline{};
  ReceiveBuffer rx;
  // A ReadData range being received straight into the reader's destination (no staging copy).
  std::byte* direct = nullptr;
  size_t direct_left = 0;
  ReadCompletion* direct_done = nullptr;  // called once direct_left reaches 0
  // Bytes of the oldest read's range that a guessing recv already put into its destination
  // (see TcpTransport::read_socket); its kReadData frame is the next one in rx.
  size_t prelanded = 0;
  // An eager payload landing in a posted receive's buffer (the sink's claim_eager token):
  // direct/direct_left point there, then skip_left bytes (truncation) are dropped.
  void* landing = nullptr;
  size_t skip_left = 0;
  // The head of a rendezvous buffer the peer pushes right behind its RTS (kDataThenPush, then
  // kPush): set from the RTS until the pushed bytes have landed.
  struct Push {
    uint64_t key = 0, length = 0;
    bool claimed = false;            // a read_remote() of this buffer wants the head
    std::span<std::byte> dst;        // ... here (shorter than length when it truncates)
    ReadCompletion* done = nullptr;  // ... and is complete once the head lands (nothing to read)
    std::vector<std::byte> buffer;   // the head, when it could not go to dst directly
    bool landing = false;            // the kPush frame is being received
  };
  std::optional<Push> push;
  int refusing = 0;      // accepted on the spare descriptor to be refused: the errno (EMFILE/ENFILE)
  bool yielded = false;  // parsing stopped before a kDataThenPush frame (see parse_frames)
  bool bye_received = false;
  bool watching_writes = false;  // EPOLLOUT registered
  bool in_epoll = true;          // in the epoll set (left while progress polls it by recv)
};

}  // namespace xmsg::transport::tcp
