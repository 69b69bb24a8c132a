#pragma once
// Time as plain integer nanoseconds on CLOCK_MONOTONIC: the forwarding hot path does
// arithmetic on release times for every packet, and integers keep that cheap and exact.

#include <cstdint>
#include <ctime>

namespace wanem {

using Nanos = std::int64_t;

inline constexpr Nanos kNanosPerMicro = 1'000;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
inline constexpr Nanos kNanosPerSecond = 1'000'000'000;

inline Nanos monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

inline timespec to_timespec(Nanos duration) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(duration / kNanosPerSecond);
  ts.tv_nsec = static_cast<long>(duration % kNanosPerSecond);
  return ts;
}

}  // namespace wanem
