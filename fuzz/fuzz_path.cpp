// libFuzzer target: the checks a client applies to paths a server sends (unsafe_path_reason,
// check_listing) and log_safe. An accepted path is relative, has no empty, "." or ".." component
// and no C0 control or DEL; log_safe's output never holds a control character.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "pxfer/common/error.hpp"
#include "pxfer/common/log_safe.hpp"
#include "client/listing_check.hpp"
#include "common/safe_path.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (pxfer::has_control_characters(pxfer::log_safe(text))) std::abort();
  const bool accepted = !pxfer::unsafe_path_reason(text);
  if (accepted) {
    // No C0 control or DEL: other bytes log_safe escapes (C1, bidi, not UTF-8: a Latin-1 name)
    // are allowed in a name and escaped wherever one is printed (issue 34).
    bool c0 = false;
    for (unsigned char c : text) c0 = c0 || c < 0x20 || c == 0x7f;
    if (text.empty() || text.front() == '/' || c0) std::abort();
    std::size_t start = 0;
    for (;;) {
      std::size_t end = text.find('/', start);
      std::string_view part = std::string_view(text).substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (part.empty() || part == "." || part == "..") std::abort();
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  std::vector<pxfer::wire::ListEntry> entries(2);
  entries[0].relative_path = "ok";
  entries[1].relative_path = text;
  try {
    pxfer::check_listing(entries, "fuzz:1");
    if (!accepted) std::abort();  // a listing with an unsafe entry must be refused
  } catch (const pxfer::Error& e) {
    if (accepted || e.code() != pxfer::Errc::permission) std::abort();
    if (pxfer::has_control_characters(e.what())) std::abort();  // the message is one safe line
  }
  return 0;
}
