#pragma once
// A token bucket over time: whatever is paced (connections a second, bytes a second) goes at no
// more than `per_second` once a second's worth of credit is spent. Thread-safe; pure of clocks:
// the caller says what time it is and sleeps until the returned time.
#include <mutex>

#include "pxfer/clock.hpp"

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

}  // namespace pxfer
