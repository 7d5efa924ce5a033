// Frames on an established connection: reading the socket (straight into a destination where
// one is known), parsing and dispatching frames, and queueing internal frames for sending.
#include "TcpInternal.hpp"
#include "TcpTransport.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace xmsg::transport::tcp {

using detail::errno_text;

namespace {

// A pushed head is accepted up to the largest this rank would push itself, and never refused
// below this (the default XMSG_TCP_PUSH_LARGE), so ranks whose settings differ a little
// still work; a larger announcement is a protocol error, not an allocation.
constexpr uint64_t kPushAcceptFloor = 4 << 20;
constexpr size_t kReadBudget = 4 * 1024 * 1024;  // bytes read from one socket per progress call
constexpr size_t kReadDataFrame = sizeof(FrameHeader) + sizeof(ReadData);
// A guessing recv puts at most this much of a read's range into its destination; a wrong guess
// moves that much back into rx, no more than the plain recv into rx would have copied.
constexpr size_t kGuessMax = 64 * 1024;
constexpr size_t kGuessMin = 4 * 1024;   // below this one more recv costs more than the copy

}  // namespace

bool TcpTransport::parse_frames(Connection& c, MessageSink* sink, int& handled) {
  Peer& p = *peer_or_null(c.peer);
  for (;;) {
    if (c.direct_left > 0) {
      // Bytes of the range that arrived with earlier frames: the only copy out of rx.
      auto have = c.rx.readable();
      const size_t take = std::min(have.size(), c.direct_left);
      if (take) std::memcpy(c.direct, have.data(), take);
      c.rx.consume(take);
      c.direct += take;
      c.direct_left -= take;
      if (c.direct_left > 0) return true;  // the rest goes from the socket to its destination
    }
    if (c.skip_left > 0) {
      // The end of an eager payload that a shorter receive (truncation) has no room for.
      const size_t take = std::min(c.rx.readable().size(), c.skip_left);
      c.rx.consume(take);
      c.skip_left -= take;
      if (c.skip_left > 0) return true;
    }
    if (c.landing) {
      void* token = std::exchange(c.landing, nullptr);
      c.direct = nullptr;
      if (sink) sink->on_eager_landed(token);
      ++handled;
      if (c.state == ConnectionState::kClosed) return false;
    }
    if (c.push && c.push->landing) {
      finish_push(c);
      ++handled;
      if (c.state == ConnectionState::kClosed) return false;  // the completion failed the peer
    }
    if (c.direct_done) {
      ReadCompletion* done = std::exchange(c.direct_done, nullptr);
      c.direct = nullptr;
      done->on_read_done(true, {});
      ++handled;
      if (c.state == ConnectionState::kClosed) return false;  // the completion failed the peer
    }
    ParsedFrame f = parse_frame(c.rx.readable(), config_.max_payload);
    if (f.status == ParsedFrame::Status::kInvalid) {
      fail_peer(p, "protocol error: " + f.error);
      return false;
    }
    if (f.status == ParsedFrame::Status::kNeedMore) {
      if (f.need > sizeof(FrameHeader) && sink && land_eager(c, f.header, *sink)) continue;
      c.rx.writable(f.need - c.rx.readable().size());  // room for the whole frame
      return true;
    }
    switch (f.header.type) {
      case FrameType::kBye:
        c.bye_received = true;
        c.rx.consume(f.need);
        break;
      case FrameType::kReadRequest: {
        ReadRequest request;
        std::memcpy(&request, f.payload.data(), sizeof request);
        c.rx.consume(f.need);
        serve_read(p, request);
        break;
      }
      case FrameType::kDataThenPush: {
        // A message handled earlier in this call may have completed the request the user
        // waits on, after which it posts the receive this RTS is for. Returning first lets that
        // receive claim the pushed bytes (straight into the user buffer) instead of finding
        // them staged. Once per frame, so a busy connection cannot starve it.
        if (handled > 0 && !c.yielded) {
          c.yielded = true;
          return true;
        }
        c.yielded = false;
        protocol::RendezvousRts rts;
        uint64_t head = 0;
        std::memcpy(&rts, f.payload.data(), sizeof rts);
        std::memcpy(&head, f.payload.data() + sizeof rts, sizeof head);
        if (c.push) {
          fail_peer(p, "protocol error: a push was announced before the previous one arrived");
          return false;
        }
        // Bounded before anything is allocated for it: a peer cannot make this rank stage more
        // than it would push itself, nor more than the message.
        const uint64_t most = std::max({kPushAcceptFloor, uint64_t(config_.push_whole_message),
                                        uint64_t(config_.push_large_message), uint64_t(config_.rendezvous_push)});
        if (head > most || head > rts.handle.length || head == 0) {
          fail_peer(p, "protocol error: rank " + std::to_string(p.rank) + " announced a pushed head of " + std::to_string(head) +
                           " bytes for a message of " + std::to_string(rts.handle.length) +
                           " bytes; this rank accepts 1 byte up to the message's length, at most " + std::to_string(most) +
                           " (XMSG_TCP_PUSH_WHOLE, XMSG_TCP_PUSH_LARGE and XMSG_TCP_RNDV_PUSH must agree on every rank)");
          return false;
        }
        c.push.emplace();
        c.push->key = rts.handle.key;
        c.push->length = head;
        // The sink may claim the head right here (read_remote of a matched RTS): it then lands
        // in the receive buffer of the user directly.
        if (sink) {
          sink->on_message(f.header.wire, f.payload.first(sizeof rts));
          ++handled;
        }
        c.rx.consume(f.need);
        break;
      }
      case FrameType::kPush: {
        PushHeader push;
        std::memcpy(&push, f.payload.data(), sizeof push);
        c.rx.consume(f.need);
        if (!start_push(c, p, push)) return false;
        break;
      }
      case FrameType::kReadData: {
        ReadData data;
        std::memcpy(&data, f.payload.data(), sizeof data);
        c.rx.consume(f.need);
        if (!start_read_data(c, p, data)) return false;
        ++handled;
        break;
      }
      default:
        if (sink) {
          sink->on_message(f.header.wire, f.payload);
          ++handled;
        }
        c.rx.consume(f.need);
        break;
    }
    // The sink or a send may have failed this peer.
    if (c.state == ConnectionState::kClosed) return false;
  }
}

bool TcpTransport::land_eager(Connection& c, const FrameHeader& fh, MessageSink& sink) {
  if (fh.type != FrameType::kData || fh.wire.kind != MessageKind::kEager || config_.land_min == 0 || fh.payload_bytes < config_.land_min) return false;
  EagerLanding landing = sink.claim_eager(fh.wire);
  if (!landing.token) return false;
  // From here the message is matched: its payload goes to the receive's buffer, bytes already
  // in rx first (parse_frames), the rest straight from the socket.
  const size_t into = std::min<size_t>(landing.buffer.size(), fh.payload_bytes);
  c.rx.consume(sizeof(FrameHeader));
  c.landing = landing.token;
  c.direct = landing.buffer.data();
  c.direct_left = into;
  c.skip_left = fh.payload_bytes - into;
  return true;
}

bool TcpTransport::read_socket(Connection& c, MessageSink* sink, int& handled) {
  size_t budget = kReadBudget;
  bool drained = false;
  for (;;) {
    if (c.state != ConnectionState::kEstablished && !handle_handshake(c)) return false;
    if (c.state == ConnectionState::kEstablished && !parse_frames(c, sink, handled)) return false;
    if (c.yielded) return true;  // parse again next call, before reading more
    if (budget == 0 || drained) return true;
    // A range being read goes from the socket straight to its destination, never past its end;
    // what follows it lands in rx in the same call (and a short read then says the socket is
    // empty, sparing the recv that would only return EAGAIN).
    iovec iov[2];
    msghdr msg{};
    msg.msg_iov = iov;
    std::span<std::byte> guess = read_guess(c, budget);
    if (!guess.empty()) {
      bool ok = true;
      if (!recv_guessing(c, guess, drained, budget, ok)) return ok;
      continue;
    }
    size_t direct_want = 0;
    if (c.direct_left > 0) {
      direct_want = std::min(c.direct_left, budget);
      iov[msg.msg_iovlen++] = {c.direct, direct_want};
    }
    if (direct_want == c.direct_left) {
      auto room = c.rx.writable(16 * 1024);
      iov[msg.msg_iovlen++] = {room.data(), direct_want == 0 ? std::min(room.size(), budget) : room.size()};
    }
    size_t want = 0;
    for (size_t i = 0; i < msg.msg_iovlen; ++i) want += iov[i].iov_len;
    ssize_t n = ::recvmsg(c.fd, &msg, MSG_DONTWAIT);
    if (n > 0) {
      const size_t to_direct = std::min(static_cast<size_t>(n), direct_want);
      c.direct += to_direct;
      c.direct_left -= to_direct;
      c.rx.produced(static_cast<size_t>(n) - to_direct);
      budget -= std::min(budget, static_cast<size_t>(n));
      // A short read emptied the socket: parse what came and skip the recv that would only
      // say EAGAIN (one system call less per message).
      drained = static_cast<size_t>(n) < want;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return handle_recv_end(c, n);
  }
}

std::span<std::byte> TcpTransport::read_guess(Connection& c, size_t budget) {
  if (c.state != ConnectionState::kEstablished || c.direct_left > 0 || c.skip_left > 0 || c.push || c.landing ||
      c.direct_done || !c.rx.readable().empty())
    return {};
  Peer* p = peer_or_null(c.peer);
  if (!p || p->reads.empty() || p->reads.front().dst.size() < kGuessMin || budget < kReadDataFrame + kGuessMin) return {};
  return p->reads.front().dst.first(std::min({p->reads.front().dst.size(), kGuessMax, budget - kReadDataFrame}));
}

bool TcpTransport::recv_guessing(Connection& c, std::span<std::byte> guess, bool& drained, size_t& budget, bool& ok) {
  // The next frame is probably the answer to the oldest read (a ping-pong or a stream of reads
  // has nothing in between): receive its header into rx and the range's start straight into
  // the destination, sparing the copy out of rx that a plain recv would cost.
  iovec iov[2] = {{c.rx.writable(kReadDataFrame).data(), kReadDataFrame}, {guess.data(), guess.size()}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  ssize_t n;
  do n = ::recvmsg(c.fd, &msg, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    ok = handle_recv_end(c, n);
    return false;
  }
  const size_t got = static_cast<size_t>(n);
  const size_t header = std::min(got, kReadDataFrame);
  c.rx.produced(header);
  const size_t in_guess = got - header;
  if (in_guess > 0) {
    Peer& p = *peer_or_null(c.peer);
    ParsedFrame f = parse_frame(c.rx.readable(), config_.max_payload);
    const bool is_read_data = f.status == ParsedFrame::Status::kComplete && f.header.type == FrameType::kReadData;
    ReadData data{};
    if (is_read_data) std::memcpy(&data, f.payload.data(), sizeof data);
    if (is_read_data && !data.refused && data.read_id == p.reads.front().id && data.length == p.reads.front().dst.size()) {
      c.prelanded = in_guess;
    } else {
      // Wrong guess: those bytes belong to later frames. The destination is the read's own, so
      // its real range overwrites them later.
      std::memcpy(c.rx.writable(in_guess).data(), guess.data(), in_guess);
      c.rx.produced(in_guess);
    }
  }
  budget -= std::min(budget, got);
  drained = got < kReadDataFrame + guess.size();
  return true;
}

bool TcpTransport::handle_recv_end(Connection& c, ssize_t n) {
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
  const int err = n == 0 ? 0 : errno;
  std::string cause = n == 0 ? "end of stream (the peer exited or was killed)" : errno_text(err);
  if (c.outgoing() && peer_or_null(c.peer) && (n == 0 || err == ECONNRESET || err == EPIPE)) {
    // Closed before it answered our hello: the listener evicted our call or its deadline passed
    // while we did not progress. A peer that really died refuses the next call outright.
    retry_call(c, "the listener closed our call before the handshake finished (" + (n == 0 ? std::string("end of stream") : cause) + ")");
  } else if (c.unproven()) {
    close_connection(c);
  } else if (c.state == ConnectionState::kEstablished && c.bye_received) {
    close_connection(c);  // orderly end
  } else if (Peer* p = peer_or_null(c.peer)) {
    fail_peer(*p, cause);
  } else {
    close_connection(c);
  }
  return false;
}

void TcpTransport::queue_frame(Peer& p, const FrameHeader& fh, std::span<const std::byte> payload) {
  if (p.failed) return;
  p.queue.append(std::as_bytes(std::span(&fh, 1)));
  p.queue.append(payload);
  if (p.established) flush(p);
  else if (!p.outgoing && !p.incoming) start_connect(p);
}

}  // namespace xmsg::transport::tcp
