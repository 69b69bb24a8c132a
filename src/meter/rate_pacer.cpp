#include "pxfer/core/rate_pacer.hpp"

#include <algorithm>

namespace pxfer {

Clock::time_point RatePacer::reserve(Clock::time_point now, double amount) {
  if (per_second_ <= 0) return now;
  std::lock_guard lock(mutex_);
  // GCRA (virtual scheduling): next_ is the theoretical time the bucket is empty again. A request
  // may go when no more than one second of credit would be overdrawn, so after a quiet spell one
  // second's worth goes at once, then requests are spaced by their size over the rate.
  auto cost = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(amount / per_second_));
  auto burst = std::max(Clock::duration::zero(),
                        std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(1)) - cost);
  if (!started_) next_ = now;
  started_ = true;
  auto start = std::max(now, next_ - burst);
  next_ = std::max(next_, start) + cost;
  return start;
}

}  // namespace pxfer
