#include "units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "errors.hpp"

namespace wanem {
namespace {

struct NumberAndUnit {
  double number = 0;
  std::string unit;  // lower case, may be empty
};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Splits "1.5gbit" into 1.5 and "gbit". Rejects negatives, NaN and missing digits.
NumberAndUnit split_number(std::string_view text, std::string_view example) {
  NumberAndUnit out;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(begin, end, out.number, std::chars_format::fixed);
  if (ec != std::errc() || rest == begin || !std::isfinite(out.number) || out.number < 0) {
    throw UsageError("'" + std::string(text) + "' is not a non-negative number with a unit (e.g. " +
                     std::string(example) + ")");
  }
  out.unit = lower(std::string_view(rest, static_cast<std::size_t>(end - rest)));
  return out;
}

std::string trim_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

}  // namespace

Nanos parse_delay(std::string_view text) {
  const auto [number, unit] = split_number(text, "20ms");
  double nanos_per_unit = 0;
  if (unit.empty() || unit == "ms") {
    nanos_per_unit = kNanosPerMilli;
  } else if (unit == "us") {
    nanos_per_unit = kNanosPerMicro;
  } else if (unit == "s") {
    nanos_per_unit = kNanosPerSecond;
  } else {
    throw UsageError("'" + std::string(text) + "': unknown time unit '" + unit +
                     "' (use us, ms or s; a bare number is milliseconds)");
  }
  const double nanos = number * nanos_per_unit;
  if (nanos > 10.0 * kNanosPerSecond) {
    throw UsageError("'" + std::string(text) + "' is more than 10 s; give a one-way delay up to 10s");
  }
  return static_cast<Nanos>(std::llround(nanos));
}

double parse_loss_percent(std::string_view text) {
  const auto [number, unit] = split_number(text, "0.5%");
  if (!unit.empty() && unit != "%") {
    throw UsageError("'" + std::string(text) +
                     "': loss is a percentage such as 1% or 0.01% (a bare number is also percent)");
  }
  if (number > 100) {
    throw UsageError("'" + std::string(text) + "' is above 100%; give a percentage from 0 to 100");
  }
  return number / 100.0;
}

std::uint64_t parse_link_rate(std::string_view text) {
  if (lower(text) == "unlimited") return 0;
  const auto [number, unit] = split_number(text, "100mbit");
  double multiplier = 0;
  if (unit == "bit") {
    multiplier = 1;
  } else if (unit == "kbit") {
    multiplier = 1e3;
  } else if (unit == "mbit") {
    multiplier = 1e6;
  } else if (unit == "gbit") {
    multiplier = 1e9;
  } else if (unit.empty() && number == 0) {
    return 0;
  } else if (unit.empty()) {
    throw UsageError("'" + std::string(text) +
                     "' has no unit; write e.g. 100mbit or 1gbit (or 0 for unlimited)");
  } else if (unit == "bps" || unit == "kbps" || unit == "mbps" || unit == "gbps") {
    throw UsageError("'" + std::string(text) + "': '" + unit +
                     "' is ambiguous (bits or bytes?); write bits per second as bit, kbit, mbit or gbit");
  } else {
    throw UsageError("'" + std::string(text) + "': unknown rate unit '" + unit +
                     "' (use bit, kbit, mbit or gbit, e.g. 100mbit)");
  }
  const double bits = number * multiplier;
  if (bits > 0 && bits < 8000) {
    throw UsageError("'" + std::string(text) + "' is below 8kbit; give at least 8kbit or 0 for unlimited");
  }
  if (bits > 10e12) {
    throw UsageError("'" + std::string(text) + "' is above 10000gbit; use 0 for unlimited");
  }
  return static_cast<std::uint64_t>(std::llround(bits));
}

QueueLimit parse_queue_limit(std::string_view text) {
  const auto [number, unit] = split_number(text, "1000p or 512kb");
  QueueLimit limit;
  double multiplier = 1;
  if (unit.empty() || unit == "p" || unit == "pkt" || unit == "pkts" || unit == "packets") {
    limit.unit = QueueLimit::Unit::kPackets;
  } else {
    limit.unit = QueueLimit::Unit::kBytes;
    if (unit == "b") {
      multiplier = 1;
    } else if (unit == "kb") {
      multiplier = 1e3;
    } else if (unit == "mb") {
      multiplier = 1e6;
    } else if (unit == "kib") {
      multiplier = 1024;
    } else if (unit == "mib") {
      multiplier = 1024.0 * 1024;
    } else {
      throw UsageError("'" + std::string(text) + "': unknown queue unit '" + unit +
                       "' (packets: 1000 or 1000p; bytes: 65536b, 512kb, 4mb, 512kib, 4mib)");
    }
  }
  const double value = std::floor(number * multiplier);
  if (value < 1) {
    throw UsageError("'" + std::string(text) + "' is an empty queue; give at least 1 packet");
  }
  const bool packets = limit.unit == QueueLimit::Unit::kPackets;
  if (value > (packets ? 1e6 : 1e9)) {
    throw UsageError("'" + std::string(text) + "' is more than " + (packets ? "1000000 packets" : "1 GB") +
                     "; give a smaller queue");
  }
  limit.value = static_cast<std::uint64_t>(value);
  return limit;
}

std::string format_delay(Nanos delay) { return trim_number(static_cast<double>(delay) / kNanosPerMilli) + " ms"; }

std::string format_loss(double fraction) { return trim_number(fraction * 100.0) + " %"; }

std::string format_rate(std::uint64_t bits_per_second) {
  if (bits_per_second == 0) return "unlimited";
  const double bits = static_cast<double>(bits_per_second);
  if (bits >= 1e9) return trim_number(bits / 1e9) + " Gbit/s";
  if (bits >= 1e6) return trim_number(bits / 1e6) + " Mbit/s";
  if (bits >= 1e3) return trim_number(bits / 1e3) + " kbit/s";
  return trim_number(bits) + " bit/s";
}

std::string format_queue_limit(const QueueLimit& limit) {
  if (limit.unit == QueueLimit::Unit::kPackets) return std::to_string(limit.value) + " packets";
  return std::to_string(limit.value) + " bytes";
}

}  // namespace wanem
