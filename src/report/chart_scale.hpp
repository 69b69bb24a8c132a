#pragma once
// Axis arithmetic for the report's charts: "nice" ticks (1, 2, 5 x 10^n) and a unit per axis
// chosen so that the tick labels stay short. Pure.
#include "pxfer/core/layer.hpp"
#include <string>
#include <vector>

namespace pxfer::report {

struct Axis {
  double lo = 0;    // the axis starts here (a tick) ...
  double hi = 1;    // ... and ends here (a tick), lo <= data min, hi >= data max
  double step = 1;  // between ticks: 1, 2 or 5 x 10^n
  std::vector<double> ticks;  // lo, lo + step, ..., hi
};

// Ticks covering [lo, hi] with about `target` intervals (never fewer than 2 ticks). An empty or
// reversed range becomes [lo, lo + 1]; NaN and infinities count as 0.
Axis nice_axis(double lo, double hi, unsigned target = 5);

struct Unit {
  double divisor = 1;  // value / divisor is what the axis shows
  std::string name;    // "MB/s"
};

// Decimal rates, as the summaries print them (MB = 10^6 bytes): B/s, kB/s, MB/s, GB/s.
Unit rate_unit(double max_bytes_per_s);
// Binary sizes, as format_size prints them: B, KiB, MiB, GiB.
Unit size_unit(double max_bytes);
// Seconds, minutes or hours for a time axis.
Unit time_unit(double max_seconds);
// Microseconds, milliseconds or seconds for a round trip given in microseconds.
Unit rtt_unit(double max_us);

// A tick label with just enough decimals for `step` ("0.5", "1", "2.5", "1000").
std::string format_tick(double value, double step);

}  // namespace pxfer::report
