#pragma once
// What is set on a data socket and what is read back from one, as plain values: the pure
// negotiation (transfer/negotiate.hpp) and the printers use them; pxfer/io/socket_tuning.hpp applies
// and reads them on a descriptor.
#include "pxfer/core/layer.hpp"
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
  // Microseconds with data in flight or queued, and of those, held by the receiver's window or by
  // the send buffer (tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited: core/send_window.hpp).
  std::uint64_t busy_us = 0;
  std::uint64_t rwnd_limited_us = 0;
  std::uint64_t sndbuf_limited_us = 0;
  // Slow start's threshold, in segments; `first_slow_start` (the kernel's "infinite") until the
  // connection's first loss: cwnd still doubles each RTT and says little about its rate.
  std::uint32_t ssthresh = 0;
  static constexpr std::uint32_t first_slow_start = 0x7fffffff;
};

}  // namespace pxfer
