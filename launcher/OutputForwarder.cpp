#include "OutputForwarder.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <pthread.h>

namespace xmsg::launcher {

namespace {

constexpr int kNoStream = -2;  // OutputForwarder::Sink::open_line / last_writer: nobody
constexpr int kSelf = -1;      // xmsgrun's own messages
constexpr int kReadsPerWakeup = 16;  // per stream and poll round: one busy rank cannot starve the rest
constexpr size_t kBatchBytes = 4 << 20;
// A writer only waits, calls writev() and poll(): a small stack keeps xmsgrun within a tight
// `ulimit -v` (the default stack, 8 MiB of address space per thread, would not).
constexpr size_t kWriterStack = 256 * 1024;

// Blocking writev of everything in `iov`. False when the reader is gone (or any other error):
// the caller then drops this file's output.
bool write_fully(int fd, iovec* iov, size_t count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, static_cast<int>(std::min<size_t>(count, IOV_MAX)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      // Someone else made the shared file description non-blocking; this thread may wait.
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    if (n <= 0) return false;
    auto left = static_cast<size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return true;
}

}  // namespace

// One output file and the thread that writes to it. Why a thread rather than non-blocking
// writes from the poll loop: O_NONBLOCK is a flag of the open file description, which xmsgrun
// shares with its shell, the terminal and whoever else holds it (a shell reading after a
// crashed xmsgrun would see EAGAIN; `kill -9` leaves no chance to restore it), and without it
// no write of more than a pipe's PIPE_BUF, a terminal's or a socket's free room is guaranteed
// not to block. A plain blocking write on a thread of its own works for every kind of file.
struct OutputForwarder::Sink {
  struct Record {
    int fd;
    std::string bytes;
  };

  // Shared with the writer thread, under `mutex`.
  std::mutex mutex;
  std::condition_variable wake_writer;
  std::deque<Record> queue;
  size_t queued = 0;  // bytes in `queue` and in the write under way
  bool stopping = false;
  bool gone = false;  // a write failed (EPIPE: the reader went away): output is dropped
  Clock::time_point progress{};  // last write done, or when the queue last became non-empty
  // Written by the writer after each write, so that the poll loop reads the held-back pipes
  // again. Owned here: a writer left behind by stop() may still use it.
  int wake_fd = -1;

  // The owning loop's only.
  pthread_t thread{};
  bool running = false;         // `thread` was started and is neither joined nor detached
  int open_line = kNoStream;    // stream whose unfinished line is the last thing written here
  int last_writer = kNoStream;  // stream whose bytes were the last written here

  ~Sink() {
    if (wake_fd >= 0) ::close(wake_fd);
  }

  // The writer's own; reserved before it starts, so that it never allocates.
  std::vector<Record> batch;
  std::vector<iovec> iov;

  // `arg`: a new std::shared_ptr<Sink>, which the thread takes over.
  static void* run(void* arg) {
    auto* handed = static_cast<std::shared_ptr<Sink>*>(arg);
    std::shared_ptr<Sink> self = std::move(*handed);
    delete handed;
    self->write_queue();
    return nullptr;
  }

  void write_queue() {
    Sink& k = *this;
    std::unique_lock lock(k.mutex);
    for (;;) {
      k.wake_writer.wait(lock, [&] { return !k.queue.empty() || k.stopping; });
      if (k.queue.empty()) return;
      // Consecutive records to the same descriptor leave in one writev().
      batch.clear();
      size_t bytes = 0;
      const int fd = k.queue.front().fd;
      while (!k.queue.empty() && k.queue.front().fd == fd && batch.size() < IOV_MAX &&
             bytes < kBatchBytes) {
        bytes += k.queue.front().bytes.size();
        batch.push_back(std::move(k.queue.front()));
        k.queue.pop_front();
      }
      lock.unlock();
      iov.clear();
      for (auto& r : batch) iov.push_back({r.bytes.data(), r.bytes.size()});
      bool ok = write_fully(fd, iov.data(), iov.size());
      lock.lock();
      k.queued -= bytes;
      k.progress = Clock::now();
      if (!ok && !k.gone) {
        k.gone = true;
        for (auto& r : k.queue) k.queued -= r.bytes.size();
        k.queue.clear();
      }
      uint64_t one = 1;
      ssize_t w = ::write(k.wake_fd, &one, sizeof one);
      (void)w;  // a full counter already wakes the loop
    }
  }
};

OutputForwarder::OutputForwarder(bool tag_output, OutputLimits limits, int stdout_fd, int stderr_fd)
    : tag_output_(tag_output),
      limits_(limits),
      out_fd_{stdout_fd, stderr_fd},
      buf_(std::make_unique<char[]>(limits.read_chunk)) {
  sinks_.push_back(std::make_shared<Sink>());
  struct stat o{}, e{};
  bool same = ::fstat(stdout_fd, &o) == 0 && ::fstat(stderr_fd, &e) == 0 && o.st_dev == e.st_dev &&
              o.st_ino == e.st_ino;
  // One file behind both (2>&1, a terminal): one writer, or a line of one could land inside
  // a line of the other.
  if (!same) sinks_.push_back(std::make_shared<Sink>());
  err_sink_ = static_cast<int>(sinks_.size()) - 1;
}

OutputForwarder::~OutputForwarder() {
  stop();
  for (auto& s : streams_)
    if (s.fd >= 0) ::close(s.fd);
}

void OutputForwarder::add_stream(int rank, int dest, int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  Stream s;
  s.rank = rank;
  s.dest = dest;
  s.fd = fd;
  // Through snprintf: GCC 12 warns falsely (-Wrestrict) about "[" + std::to_string(rank) and
  // the like.
  char text[32];
  int n = std::snprintf(text, sizeof text, "[%d] ", rank);
  s.tag = std::string(text, static_cast<size_t>(n));
  n = std::snprintf(text, sizeof text, "[%d]+ ", rank);
  s.continued_tag = std::string(text, static_cast<size_t>(n));
  streams_.push_back(std::move(s));
}

void OutputForwarder::close_streams_in_child() {
  for (auto& s : streams_)
    if (s.fd >= 0) {
      ::close(s.fd);
      s.fd = -1;
    }
}

bool OutputForwarder::start() {
  if (started_) return true;
  for (auto& k : sinks_) {
    k->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (k->wake_fd < 0) return false;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kWriterStack);
  int rc = 0;
  for (auto& k : sinks_) {
    k->batch.reserve(IOV_MAX);
    k->iov.reserve(IOV_MAX);
    auto* handed = new std::shared_ptr<Sink>(k);
    rc = ::pthread_create(&k->thread, &attr, Sink::run, handed);
    if (rc != 0) {
      delete handed;
      break;
    }
    k->running = true;
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    stop();
    errno = rc;
    return false;
  }
  started_ = true;
  return true;
}

OutputForwarder::Sink& OutputForwarder::sink_of(int dest) const {
  return *sinks_[dest == 2 ? static_cast<size_t>(err_sink_) : 0];
}

bool OutputForwarder::has_room(const Stream& s) const {
  Sink& k = sink_of(s.dest);
  std::lock_guard lock(k.mutex);
  return k.gone || k.queued < limits_.queued;
}

void OutputForwarder::append_poll_fds(std::vector<pollfd>& fds) const {
  for (auto& k : sinks_) fds.push_back({k->wake_fd, POLLIN, 0});
  // A held-back pipe must leave the set: a rank that has exited would report POLLHUP at once
  // and forever, whatever the events asked for.
  for (auto& s : streams_) fds.push_back({s.fd >= 0 && has_room(s) ? s.fd : -1, POLLIN, 0});
}

void OutputForwarder::handle_poll(const pollfd* entries) {
  for (size_t i = 0; i < sinks_.size(); ++i)
    if (entries[i].revents) {
      uint64_t count;
      ssize_t n = ::read(sinks_[i]->wake_fd, &count, sizeof count);
      (void)n;  // only the wake-up matters
    }
  // Each round starts at another stream: with a slow reader, whoever reads first takes the
  // room, and that must not always be rank 0.
  const size_t n = streams_.size();
  for (size_t k = 0; k < n; ++k) {
    size_t id = (first_stream_ + k) % n;
    if (entries[sinks_.size() + id].revents && streams_[id].fd >= 0) read_stream(static_cast<int>(id));
  }
  if (n > 0) first_stream_ = (first_stream_ + 1) % n;
}

void OutputForwarder::read_available() {
  for (size_t id = 0; id < streams_.size(); ++id)
    if (streams_[id].fd >= 0) read_stream(static_cast<int>(id));
}

void OutputForwarder::read_stream(int id) {
  Stream& s = streams_[static_cast<size_t>(id)];
  for (int round = 0; round < kReadsPerWakeup && s.fd >= 0 && has_room(s); ++round) {
    ssize_t n = ::read(s.fd, buf_.get(), limits_.read_chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      at_eof(id);
      return;
    }
    const auto got = static_cast<size_t>(n);
    // Only the new bytes are searched: what is pending has no line end in it.
    const char* data = buf_.get();
    if (data == nullptr) return;  // never; GCC 12 under -fsanitize=undefined warns (-Wnonnull) without it
    const void* nl = ::memrchr(data, '\n', got);
    size_t after_nl = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) + 1 : 0;
    const void* cr = ::memrchr(data + after_nl, '\r', got - after_nl);
    size_t end = cr ? static_cast<size_t>(static_cast<const char*>(cr) - data) + 1 : after_nl;
    if (end > 0) {
      if (s.pending.empty()) {
        forward(id, s.dest, std::string_view(data, end));
      } else {
        s.pending.append(data, end);
        forward(id, s.dest, s.pending);
        s.pending.clear();
      }
    }
    s.pending.append(data + end, got - end);
    if (s.pending.size() >= limits_.partial_line) {
      forward(id, s.dest, s.pending);
      s.pending.clear();
    }
    if (s.pending.empty() && s.pending.capacity() > 4096) std::string().swap(s.pending);
    if (got < limits_.read_chunk) return;
  }
}

void OutputForwarder::at_eof(int id) {
  Stream& s = streams_[static_cast<size_t>(id)];
  ::close(s.fd);
  s.fd = -1;
  // A last line without its end gets one, so that what follows starts on a line of its own.
  if (!s.pending.empty()) {
    s.pending += '\n';
    forward(id, s.dest, s.pending);
    std::string().swap(s.pending);
  } else if (s.state != LineState::Start && sink_of(s.dest).last_writer == id) {
    forward(id, s.dest, "\n");
  }
}

void OutputForwarder::message(std::string_view line) {
  std::string text(line);
  text += '\n';
  forward(kSelf, 2, text);
}

void OutputForwarder::forward(int id, int dest, std::string_view bytes) {
  if (bytes.empty()) return;
  Sink& k = sink_of(dest);
  std::string out;
  if (k.open_line != kNoStream && k.open_line != id) {
    // Also after a '\r': another rank's line over a progress bar would mix with its tail.
    out += '\n';
    Stream& owner = streams_[static_cast<size_t>(k.open_line)];
    if (owner.state == LineState::Middle) owner.broken = true;
    else owner.state = LineState::Start;
    k.open_line = kNoStream;
  }
  LineState state = LineState::Start;
  if (id == kSelf) {
    out.append(bytes);
  } else {
    Stream& s = streams_[static_cast<size_t>(id)];
    state = s.state;
    if (!tag_output_) {
      out.append(bytes);
      char last = bytes.back();
      state = last == '\n' ? LineState::Start : last == '\r' ? LineState::AfterCr : LineState::Middle;
    } else {
      size_t pos = 0;
      while (pos < bytes.size()) {
        // "\r\n" is one line end: its '\n' does not start a line.
        if (state == LineState::Start || (state == LineState::AfterCr && bytes[pos] != '\n'))
          out += s.tag;
        else if (state == LineState::Middle && s.broken)
          out += s.continued_tag;
        size_t end = bytes.find_first_of("\n\r", pos);
        if (end == std::string_view::npos) {
          out.append(bytes.substr(pos));
          state = LineState::Middle;
          break;
        }
        out.append(bytes.substr(pos, end + 1 - pos));
        state = bytes[end] == '\n' ? LineState::Start : LineState::AfterCr;
        s.broken = false;
        pos = end + 1;
      }
    }
    s.state = state;
    s.broken = false;
  }
  k.open_line = state == LineState::Start ? kNoStream : id;
  k.last_writer = id;

  const int fd = out_fd_[dest == 2 ? 1 : 0];
  if (!started_) {
    iovec iov{out.data(), out.size()};
    if (!k.gone && !write_fully(fd, &iov, 1)) k.gone = true;
    return;
  }
  std::lock_guard lock(k.mutex);
  if (k.gone) return;
  if (k.queued == 0) k.progress = Clock::now();
  k.queued += out.size();
  k.queue.push_back({fd, std::move(out)});
  k.wake_writer.notify_one();
}

bool OutputForwarder::streams_open() const {
  return std::any_of(streams_.begin(), streams_.end(), [](const Stream& s) { return s.fd >= 0; });
}

bool OutputForwarder::held_back() const {
  return std::any_of(streams_.begin(), streams_.end(),
                     [&](const Stream& s) { return s.fd >= 0 && !has_room(s); });
}

bool OutputForwarder::stalled(Clock::duration quiet) const {
  const auto now = Clock::now();
  for (auto& k : sinks_) {
    std::lock_guard lock(k->mutex);
    if (!k->gone && k->queued > 0 && now - k->progress < quiet) return false;
  }
  return true;
}

bool OutputForwarder::written() const {
  for (auto& k : sinks_) {
    std::lock_guard lock(k->mutex);
    if (!k->gone && k->queued > 0) return false;
  }
  return true;
}

void OutputForwarder::end_streams() {
  for (size_t id = 0; id < streams_.size(); ++id)
    if (streams_[id].fd >= 0) at_eof(static_cast<int>(id));
}

void OutputForwarder::stop() {
  for (auto& k : sinks_) {
    if (!k->running) continue;
    k->running = false;
    bool done;
    {
      std::lock_guard lock(k->mutex);
      k->stopping = true;
      done = k->gone || k->queued == 0;
      k->wake_writer.notify_one();
    }
    if (done) ::pthread_join(k->thread, nullptr);
    else ::pthread_detach(k->thread);
  }
}

}  // namespace xmsg::launcher
