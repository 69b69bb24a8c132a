#pragma once
// Raw sockets for the tests: a port nobody listens on, IPv6 availability, rogue clients.
#include <cstdint>
#include <string>
#include <vector>

namespace pxfer::e2e {

// A loopback port that was free a moment ago: bound to 127.0.0.1:0, read back, closed.
std::uint16_t closed_port();
// True when a TCP socket can bind [::1]:0.
bool ipv6_loopback_available();

// Moves this test process, and so every pxfer and pxferd it starts from then on, into a network
// namespace of its own whose only interface is loopback (brought up here). A server there may
// listen on every interface ([::]) and still be reachable from nothing but this test: the
// namespace goes away with the last process in it. Returns "" once inside, or why it cannot
// (not root, no namespaces) for a GTEST_SKIP.
std::string enter_private_network();

// TCP sockets as the kernel reports them (`ss -tinmH`, iproute2), read from outside the process
// that owns them: what pxfer or pxferd really set, whatever they print.
struct SocketState {
  std::string local, peer;  // ADDRESS:PORT
  std::uint16_t local_port = 0, peer_port = 0;
  std::string congestion;   // "cubic", "reno", ...
  int snd_wscale = -1, rcv_wscale = -1;
  long rcvbuf = -1, sndbuf = -1;  // skmem rb / tb: SO_RCVBUF / SO_SNDBUF as the kernel holds them
};
// True when the ss command is installed.
bool ss_available();
// Established TCP sockets with `port` at either end, this network namespace.
std::vector<SocketState> established_sockets(std::uint16_t port);

// A plain TCP connection (blocking), closed by the destructor.
class RawConnection {
 public:
  // host is a numeric IPv4 or IPv6 address; throws std::runtime_error when connect fails.
  RawConnection(const std::string& host, std::uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  // Sends all of `data`; false when the peer closed or reset the connection.
  bool send_all(const std::string& data);
  // True once the peer closed the connection (reads and discards what arrives meanwhile),
  // waiting at most `timeout_ms`.
  bool peer_closed_within(int timeout_ms);

 private:
  int fd_ = -1;
};

}  // namespace pxfer::e2e
