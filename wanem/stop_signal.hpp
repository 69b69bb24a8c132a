#pragma once
// One-shot "stop now" shared by the main thread and the forwarding threads. The eventfd
// is never read, so once written it stays readable and wakes every poll() that waits on
// it; the atomic flag lets a thread busy with a burst notice without polling.

#include <sys/eventfd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <unistd.h>

#include "errors.hpp"
#include "file_descriptor.hpp"

namespace wanem {

class StopSignal {
 public:
  StopSignal() : event_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!event_.valid()) throw SetupError(std::string("eventfd: ") + std::strerror(errno));
  }

  void request() {
    stopping_.store(true, std::memory_order_relaxed);
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t ignored = ::write(event_.get(), &one, sizeof one);
  }
  bool requested() const { return stopping_.load(std::memory_order_relaxed); }
  int fd() const { return event_.get(); }

 private:
  FileDescriptor event_;
  std::atomic<bool> stopping_{false};
};

}  // namespace wanem
