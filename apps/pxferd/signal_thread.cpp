#include "signal_thread.hpp"

#include <pthread.h>
#include <signal.h>

namespace pxfer::pxferd {
namespace {
sigset_t handled() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);
  return set;
}
}  // namespace

void SignalThread::block_signals() {
  sigset_t set = handled();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

SignalThread::SignalThread(std::function<void(int)> on_stop, std::function<void()> on_reload,
                           std::function<void()> on_reopen)
    : thread_([this, on_stop = std::move(on_stop), on_reload = std::move(on_reload), on_reopen = std::move(on_reopen)] {
        sigset_t set = handled();
        for (;;) {
          int signo = 0;
          if (sigwait(&set, &signo) != 0) continue;
          if (done_) return;
          if (signo == SIGHUP) on_reload();
          else if (signo == SIGUSR1) on_reopen();
          else on_stop(signo);
        }
      }) {}

SignalThread::~SignalThread() {
  done_ = true;
  pthread_kill(thread_.native_handle(), SIGHUP);  // blocked, so it waits for sigwait above
  thread_.join();
}

}  // namespace pxfer::pxferd
