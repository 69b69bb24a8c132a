#include "stream_tuner.hpp"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>

#include <spdlog/spdlog.h>

#include "net/quiet_wait.hpp"

namespace pxfer {

namespace asio = boost::asio;

PathSample path_sample(Clock::time_point now, std::uint64_t bytes, unsigned streams,
                       const std::vector<wire::StreamFigures>& figures, std::uint16_t running) {
  PathSample s;
  s.at = now;
  s.bytes = bytes;
  s.streams = streams;
  std::vector<std::uint32_t> rtts;
  for (const auto& f : figures) {
    if (f.mss > 0) s.segments += f.bytes / f.mss;
    s.retransmits += f.retransmits;
    // A shed stream keeps its last figures (and a cwnd frozen at its height): only the running
    // ones say what the path does now.
    if (f.stream >= running) continue;
    if (f.rtt_us > 0) rtts.push_back(f.rtt_us);
    if (f.mss > 0) {
      s.cwnd_bytes += std::uint64_t{f.cwnd} * f.mss;
      s.mss = f.mss;
    }
    if (f.unsent > 0) ++s.queued_streams;
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
  // Streams run on indexes [0, running); [running, spawned) were shed (retired) and come back,
  // when the controller grows again, once their old connections let go of the slots.
  std::uint16_t running = controller.target(), spawned = running, wanted = running;
  auto bring_up = [&] {
    if (wanted <= running || (running < spawned && !t.slots_free(running, std::min(spawned, wanted)))) return;
    t.keep_all_streams();
    for (std::uint16_t i = running; i < wanted; ++i) tuning.spawn(i);
    running = wanted;
    spawned = std::max(spawned, wanted);
  };
  for (;;) {
    timer.expires_after(stream_sample_period);
    if (co_await net::wait_unless_cancelled(timer)) co_return;
    if (t.over()) continue;  // ends only when cancelled (net::first_of)
    bring_up();
    // Settled, it still looks: room that opens (grow_into_room) brings streams back.
    PathSample sample = path_sample(Clock::now(), t.bytes_moved(), t.attached_streams(), tuning.figures(), running);
    // Two blocks a stream still to move, or fewer: the last blocks are out and streams idle.
    const std::uint64_t left = t.file_size() - std::min(t.file_size(), sample.bytes);
    sample.tail = left < 2ull * t.settings().block_size * std::max(1u, sample.streams);
    sample.left = std::max<std::uint64_t>(1, left);
    auto step = controller.observe(sample);
    if (!step) continue;
    spdlog::debug("{}", format_step(*step));
    if (tuning.listener) tuning.listener->on_streams_changed(format_step(*step));
    wanted = step->to;
    if (wanted < running) {
      t.retire_streams_from(wanted);
      running = wanted;
    }
    bring_up();
  }
}

}  // namespace pxfer
