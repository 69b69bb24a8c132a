#include "link_network.hpp"

#include <unistd.h>

#include "errors.hpp"
#include "external_command.hpp"
#include "netns.hpp"
#include "tun_device.hpp"

namespace wanem {
namespace {

// The kernel's default for TUN is 500 packets; a burst larger than that is dropped
// before this process can read it, which TCP would see as loss the user never asked for.
constexpr const char* kTunTxQueueLength = "5000";

}  // namespace

LinkNetwork::LinkNetwork(const UpConfig& config) : config_(config) {
  for (const auto& ns : {config.namespace_a(), config.namespace_b()}) {
    if (namespace_exists(ns)) {
      throw SetupError("network namespace " + ns +
                       " already exists (a running or crashed link?); remove it with: pxfer-wanem down --name " +
                       config.name);
    }
  }
  try {
    for (const auto& ns : {config.namespace_a(), config.namespace_b()}) {
      create_namespace(ns);
      created_namespaces_.push_back(ns);
      // Only the configured IPv4 /24 may ever cross the link: no IPv6 autoconfiguration
      // chatter, no link-local addresses. Must be set before the device moves in.
      for (const char* scope : {"all", "default"}) {
        write_sysctl_in_namespace(ns, std::string("net/ipv6/conf/") + scope + "/disable_ipv6", "1");
      }
    }
    // Temporary names only have to be unique in the root namespace for a moment.
    const std::string prefix = "pxw" + std::to_string(::getpid());
    tun_a_ = attach_side(config.namespace_a(), prefix + "a", config.address_a());
    tun_b_ = attach_side(config.namespace_b(), prefix + "b", config.address_b());
  } catch (...) {
    tear_down();
    throw;
  }
}

LinkNetwork::~LinkNetwork() { tear_down(); }

FileDescriptor LinkNetwork::attach_side(const std::string& ns, const std::string& temporary_name,
                                        const std::string& address) {
  FileDescriptor tun = open_tun_device(temporary_name);
  run_ip({"link", "set", "dev", temporary_name, "netns", ns});
  run_ip({"-n", ns, "link", "set", "dev", temporary_name, "name", kTunDeviceName});
  run_ip({"-n", ns, "link", "set", "dev", kTunDeviceName, "mtu", std::to_string(config_.mtu), "txqueuelen",
          kTunTxQueueLength});
  run_ip({"-n", ns, "addr", "add", address + "/24", "dev", kTunDeviceName});
  run_ip({"-n", ns, "link", "set", "dev", "lo", "up"});
  run_ip({"-n", ns, "link", "set", "dev", kTunDeviceName, "up"});
  return tun;
}

std::vector<std::string> LinkNetwork::tear_down() {
  std::vector<std::string> problems;
  tun_a_.reset();
  tun_b_.reset();
  for (const auto& ns : created_namespaces_) {
    if (!namespace_exists(ns)) continue;  // someone ran `down` under a live link
    if (const std::string error = delete_namespace(ns); !error.empty()) {
      problems.push_back("cannot delete namespace " + ns + ": " + error);
    }
  }
  created_namespaces_.clear();
  return problems;
}

}  // namespace wanem
