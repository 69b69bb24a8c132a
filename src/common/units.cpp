#include "pxfer/common/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pxfer {
namespace {

// Splits "12.5M" into the number and the suffix; the number must be non-negative decimal.
bool split_number(std::string_view text, double& value, std::string_view& suffix) {
  std::size_t i = 0;
  bool digits = false;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    digits = digits || std::isdigit(static_cast<unsigned char>(text[i]));
    ++i;
  }
  if (!digits) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (ec != std::errc{} || ptr != text.data() + i) return false;
  suffix = text.substr(i);
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  // Plain byte counts are parsed as integers: a double cannot hold every 64-bit value.
  std::uint64_t exact = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), exact);
  if (err == std::errc{} && end == text.data() + text.size()) return exact;
  double value = 0;
  std::string_view suffix;
  if (!split_number(text, value, suffix)) return std::nullopt;
  std::string s = lower(suffix);
  double mult = 1;
  if (s.empty() || s == "b") mult = 1;
  // The policy of coreutils (dd, head -c) and of pxfer-wanem: K/M/G/T and KiB/MiB/GiB/TiB are
  // 1024-based, kB/MB/GB/TB are 1000-based, so "MB" means what the summary's MB/s means.
  else if (s == "k" || s == "kib") mult = 1024.0;
  else if (s == "m" || s == "mib") mult = 1024.0 * 1024;
  else if (s == "g" || s == "gib") mult = 1024.0 * 1024 * 1024;
  else if (s == "t" || s == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (s == "kb") mult = 1e3;
  else if (s == "mb") mult = 1e6;
  else if (s == "gb") mult = 1e9;
  else if (s == "tb") mult = 1e12;
  else return std::nullopt;
  double bytes = value * mult;
  if (!std::isfinite(bytes) || bytes >= 18446744073709551615.0) return std::nullopt;
  if (bytes != std::floor(bytes)) return std::nullopt;  // "1.3" bytes makes no sense
  return static_cast<std::uint64_t>(bytes);
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  double value = 0;
  std::string_view suffix;
  if (!split_number(text, value, suffix)) return std::nullopt;
  std::string s = lower(suffix);
  double ms = 0;
  if (s.empty() || s == "s") ms = value * 1000;
  else if (s == "ms") ms = value;
  else if (s == "m" || s == "min") ms = value * 60'000;
  else if (s == "h") ms = value * 3'600'000;
  else if (s == "d") ms = value * 86'400'000;
  else return std::nullopt;
  if (!std::isfinite(ms) || ms > 1e15) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  // 1048575 B is "1.0 MiB", not "1024.0 KiB": move up a unit when one decimal would show 1024.
  while (v >= 1023.95 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0 || v == std::floor(v)) std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::optional<double> parse_rate(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (ec != std::errc{} || ptr != text.data() + i || value <= 0) return std::nullopt;
  std::string unit;
  for (char c : text.substr(i)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Unit {
    const char* name;
    double bytes_per_s;
  };
  static constexpr Unit units[] = {{"bit", 1.0 / 8},    {"kbit", 1e3 / 8},  {"mbit", 1e6 / 8}, {"gbit", 1e9 / 8},
                                   {"tbit", 1e12 / 8},  {"bps", 1.0 / 8},   {"kbps", 1e3 / 8}, {"mbps", 1e6 / 8},
                                   {"gbps", 1e9 / 8},   {"b/s", 1},         {"kb/s", 1e3},     {"mb/s", 1e6},
                                   {"gb/s", 1e9},       {"g", 1e9 / 8},     {"m", 1e6 / 8},    {"k", 1e3 / 8}};
  for (const auto& u : units) {
    if (unit != u.name) continue;
    // 300 digits of gbit overflow to infinity, which later casts to integers would make undefined.
    double rate = value * u.bytes_per_s;
    if (!std::isfinite(rate)) return std::nullopt;
    return rate;
  }
  return std::nullopt;
}

}  // namespace pxfer
