#include "support/output.hpp"

#include <regex>

namespace pxfer::e2e {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool is_rate_line(const std::string& line) {
  static const std::regex rate(R"(^\s*\d+ bytes\s+[0-9.]+ KB/sec avg\s+[0-9.]+ KB/sec inst$)");
  return std::regex_match(line, rate);
}

std::vector<std::uint64_t> rate_line_bytes(const std::string& out) {
  std::vector<std::uint64_t> bytes;
  for (const auto& line : split_lines(out))
    if (is_rate_line(line)) bytes.push_back(std::stoull(line));
  return bytes;
}

std::optional<std::string> line_starting_with(const std::string& text, const std::string& prefix) {
  for (const auto& line : split_lines(text))
    if (line.starts_with(prefix)) return line;
  return std::nullopt;
}

std::optional<std::string> printed_checksum(const std::string& out, const std::string& name) {
  auto line = line_starting_with(out, name + ": ");
  if (!line) return std::nullopt;
  return line->substr(name.size() + 2);
}

std::size_t count_lines_containing(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (const auto& line : split_lines(text))
    if (line.find(needle) != std::string::npos) ++n;
  return n;
}

long long metric_sample(const std::string& scrape, const std::string& name) {
  const std::string text = "\n" + scrape;
  auto pos = text.find("\n" + name + " ");
  if (pos == std::string::npos) return -1;
  return std::stoll(text.substr(pos + name.size() + 2));
}

}  // namespace pxfer::e2e
