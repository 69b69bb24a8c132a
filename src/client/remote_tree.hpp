#pragma once
// Directory trees on a server: LIST and MKDIR over one control connection each; and the limits
// the server announces (INFO).
#include "pxfer/client/layer.hpp"
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "pxfer/core/auto_controller.hpp"
#include "pxfer/common/url.hpp"
#include "wire/wire.hpp"

namespace pxfer {

// Everything below remote.path (or the file itself, with an empty relative path). Throws
// pxfer::Error with the server's reason (not found, refused, ...).
std::vector<wire::ListEntry> list_remote(const Url& remote, std::chrono::milliseconds connect_timeout);
// The file remote.path names, or nullopt when nothing is there.
std::optional<wire::ListEntry> stat_remote(const Url& remote, std::chrono::milliseconds connect_timeout);
// mkdir -p of every path (relative to the export root), in order.
void make_remote_directories(const Url& server, const std::vector<std::string>& paths,
                             std::chrono::milliseconds connect_timeout);
// pxferd's --max-active and --max-streams-per-client from its INFO answer (unset where it has no
// limit), so that --auto never aims above what the server will run at once.
ServerLimits server_limits(const Url& server, std::chrono::milliseconds connect_timeout);

}  // namespace pxfer
