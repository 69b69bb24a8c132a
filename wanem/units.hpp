#pragma once
// Parsing and printing of the quantities on the command line: delays, loss
// percentages, bit rates and queue sizes. Parsers throw UsageError with a message that
// says what is wrong and what a valid value looks like; the caller adds which option.

#include <cstdint>
#include <string>
#include <string_view>

#include "clock.hpp"

namespace wanem {

struct QueueLimit {
  enum class Unit { kPackets, kBytes };
  Unit unit = Unit::kPackets;
  std::uint64_t value = 0;
};

// "20" (milliseconds), "20ms", "500us", "1.5s". Between 0 and 10 s.
Nanos parse_delay(std::string_view text);

// A percentage, "%" optional: "1%" and "1" are 1 %, "0.01" is 0.01 % (1 in 10,000).
// Returns the probability as a fraction in [0, 1].
double parse_loss_percent(std::string_view text);

// "1gbit", "100mbit", "500kbit", "64000bit" (SI multipliers like tc), "0" or
// "unlimited" for no limit. Returns bits per second; 0 means unlimited.
std::uint64_t parse_link_rate(std::string_view text);

// "1000" or "1000p" (packets), "500kb", "2mb" (SI bytes), "512kib", "4mib", "65536b".
QueueLimit parse_queue_limit(std::string_view text);

std::string format_delay(Nanos delay);
std::string format_loss(double fraction);
std::string format_rate(std::uint64_t bits_per_second);
std::string format_queue_limit(const QueueLimit& limit);

}  // namespace wanem
