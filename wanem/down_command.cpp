#include <unistd.h>

#include <cstdio>

#include "commands.hpp"
#include "errors.hpp"
#include "netns.hpp"

namespace wanem {

void check_privileges() {
  if (::geteuid() != 0) {
    throw SetupError("must run as root: creating network namespaces and TUN devices needs CAP_NET_ADMIN (try sudo)");
  }
  if (::access("/dev/net/tun", R_OK | W_OK) != 0) {
    throw SetupError("/dev/net/tun is missing or not accessible: load the tun module (modprobe tun), "
                     "or in a container pass the device in (e.g. --device /dev/net/tun)");
  }
}

int run_down(const DownConfig& config) {
  if (::geteuid() != 0) {
    throw SetupError("must run as root to delete network namespaces (try sudo)");
  }
  int status = 0;
  bool found_any = false;
  for (const auto& ns : {config.name + "-a", config.name + "-b"}) {
    if (!namespace_exists(ns)) continue;
    found_any = true;
    const auto pids = processes_in_namespace(ns);
    if (const std::string error = delete_namespace(ns); !error.empty()) {
      std::fprintf(stderr, "pxfer-wanem: error: cannot delete namespace %s: %s\n", ns.c_str(), error.c_str());
      status = 1;
      continue;
    }
    std::printf("pxfer-wanem: removed namespace %s\n", ns.c_str());
    if (!pids.empty()) {
      std::string list;
      for (const auto& pid : pids) list += " " + pid;
      std::fprintf(stderr,
                   "pxfer-wanem: warning: processes still ran in %s (pids%s); it disappears when they exit\n",
                   ns.c_str(), list.c_str());
    }
  }
  if (!found_any) std::printf("pxfer-wanem: nothing to remove for link '%s'\n", config.name.c_str());
  return status;
}

}  // namespace wanem
