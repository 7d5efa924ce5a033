// A framed, non-blocking byte stream between the coordinator and one node server.
//
// Frames are [u32 type][u32 length][payload]. Writes are queued and flushed when the socket
// accepts them, so two sides sending large fence blobs to each other at the same time never
// deadlock. Fields inside a payload are written with MessageWriter and read with MessageReader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace xmsg::launcher {

enum class Msg : uint32_t {
  // node server -> coordinator
  RankExit = 1,      // i32 rank, i32 pid, i32 wait status, i32 1: left without PMIx_Finalize
  RankAbort,         // i32 rank, i32 pid, i32 status, str message
  FenceEnter,        // u64 local id, str participants ("*" or "0,3,5"), i32 local status, str blob
  DmodexAsk,         // u64 request id, i32 rank; both directions (asker -> coordinator -> owner)
  DmodexAnswer,      // u64 request id, i32 status, str blob; both directions (owner -> asker)
  NodeFailed,        // str message
  // coordinator -> node server
  FenceDone,         // u64 local id, i32 status, str blob
  Signal,            // i32 signal to forward to every rank
  Terminate,         // i32 grace milliseconds: SIGTERM every rank, SIGKILL after the grace
  Shutdown,          // every rank has ended: clean up and exit
};

class MessageWriter {
 public:
  explicit MessageWriter(Msg type) { put_u32(static_cast<uint32_t>(type)); put_u32(0); }
  MessageWriter& put_u32(uint32_t v) { return raw(&v, sizeof v); }
  MessageWriter& put_i32(int32_t v) { return raw(&v, sizeof v); }
  MessageWriter& put_u64(uint64_t v) { return raw(&v, sizeof v); }
  MessageWriter& put_str(std::string_view s) {
    put_u32(static_cast<uint32_t>(s.size()));
    buf_.append(s.data(), s.size());
    return *this;
  }
  // The finished frame, length patched in.
  std::string take() {
    uint32_t len = static_cast<uint32_t>(buf_.size() - 8);
    std::memcpy(buf_.data() + 4, &len, 4);
    return std::move(buf_);
  }

 private:
  MessageWriter& raw(const void* p, size_t n) {
    buf_.append(static_cast<const char*>(p), n);
    return *this;
  }
  std::string buf_;
};

class MessageReader {
 public:
  explicit MessageReader(std::string_view payload) : p_(payload) {}
  uint32_t u32() { return raw<uint32_t>(); }
  int32_t i32() { return raw<int32_t>(); }
  uint64_t u64() { return raw<uint64_t>(); }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(p_.substr(0, n));
    p_.remove_prefix(n);
    return s;
  }

 private:
  template <class T> T raw() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_.data(), sizeof v);
    p_.remove_prefix(sizeof v);
    return v;
  }
  void need(size_t n) const {
    if (p_.size() < n) throw std::runtime_error("truncated launcher message");
  }
  std::string_view p_;
};

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd);  // takes ownership, makes it non-blocking
  Channel(Channel&& o) noexcept;
  Channel& operator=(Channel&& o) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  bool wants_write() const { return !out_.empty(); }

  void send(std::string frame);
  // Writes what the socket accepts now. Returns false when the peer is gone.
  bool flush();
  // Reads what is available. Returns false on EOF or error (buffered frames stay readable).
  bool read_available();
  // Next complete frame, if any.
  bool next(Msg& type, std::string& payload);
  // Blocks until everything queued is written (used just before exiting).
  void drain_blocking();
  void close();

 private:
  int fd_ = -1;
  std::string out_;
  size_t out_off_ = 0;
  std::string in_;
};

}  // namespace xmsg::launcher
