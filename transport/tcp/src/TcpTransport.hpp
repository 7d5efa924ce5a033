// The tcp Transport (see docs/tcp.md for the protocol and the limits).
//
// Connection rules that keep exactly one connection per pair of ranks:
//   * A send to a peer without any connection opens one (lazily, from try_send).
//   * If both ranks call at once, the call made by the lower rank is kept: the lower rank
//     rejects the higher rank's kHello with kSimultaneous while its own call is in flight.
//   * Data is only written on an authenticated connection; until then it waits in the peer's
//     queue, so a rejected call loses nothing.
//   * A call the listener closes before the handshake ends (it evicted the call to make room
//     for other unproven callers, or its deadline passed while we did not progress) is made
//     again, a few times; a call not answered within XMSG_TCP_CONNECT_TIMEOUT_MS fails the peer.
//     Running out of descriptors is reported on both sides (see docs/tcp.md, "Limits,
//     deadlines and eviction").
#pragma once

#include "Connection.hpp"
#include "SendQueue.hpp"
#include "TcpConfig.hpp"

#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/transport/transport.hpp>

#include <netinet/in.h>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace xmsg::transport::tcp {

class TcpTransport final : public Transport {
 public:
  TcpTransport(bootstrap::Bootstrap& bootstrap, TcpConfig config);
  ~TcpTransport() override;

  std::string_view name() const override { return "tcp"; }
  Capabilities capabilities() const override {
    Capabilities caps;
    caps.remote_read = true;
    caps.max_eager_payload = config_.max_payload;
    caps.polls_by_syscall = true;
    return caps;
  }
  void connect(std::span<const int> peers, const ConnectOptions& options) override;
  bool try_send(int peer, const WireHeader& header, std::span<const std::byte> payload) override;
  int progress(MessageSink& sink) override;
  size_t wait_fds(std::span<int> fds) const override;
  // Remote read over the stream: read_remote() asks the owner for the range (kReadRequest); the
  // owner's progress() sends it from the exposed buffer itself and the reader's progress()
  // receives it into `dst` itself. Each side copies once, between the kernel and user memory.
  MemoryHandle expose(const void* buffer, size_t length, Access access = Access::read) override;
  void release(const MemoryHandle& handle, Access access = Access::read) override;
  void read_remote(int peer, const MemoryHandle& source, uint64_t offset, std::span<std::byte> dst,
                   ReadCompletion& done) override;
  void disconnect() override;

  // Every accepted byte is in the kernel (see tcp_output_flushed).
  bool output_flushed() const;
  bool output_pending() const override { return !output_flushed(); }

  // "ip:port" this rank listens on (after connect()).
  const std::string& listen_address() const { return listen_address_; }

 private:
  struct PendingRead {
    uint64_t id;
    std::span<std::byte> dst;
    ReadCompletion* done;
  };
  struct Peer {
    int rank = -1;
    std::string address;  // "ip:port" the peer published
    sockaddr_in sockaddr{};
    Connection* established = nullptr;
    Connection* outgoing = nullptr;  // our call, before it is established
    Connection* incoming = nullptr;  // their call, accepted but not proven yet
    SendQueue queue;
    std::deque<PendingRead> reads;  // our read_remote()s, answered in this order
    uint64_t large_pushed = 0;      // bytes of large messages pushed whole and not released yet
    unsigned calls_ended = 0;       // our calls the listener closed before the handshake ended, in a row
    bool failed = false;
    bool failure_reported = false;
    std::string failure;
  };

  Peer* peer_or_null(int rank);
  void open_listener();
  void accept_all(MessageSink* sink, int& handled);
  // accept4 failed with EMFILE/ENFILE (`err`): takes the call on the spare descriptor, and once
  // its hello names the caller refuses it with kNoFileDescriptors (refuse_call), so the caller
  // fails this rank with a message instead of waiting; false when accepting must stop for now.
  bool refuse_for_descriptors(int err);
  void refuse_call(Connection& c, const HandshakeMessage& hello);
  void log_refusal(int err, const std::string& caller, const char* outcome);
  // Room for one more caller: closes the oldest unproven one (after a last look at its socket),
  // logging `why` (rate-limited); false when there was none to close.
  bool evict_oldest_unproven(MessageSink* sink, int& handled, const std::string& why);
  // The listener closed our call before the handshake ended (evicted, or its deadline passed
  // while we did not progress): a live peer takes a new call; fails the peer after a few.
  void retry_call(Connection& c, const std::string& cause);
  // Live (not closed) connections, for messages.
  size_t open_connections() const;
  // Reads the peer's published address on first use; false (peer failed) when it is bad.
  bool resolve_address(Peer& p);
  void start_connect(Peer& p);
  Connection& add_connection(int fd, ConnectionState state, std::string remote, uint32_t events);
  void watch(Connection& c, bool writes);
  void close_connection(Connection& c);
  void handle_events(Connection& c, uint32_t events, MessageSink* sink, int& handled);
  void on_connected(Connection& c);
  // Matches an eager frame whose payload is still arriving with a posted receive (the sink's
  // claim_eager) and points the connection's direct range at that receive's buffer.
  bool land_eager(Connection& c, const FrameHeader& fh, MessageSink& sink);
  // Reads what the socket has; false when the connection was closed meanwhile.
  bool read_socket(Connection& c, MessageSink* sink, int& handled);
  // The start of the oldest read's destination when its answer is likely the next frame on c
  // (nothing else half-received), else empty.
  std::span<std::byte> read_guess(Connection& c, size_t budget);
  // One recv into rx (a kReadData header's worth) and `guess`; false when the connection ended
  // or the socket was empty (`ok`: false when c was closed).
  bool recv_guessing(Connection& c, std::span<std::byte> guess, bool& drained, size_t& budget, bool& ok);
  // After a recv that returned `n` <= 0: true on EAGAIN, else closes or fails c and returns false.
  bool handle_recv_end(Connection& c, ssize_t n);
  // Handles every complete frame in c.rx; false when the connection was closed meanwhile.
  bool parse_frames(Connection& c, MessageSink* sink, int& handled);
  void serve_read(Peer& p, const ReadRequest& request);
  bool start_read_data(Connection& c, Peer& p, const ReadData& data);
  // Sends a kRendezvousRts with the head of its exposed buffer behind it; false: not applicable.
  bool try_send_pushed(Peer& p, const WireHeader& header, std::span<const std::byte> payload, bool& accepted);
  bool start_push(Connection& c, Peer& p, const PushHeader& push);
  void finish_push(Connection& c);
  // Sends a read request for `dst` (`offset` into the owner's buffer `key`).
  void request_read(Peer& p, uint64_t key, uint64_t offset, std::span<std::byte> dst, ReadCompletion& done);
  // Queues one frame behind whatever waits for `p` and tries to send; no queue limit (internal).
  void queue_frame(Peer& p, const FrameHeader& fh, std::span<const std::byte> payload);
  bool handle_handshake(Connection& c);
  void handle_hello(Connection& c, const HandshakeMessage& m);
  void handle_proof(Connection& c, const HandshakeMessage& m);
  void handle_welcome(Connection& c, const HandshakeMessage& m);
  void handle_reject(Connection& c, const HandshakeMessage& m);
  void establish(Peer& p, Connection& c);
  bool send_handshake(Connection& c, const HandshakeMessage& m);
  void flush(Peer& p);
  void fail_peer(Peer& p, const std::string& cause);
  void reject_unproven(Connection& c, const std::string& why);
  void report_failures(MessageSink& sink);
  void expire_handshakes(MessageSink* sink, int& handled);
  bool direct_poll_ok() const;
  void reap();
  // Puts connections that progress() polls by recv back into the epoll set.
  void attach_all() const;
  int drive(MessageSink* sink);
  void trace(const char* format, ...) const __attribute__((format(printf, 2, 3)));  // progress() without the reentrancy guard; sink may be null

  bootstrap::Bootstrap& bootstrap_;
  TcpConfig config_;
  int rank_ = 0;
  int epoll_fd_ = -1;
  int listen_fd_ = -1;
  std::string listen_address_;
  std::optional<JobSecret> secret_;
  std::vector<std::unique_ptr<Peer>> peers_;  // by world rank; null when not served by tcp
  std::vector<std::unique_ptr<Connection>> connections_;
  size_t unproven_ = 0;  // accepted connections with a deadline
  size_t calls_ = 0;     // our calls before their handshake ended (connect deadline)
  int spare_fd_ = -1;    // released to accept (and refuse) a call when out of descriptors
  bool connected_ = false;
  bool disconnected_ = false;
  bool in_progress_ = false;
  unsigned drive_calls_ = 0;
  bool failures_pending_ = false;
  size_t rejected_ = 0;
  size_t evicted_ = 0, evicted_unlogged_ = 0;       // unproven callers closed to make room
  size_t refused_fd_ = 0, refused_fd_unlogged_ = 0;  // calls refused for lack of descriptors
  std::chrono::steady_clock::time_point evict_logged_{}, refuse_logged_{};
  std::unordered_map<uint64_t, std::span<const std::byte>> exposed_;  // by MemoryHandle.key
  // Pushed heads whose RTS was not matched when they arrived, by (peer, key).
  std::map<std::pair<int, uint64_t>, std::vector<std::byte>> pushed_;
  // Messages above push_whole_message pushed whole, until released: key -> peer (the bytes are
  // the released handle's length).
  std::unordered_map<uint64_t, int> large_pushes_;
  uint64_t next_key_ = 1;
  uint64_t next_read_id_ = 1;
};

}  // namespace xmsg::transport::tcp
