#pragma once
// The network side of an emulated link: namespaces NAME-a and NAME-b, each holding a TUN
// device `wan0` with an address of the /24, MTU set, lo and wan0 up. The TUN descriptors
// stay in this process (in the root namespace), which is where the packets are forwarded.

#include <string>
#include <vector>

#include "file_descriptor.hpp"
#include "options.hpp"

namespace wanem {

inline constexpr const char* kTunDeviceName = "wan0";

class LinkNetwork {
 public:
  // Builds everything or, on failure, removes what it built and throws SetupError.
  explicit LinkNetwork(const UpConfig& config);
  LinkNetwork(const LinkNetwork&) = delete;
  LinkNetwork& operator=(const LinkNetwork&) = delete;
  ~LinkNetwork();

  int tun_a() const { return tun_a_.get(); }
  int tun_b() const { return tun_b_.get(); }

  // Closes the TUN devices and deletes the namespaces. Idempotent; returns one message
  // per step that failed.
  std::vector<std::string> tear_down();

 private:
  FileDescriptor attach_side(const std::string& ns, const std::string& temporary_name, const std::string& address);

  const UpConfig& config_;
  std::vector<std::string> created_namespaces_;
  FileDescriptor tun_a_;
  FileDescriptor tun_b_;
};

}  // namespace wanem
