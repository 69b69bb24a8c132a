#pragma once
// Opening a layer-3 TUN device: reads return one IP packet each, writes inject one.

#include <string>

#include "file_descriptor.hpp"

namespace wanem {

// Creates TUN device `name` in the current network namespace (IFF_TUN | IFF_NO_PI,
// non-blocking). The device exists as long as the returned descriptor is open, even
// after it is moved to another namespace, so a crash never leaves devices behind.
FileDescriptor open_tun_device(const std::string& name);

}  // namespace wanem
