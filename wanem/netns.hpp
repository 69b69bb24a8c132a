#pragma once
// Named network namespaces as iproute2 manages them (/var/run/netns/NAME), so that
// `ip netns exec NAME ...` works for the user's own commands.

#include <string>
#include <vector>

namespace wanem {

bool namespace_exists(const std::string& name);

// Throws SetupError on failure.
void create_namespace(const std::string& name);

// Returns an empty string on success, otherwise the reason it failed.
std::string delete_namespace(const std::string& name);

// Process ids still running inside the namespace (they keep it alive after deletion).
std::vector<std::string> processes_in_namespace(const std::string& name);

// Writes /proc/sys/KEY inside the namespace, e.g. key "net/ipv6/conf/all/disable_ipv6".
// Returns false when the key does not exist there (e.g. a kernel without IPv6); throws
// SetupError on other failures.
bool write_sysctl_in_namespace(const std::string& name, const std::string& key, const std::string& value);

}  // namespace wanem
