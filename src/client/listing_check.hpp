#pragma once
// The client's side of path confinement: a server is not trusted to name local files. Every
// path it sends (a LISTING entry that a get -r turns into a local file or directory) is checked
// as strictly as pxferd checks the paths clients send it (common/safe_path.hpp).
#include "pxfer/client/layer.hpp"
#include <string>
#include <vector>

#include "wire/wire.hpp"

namespace pxfer {

// Checks every entry of a LIST reply for a get -r: only a listing of one file may have an empty
// path. Throws Error(permission) naming the server and the first unsafe path (escaped).
void check_listing(const std::vector<wire::ListEntry>& entries, const std::string& server);

}  // namespace pxfer
