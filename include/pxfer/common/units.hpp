#pragma once
// Parsing and printing of user-facing quantities: sizes with 1024-based suffixes, durations.
#include "pxfer/common/layer.hpp"
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pxfer {

// "4194304", "4M", "4MiB", "1.5G", "87380", "64k": K/M/G/T and KiB..TiB are 1024-based; kB, MB,
// GB and TB are 1000-based (as in coreutils and the MB/s pxfer prints). Returns nullopt on
// anything else (empty, negative, overflow, unknown suffix, trailing garbage).
std::optional<std::uint64_t> parse_size(std::string_view text);

// "30s", "2m", "500ms", "1h", "2.5" (plain number = seconds).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// 4194304 -> "4 MiB", 1000 -> "1000 B", 1536 -> "1.5 KiB".
std::string format_size(std::uint64_t bytes);
// "10gbit", "500mbit", "100mbps", "1.5gbit", "125MB/s", "1GB/s": bytes per second (the one rate
// parser of the library: pxfer doctor --target and anything else that takes a network rate).
std::optional<double> parse_rate(std::string_view text);

}  // namespace pxfer
