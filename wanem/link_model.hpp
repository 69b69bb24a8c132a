#pragma once
// What happens to a packet on one direction of the emulated link, as a pure function of
// arrival times and sizes (no I/O), in the order a real path applies it:
//   1. random loss,
//   2. a drop-tail queue in front of a bottleneck of the given rate (tail drop when full),
//   3. serialisation at that rate,
//   4. the propagation delay.
// Time is virtual: the serialiser's schedule is computed, not slept, so the achieved rate
// is exact no matter how late the forwarding thread wakes up.

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "clock.hpp"
#include "units.hpp"

namespace wanem {

struct LinkParams {
  Nanos delay = 0;
  double loss_fraction = 0;    // probability in [0, 1]
  std::uint64_t rate_bps = 0;  // 0: unlimited (no serialisation, no queue)
  QueueLimit queue{QueueLimit::Unit::kPackets, 1000};
};

enum class Verdict { kForward, kLost, kQueueFull };

class LinkModel {
 public:
  LinkModel(const LinkParams& params, std::uint64_t seed);

  // Fate of a packet of `length` bytes arriving at `now` (non-decreasing between calls).
  // For kForward, `release_at` receives when it leaves the far end of the link.
  Verdict admit(Nanos now, std::size_t length, Nanos& release_at);

  const LinkParams& params() const { return params_; }

 private:
  bool draw_loss();
  bool queue_full(Nanos now, std::size_t length);
  Nanos serialization_time(std::size_t length);

  LinkParams params_;
  std::mt19937_64 random_;
  std::uint64_t loss_threshold_ = 0;  // a packet is lost when random_() < this
  bool always_lose_ = false;

  Nanos serializer_free_at_ = 0;           // when the last admitted packet is fully sent
  std::uint64_t serialization_carry_ = 0;  // sub-nanosecond remainder, keeps the rate exact

  // Departure times of the packets still queued or being sent, oldest first: a fixed
  // ring sized by the packet limit (unused for byte limits, which need only the clock).
  std::vector<Nanos> departures_;
  std::size_t departures_head_ = 0;
  std::size_t departures_count_ = 0;
};

}  // namespace wanem
