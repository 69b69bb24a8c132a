#pragma once
// Socket buffer sizes and TCP state of one stream, through plain setsockopt/getsockopt on a
// native descriptor (no Asio here, so the pure layers and the CLI can use it).
#include <cstdint>
#include <string>

namespace pxfer {

struct BufferGrant {
  std::uint32_t requested = 0;  // 0 = kernel autotuning
  std::uint32_t sndbuf = 0;     // as getsockopt reports it (Linux doubles the request for bookkeeping)
  std::uint32_t rcvbuf = 0;
  std::string warning;          // non-empty when the kernel clamped the request
};

// Everything set on a data socket, the same on both ends of every stream.
struct SocketTuning {
  std::uint32_t window = 0;        // SO_SNDBUF/SO_RCVBUF; 0 = kernel autotuning
  std::string congestion;          // TCP_CONGESTION; "" = the system default
  std::uint32_t window_clamp = 0;  // TCP_WINDOW_CLAMP: autotuning stays below it; 0 = none
  bool operator==(const SocketTuning&) const = default;
};

// Applies `tuning` (before connect() on a client socket, right after accept() on a server one)
// and returns the buffers granted. Throws Error(usage) for an unknown congestion control,
// naming the available ones.
BufferGrant tune_socket(int fd, const SocketTuning& tuning);
// net.ipv4.tcp_available_congestion_control, e.g. "reno cubic bbr".
std::string available_congestion_controls();
// The congestion control in use on a socket.
std::string congestion_of(int fd);

// Pins SO_SNDBUF/SO_RCVBUF to `window` (nothing when 0) and reads back what the kernel granted.
// Must be called before connect() on a client socket so the window scale is chosen for it.
BufferGrant apply_window(int fd, std::uint32_t window);
BufferGrant read_buffers(int fd, std::uint32_t requested = 0);
// The warning for a grant below what was requested ("" when the kernel granted it in full);
// `where` names the host ("the kernel" / "the server's kernel").
std::string clamp_warning(const BufferGrant& grant, const std::string& where = "the kernel");
// "snd 2.0 MiB / rcv 4.0 MiB" or "auto (snd ... / rcv ...)".
std::string describe(const BufferGrant& grant);

struct TcpSnapshot {
  std::uint32_t cwnd_segments = 0;
  std::uint32_t mss = 0;
  std::uint32_t rtt_us = 0;
  std::uint32_t rttvar_us = 0;
  std::uint32_t total_retrans = 0;
  std::uint32_t snd_wscale = 0;
  std::uint32_t rcv_wscale = 0;
  std::uint32_t unsent_bytes = 0;  // Send-Q: queued but not yet sent (SIOCOUTQ minus in flight)
  std::uint32_t outq_bytes = 0;    // SIOCOUTQ: bytes in the send queue not yet acknowledged
  std::uint64_t delivery_rate = 0; // bytes/s, kernel's estimate
};
bool read_tcp_info(int fd, TcpSnapshot& out);

// Enables TCP keepalive so idle control connections survive stateful firewalls.
void enable_keepalive(int fd, int idle_seconds);

}  // namespace pxfer
