#include "accounting.hpp"

#include <cstdio>

namespace pxfer::server {

std::string logfmt_value(std::string_view value) {
  bool plain = !value.empty();
  for (unsigned char c : value)
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c >= 0x7f) plain = false;
  if (plain) return std::string(value);
  std::string out = "\"";
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < ' ' || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string logfmt_line(const TransferAccount& a) {
  char numbers[256];
  std::snprintf(numbers, sizeof numbers,
                " bytes=%llu resumed=%llu recovered_streams=%llu seconds=%.3f streams=%u rate=%.1fMB/s",
                static_cast<unsigned long long>(a.bytes), static_cast<unsigned long long>(a.resumed),
                static_cast<unsigned long long>(a.recovered_streams), a.seconds, a.streams, a.rate_mbps);
  std::string line = "transfer=" + logfmt_value(a.id) + " client=" + logfmt_value(a.client) +
                     " identity=" + logfmt_value(a.identity) + " agent=" + logfmt_value(a.agent) +
                     " path=" + logfmt_value(a.path) + " direction=" + logfmt_value(a.direction) + numbers +
                     " checksum_algo=" + logfmt_value(a.checksum_algo) + " checksum=" + logfmt_value(a.checksum) +
                     " result=" + logfmt_value(a.result);
  if (!a.error_class.empty()) line += " error_class=" + logfmt_value(a.error_class) + " error=" + logfmt_value(a.error);
  return line;
}

}  // namespace pxfer::server
