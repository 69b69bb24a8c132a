#include "counters.hpp"

#include <cstdio>
#include <sstream>

namespace wanem {
namespace {

std::string direction_text(const char* label, const DirectionCounters& c) {
  std::ostringstream out;
  out << "  " << label << ": forwarded " << c.forwarded_packets << " packets / " << c.forwarded_bytes
      << " bytes; dropped: loss " << c.lost_packets << ", queue overflow " << c.queue_dropped_packets;
  if (c.ring_full_dropped_packets != 0) out << ", ring full " << c.ring_full_dropped_packets;
  if (c.oversize_dropped_packets != 0) out << ", oversize " << c.oversize_dropped_packets;
  if (c.write_failed_packets != 0) out << ", write failed " << c.write_failed_packets;
  out << "; in flight at exit " << c.in_flight_at_exit_packets << "\n";
  return out.str();
}

std::string direction_json(const DirectionCounters& c) {
  std::ostringstream out;
  out << "{\"received_packets\": " << c.received_packets << ", \"received_bytes\": " << c.received_bytes
      << ", \"forwarded_packets\": " << c.forwarded_packets << ", \"forwarded_bytes\": " << c.forwarded_bytes
      << ", \"lost_packets\": " << c.lost_packets << ", \"queue_dropped_packets\": " << c.queue_dropped_packets
      << ", \"ring_full_dropped_packets\": " << c.ring_full_dropped_packets
      << ", \"oversize_dropped_packets\": " << c.oversize_dropped_packets
      << ", \"write_failed_packets\": " << c.write_failed_packets
      << ", \"in_flight_at_exit_packets\": " << c.in_flight_at_exit_packets << "}";
  return out.str();
}

// Link names are restricted to [A-Za-z0-9_-], so no escaping is needed; keep it honest anyway.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string format_counters_text(const LinkReport& report) {
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.3f", report.duration_seconds);
  std::string text = "pxfer-wanem: counters of link '" + report.name + "' after " + duration + " s (seed " +
                     std::to_string(report.seed) + "):\n";
  text += direction_text("a->b", report.a_to_b);
  text += direction_text("b->a", report.b_to_a);
  if (report.a_to_b.ring_full_dropped_packets + report.b_to_a.ring_full_dropped_packets != 0) {
    text += "  note: the packet ring overflowed; give a larger --ring-mb\n";
  }
  return text;
}

std::string format_counters_json(const LinkReport& report) {
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.6f", report.duration_seconds);
  std::ostringstream out;
  out << "{\n  \"name\": " << json_string(report.name) << ",\n  \"duration_seconds\": " << duration
      << ",\n  \"seed\": " << report.seed << ",\n  \"a_to_b\": " << direction_json(report.a_to_b)
      << ",\n  \"b_to_a\": " << direction_json(report.b_to_a) << "\n}\n";
  return out.str();
}

}  // namespace wanem
