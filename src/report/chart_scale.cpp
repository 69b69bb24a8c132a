// Nice ticks after Heckbert ("Nice numbers for graph labels", Graphics Gems, 1990): round the
// raw step to 1, 2 or 5 x 10^n and widen the range to whole steps.
#include "report/chart_scale.hpp"

#include <cmath>
#include <cstdio>

namespace pxfer::report {
namespace {

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0; }

double nice_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * magnitude;
}

Unit pick(double max, double base, const char* const names[4]) {
  double divisor = 1;
  int i = 0;
  while (i < 3 && max >= base * divisor) {
    divisor *= base;
    ++i;
  }
  return {divisor, names[i]};
}

}  // namespace

Axis nice_axis(double lo, double hi, unsigned target) {
  lo = finite_or_zero(lo);
  hi = finite_or_zero(hi);
  if (!(hi > lo)) hi = lo + 1;
  if (target < 1) target = 1;
  Axis a;
  a.step = nice_step((hi - lo) / target);
  a.lo = std::floor(lo / a.step + 1e-9) * a.step;
  a.hi = std::ceil(hi / a.step - 1e-9) * a.step;
  if (a.hi <= a.lo) a.hi = a.lo + a.step;
  const auto n = static_cast<long>(std::lround((a.hi - a.lo) / a.step));
  for (long i = 0; i <= n; ++i) {
    double t = a.lo + static_cast<double>(i) * a.step;
    if (std::fabs(t) < a.step * 1e-9) t = 0;  // no "-0" or 1e-17 from rounding
    a.ticks.push_back(t);
  }
  return a;
}

Unit rate_unit(double max) {
  static const char* const names[4] = {"B/s", "kB/s", "MB/s", "GB/s"};
  return pick(finite_or_zero(max), 1000, names);
}

Unit size_unit(double max) {
  static const char* const names[4] = {"B", "KiB", "MiB", "GiB"};
  return pick(finite_or_zero(max), 1024, names);
}

Unit time_unit(double max_seconds) {
  max_seconds = finite_or_zero(max_seconds);
  if (max_seconds >= 3 * 3600) return {3600, "h"};
  if (max_seconds >= 3 * 60) return {60, "min"};
  return {1, "s"};
}

Unit rtt_unit(double max_us) {
  static const char* const names[4] = {"\xC2\xB5s", "ms", "s", "ks"};
  Unit u = pick(finite_or_zero(max_us), 1000, names);
  if (u.divisor > 1e6) u = {1e6, "s"};
  return u;
}

std::string format_tick(double value, double step) {
  int decimals = 0;
  step = std::fabs(finite_or_zero(step));
  while (decimals < 9 && step > 0 && std::fabs(step - std::round(step)) > step * 1e-6) {
    step *= 10;
    ++decimals;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, finite_or_zero(value));
  std::string s = buf;
  if (s == "-0" || s.rfind("-0.", 0) == 0) {
    bool zero = s.find_first_not_of("-0.") == std::string::npos;
    if (zero) s.erase(0, 1);
  }
  return s;
}

}  // namespace pxfer::report
