#pragma once
// The send buffer of one data stream when autotuning stops below what the stream needs: a window
// per stream from what the transfer measures (issue 39). Pure: the sender passes what TCP_INFO
// said, at the times it read it, so tests replay made-up streams.
//
// Linux grows a socket's send buffer up to net.ipv4.tcp_wmem's maximum (4 MiB on Debian). A stream
// keeps no more in flight than its send buffer holds, so on a long path one stream moves at most
// about that per RTT: `-p 2` moved 305 Mbit/s at 150 ms without loss, `-p 8` 737
// (bench/results/wan-matrix-reno.md). The kernel tells when that happened: tcpi_sndbuf_limited
// counts the time a stream had sent all it had, its cwnd had room, and the application could not
// queue more because the buffer was full (tcp_cwnd_validate). Behind an event loop that count
// misses most of it (the buffer is writable again at two thirds, and the time until the application
// refills it counts as busy), so each look also asks: is the buffer nearly full, all of it sent, and
// has cwnd room for half as much again? Held when either says so for `held` of the time.
// A pinned SO_SNDBUF goes past autotuning's maximum, up to twice net.core.wmem_max (the kernel
// doubles what is asked for). So when the send buffer held the stream for `held` of its busy time
// over a look of max(`min_look`, 8 RTT), the buffer is pinned at twice its size, up to that ceiling
// (and limits::max_pinned_send_buffer); while it still holds the stream, twice again. Not the BDP
// at once: a stream that its buffer holds moves buffer / RTT, which says nothing of what the path
// would carry. The buffer stops growing where it stops holding the stream, which is where it
// covers the stream's share of the path's BDP.
// At the ceiling, or when the ceiling is below autotuning's (Debian's default net.core.wmem_max is
// 208 KiB), nothing more can be done here: the stream says so once, with the settings that would.
// The receiver's window can hold a stream the same way (tcpi_rwnd_limited): the other host's
// net.ipv4.tcp_rmem, said once too.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>

#include "pxfer/core/clock.hpp"

namespace pxfer {

struct SendWindowSettings {
  std::uint64_t pin_ceiling = 0;  // the largest send buffer a pin gets: 2 x net.core.wmem_max; 0: never pins
  std::uint64_t wmem_max = 0;     // net.core.wmem_max and tcp_wmem's maximum, for what is said at the ceiling
  std::uint64_t autotune_max = 0;
  std::chrono::milliseconds min_look{1000};
  double held = 0.5;   // of the busy time (or of the looks), limited by the buffer: it holds the stream
  double full_buffer = 0.6;  // a look: sent and unacknowledged bytes at this share of SO_SNDBUF or more
  double worth = 1.25; // a pin must raise the buffer by at least this factor
};

// One TCP_INFO of the stream's socket.
struct WindowLook {
  Clock::time_point at;
  std::uint64_t busy_us = 0;            // tcpi_busy_time: data in flight or queued (all of the below included)
  std::uint64_t rwnd_limited_us = 0;    // tcpi_rwnd_limited: the receiver's window held it
  std::uint64_t sndbuf_limited_us = 0;  // tcpi_sndbuf_limited: its send buffer held it
  std::uint32_t sndbuf = 0;             // SO_SNDBUF as read back (the kernel's doubled figure)
  std::uint64_t outq_bytes = 0;         // SIOCOUTQ: not yet acknowledged (in flight and unsent)
  std::uint64_t unsent_bytes = 0;       // SIOCOUTQNSD
  std::uint64_t cwnd_bytes = 0;         // congestion window x MSS
  double rtt_ms = 0;
};

enum class WindowMoveKind { pin, held_at_ceiling, held_by_receiver };

struct WindowMove {
  WindowMoveKind kind = WindowMoveKind::pin;
  std::uint32_t request = 0;  // pin: the SO_SNDBUF to set (the kernel grants twice this)
  double held_share = 0;      // of the busy time since the last look
  std::string text;           // what the stream says ("send buffer pinned at 8.0 MiB (...)")
};

class SendWindow {
 public:
  explicit SendWindow(const SendWindowSettings& settings) : settings_(settings) {}
  // What to do after this look, if anything. Each look closes the span since the previous one
  // once it lasted long enough.
  std::optional<WindowMove> observe(const WindowLook& look);

 private:
  std::optional<WindowMove> buffer_held(const WindowLook& look, double share);
  bool buffer_bound(const WindowLook& look) const;
  unsigned looks_ = 0, bound_looks_ = 0;  // since from_
  SendWindowSettings settings_;
  std::optional<WindowLook> from_;
  bool told_ceiling_ = false, told_receiver_ = false;
};

}  // namespace pxfer
