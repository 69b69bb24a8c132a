// HostSettings as key/value entries (the INFO frame carries them): pure, beside the doctor that
// reads them; reading this host's settings is I/O (src/net/host_settings.cpp).
#include "pxfer/core/host_facts.hpp"

#include <sstream>

namespace pxfer {
namespace {

void parse_triple(const std::string& text, std::uint64_t (&out)[3]) {
  std::istringstream in(text);
  in >> out[0] >> out[1] >> out[2];
}

std::uint64_t parse_u64(const std::string& text) {
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

std::string triple(const std::uint64_t (&v)[3]) {
  return std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + std::to_string(v[2]);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> to_entries(const HostSettings& s) {
  return {{"tcp_rmem", triple(s.tcp_rmem)},
          {"tcp_wmem", triple(s.tcp_wmem)},
          {"rmem_max", std::to_string(s.rmem_max)},
          {"wmem_max", std::to_string(s.wmem_max)},
          {"congestion", s.congestion},
          {"available_congestion", s.available_congestion},
          {"mtu", std::to_string(s.mtu)},
          {"kernel", s.kernel}};
}

HostSettings from_entries(const std::vector<std::pair<std::string, std::string>>& entries) {
  HostSettings s;
  for (const auto& [k, v] : entries) {
    if (k == "tcp_rmem") parse_triple(v, s.tcp_rmem);
    else if (k == "tcp_wmem") parse_triple(v, s.tcp_wmem);
    else if (k == "rmem_max") s.rmem_max = parse_u64(v);
    else if (k == "wmem_max") s.wmem_max = parse_u64(v);
    else if (k == "congestion") s.congestion = v;
    else if (k == "available_congestion") s.available_congestion = v;
    else if (k == "mtu") s.mtu = static_cast<unsigned>(parse_u64(v));
    else if (k == "kernel") s.kernel = v;
  }
  return s;
}

}  // namespace pxfer
