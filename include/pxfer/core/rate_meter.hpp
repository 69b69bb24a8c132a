#pragma once
// Average and instantaneous rates from a growing byte counter, plus the text forms users parse.
// Pure: the caller supplies the clock, so tests drive it with made-up times.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "pxfer/core/clock.hpp"

namespace pxfer {

struct RateSample {
  std::uint64_t bytes = 0;
  double seconds = 0;          // since start
  double avg_bytes_per_s = 0;  // since start
  double inst_bytes_per_s = 0; // over the last interval
};

class RateMeter {
 public:
  explicit RateMeter(Clock::time_point start) : start_(start), last_time_(start) {}
  // Records the counter at `now` and returns the rates; call once per interval.
  RateSample sample(Clock::time_point now, std::uint64_t total_bytes);

 private:
  Clock::time_point start_;
  Clock::time_point last_time_;
  std::uint64_t last_bytes_ = 0;
};

// globus-url-copy -vb: "    47054848 bytes    511.15 KB/sec avg    522.27 KB/sec inst", KB = 1024.
std::string format_rate_line(const RateSample& sample);
// Parses a rate line back (for tests and scripts that read our output).
std::optional<RateSample> parse_rate_line(const std::string& line);

// "1.23 GB/s" style helpers for summaries: MB = 10^6 bytes, Gbit = 10^9 bits.
double to_megabytes_per_s(double bytes_per_s);
double to_gigabits_per_s(double bytes_per_s);

}  // namespace pxfer
