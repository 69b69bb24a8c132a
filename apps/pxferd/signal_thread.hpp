#pragma once
// A running pxferd's signals, taken on one thread of their own with sigwait (they are blocked in
// every other thread): SIGTERM and SIGINT stop the server, SIGHUP reloads it, SIGUSR1 reopens the
// log file. Nothing runs in a
// signal handler, so the callbacks may lock, log and notify systemd.
#include <atomic>
#include <functional>
#include <thread>

namespace pxfer::pxferd {

class SignalThread {
 public:
  // Blocks SIGTERM, SIGINT, SIGHUP and SIGUSR1 in the calling thread and every thread it starts afterwards:
  // call it before the server starts its threads.
  static void block_signals();
  SignalThread(std::function<void(int)> on_stop, std::function<void()> on_reload, std::function<void()> on_reopen);
  ~SignalThread();  // wakes the thread and joins it
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace pxfer::pxferd
