#pragma once
// A token bucket over time: whatever is paced (connections a second, bytes a second) goes at no
// more than `per_second` once a second's worth of credit is spent. Thread-safe; pure of clocks:
// the caller says what time it is and sleeps until the returned time.
#include "pxfer/core/layer.hpp"
#include <atomic>
#include <mutex>

#include "pxfer/core/clock.hpp"

namespace pxfer {

class RatePacer {
 public:
  explicit RatePacer(double per_second) : per_second_(per_second) {}
  // Reserves `amount` and returns when it may go (now, or later). per_second 0: always now.
  Clock::time_point reserve(Clock::time_point now, double amount);
  double per_second() const { return per_second_; }

 private:
  double per_second_;
  std::mutex mutex_;
  bool started_ = false;
  Clock::time_point next_{};  // GCRA's theoretical arrival time
};

// When waits on a pacer give up: pxferd's emulated slow disk must not hold up a SIGTERM (issue 34:
// a write paced at 4K/s kept pxferd for ~4 min, a second SIGTERM too). The server sets the drain's
// deadline, or now on a stop; a paced write past it ends with Error(network), as the transfers a
// stop aborts do ("the server is shutting down; retry later"). Thread-safe.
class PacingStop {
 public:
  // The earliest deadline set wins.
  void at(Clock::time_point deadline) {
    const Clock::rep d = deadline.time_since_epoch().count();
    Clock::rep cur = deadline_.load();
    while (d < cur && !deadline_.compare_exchange_weak(cur, d)) {
    }
  }
  void now() { at(Clock::time_point::min()); }
  bool due(Clock::time_point now) const { return now.time_since_epoch().count() >= deadline_.load(); }

 private:
  std::atomic<Clock::rep> deadline_{Clock::time_point::max().time_since_epoch().count()};
};

}  // namespace pxfer
