#pragma once
// The TCP settings of a host that bound a transfer's speed: socket buffer limits, congestion
// control, MTU, as data (pure): the doctor reasons on them, the INFO frame carries them as
// entries. Reading them from /proc/sys is net/host_settings.hpp's job.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pxfer {

struct HostSettings {
  std::uint64_t tcp_rmem[3] = {0, 0, 0};  // min, default, max (autotuning ceiling)
  std::uint64_t tcp_wmem[3] = {0, 0, 0};
  std::uint64_t rmem_max = 0;             // net.core: ceiling for a pinned SO_RCVBUF
  std::uint64_t wmem_max = 0;
  std::string congestion;
  std::string available_congestion;
  unsigned mtu = 0;                       // of the path the connection takes, 0 = unknown
  std::string kernel;
};

std::vector<std::pair<std::string, std::string>> to_entries(const HostSettings& s);
HostSettings from_entries(const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace pxfer
