#include "stream_tuner.hpp"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>

#include <spdlog/spdlog.h>

#include "net/quiet_wait.hpp"

namespace pxfer {

namespace asio = boost::asio;

PathSample path_sample(Clock::time_point now, std::uint64_t bytes, unsigned streams,
                       const std::vector<wire::StreamFigures>& figures) {
  PathSample s;
  s.at = now;
  s.bytes = bytes;
  s.streams = streams;
  std::vector<std::uint32_t> rtts;
  for (const auto& f : figures) {
    if (f.rtt_us > 0) rtts.push_back(f.rtt_us);
    if (f.mss > 0) {
      s.segments += f.bytes / f.mss;
      s.cwnd_bytes += std::uint64_t{f.cwnd} * f.mss;
    }
    s.retransmits += f.retransmits;
  }
  if (!rtts.empty()) {
    std::nth_element(rtts.begin(), rtts.begin() + static_cast<std::ptrdiff_t>(rtts.size() / 2), rtts.end());
    s.rtt_ms = rtts[rtts.size() / 2] / 1000.0;
  }
  return s;
}

net::awaitable<void> tune_streams(StreamTuning tuning) {
  co_await asio::this_coro::throw_if_cancelled(false);  // a cancelled wait ends it quietly
  asio::steady_timer timer(co_await asio::this_coro::executor);
  transfer::Transfer& t = *tuning.transfer;
  StreamController& controller = *tuning.controller;
  std::uint16_t spawned = controller.target();
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(200));
    if (co_await net::wait_unless_cancelled(timer)) co_return;
    if (t.over() || controller.settled()) continue;  // ends only when cancelled (net::first_of)
    PathSample sample = path_sample(Clock::now(), t.bytes_moved(), t.attached_streams(), tuning.figures());
    // Two blocks a stream still to move, or fewer: the last blocks are out and streams idle.
    const std::uint64_t left = t.file_size() - std::min(t.file_size(), sample.bytes);
    sample.tail = left < 2ull * t.settings().block_size * std::max(1u, sample.streams);
    auto step = controller.observe(sample);
    if (!step) continue;
    spdlog::debug("{}", format_step(*step));
    if (tuning.listener) tuning.listener->on_streams_changed(format_step(*step));
    if (step->to > spawned) {
      for (std::uint16_t i = spawned; i < step->to; ++i) tuning.spawn(i);
      spawned = step->to;
    } else if (step->to < step->from) {
      t.retire_streams_from(step->to);
    }
  }
}

}  // namespace pxfer
