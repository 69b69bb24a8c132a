#pragma once
// Parsing what pxfer prints: "Source:"/"Dest:" lines, rate lines, the summary and the checksum.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pxfer::e2e {

std::vector<std::string> split_lines(const std::string& text);
// ^\s*\d+ bytes\s+[0-9.]+ KB/sec avg\s+[0-9.]+ KB/sec inst$
bool is_rate_line(const std::string& line);
// Byte counts of every rate line, in order.
std::vector<std::uint64_t> rate_line_bytes(const std::string& out);
// The first line starting with `prefix`.
std::optional<std::string> line_starting_with(const std::string& text, const std::string& prefix);
// The value printed on the "NAME: value" checksum line (e.g. NAME = "adler32").
std::optional<std::string> printed_checksum(const std::string& out, const std::string& name);
// Number of lines of `text` containing `needle`.
std::size_t count_lines_containing(const std::string& text, const std::string& needle);
// The value of sample `name` (with its labels) in a Prometheus scrape, or -1.
long long metric_sample(const std::string& scrape, const std::string& name);

}  // namespace pxfer::e2e
