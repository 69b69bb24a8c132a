// -p auto: the phase arithmetic of pxfer/core/stream_controller.hpp.
#include "pxfer/core/stream_controller.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pxfer {
namespace {

std::string mbit(double bytes_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", bytes_per_s * 8 / 1e6);
  return text;
}

std::string rate_change(double from, double to) {
  return mbit(from) + " -> " + mbit(to) + " Mbit/s";
}

// Bytes per second between two (time, bytes moved) samples; 0 when they do not span forward.
double rate_between(Clock::time_point a, std::uint64_t from, Clock::time_point b, std::uint64_t to) {
  return b > a && to >= from ? static_cast<double>(to - from) / std::chrono::duration<double>(b - a).count() : 0.0;
}

Clock::duration millis(double ms) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms)); }

}  // namespace

bool keeps_rate_under_loss(std::string_view congestion) { return congestion.starts_with("bbr"); }

std::string congestion_name_or_empty(std::string_view told) {
  const bool plain = !told.empty() && told.size() < 16 && std::all_of(told.begin(), told.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  return plain ? std::string(told) : std::string();
}

std::string_view stream_move_name(StreamMove move) {
  switch (move) {
    case StreamMove::grow: return "grow";
    case StreamMove::shed: return "shed";
    case StreamMove::settle: return "settle";
  }
  return "settle";
}

StreamController::StreamController(const StreamControllerSettings& settings, Clock::time_point start)
    : settings_(settings), start_(start) {
  settings_.ceiling = std::max<std::uint16_t>(1, settings_.ceiling);
  settings_.start = std::clamp<std::uint16_t>(settings_.start, 1, settings_.ceiling);
  target_ = settings_.start;
  phase_start_ = start;
  settings_.sender_congestion = congestion_name_or_empty(settings_.sender_congestion);  // never prints a peer's junk
  paced_sender_ = keeps_rate_under_loss(settings_.sender_congestion);
  if (settings_.path_rtt_ms > 0 && settings_.start < settings_.ceiling) sized_start_ = size_start(settings_.path_rtt_ms, start);
  if (settings_.start == settings_.ceiling) {
    settled_ = true;
    why_ = "at most " + std::to_string(settings_.ceiling) + (settings_.ceiling == 1 ? " stream" : " streams") +
           " for this transfer";
  }
}

Clock::duration StreamController::warmup() const { return std::max<Clock::duration>(settings_.min_warmup, millis(4 * rtt_ms_)); }
// Past slow start: the minimum warm-up, then a retransmit per stream since the phase began (each
// stream lost a packet once, so its window came down to what the path's loss allows), or the
// longest warm-up on a path that loses nothing.
// The overshoot also fills the bottleneck's queue (50 ms path: RTT 108 ms), which drains as the
// streams come down: until it did, a phase would measure the overshoot.
bool StreamController::warmed_up(const PathSample& s) {
  if (!phase_retransmits_) phase_retransmits_ = s.retransmits;
  const auto in_phase = s.at - phase_start_;
  if (in_phase < warmup()) return false;
  return (s.retransmits >= *phase_retransmits_ + target_ && no_queue(s)) ||
         in_phase >= std::max<Clock::duration>(settings_.max_warmup, millis(20 * rtt_ms_));
}

bool StreamController::no_queue(const PathSample& s) const {
  return s.rtt_ms <= 0 || s.rtt_ms <= base_rtt_ms_ * settings_.queue_rtt + 1;
}

Clock::duration StreamController::phase() const { return std::max<Clock::duration>(settings_.min_phase, millis(8 * rtt_ms_)); }

void StreamController::start_phase(std::uint16_t count, Clock::time_point at) {
  target_ = count;
  phase_start_ = at;
  phase_retransmits_.reset();
  measure_start_.reset();
  measure_mid_.reset();
  restarts_ = 0;
}

// The peak over twice the window of the recent rate: a sender counts acknowledged blocks, whose
// bursts made a 1 Gbit/s path look like 1.2 over 500 ms.
Clock::duration StreamController::peak_window() const { return 2 * warmup(); }

// The aggregate over the last max(500 ms, 4 RTT), once the samples span it; keeps the peak.
std::optional<double> StreamController::recent_rate(const PathSample& s) {
  recent_.emplace_back(s.at, s.bytes);
  while (recent_.size() > 2 && s.at - recent_[1].first >= peak_window()) recent_.pop_front();
  auto rate_since = [&](Clock::duration window) -> std::optional<double> {
    auto from = std::find_if(recent_.rbegin(), recent_.rend(), [&](const auto& r) { return s.at - r.first >= window; });
    if (from == recent_.rend() || s.bytes < from->second) return std::nullopt;
    return rate_between(from->first, from->second, s.at, s.bytes);
  };
  if (auto longer = rate_since(peak_window())) peak_Bps_ = std::max(peak_Bps_, *longer);
  return rate_since(warmup());
}

// The network holds the senders back (at least half have data waiting in Send-Q, and no queue),
// and it is their congestion windows (cwnd / RTT about the rate), not the receiver's window: a
// receiver that reads slowly closes its window while its RTT stays low and the sender queues.
// Never for a sender that keeps its rate under loss: what holds it back is the path's bandwidth,
// the queue or a buffer, and streams added then take from the others.
bool StreamController::loss_bound(const PathSample& s, double rate) const {
  if (paced_sender_) return false;
  const bool network_bound = s.streams > 0 && 2 * s.queued_streams >= s.streams;
  const bool cwnd_bound = s.cwnd_bytes > 0 && s.rtt_ms > 0 && static_cast<double>(s.cwnd_bytes) / (s.rtt_ms / 1000) <= 2 * rate;
  return network_bound && cwnd_bound && no_queue(s);
}

// A stream per `ms_per_start_stream` of RTT (the settings), from the caller's RTT at construction
// or else from the streams' first one.
std::optional<StreamStep> StreamController::size_start(double rtt_ms, Clock::time_point at) {
  sized_for_rtt_ = true;
  const double per = paced_sender_ ? settings_.ms_per_start_stream_paced : settings_.ms_per_start_stream;
  const double wanted = per > 0 ? std::min<double>(settings_.ceiling, std::round(rtt_ms / per)) : 0;
  const auto to = static_cast<std::uint16_t>(std::max<double>(target_, wanted));
  if (to <= target_) return std::nullopt;
  StreamStep step;
  step.at_s = std::chrono::duration<double>(at - start_).count();
  step.move = StreamMove::grow;
  step.from = target_;
  step.to = to;
  char why[160];
  if (paced_sender_)
    std::snprintf(why, sizeof why, "RTT %.0f ms: a long path, where each stream ramps up slowly; a %s sender keeps its rate "
                  "under loss, so a stream per %.0f ms", rtt_ms, settings_.sender_congestion.c_str(), per);
  else
    std::snprintf(why, sizeof why, "RTT %.0f ms: a long path, where each stream ramps up slowly and keeps less under loss", rtt_ms);
  step.reason = why;
  long_path_start_ = true;
  start_phase(to, at);
  if (to == settings_.ceiling) {
    settled_ = true;
    why_ = "RTT " + std::to_string(static_cast<int>(std::lround(rtt_ms))) + " ms: a long path, started at the ceiling of " +
           std::to_string(to);
  }
  steps_.push_back(step);
  return step;
}

std::optional<StreamStep> StreamController::start_for_the_path(const PathSample& s) {
  if (sized_start_) return std::exchange(sized_start_, std::nullopt);
  if (sized_for_rtt_ || s.rtt_ms <= 0 || settled_ || ended_) return std::nullopt;
  return size_start(s.rtt_ms, s.at);
}

// New streams need a slow start (20 RTT, at least 2 s) before they carry their share: not worth it
// when the rest of the file moves sooner at the current rate (150 ms: 50 -> 64 streams 8 s into
// 1 GiB left the last blocks on streams still ramping up, a tail of 4 s against 2 for -p 64).
bool StreamController::worth_growing(const PathSample& s, std::optional<double> rate) const {
  if (s.left == 0 || !rate || *rate <= 0) return true;
  const auto ramp = std::max<Clock::duration>(std::chrono::seconds(2), millis(20 * rtt_ms_));
  return static_cast<double>(s.left) / *rate >= std::chrono::duration<double>(ramp).count();
}

// Room the streams cannot take (the header says when): three or four times as many, now. From then
// on only room grows them: a phase measured while streams fall from an overshoot would shed them.
// Or the streams of a loss-sized step outgrew the peak it was sized for: sized again.
std::optional<StreamStep> StreamController::grow_into_room(const PathSample& s, std::optional<double> rate) {
  if (!rate || ended_ || target_ >= settings_.ceiling || !warmed_up(s) || !worth_growing(s, rate)) return std::nullopt;
  const bool room = *rate < settings_.room_share * peak_Bps_;
  const bool outgrown = sized_from_Bps_ > 0 && *rate >= settings_.outgrown * sized_from_Bps_;
  // No queue for a while: on a full link shared with another transfer the queue drains now and
  // then (a 200 Mbit/s link, two untuned gets: one grew on such a moment and took 0.65 of it).
  const bool queue_gone = no_queue_since_ && s.at - *no_queue_since_ >= warmup();
  if (!(room || outgrown) || !queue_gone || !loss_bound(s, *rate)) return std::nullopt;
  // Sized from the loss outside bursts when it is known: worth waiting up to two warm-ups more for,
  // since a step sized too small costs the new streams another slow start.
  const auto fill = streams_to_fill();
  if (!fill && mss_ > 0 && s.at - *no_queue_since_ < 3 * warmup()) return std::nullopt;
  // Three times as many, four when they fell that far below the peak (4 streams holding 196 of
  // 977 Mbit/s: 16): each step costs the new streams another overshoot (~2 s at 50 ms), and the
  // rate it triggers at still overstates what the streams keep (4 streams: ~0.85 of the peak
  // then, ~0.15 once their fall ended). Doubling reached 32 streams 6 s into 1 GiB at 50 ms.
  // More when the loss outside bursts says how many carry the peak (the header: 4 -> 52 at 50 ms).
  // Outgrown, only the loss sizes it, and only a step worth another slow start (a quarter more).
  const unsigned factor = room ? (peak_Bps_ >= 4 * *rate ? 4 : 3) : 1;
  if (!room && (!fill || 4 * *fill < 5u * target_)) return std::nullopt;
  StreamStep step;
  step.at_s = std::chrono::duration<double>(s.at - start_).count();
  step.move = StreamMove::grow;
  step.from = target_;
  step.to = static_cast<std::uint16_t>(std::min<unsigned>(settings_.ceiling, std::max(factor * target_, fill.value_or(0))));
  step.rate_Bps = *rate;
  step.best_Bps = peak_Bps_;
  step.reason = room_reason(s, *rate, room, fill);
  settled_ = true;
  if (fill) sized_from_Bps_ = peak_Bps_;
  start_phase(step.to, s.at);
  steps_.push_back(step);
  return step;
}

// Why a room step, and the summary's why_ (set here): what the path carried against what the streams hold.
std::string StreamController::room_reason(const PathSample& s, double rate, bool room, std::optional<unsigned> fill) {
  char rtts[64];
  std::snprintf(rtts, sizeof rtts, "RTT %.0f ms, lowest %.0f", s.rtt_ms, base_rtt_ms_);
  const std::string count = std::to_string(target_);
  std::string reason;
  if (room) {
    reason = "the path carried " + mbit(peak_Bps_) + " Mbit/s, " + count + " streams hold " + mbit(rate) +
             " with no queue (" + rtts + "): loss holds each back, the path has room";
    why_ = "the path carried " + mbit(peak_Bps_) + " Mbit/s, " + count + " streams held " + mbit(rate) + " with no queue";
  } else {
    reason = count + " streams carry " + mbit(rate) + " Mbit/s, more than the " + mbit(sized_from_Bps_) +
             " they were sized for, with no queue (" + rtts + "): loss held that peak, the path has room";
    why_ = count + " streams outgrew the " + mbit(sized_from_Bps_) + " Mbit/s they were sized for with no queue, " +
           "the path carried " + mbit(peak_Bps_);
  }
  if (fill && *fill > (room ? 3u : 1u) * target_) {
    char filled[96];
    std::snprintf(filled, sizeof filled, "; loss %.4f %% outside bursts keeps a stream at %.0f Mbit/s: %u carry the peak",
                  *calm_loss() * 100, peak_Bps_ / *fill * 8 / 1e6, *fill);
    reason += filled;
  }
  return reason;
}

// A measurement whose second half ran slower than `steady` of its first was taken while the
// streams still fell from slow start's overshoot: it goes on from its middle, at most three times.
bool StreamController::steady_or_restart(const PathSample& s) {
  if (!measure_mid_ || restarts_ >= 3) return true;
  const auto [mid_at, mid_bytes] = *measure_mid_;
  const double first = rate_between(*measure_start_, measure_bytes_, mid_at, mid_bytes);
  const double second = rate_between(mid_at, mid_bytes, s.at, s.bytes);
  if (second >= settings_.steady * first) return true;
  ++restarts_;
  measure_start_ = mid_at;
  measure_bytes_ = mid_bytes;
  measure_mid_.reset();
  return false;
}

// Only while the queue has been gone for a warm-up, once a first loss ended slow start: the
// overshoot's queue overflow and its recovery (a few RTTs) stay out.
// A difference counts only between two calm samples: the counters can move in a jump that spans
// what came before (a get's figures come from the server once a second, and before its first ones
// they are the receiver's own, without retransmits: at 20 ms, 0.1 %, the first second's overshoot
// then read as 3 % outside bursts).
void StreamController::count_calm_loss(const PathSample& s) {
  const bool calm = retransmits_ > 0 && no_queue_since_ && s.at - *no_queue_since_ >= warmup();
  if (!calm || s.segments == 0) {
    last_counts_.reset();
    return;
  }
  if (last_counts_ && s.segments >= last_counts_->first && s.retransmits >= last_counts_->second) {
    calm_segments_ += s.segments - last_counts_->first;
    calm_retransmits_ += s.retransmits - last_counts_->second;
  }
  last_counts_.emplace(s.segments, s.retransmits);
}

std::optional<double> StreamController::calm_loss() const {
  if (calm_retransmits_ < std::max<std::uint64_t>(1, settings_.min_calm_losses) || calm_segments_ == 0) return std::nullopt;
  return static_cast<double>(calm_retransmits_) / static_cast<double>(calm_segments_);
}

// ceil(fill_margin x peak / (MSS / RTT x 1.22 / sqrt(p))): the streams that carry the peak at
// reno's loss-limited rate (Mathis et al. 1997), from the lowest RTT (the path without a queue).
std::optional<unsigned> StreamController::streams_to_fill() const {
  const auto p = calm_loss();
  if (!p || mss_ == 0 || base_rtt_ms_ <= 0 || peak_Bps_ <= 0) return std::nullopt;
  const double per_stream = mss_ * 1.22 / (base_rtt_ms_ / 1000 * std::sqrt(*p));
  return static_cast<unsigned>(std::min(65535.0, std::ceil(settings_.fill_margin * peak_Bps_ / per_stream)));
}

std::optional<double> StreamController::loss() const {
  if (auto calm = calm_loss()) return calm;
  if (segments_ == 0) return std::nullopt;
  return static_cast<double>(retransmits_) / static_cast<double>(segments_);
}

std::optional<StreamStep> StreamController::observe(const PathSample& s) {
  if (s.rtt_ms > 0) {
    rtt_ms_ = s.rtt_ms;
    base_rtt_ms_ = base_rtt_ms_ > 0 ? std::min(base_rtt_ms_, s.rtt_ms) : s.rtt_ms;
    if (!no_queue(s)) no_queue_since_.reset();
    else if (!no_queue_since_) no_queue_since_ = s.at;
  }
  segments_ = std::max(segments_, s.segments);
  retransmits_ = std::max(retransmits_, s.retransmits);
  if (s.mss > 0) mss_ = s.mss;
  count_calm_loss(s);
  if (s.tail) {
    ended_ = true;
    settled_ = true;
    if (why_.empty()) why_ = "the transfer ended before a measurement";
  }
  const auto recent = recent_rate(s);
  if (auto step = start_for_the_path(s)) return step;
  // A phase counts from the moment all its streams move: connecting takes round trips of its own.
  if (s.streams < target_) {
    phase_start_ = s.at;
    phase_retransmits_.reset();
    measure_start_.reset();
    measure_mid_.reset();
    return std::nullopt;
  }
  if (auto step = grow_into_room(s, recent)) return step;
  if (settled_) return std::nullopt;
  if (!measure_start_) {
    if (!warmed_up(s)) return std::nullopt;
    measure_start_ = s.at;
    measure_bytes_ = s.bytes;
    measured_samples_ = loss_bound_samples_ = queued_samples_ = 0;
    return std::nullopt;
  }
  ++measured_samples_;
  if (recent && loss_bound(s, *recent)) ++loss_bound_samples_;
  if (s.rtt_ms > 0 && s.rtt_ms >= base_rtt_ms_ * settings_.full_rtt + 1) ++queued_samples_;
  const auto measured = s.at - *measure_start_;
  if (!measure_mid_ && measured >= phase() / 2) measure_mid_.emplace(s.at, s.bytes);
  if (measured < phase() || s.bytes < measure_bytes_ + settings_.min_phase_bytes) return std::nullopt;
  if (!steady_or_restart(s)) return std::nullopt;
  const double rate = rate_between(*measure_start_, measure_bytes_, s.at, s.bytes);
  StreamStep step = finish_phase(rate, std::chrono::duration<double>(s.at - start_).count());
  if (step.move == StreamMove::grow && !worth_growing(s, rate)) {
    step.move = StreamMove::settle;
    step.to = target_;
    step.reason += "; kept at " + std::to_string(target_) + ": the rest moves before new streams would ramp up";
    why_ = "kept " + std::to_string(target_) + " for the rest of the file: " + mbit(rate) + " Mbit/s";
  }
  if (step.move == StreamMove::grow || step.move == StreamMove::shed) start_phase(step.to, s.at);
  if (step.move == StreamMove::grow) grew_while_loss_bound_ = recent && loss_bound(s, *recent);
  if (step.move != StreamMove::grow) settled_ = true;
  steps_.push_back(step);
  return step;
}

// A step that adds streams; `by` at least one, at most to the ceiling.
void StreamController::grow_step(StreamStep& step, unsigned by, std::string reason) {
  const std::uint16_t n = target_;
  step.move = StreamMove::grow;
  step.to = static_cast<std::uint16_t>(std::min<unsigned>(settings_.ceiling, n + std::max<unsigned>(1, by)));
  step.reason = std::move(reason);
  why_ = "still growing at " + std::to_string(n) + ": " +
         (step.best_Bps > 0 ? rate_change(step.best_Bps, step.rate_Bps) : mbit(step.rate_Bps) + " Mbit/s");
}

// The first measurement: a long path's start whose streams fill it with a standing queue is kept,
// else it grows (full_rtt in the header).
void StreamController::first_measurement(StreamStep& step, double rate) {
  const std::uint16_t n = target_;
  best_count_ = n;
  best_rate_ = rate;
  if (long_path_start_ && 2 * queued_samples_ > measured_samples_) {
    char rtts[64];
    std::snprintf(rtts, sizeof rtts, "RTT %.0f ms, lowest %.0f", rtt_ms_, base_rtt_ms_);
    step.move = StreamMove::settle;
    step.to = n;
    step.reason = "first measurement with " + std::to_string(n) + " streams: " + mbit(rate) +
                  " Mbit/s with a standing queue (" + rtts + "): they fill the path";
    why_ = std::to_string(n) + " streams fill the path: " + mbit(rate) + " Mbit/s with a standing queue";
    return;
  }
  grow_step(step, n, "first measurement with " + std::to_string(n) + " streams: " + mbit(rate) + " Mbit/s");
}

StreamStep StreamController::finish_phase(double rate, double at_s) {
  StreamStep step;
  step.at_s = at_s;
  step.from = target_;
  step.rate_Bps = rate;
  step.best_Bps = best_rate_;
  last_rate_ = rate;
  const std::uint16_t n = target_;
  if (!best_count_) {
    first_measurement(step, rate);
  } else {
    const double change = best_rate_ > 0 ? rate / best_rate_ - 1 : (rate > 0 ? 1.0 : 0.0);
    char up[48];
    std::snprintf(up, sizeof up, "%+.1f %%", change * 100);
    const double added = static_cast<double>(n) / *best_count_ - 1;
    const double needed = std::max(settings_.gain, settings_.fair_share * added);
    // The fair share protects flows on a full bottleneck, and a full bottleneck queues: streams
    // that loss held back with no queue for most of the phase took from no one, so the plain gain
    // decides for them (2 ms, 0.1 %: 4 -> 8 gave +15 % and the 8 were kept, `-p 32` moved 21 %
    // more; 20 ms, 0.01 %: 7 -> 14 gave +26 %, 14 kept, `-p 16` moved 15 % more).
    const bool loss_held = 2 * loss_bound_samples_ > measured_samples_;
    if (change >= needed || (loss_held && change >= settings_.gain)) {
      best_count_ = n;
      best_rate_ = rate;
      std::string reason = "aggregate " + rate_change(step.best_Bps, rate) + " (" + up + ")";
      if (change < needed) reason += ", loss holding each back with no queue: they took from no one";
      grow_step(step, change >= 0.5 ? n : n / 2u, std::move(reason));
    } else if (settings_.can_shed && !grew_while_loss_bound_ && 2 * loss_bound_samples_ < measured_samples_) {
      step.move = StreamMove::shed;
      step.to = *best_count_;
      char more[48];
      std::snprintf(more, sizeof more, " for %+.0f %% streams", added * 100);
      step.reason = "the added streams gave less than a path with room gives (it is full, or they took from flows "
                    "sharing it): " + rate_change(step.best_Bps, rate) + " (" + up + more + ")";
      why_ = "aggregate stopped growing at " + std::to_string(*best_count_) + ": " + rate_change(step.best_Bps, rate) +
             " with " + std::to_string(n);
    } else {
      step.move = StreamMove::settle;
      step.to = n;
      step.reason = "aggregate stopped growing: " + rate_change(step.best_Bps, rate) + " (" + up + ")";
      // Kept, not shed: loss held the fewer streams back with no queue when they were added, or
      // held these: they took from no one. A put at 50 ms, 0.01 %: 8 -> 16 measured -15 % (the 8
      // were measured in their overshoot, the 16 in theirs), and the shed back to 8 held 200 Mbit/s.
      why_ = "aggregate stopped growing at " + std::to_string(n) + ": " + rate_change(step.best_Bps, rate);
      if (settings_.can_shed) {
        step.reason += ", but loss holds each back with no queue: they took from no one (kept; room grows them)";
        why_ = std::to_string(n) + " streams kept: " + rate_change(step.best_Bps, rate) + " (" + up +
               ") with no queue, loss holding each back";
      }
    }
  }
  if (step.move == StreamMove::grow && step.to == n) {  // at the ceiling already
    step.move = StreamMove::settle;
    step.reason = "at the ceiling of " + std::to_string(settings_.ceiling) + " streams";
    why_ = "at the ceiling of " + std::to_string(n) + ": " + mbit(rate) + " Mbit/s";
  }
  return step;
}

std::string StreamController::evidence() const {
  std::string text = "auto " + std::to_string(target_) + " (";
  char part[64];
  if (rtt_ms_ > 0) {
    std::snprintf(part, sizeof part, "RTT %.0f ms, ", rtt_ms_);
    text += part;
  }
  if (paced_sender_) text += settings_.sender_congestion + " sender, ";
  // Before enough losses were counted outside bursts, the loss over all segments overstates the
  // path's (1.3 % read on a 0.01 % path at 20 ms): said so.
  if (auto l = loss()) {
    std::snprintf(part, sizeof part, calm_loss() ? "loss %.3f %%, " : "loss %.3f %% with slow start's bursts, ", *l * 100);
    text += part;
  }
  text += why_.empty() ? "the transfer ended before a measurement" : why_;
  return text + ")";
}

std::string format_step(const StreamStep& step) {
  std::string text = "streams: " + std::to_string(step.from);
  if (step.to != step.from) text += " -> " + std::to_string(step.to);
  text += step.to == 1 && step.from == 1 ? " stream" : " streams";
  if (step.move == StreamMove::settle) text += ", settled";
  return text + " (" + step.reason + ")";
}

}  // namespace pxfer
