#include "net/host_settings.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include <fstream>

namespace pxfer {
namespace {

std::string read_proc(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

HostSettings read_host_settings(int connected_fd) {
  // Read as the text /proc holds and parsed the one way the INFO frame's entries are.
  HostSettings s = from_entries({{"tcp_rmem", read_proc("/proc/sys/net/ipv4/tcp_rmem")},
                                 {"tcp_wmem", read_proc("/proc/sys/net/ipv4/tcp_wmem")},
                                 {"rmem_max", read_proc("/proc/sys/net/core/rmem_max")},
                                 {"wmem_max", read_proc("/proc/sys/net/core/wmem_max")},
                                 {"congestion", read_proc("/proc/sys/net/ipv4/tcp_congestion_control")},
                                 {"available_congestion", read_proc("/proc/sys/net/ipv4/tcp_available_congestion_control")}});
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

}  // namespace pxfer
