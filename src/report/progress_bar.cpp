#include "pxfer/progress_bar.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "pxfer/units.hpp"

namespace pxfer {
namespace {

std::string size_text(std::uint64_t bytes) {
  char buf[32];
  if (bytes < 1024) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  else if (bytes < (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

std::string bar(double fraction, std::size_t width) {
  std::string b(width, ' ');
  const auto full = static_cast<std::size_t>(std::clamp(fraction, 0.0, 1.0) * static_cast<double>(width));
  std::fill(b.begin(), b.begin() + static_cast<long>(full), '=');
  if (full < width && full > 0) b[full] = '>';
  return "[" + b + "]";
}

}  // namespace

std::string format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds >= 99 * 3600) return "--:--";
  auto s = static_cast<long>(std::ceil(seconds));
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string format_progress_bar(const BarState& st, unsigned width) {
  const bool known = st.total > 0;
  const double fraction = known ? static_cast<double>(st.bytes) / static_cast<double>(st.total)
                          : st.files_total ? static_cast<double>(st.files_done) / static_cast<double>(st.files_total) : 0;
  char tail[160];
  const double left = known && st.rate_Bps > 0 ? static_cast<double>(st.total - std::min(st.total, st.bytes)) / st.rate_Bps : -1;
  std::snprintf(tail, sizeof tail, " %5.1f%%  %s%s%s  %.1f MB/s  ETA %s", fraction * 100, size_text(st.bytes).c_str(),
                known ? " / " : "", known ? size_text(st.total).c_str() : "", st.rate_Bps / 1e6, format_eta(left).c_str());
  std::string head = st.files_total ? "files " + std::to_string(st.files_done) + "/" + std::to_string(st.files_total) : st.name;
  const long budget = width > 1 ? static_cast<long>(width) - 1 : 0;
  const long tail_size = static_cast<long>(std::string(tail).size());
  const long wanted_head = std::min<long>(static_cast<long>(head.size()), 30);
  // The bar takes what the tail and up to 30 characters of name leave, between 10 and 40.
  const long bar_width = std::clamp<long>(budget - tail_size - wanted_head - 3, 10, 40);
  const long head_room = std::max<long>(0, budget - tail_size - bar_width - 3);
  if (static_cast<long>(head.size()) > head_room)
    head = head_room > 3 ? "..." + head.substr(head.size() - static_cast<std::size_t>(head_room - 3)) : "";
  std::string line = head + (head.empty() ? "" : " ") + bar(fraction, static_cast<std::size_t>(bar_width)) + tail;
  if (static_cast<long>(line.size()) > budget) line.resize(static_cast<std::size_t>(budget));
  return line;
}

}  // namespace pxfer
