// The progress thread (mpi_impl.hpp says what it is for). It starts the first time a request
// that wants background progress registers and lives until MPI_Finalize. Engaged, it wakes
// every XMSG_PROGRESS_INTERVAL, or sooner when a pass that did work is followed by input on
// the transports' descriptors (tcp's sockets: a peer's lock request is served as it arrives,
// not one interval later), and try-locks the progress lock: taken, the main thread is
// outside MPI, and the helper runs one pass (the layer's registered requests, then the
// runtime's progress engine) unless the program entered MPI since the helper last looked: a
// program that calls MPI that often moves things on itself, and a pass then would only make
// its next call wait (worse where the helper shares the rank's core and is preempted holding
// the lock). Refused, the main thread is inside MPI. It never blocks on the lock while engaged,
// so the main thread's unlock never has a waiter to wake. With no such work left for two passes in a row it disengages and sleeps on a
// condition variable until the next one registers; the main thread then stops taking the lock.
#include "mpi_impl.hpp"

#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <time.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace xmsg::mpi {

std::atomic<bool> g_progress_engaged{false};
bool g_thread_multiple = false;
__thread int t_entry_depth __attribute__((tls_model("initial-exec"))) = 0;
__thread bool t_holds_progress_lock __attribute__((tls_model("initial-exec"))) = false;

namespace {

// One lock, one helper. g_parked and the stop request are read and written under the lock.
std::mutex g_lock;
std::condition_variable g_wake;
// Never destroyed: a joinable std::thread's destructor would end a program that exits
// without MPI_Finalize (see stop_at_exit).
std::thread* g_helper = nullptr;
bool g_parked = false;
// Outermost entries made while engaged (enter_engaged); read by the helper under the lock.
unsigned long g_entries = 0;
std::atomic<bool> g_stop{false};
// MPI_THREAD_MULTIPLE: threads blocked taking the lock, and how often it was taken, so that a
// thread that lets others in waits until one of them is in (a std::mutex is not fair: unlocked
// and locked again at once, the waiter woken by the unlock would almost never get it).
std::atomic<int> g_waiting{0};
std::atomic<unsigned long> g_acquired{0};

void acquire_waiting() {
  g_waiting.fetch_add(1, std::memory_order_relaxed);
  g_lock.lock();
  g_waiting.fetch_sub(1, std::memory_order_relaxed);
  g_acquired.fetch_add(1, std::memory_order_relaxed);
}

// The runtime's yield hook under MPI_THREAD_MULTIPLE: a thread paused in a wait while others
// wait to enter hands the lock over and queues behind them.
int let_other_threads_in() {
  if (!t_holds_progress_lock || g_waiting.load(std::memory_order_relaxed) == 0) return 0;
  const unsigned long seen = g_acquired.load(std::memory_order_relaxed);
  g_lock.unlock();
  while (g_acquired.load(std::memory_order_relaxed) == seen && g_waiting.load(std::memory_order_relaxed) > 0)
    sched_yield();
  acquire_waiting();
  return 1;
}

timespec interval_of(int us) { return timespec{us / 1000000, static_cast<long>(us % 1000000) * 1000}; }

void sleep_interval(int us) {
  timespec ts = interval_of(us);
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// Whether anything arrived: the runtime first (its count of messages and completions the
// transports handled), so that input the layer's requests then consume is counted.
bool pass() {
  int handled = xmsgi_progress();
  if (progress_pending()) progress_all();
  return handled > 0;
}

// The descriptors a pass that did work leaves to wait on. Only then: a descriptor that stays
// readable (input the program's own thread will take, a closed socket) must not turn the
// helper into a loop that takes the rank's core from the program.
struct InputWait {
  pollfd fds[64];
  int count = 0;
  void collect() {
    int raw[64];
    count = xmsgi_wait_fds(raw, 64);
    for (int i = 0; i < count; ++i) fds[i] = pollfd{raw[i], POLLIN, 0};
  }
  void wait(int us) {
    const timespec ts = interval_of(us);
    (void)ppoll(fds, static_cast<nfds_t>(count), &ts, nullptr);
    count = 0;
  }
};

void helper_main(int interval_us) {
  // Entry points a pass reaches (callbacks, nested calls) must not take the lock it holds, and
  // a request it registers finds the helper engaged.
  t_entry_depth = 1;
  t_holds_progress_lock = true;
  int idle_passes = 0;
  unsigned long entries_seen = 0;
  InputWait input;
  for (;;) {
    if (!g_progress_engaged.load(std::memory_order_acquire)) {
      std::unique_lock<std::mutex> held(g_lock);
      g_parked = true;
      g_wake.wait(held, [] { return g_stop.load(std::memory_order_relaxed) || g_progress_engaged.load(std::memory_order_relaxed); });
      g_parked = false;
      if (g_stop.load(std::memory_order_relaxed)) return;
      idle_passes = 0;
      input.count = 0;
      continue;
    }
    if (input.count > 0)
      input.wait(interval_us);
    else
      sleep_interval(interval_us);
    if (g_stop.load(std::memory_order_acquire)) return;
    if (!g_lock.try_lock()) continue;  // the main thread is inside MPI
    if (g_stop.load(std::memory_order_relaxed)) {
      g_lock.unlock();
      return;
    }
    if (background_work()) {
      idle_passes = 0;
      if (g_entries != entries_seen)
        entries_seen = g_entries;  // the program was inside MPI during this interval
      else if (pass())
        input.collect();
    } else if (++idle_passes >= 2) {
      g_progress_engaged.store(false, std::memory_order_release);
    }
    g_lock.unlock();
  }
}

void stop_at_exit();

}  // namespace

void enter_engaged() {
  if (g_thread_multiple)
    acquire_waiting();
  else
    g_lock.lock();
  t_holds_progress_lock = true;
  ++g_entries;
}

void leave_engaged() {
  t_holds_progress_lock = false;
  g_lock.unlock();
}

void begin_thread_multiple() {
  g_thread_multiple = true;
  xmsgi_set_yield_hook(&let_other_threads_in);
}

void engage_progress_thread() {
  if (t_holds_progress_lock && g_progress_engaged.load(std::memory_order_relaxed)) return;
  static const int interval_us = xmsgi_progress_interval_us();
  if (interval_us <= 0 || g_stop.load(std::memory_order_relaxed)) return;
  // Called inside an MPI call that did not take the lock: take it now, so the helper's first
  // pass waits until this call (its outermost guard) ends.
  if (t_entry_depth == 0) return;  // not inside an entry point: nobody would release the lock
  if (!t_holds_progress_lock) enter_engaged();
  if (g_progress_engaged.load(std::memory_order_relaxed)) return;
  g_progress_engaged.store(true, std::memory_order_release);
  if (!g_helper) {
    g_helper = new std::thread(helper_main, interval_us);
    pthread_setname_np(g_helper->native_handle(), "xmsg-progress");
    std::atexit(stop_at_exit);
  } else if (g_parked) {
    g_wake.notify_one();
  }
}

void stop_progress_thread() {
  if (!g_helper || !g_helper->joinable()) return;
  if (!t_holds_progress_lock) enter_engaged();
  g_stop.store(true, std::memory_order_release);
  g_wake.notify_one();
  leave_engaged();
  g_helper->join();
  g_progress_engaged.store(false, std::memory_order_release);
}

namespace {
// A program that exits without MPI_Finalize: the helper must not run a pass while exit
// destroys the runtime. Exiting inside an MPI call (a fatal error handler) this thread holds
// the lock, so no pass can start; it keeps the lock and leaves the helper asleep.
void stop_at_exit() {
  if (!g_helper || !g_helper->joinable()) return;
  if (t_holds_progress_lock) {
    g_stop.store(true, std::memory_order_release);
    return;
  }
  stop_progress_thread();
}
}  // namespace

}  // namespace xmsg::mpi
