#include "pxfer/common/log_safe.hpp"

#include <cstdint>

namespace pxfer {

namespace {

constexpr const char* digits = "0123456789abcdef";

bool is_c0(unsigned char c) { return c < 0x20 || c == 0x7f; }

// Code points beyond ASCII that a terminal or a log reader acts on (see the header).
bool is_unsafe_code_point(std::uint32_t cp) {
  if (cp >= 0x80 && cp <= 0x9f) return true;                 // C1 controls
  if (cp == 0x2028 || cp == 0x2029) return true;             // line / paragraph separator
  if (cp == 0x200e || cp == 0x200f || cp == 0x061c) return true;  // LRM, RLM, ALM
  if (cp >= 0x202a && cp <= 0x202e) return true;             // LRE, RLE, PDF, LRO, RLO
  return cp >= 0x2066 && cp <= 0x2069;                       // LRI, RLI, FSI, PDI
}

// The length of the valid UTF-8 sequence at the start of `s` and its code point, or 0 when the
// first byte does not start one (a stray continuation byte, an overlong form, a surrogate, a
// value past U+10FFFF, or a sequence cut short).
std::size_t decode_utf8(std::string_view s, std::uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  std::size_t len = 0;
  std::uint32_t min = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) len = 2, cp = b0 & 0x1f, min = 0x80;
  else if (b0 >= 0xe0 && b0 <= 0xef) len = 3, cp = b0 & 0x0f, min = 0x800;
  else if (b0 >= 0xf0 && b0 <= 0xf4) len = 4, cp = b0 & 0x07, min = 0x10000;
  else return 0;
  if (s.size() < len) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

void append_byte_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  out += "\\x";
  out += digits[c >> 4];
  out += digits[c & 15];
}

void append_code_point_escape(std::string& out, std::uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += digits[(cp >> shift) & 15];
}

// With `out`, appends `text` to it escaped and returns true; without, returns false at the first
// character that needs escaping (true when none does). One walk, so the test and the escaping
// can never disagree.
template <typename Out>
bool walk(std::string_view text, Out* out) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (is_c0(c)) {
        if (!out) return false;
        append_byte_escape(*out, c);
      } else if (out) {
        *out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t len = decode_utf8(text.substr(i), cp);
    if (len == 0 || is_unsafe_code_point(cp)) {
      if (!out) return false;
      if (len == 0) append_byte_escape(*out, c);
      else append_code_point_escape(*out, cp);
      i += len == 0 ? 1 : len;
      continue;
    }
    if (out) out->append(text.substr(i, len));
    i += len;
  }
  return true;
}

}  // namespace

bool has_control_characters(std::string_view text) { return !walk<std::string>(text, nullptr); }

std::string log_safe(std::string_view text) {
  if (!has_control_characters(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  walk(text, &out);
  return out;
}

}  // namespace pxfer
