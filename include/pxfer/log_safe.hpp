#pragma once
// Strings from the network (paths, identities, client versions, a peer's error text) reach logs,
// terminals and JSON. A newline in one could forge a whole log line, an escape sequence could
// repaint a terminal: every such string is passed through log_safe() before it is shown.
#include <string>
#include <string_view>

namespace pxfer {

// `text` with every control character (0x00-0x1f and 0x7f) written as a visible escape: \n, \r,
// \t, or \xHH. Everything else, UTF-8 included, is kept as it is.
std::string log_safe(std::string_view text);
// Whether `text` holds a control character (what log_safe would change).
bool has_control_characters(std::string_view text);

}  // namespace pxfer
