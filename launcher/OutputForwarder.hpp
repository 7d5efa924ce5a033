// Forwarding of the ranks' stdout/stderr pipes to xmsgrun's own stdout and stderr.
//
// Lines of different ranks never share a line of output; a line ends at '\n' or '\r' (so a
// progress bar's updates come out as they happen). A line longer than `OutputLimits::partial_line`
// is forwarded in pieces without waiting for its end. While the last thing written to a file is
// such an unfinished piece, or a line ended by '\r', the first output of another rank (or of
// xmsgrun) to that file starts with an inserted '\n'; with --tag-output the rest of a line
// broken that way is tagged "[r]+ " instead of "[r] ". A rank alone (or whose output nobody
// else's interrupts) comes out byte for byte. Each byte is looked at a bounded number of times, memory is bounded per rank pipe
// and per output file.
//
// Writes to stdout and stderr happen on writer threads (one per output file; one for both when
// they are the same file, so their lines keep their order and never mix). The loop that owns
// the forwarder never blocks on a slow reader: when an output file has `OutputLimits::queued`
// bytes waiting, the rank pipes going there are not read until it has written some (the ranks
// then block in write(), as under any pipe), while channels, timers and signals are served on.
// A reader that goes away (EPIPE, any write error) makes that file drop its output; the job
// goes on.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace xmsg::launcher {

struct OutputLimits {
  size_t partial_line = 64 * 1024;  // longer unfinished lines are forwarded in pieces
  size_t queued = 1 << 20;          // bytes waiting for one output file before its ranks are held back
  size_t read_chunk = 64 * 1024;    // one read() from a rank pipe
};

class OutputForwarder {
 public:
  using Clock = std::chrono::steady_clock;

  explicit OutputForwarder(bool tag_output, OutputLimits limits = {}, int stdout_fd = 1,
                           int stderr_fd = 2);
  ~OutputForwarder();
  OutputForwarder(const OutputForwarder&) = delete;
  OutputForwarder& operator=(const OutputForwarder&) = delete;

  // A rank's stdout (dest 1) or stderr (dest 2) pipe read end; owned (and made non-blocking)
  // from here on.
  void add_stream(int rank, int dest, int fd);
  // In a child forked before start(): closes the read ends, which the child must not hold.
  void close_streams_in_child();
  // Starts the writer threads. Not before the last fork() of a process that is not exec'ed
  // right away (a forked child would have the queues' mutexes but not the threads). Until then
  // message() writes directly. False (errno set) when a writer cannot be started: then the
  // forwarder goes on writing directly, blocking on a slow reader.
  bool start();

  // poll() integration: append_poll_fds() adds poll_fd_count() entries (writer wake-ups, then
  // one per stream: -1 when closed or held back); handle_poll() takes those same entries back
  // with their revents.
  void append_poll_fds(std::vector<pollfd>& fds) const;
  void handle_poll(const pollfd* entries);

  // Reads what every stream has now, as far as room allows (what a failed rank printed last,
  // before xmsgrun's verdict about it).
  void read_available();
  // One line of xmsgrun's own (without its newline), to stderr, after everything read so far.
  void message(std::string_view line);

  bool streams_open() const;
  // Some open stream is not being read because its output file is full.
  bool held_back() const;
  // Every output file that still has bytes to write has written none for `quiet`.
  bool stalled(Clock::duration quiet) const;
  // Everything handed to the writers has been written (or dropped: reader gone).
  bool written() const;
  // End of the job: unfinished lines get their newline, the pipes are closed.
  void end_streams();
  // Stops the writers: those that have written everything are joined, one stuck in a write
  // to a reader that does not read is left behind (it owns what it uses) and the rest of its
  // output is lost.
  void stop();

  size_t poll_fd_count() const { return sinks_.size() + streams_.size(); }

 private:
  struct Sink;
  enum class LineState { Start, AfterCr, Middle };
  struct Stream {
    int rank = 0;
    int dest = 1;
    int fd = -1;
    std::string tag;            // "[r] " (--tag-output)
    std::string continued_tag;  // "[r]+ ": the rest of a line that was ended for another's output
    std::string pending;  // read, not forwarded yet: no line end in it, shorter than partial_line
    LineState state = LineState::Start;
    bool broken = false;  // its unfinished line was ended for another writer's output
  };

  Sink& sink_of(int dest) const;
  bool has_room(const Stream& s) const;
  void read_stream(int id);
  void at_eof(int id);
  // Forwards bytes of stream `id` (-1: xmsgrun itself) to `dest`.
  void forward(int id, int dest, std::string_view bytes);

  bool tag_output_;
  OutputLimits limits_;
  int out_fd_[2];  // stdout, stderr
  std::vector<std::shared_ptr<Sink>> sinks_;  // 1 (stdout and stderr are one file) or 2
  int err_sink_;                              // index of stderr's sink
  std::vector<Stream> streams_;
  std::unique_ptr<char[]> buf_;  // one read() from a rank pipe
  size_t first_stream_ = 0;  // handle_poll() reads from here on
  bool started_ = false;
};

}  // namespace xmsg::launcher
