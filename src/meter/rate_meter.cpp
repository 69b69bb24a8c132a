#include "pxfer/core/rate_meter.hpp"

#include <cstdio>

namespace pxfer {

RateSample RateMeter::sample(Clock::time_point now, std::uint64_t total_bytes) {
  RateSample s;
  s.bytes = total_bytes;
  s.seconds = std::chrono::duration<double>(now - start_).count();
  double interval = std::chrono::duration<double>(now - last_time_).count();
  if (s.seconds > 0) s.avg_bytes_per_s = static_cast<double>(total_bytes) / s.seconds;
  if (interval > 0 && total_bytes >= last_bytes_)
    s.inst_bytes_per_s = static_cast<double>(total_bytes - last_bytes_) / interval;
  else
    s.inst_bytes_per_s = s.avg_bytes_per_s;
  last_time_ = now;
  last_bytes_ = total_bytes;
  return s;
}

std::string format_rate_line(const RateSample& sample) {
  // Widths as globus-url-copy -vb prints them (see the site reports in docs/output.md): a 12-wide
  // byte count and 9-wide rates, so existing scripts that parse those lines keep working.
  char buf[128];
  std::snprintf(buf, sizeof buf, "%12llu bytes %9.2f KB/sec avg %9.2f KB/sec inst",
                static_cast<unsigned long long>(sample.bytes), sample.avg_bytes_per_s / 1024.0,
                sample.inst_bytes_per_s / 1024.0);
  return buf;
}

std::optional<RateSample> parse_rate_line(const std::string& line) {
  unsigned long long bytes = 0;
  double avg = 0, inst = 0;
  int consumed = 0;
  if (std::sscanf(line.c_str(), " %llu bytes %lf KB/sec avg %lf KB/sec inst%n", &bytes, &avg, &inst, &consumed) != 3 ||
      consumed == 0)
    return std::nullopt;
  RateSample s;
  s.bytes = bytes;
  s.avg_bytes_per_s = avg * 1024.0;
  s.inst_bytes_per_s = inst * 1024.0;
  return s;
}

double to_megabytes_per_s(double bytes_per_s) { return bytes_per_s / 1e6; }
double to_gigabits_per_s(double bytes_per_s) { return bytes_per_s * 8 / 1e9; }

}  // namespace pxfer
