#include "common/safe_path.hpp"

#include "pxfer/common/error.hpp"

namespace pxfer {

namespace {
// C0 controls and DEL: no file name needs them, and a path holding one is refused. Other bytes
// log_safe escapes (C1, bidi controls, bytes that are not UTF-8: a Latin-1 name from an older file
// system) can be real names: they are kept, and escaped wherever they are shown.
bool has_c0_control(std::string_view path) {
  for (char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}
}  // namespace

std::optional<std::string> unsafe_path_reason(std::string_view path) {
  if (path.empty()) return "an empty path";
  if (path.find('\0') != std::string_view::npos) return "a NUL byte";
  if (has_c0_control(path)) return "a control character";
  if (path.front() == '/') return "an absolute path";
  std::size_t start = 0;
  for (;;) {
    std::size_t end = path.find('/', start);
    std::string_view part = path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (part.empty()) return "an empty component (//, or a trailing /)";
    if (part == ".") return "a '.' component";
    if (part == "..") return "a '..' component, which would leave the target directory";
    if (end == std::string_view::npos) return std::nullopt;
    start = end + 1;
  }
}

}  // namespace pxfer
