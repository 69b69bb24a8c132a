#include "pxfer/log_safe.hpp"

namespace pxfer {

namespace {
bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }
}  // namespace

bool has_control_characters(std::string_view text) {
  for (char c : text)
    if (is_control(static_cast<unsigned char>(c))) return true;
  return false;
}

std::string log_safe(std::string_view text) {
  if (!has_control_characters(text)) return std::string(text);
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 8);
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_control(c)) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

}  // namespace pxfer
