#include "pxfer/host_settings.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include <fstream>
#include <sstream>

namespace pxfer {
namespace {

std::string read_proc(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

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

HostSettings read_host_settings(int connected_fd) {
  HostSettings s;
  parse_triple(read_proc("/proc/sys/net/ipv4/tcp_rmem"), s.tcp_rmem);
  parse_triple(read_proc("/proc/sys/net/ipv4/tcp_wmem"), s.tcp_wmem);
  s.rmem_max = parse_u64(read_proc("/proc/sys/net/core/rmem_max"));
  s.wmem_max = parse_u64(read_proc("/proc/sys/net/core/wmem_max"));
  s.congestion = read_proc("/proc/sys/net/ipv4/tcp_congestion_control");
  s.available_congestion = read_proc("/proc/sys/net/ipv4/tcp_available_congestion_control");
  if (connected_fd >= 0) {
    // The kernel's path MTU for a connected socket (IPv4 or IPv6).
    int mtu = 0;
    socklen_t len = sizeof mtu;
    if (::getsockopt(connected_fd, IPPROTO_IP, IP_MTU, &mtu, &len) == 0 ||
        ::getsockopt(connected_fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len) == 0)
      s.mtu = static_cast<unsigned>(mtu);
  }
  utsname u{};
  if (::uname(&u) == 0) s.kernel = std::string(u.sysname) + " " + u.release;
  return s;
}

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
