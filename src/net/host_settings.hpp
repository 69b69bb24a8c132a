#pragma once
// Reads this host's TCP settings (pxfer/core/host_facts.hpp) from /proc/sys; the server sends its own in
// an INFO frame.
#include "pxfer/io/layer.hpp"
#include "pxfer/core/host_facts.hpp"

namespace pxfer {

// This host's settings; `connected_fd` (optional, -1) gives the MTU toward the peer.
HostSettings read_host_settings(int connected_fd = -1);

}  // namespace pxfer
