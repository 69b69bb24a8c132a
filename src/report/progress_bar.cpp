#include "pxfer/core/progress_bar.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "pxfer/common/units.hpp"

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

namespace {

// The figures after the bar, richest first: each drops what matters least. Rate and time left
// are in all of them; a narrow terminal loses the total, then the bytes, never those two.
std::vector<std::string> tails(const BarState& st, double fraction) {
  const bool known = st.total > 0;
  const double left = known && st.rate_Bps > 0 ? static_cast<double>(st.total - std::min(st.total, st.bytes)) / st.rate_Bps : -1;
  char percent[16], rate[48];
  std::snprintf(percent, sizeof percent, " %5.1f%%", fraction * 100);
  std::snprintf(rate, sizeof rate, "  %.1f MB/s  ETA %s", st.rate_Bps / 1e6, format_eta(left).c_str());
  const std::string done = "  " + size_text(st.bytes);
  std::vector<std::string> out;
  if (known) out.push_back(percent + done + " / " + size_text(st.total) + rate);
  out.push_back(percent + done + rate);
  out.push_back(percent + std::string(rate));
  return out;
}

}  // namespace

std::string format_progress_bar(const BarState& st, unsigned width) {
  const bool known = st.total > 0;
  const double fraction = known ? static_cast<double>(st.bytes) / static_cast<double>(st.total)
                          : st.files_total ? static_cast<double>(st.files_done) / static_cast<double>(st.files_total) : 0;
  std::string head = st.files_total ? "files " + std::to_string(st.files_done) + "/" + std::to_string(st.files_total) : st.name;
  const long budget = width > 1 ? static_cast<long>(width) - 1 : 0;
  const auto variants = tails(st, fraction);
  constexpr long min_bar = 10;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const std::string& tail = variants[v];
    const long tail_size = static_cast<long>(tail.size());
    if (budget - tail_size - 3 < min_bar) continue;  // no room for the bar (and its brackets) beside this tail
    // The name goes first: it has room only beside the richest tail.
    const long wanted_head = v == 0 ? std::min<long>(static_cast<long>(head.size()), 30) : 0;
    // The bar takes what the tail and up to 30 characters of name leave, between 10 and 40.
    const long bar_width = std::clamp<long>(budget - tail_size - wanted_head - 3, min_bar, 40);
    const long head_room = v == 0 ? std::max<long>(0, budget - tail_size - bar_width - 3) : 0;
    std::string shown = head;
    if (static_cast<long>(shown.size()) > head_room)
      shown = head_room > 3 ? "..." + head.substr(head.size() - static_cast<std::size_t>(head_room - 3)) : "";
    return shown + (shown.empty() ? "" : " ") + bar(fraction, static_cast<std::size_t>(bar_width)) + tail;
  }
  // Narrower than a bar: the figures alone, the sparest that fits (rate and ETA kept while they can be).
  for (const auto& tail : variants)
    if (static_cast<long>(tail.size()) - 1 <= budget || &tail == &variants.back()) {
      std::string line = tail.substr(1);
      if (static_cast<long>(line.size()) > budget) line.resize(static_cast<std::size_t>(budget));
      return line;
    }
  return "";
}

// Breaks a summary ("a, b, c, ...") into lines of at most width - 1 characters, the later ones
// indented: after a comma where it can, between words inside a piece longer than a line.
std::string fit_to_width(const std::string& text, unsigned width) {
  const std::size_t budget = width > 1 ? width - 1 : 1;
  const std::string indent = "  ";
  std::string out, line;
  auto add = [&](const std::string& word) {  // one space before it, or a new indented line
    if (line.empty() || line == indent) {
      line += word;
    } else if (line.size() + 1 + word.size() <= budget) {
      line += ' ' + word;
    } else {
      out += line + "\n";
      line = indent + word;
    }
  };
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t comma = text.find(", ", pos);
    const std::string piece = text.substr(pos, comma == std::string::npos ? std::string::npos : comma + 1 - pos);
    pos = comma == std::string::npos ? text.size() : comma + 2;
    const bool fresh = line.empty() || line == indent;
    if ((fresh ? line.size() : line.size() + 1) + piece.size() <= budget) {
      if (!fresh) line += ' ';
      line += piece;
      continue;
    }
    if (!fresh) {
      out += line + "\n";
      line = indent;
    }
    if (line.size() + piece.size() <= budget) {
      line += piece;
      continue;
    }
    for (std::size_t w = 0; w < piece.size();) {  // longer than a line: by words
      const std::size_t space = piece.find(' ', w);
      add(piece.substr(w, space == std::string::npos ? std::string::npos : space - w));
      w = space == std::string::npos ? piece.size() : space + 1;
    }
  }
  return out + line;
}

}  // namespace pxfer
