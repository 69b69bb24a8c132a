#pragma once
// The client's pinned server certificates, as ssh's known_hosts: lines `HOST:PORT sha256:HEX`
// ('#' comments). Pure parsing plus one function that applies trust on first use to a file.
#include "pxfer/client/layer.hpp"
#include <optional>
#include <string>
#include <vector>

namespace pxfer {

struct KnownHost {
  std::string authority;    // "host:port", "[::1]:port"
  std::string fingerprint;  // "sha256:hex"
  unsigned line = 0;        // 1-based line number in the file
};

// Malformed lines are skipped (they never match); a later duplicate never overrides an earlier one.
std::vector<KnownHost> parse_known_hosts(const std::string& text);

enum class HostMatch { pinned, unknown, changed };
struct HostCheck {
  HostMatch match = HostMatch::unknown;
  KnownHost entry;  // the line that pinned the authority (pinned, changed)
};
HostCheck check_known_host(const std::vector<KnownHost>& hosts, const std::string& authority,
                           const std::string& fingerprint);

// Trust on first use against `file` (created with its directory, under a lock): nothing when the
// pin matches; the warning to print when the authority was unknown and is now pinned; throws
// Error(permission) naming the file and line to delete when the pinned fingerprint changed.
std::optional<std::string> trust_on_first_use(const std::string& file, const std::string& authority,
                                              const std::string& fingerprint);

}  // namespace pxfer
