#pragma once
// Path confinement's rule for a relative name that the other end sent: the client checks each
// LISTING entry with it (client/listing_check.hpp) as strictly as pxferd checks client paths.
#include "pxfer/common/layer.hpp"
#include <optional>
#include <string>
#include <string_view>

namespace pxfer {

// Why `path` may not name something below a local target directory, or nullopt when it may:
// empty, absolute, an empty, "." or ".." component, a NUL byte or another control character.
std::optional<std::string> unsafe_path_reason(std::string_view path);

}  // namespace pxfer
