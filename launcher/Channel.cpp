#include "Channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace xmsg::launcher {

Channel::Channel(int fd) : fd_(fd) {
  int fl = ::fcntl(fd_, F_GETFL);
  ::fcntl(fd_, F_SETFL, fl | O_NONBLOCK);
}

Channel::Channel(Channel&& o) noexcept
    : fd_(o.fd_), out_(std::move(o.out_)), out_off_(o.out_off_), in_(std::move(o.in_)) {
  o.fd_ = -1;
}

Channel& Channel::operator=(Channel&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    out_ = std::move(o.out_);
    out_off_ = o.out_off_;
    in_ = std::move(o.in_);
    o.fd_ = -1;
  }
  return *this;
}

Channel::~Channel() { close(); }

void Channel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Channel::send(std::string frame) {
  if (fd_ < 0) return;
  if (out_.empty()) {
    out_ = std::move(frame);
    out_off_ = 0;
  } else {
    out_.append(frame);
  }
  flush();
}

bool Channel::flush() {
  while (fd_ >= 0 && out_off_ < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + out_off_, out_.size() - out_off_, MSG_NOSIGNAL);
    if (n > 0) {
      out_off_ += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return true;
    } else {
      return false;
    }
  }
  out_.clear();
  out_off_ = 0;
  return fd_ >= 0;
}

bool Channel::read_available() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

bool Channel::next(Msg& type, std::string& payload) {
  if (in_.size() < 8) return false;
  uint32_t t, len;
  std::memcpy(&t, in_.data(), 4);
  std::memcpy(&len, in_.data() + 4, 4);
  if (in_.size() < 8 + static_cast<size_t>(len)) return false;
  type = static_cast<Msg>(t);
  payload.assign(in_, 8, len);
  in_.erase(0, 8 + static_cast<size_t>(len));
  return true;
}

void Channel::drain_blocking() {
  while (fd_ >= 0 && wants_write()) {
    if (!flush()) return;
    if (!wants_write()) return;
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, 1000) <= 0) return;
  }
}

}  // namespace xmsg::launcher
