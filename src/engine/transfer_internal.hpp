#pragma once
// The engine's private parts shared by its three files (transfer.cpp: set-up, slots, failure;
// transfer_streams.cpp: the data path; transfer_control.cpp: the control connection's part).
#include "pxfer/engine/layer.hpp"
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <mutex>

#include "pxfer/core/block_placement.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "engine/transfer.hpp"

namespace pxfer::transfer {

// g++ 12 may destroy temporaries that live across a co_await twice, so every message sent from a
// coroutine is a named object first.
inline const wire::Message ping_message = wire::Ping{0};
inline const wire::Message end_message = wire::End{};
inline const wire::Message retire_message = wire::Retire{};

// The unit of the read -> hash -> send (and receive -> hash -> write) pipeline inside a block:
// small enough to stay in the L2 cache between steps, large enough to keep system calls few.
inline constexpr std::uint32_t pipeline_chunk = 256 * 1024;

// TCP_INFO of an open stream into its figures.
void refresh_tcp(StreamStats& s, int fd);

// One data connection's life on a stream slot: the blocks it carries that the receiver has not
// acknowledged yet (they go back to the queue if it dies), and when it last heard from the peer.
struct Transfer::StreamRun {
  std::uint16_t index = 0;
  StreamStats& stats;
  std::mutex mutex;
  std::deque<Block> unacknowledged;
  std::atomic<Clock::rep> last_heard{Clock::now().time_since_epoch().count()};
  std::atomic<Clock::rep> last_sent{Clock::now().time_since_epoch().count()};
  std::shared_ptr<boost::asio::steady_timer> idle;  // the sender waits on it for work; on the stream's strand
  std::unique_ptr<BlockMac> mac;  // the MAC of this connection's blocks, in order
  std::unique_ptr<BlockDecompressor> decompressor;  // receiver, for compressed blocks
  std::vector<std::uint8_t> packed;                 // receiver: a compressed block's payload
  std::vector<StreamLoad> loads;           // sender: the other streams, reused per block
  bool retire_sent = false;                // receiver: RETIRE went out (-p auto shed this stream)
  std::atomic<bool> retire_asked{false};   // sender: the receiver sent RETIRE; END after what is out
  // Sender under kernel autotuning: its send buffer past autotuning's maximum (send_buffer.cpp).
  std::optional<SendWindow> window{};
  Clock::time_point next_window_look{};
  bool pinned = false;

  void heard() { last_heard.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed); }
  void sent() { last_sent.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed); }
  static Clock::duration since(const std::atomic<Clock::rep>& t) {
    return Clock::now() - Clock::time_point(Clock::duration(t.load(std::memory_order_relaxed)));
  }
};

// Heartbeats go out four times per stall timeout (at least every 50 ms).
inline std::chrono::milliseconds heartbeat_of(const Settings& s) {
  return std::max(std::chrono::milliseconds(50), s.stall_timeout / 4);
}
// The control connection's heartbeat and how long its silence is tolerated. When both ends ping
// (wire::cap_heartbeat) they do so every second at most, so a peer that died without closing its
// connections (a crashed host) is noticed within 15 s even under the default 60 s stall timeout,
// and the file it was writing is free for a rerun well before a minute.
inline std::chrono::milliseconds control_heartbeat_of(const Settings& s) {
  return s.control_heartbeats ? std::min(heartbeat_of(s), std::chrono::milliseconds(1000)) : heartbeat_of(s);
}
inline std::chrono::milliseconds control_silence_of(const Settings& s) {
  return s.control_heartbeats ? std::min(s.stall_timeout, std::chrono::milliseconds(15'000)) : s.stall_timeout;
}
inline double seconds_of(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

}  // namespace pxfer::transfer
