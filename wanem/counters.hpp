#pragma once
// Per-direction packet accounting and its two reports: text for the terminal and JSON
// for scripts. Every packet read from a TUN device ends up in exactly one bucket:
//   received = forwarded + lost + queue_dropped + ring_full_dropped + oversize_dropped
//              + write_failed + in_flight_at_exit

#include <cstdint>
#include <string>

namespace wanem {

struct DirectionCounters {
  std::uint64_t received_packets = 0;
  std::uint64_t received_bytes = 0;
  std::uint64_t forwarded_packets = 0;
  std::uint64_t forwarded_bytes = 0;
  std::uint64_t lost_packets = 0;           // random loss (--loss)
  std::uint64_t queue_dropped_packets = 0;  // drop-tail at the rate limiter (--queue)
  std::uint64_t ring_full_dropped_packets = 0;  // packet buffer exhausted (--ring-mb)
  std::uint64_t oversize_dropped_packets = 0;   // larger than the MTU
  std::uint64_t write_failed_packets = 0;       // the far TUN device refused it
  std::uint64_t in_flight_at_exit_packets = 0;  // still delayed when the link stopped
};

struct LinkReport {
  std::string name;
  double duration_seconds = 0;
  std::uint64_t seed = 0;
  DirectionCounters a_to_b;
  DirectionCounters b_to_a;
};

std::string format_counters_text(const LinkReport& report);
std::string format_counters_json(const LinkReport& report);

}  // namespace wanem
