#pragma once
// Strings from the network (paths, identities, client versions, a peer's error text) reach logs,
// terminals and JSON. A newline in one could forge a whole log line, an escape sequence could
// repaint a terminal, a bidi control could make a line read as something else: every such string
// is passed through log_safe() before it is shown (pxferd's and pxfer's loggers do it for every
// line, the client's printers for every name and message they print).
#include "pxfer/common/layer.hpp"
#include <string>
#include <string_view>

namespace pxfer {

// `text` with every character a terminal or a log reader could act on written as a visible
// escape, everything else (printable UTF-8 included) kept as it is:
//   C0 controls and DEL (0x00-0x1f, 0x7f): \n, \r, \t, or \xHH;
//   C1 controls (U+0080-U+009F, e.g. NEL U+0085, CSI U+009B): \u0085;
//   line and paragraph separators U+2028/U+2029, bidi controls U+200E/U+200F, U+061C,
//   U+202A-U+202E, U+2066-U+2069: \u202e;
//   bytes that are not valid UTF-8 (a raw 0x9b, 0x85, an overlong or truncated sequence): \xHH.
std::string log_safe(std::string_view text);
// Whether log_safe would change `text`.
bool has_control_characters(std::string_view text);

}  // namespace pxfer
