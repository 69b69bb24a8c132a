// A data stream's send buffer past autotuning: the arithmetic of pxfer/core/send_window.hpp.
#include "pxfer/core/send_window.hpp"

#include <algorithm>
#include <cstdio>

#include "pxfer/common/units.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer {
namespace {

std::string percent(double share) { return std::to_string(static_cast<int>(share * 100 + 0.5)) + " %"; }

std::string rtt_text(double rtt_ms) {
  char text[32];
  std::snprintf(text, sizeof text, "RTT %.0f ms", rtt_ms);
  return text;
}

}  // namespace

// Held by its send buffer at this look: what it holds fills most of the buffer, all of it sent (a
// receiver's closed window would leave data unsent), and the congestion window has room for half as
// much again (the kernel grows cwnd only while cwnd limits the stream: a reno stream its buffer
// holds showed cwnd 5811 segments, 2116-2869 in flight).
bool SendWindow::buffer_bound(const WindowLook& look) const {
  const std::uint64_t in_flight = look.outq_bytes - std::min(look.unsent_bytes, look.outq_bytes);
  return look.sndbuf > 0 && static_cast<double>(look.outq_bytes) >= settings_.full_buffer * look.sndbuf &&
         8 * look.unsent_bytes <= look.outq_bytes && 2 * look.cwnd_bytes >= 3 * in_flight;
}

std::optional<WindowMove> SendWindow::observe(const WindowLook& look) {
  // A new socket (the stream reconnected) counts from zero again.
  if (!from_ || look.busy_us < from_->busy_us || look.sndbuf_limited_us < from_->sndbuf_limited_us ||
      look.rwnd_limited_us < from_->rwnd_limited_us) {
    from_ = look;
    looks_ = bound_looks_ = 0;
    return std::nullopt;
  }
  ++looks_;
  if (buffer_bound(look)) ++bound_looks_;
  const auto span = look.at - from_->at;
  const auto rtts = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(8 * look.rtt_ms));
  if (span < std::max<Clock::duration>(settings_.min_look, rtts)) return std::nullopt;
  const double busy = static_cast<double>(look.busy_us - from_->busy_us);
  const double sndbuf = static_cast<double>(look.sndbuf_limited_us - from_->sndbuf_limited_us);
  const double rwnd = static_cast<double>(look.rwnd_limited_us - from_->rwnd_limited_us);
  const double span_us = std::chrono::duration<double, std::micro>(span).count();
  const double bound = static_cast<double>(bound_looks_) / looks_;
  from_ = look;
  looks_ = bound_looks_ = 0;
  // A stream that mostly waited for blocks (the file's end, the others took them) shows nothing.
  if (busy < 0.5 * span_us) return std::nullopt;
  // The kernel's count (tcpi_sndbuf_limited) only runs while the application has not yet refilled a
  // buffer it found full: behind an event loop most of that time reads as busy (14 % there for a
  // stream the looks found buffer-bound throughout), so the looks count too.
  const double held = std::max(sndbuf / busy, bound);
  if (held >= settings_.held) return buffer_held(look, held);
  if (rwnd >= settings_.held * busy && !told_receiver_) {
    told_receiver_ = true;
    WindowMove move;
    move.kind = WindowMoveKind::held_by_receiver;
    move.held_share = rwnd / busy;
    move.text = "the receiver's window held the stream " + percent(move.held_share) + " of the time (" +
                rtt_text(look.rtt_ms) + "): raise net.ipv4.tcp_rmem's maximum on the receiving host";
    return move;
  }
  return std::nullopt;
}

// Twice the buffer, up to what a pin can get; else said once.
std::optional<WindowMove> SendWindow::buffer_held(const WindowLook& look, double share) {
  const std::uint64_t ceiling = std::min(settings_.pin_ceiling, limits::max_pinned_send_buffer);
  const std::uint64_t to = std::min<std::uint64_t>(2ull * look.sndbuf, ceiling);
  WindowMove move;
  move.held_share = share;
  const std::string held = "it held the stream " + percent(share) + " of the time, " + rtt_text(look.rtt_ms);
  if (look.sndbuf > 0 && static_cast<double>(to) >= settings_.worth * look.sndbuf) {
    move.kind = WindowMoveKind::pin;
    move.request = static_cast<std::uint32_t>(to / 2);
    move.text = "send buffer pinned at " + format_size(to) + ", was " + format_size(look.sndbuf) + ": " + held;
    return move;
  }
  if (told_ceiling_) return std::nullopt;
  told_ceiling_ = true;
  move.kind = WindowMoveKind::held_at_ceiling;
  move.text = "the send buffer (" + format_size(look.sndbuf) + ") held the stream " + percent(share) + " of the time (" +
              rtt_text(look.rtt_ms) + ") and the kernel pins no larger one (net.core.wmem_max " +
              format_size(settings_.wmem_max) + ", tcp_wmem's maximum " + format_size(settings_.autotune_max) +
              "): raise both on the sending host, or use more streams";
  return move;
}

}  // namespace pxfer
