#include "support/net.hpp"
#include "support/process.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>

namespace pxfer::e2e {

std::uint16_t closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    throw std::runtime_error(std::string("bind 127.0.0.1:0: ") + std::strerror(err));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool ipv6_loopback_available() {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string enter_private_network() {
  // Only this thread moves (network namespaces are per thread): the test's own thread, which is
  // also the one that spawns every child.
  if (::unshare(CLONE_NEWNET) != 0)
    return std::string("needs root (CAP_SYS_ADMIN) for a network namespace of its own: unshare(CLONE_NEWNET): ") +
           std::strerror(errno);
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = fd >= 0 && ::ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
  up = up && ::ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (!up) return std::string("cannot bring up lo in the new network namespace: ") + std::strerror(err);
  return "";
}

bool ss_available() {
  for (const char* dir : {"/usr/bin", "/bin", "/usr/sbin", "/sbin"})
    if (::access((std::string(dir) + "/ss").c_str(), X_OK) == 0) return true;
  return false;
}

namespace {
std::uint16_t port_of(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) return 0;
  try {
    return static_cast<std::uint16_t>(std::stoul(address.substr(colon + 1)));
  } catch (const std::exception&) {
    return 0;
  }
}
}  // namespace

std::vector<SocketState> established_sockets(std::uint16_t port) {
  const std::string p = std::to_string(port);
  const std::string command = "ss -tinmH state established '( sport = :" + p + " or dport = :" + p + " )' 2>/dev/null";
  const std::string text = capture_shell(command);
  static const std::set<std::string> flags{"ts", "sack", "ecn", "ecnseen", "fastopen", "cong_alg"};
  std::vector<SocketState> sockets;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    if (line[0] != ' ' && line[0] != '\t') {
      std::istringstream in(line);
      std::vector<std::string> fields;
      for (std::string f; in >> f;) fields.push_back(f);
      if (fields.size() < 4) continue;
      // Recv-Q Send-Q Local Peer (no State column with a state filter)
      SocketState s;
      s.local = fields[fields.size() - 2];
      s.peer = fields[fields.size() - 1];
      s.local_port = port_of(s.local);
      s.peer_port = port_of(s.peer);
      sockets.push_back(s);
    } else if (!sockets.empty()) {
      auto& s = sockets.back();
      // "wscale:7,7" and "skmem:(r0,rb131072,t0,tb2626560,...)"; sscanf rather than std::regex,
      // whose GCC 12 code draws -Wmaybe-uninitialized false positives in the sanitizer build.
      int snd = 0, rcv = 0;
      if (auto at = line.find("wscale:"); at != std::string::npos && std::sscanf(line.c_str() + at, "wscale:%d,%d", &snd, &rcv) == 2) {
        s.snd_wscale = snd;
        s.rcv_wscale = rcv;
      }
      long rb = 0, tb = 0;
      if (auto at = line.find("skmem:("); at != std::string::npos &&
          std::sscanf(line.c_str() + at, "skmem:(r%*u,rb%ld,t%*u,tb%ld", &rb, &tb) == 2) {
        s.rcvbuf = rb;
        s.sndbuf = tb;
      }
      // The congestion control is the first bare word after skmem and the option flags.
      std::istringstream in(line);
      for (std::string word; in >> word;) {
        if (word.find(':') != std::string::npos) {
          if (word.starts_with("skmem:")) continue;
          break;
        }
        if (!flags.count(word)) {
          s.congestion = word;
          break;
        }
      }
    }
  }
  return sockets;
}

RawConnection::RawConnection(const std::string& host, std::uint16_t port) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof *v4;
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof *v6;
  } else {
    throw std::runtime_error("not a numeric address: " + host);
  }
  fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    int err = errno;
    ::close(fd_);
    throw std::runtime_error("connect " + host + ":" + std::to_string(port) + ": " + std::strerror(err));
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::send_all(const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool RawConnection::peer_closed_within(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc <= 0) continue;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // EOF or reset
  }
}

}  // namespace pxfer::e2e
