#include "client/listing_check.hpp"

#include "common/safe_path.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/common/log_safe.hpp"

namespace pxfer {

void check_listing(const std::vector<wire::ListEntry>& entries, const std::string& server) {
  // One file answers with one entry of an empty path (it is the path asked for).
  if (entries.size() == 1 && entries.front().relative_path.empty() && entries.front().kind == wire::EntryKind::file)
    return;
  for (const auto& e : entries) {
    if (auto why = unsafe_path_reason(e.relative_path))
      throw Error(Errc::permission, server + " sent an unsafe path in its listing ('" + log_safe(e.relative_path) +
                                        "': " + *why + "); refusing to copy anything from it: is this the server you meant?");
  }
}

}  // namespace pxfer
