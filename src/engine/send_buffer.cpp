// A sending stream's send buffer past autotuning's maximum (core/send_window.hpp decides; this
// reads TCP_INFO, pins and tells).
#include "transfer_internal.hpp"

#include <spdlog/spdlog.h>

#include "net/host_settings.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer::transfer {

// How often a sending stream looks at its send buffer: the decision spans a second or more.
constexpr std::chrono::milliseconds window_look_period{250};

// Read once per transfer, and only by a stream that ran a quarter second: a batch of small files
// reads no /proc.
const SendWindowSettings& Transfer::window_settings() {
  std::call_once(window_settings_once_, [this] {
    const HostSettings host = read_host_settings();
    window_settings_.pin_ceiling = 2 * host.wmem_max;
    window_settings_.wmem_max = host.wmem_max;
    window_settings_.autotune_max = host.tcp_wmem[2];
  });
  return window_settings_;
}

// After each block a sending stream sent, at most every window_look_period, when the window is
// the kernel's (a --window pins both buffers of every stream at the start instead).
void Transfer::watch_send_buffer(StreamRun& run) {
  if (settings_.tuning.window > 0) return;
  const auto now = Clock::now();
  if (now < run.next_window_look) return;
  run.next_window_look = now + window_look_period;
  const int fd = run.stats.fd.load();
  TcpSnapshot tcp;
  if (fd < 0 || !read_tcp_info(fd, tcp)) return;
  if (!run.window) run.window.emplace(window_settings());
  const WindowLook look{.at = now,
                        .busy_us = tcp.busy_us,
                        .rwnd_limited_us = tcp.rwnd_limited_us,
                        .sndbuf_limited_us = tcp.sndbuf_limited_us,
                        .sndbuf = read_buffers(fd).sndbuf,
                        .outq_bytes = tcp.outq_bytes,
                        .unsent_bytes = tcp.unsent_bytes,
                        .cwnd_bytes = static_cast<std::uint64_t>(tcp.cwnd_segments) * tcp.mss,
                        .rtt_ms = tcp.rtt_us / 1000.0};
  auto move = run.window->observe(look);
  if (!move) return;
  std::string text = "stream " + std::to_string(run.index) + ": " + move->text;
  if (move->kind == WindowMoveKind::pin) {
    const std::uint32_t granted = pin_send_buffer(fd, move->request);
    if (granted < 2ull * move->request) text += " (the kernel granted " + format_size(granted) + ")";
    for (auto largest = largest_pin_.load(); granted > largest && !largest_pin_.compare_exchange_weak(largest, granted);) {
    }
    if (!run.pinned) buffers_pinned_ += 1;
    run.pinned = true;
  }
  {
    std::lock_guard lock(mutex_);
    std::string& note = move->kind == WindowMoveKind::pin ? first_pin_ : window_note_;
    if (note.empty()) note = move->text;
  }
  if (window_listener_) window_listener_(text);
  else spdlog::debug("{}", text);
}

std::string Transfer::send_window_account() const {
  std::lock_guard lock(mutex_);
  const auto n = buffers_pinned_.load();
  if (n == 0) return window_note_;
  std::string account = "pinned on " + std::to_string(n) + (n == 1 ? " stream" : " streams") + ", up to " +
                        format_size(largest_pin_.load()) + "; the first: " + first_pin_;
  return window_note_.empty() ? account : account + "; then " + window_note_;
}

}  // namespace pxfer::transfer
