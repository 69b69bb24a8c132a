// The --auto controller: pure arithmetic on the counters the batch runner passes in.
#include "pxfer/core/auto_controller.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/core/stream_count.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pxfer {
namespace {

constexpr unsigned max_streams_per_file = limits::max_streams;

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", std::fabs(fraction) * 100);
  return text;
}

}  // namespace

std::string_view auto_action_name(AutoAction action) {
  switch (action) {
    case AutoAction::baseline: return "baseline";
    case AutoAction::hold: return "hold";
    case AutoAction::more_files: return "more_files";
    case AutoAction::fewer_files: return "fewer_files";
    case AutoAction::more_streams: return "more_streams";
    case AutoAction::fewer_streams: return "fewer_streams";
  }
  return "hold";
}

AutoController::AutoController(const AutoLimits& limits, Clock::time_point start, const AutoSettings& settings)
    : limits_(limits), settings_(settings), start_(start), last_time_(start) {
  limits_.streams = static_cast<std::uint16_t>(std::clamp<unsigned>(limits_.streams, 1, max_streams_per_file));
  settings_.smoothing = std::clamp(settings_.smoothing, 0.01, 1.0);
  settings_.tolerance = std::clamp(settings_.tolerance, 0.0, 1.0);
  min_ = std::max(1u, limits_.min_concurrency);
  max_ = std::max(min_, limits_.max_concurrency);
  max_streams_ = limits_.max_streams;
  if (max_streams_ > 0) {  // every file needs one stream
    max_ = std::min(max_, max_streams_);
    min_ = std::min(min_, max_);
  }
  concurrency_ = (min_ + max_) / 2;  // halfway, rounded down
  concurrency_ = std::clamp(concurrency_, min_, max_);
  preferred_streams_ = limits_.streams;
}

void AutoController::apply_server_limits(const ServerLimits& server) {
  const unsigned max_before = max_;
  if (server.max_streams && *server.max_streams > 0)
    max_streams_ = max_streams_ == 0 ? *server.max_streams : std::min(max_streams_, *server.max_streams);
  if (server.max_concurrency && *server.max_concurrency > 0) max_ = std::min(max_, *server.max_concurrency);
  if (max_streams_ > 0) max_ = std::min(max_, max_streams_);
  max_ = std::max(1u, max_);
  min_ = std::min(min_, max_);  // the server's cap wins over the user's minimum
  concurrency_ = std::clamp(concurrency_, min_, max_);
  if (max_ < max_before) server_note_ = "; the server's limits cap files in flight at " + std::to_string(max_);
}

std::uint16_t AutoController::streams_for(unsigned concurrency, unsigned preferred) const {
  const auto asked = static_cast<std::uint16_t>(std::clamp(preferred, 1u, max_streams_per_file));
  StreamInputs count = asking(StreamRequest{false, asked});
  count.budget = max_streams_;
  count.files_in_flight = concurrency;
  return stream_count(count).slots;
}

std::uint16_t AutoController::streams() const { return streams_for(concurrency_, preferred_streams_); }

AutoDecision AutoController::decide(Clock::time_point now, std::uint64_t total_bytes, unsigned succeeded, unsigned failed) {
  AutoDecision d;
  d.at_s = std::chrono::duration<double>(now - start_).count();
  d.from = concurrency_;
  d.streams_from = streams();
  d.succeeded = succeeded;
  d.failed = failed;

  const double seconds = std::chrono::duration<double>(now - last_time_).count();
  const std::uint64_t moved = total_bytes >= last_bytes_ ? total_bytes - last_bytes_ : 0;
  d.rate_Bps = seconds > 0 ? static_cast<double>(moved) / seconds : 0;
  last_time_ = now;
  last_bytes_ = std::max(last_bytes_, total_bytes);

  const std::optional<double> previous = smoothed_;
  const double alpha = settings_.smoothing;
  smoothed_ = previous ? alpha * d.rate_Bps + (1 - alpha) * *previous : d.rate_Bps;
  d.smoothed_Bps = *smoothed_;
  if (previous) d.change = *previous > 0 ? *smoothed_ / *previous - 1 : (*smoothed_ > 0 ? 1.0 : 0.0);

  const unsigned added_streams = preferred_streams_ > limits_.streams ? preferred_streams_ - limits_.streams : 0;
  if (failed > 0) {
    // Failures say the link or the server is overloaded: drop what streams were added and halve.
    preferred_streams_ = std::min<unsigned>(preferred_streams_, limits_.streams);
    concurrency_ = std::max(min_, concurrency_ / 2);
    d.action = concurrency_ < d.from ? AutoAction::fewer_files
               : added_streams > 0   ? AutoAction::fewer_streams
                                     : AutoAction::hold;
    d.reason = d.action == AutoAction::hold ? "failures, already at the minimum" : "backing off after failures";
  } else if (!d.change) {
    d.action = AutoAction::baseline;
    d.reason = "first interval, baseline" + server_note_;
  } else if (*d.change < -settings_.tolerance) {
    // A fall without failures may be noise or a slow file: step back by one, streams first.
    if (added_streams > 0) {
      --preferred_streams_;
      d.action = AutoAction::fewer_streams;
      d.reason = "rate fell more than " + percent(settings_.tolerance);
    } else if (concurrency_ > min_) {
      --concurrency_;
      d.action = AutoAction::fewer_files;
      d.reason = "rate fell more than " + percent(settings_.tolerance);
    } else {
      d.action = AutoAction::hold;
      d.reason = "rate fell, already at the minimum";
    }
  } else if (concurrency_ < max_) {
    ++concurrency_;
    d.action = AutoAction::more_files;
    d.reason = *d.change > settings_.tolerance ? "rate rose" : "rate held";
  } else if (max_streams_ > 0 && *d.change > settings_.tolerance && preferred_streams_ < max_streams_per_file &&
             streams_for(concurrency_, preferred_streams_ + 1) > streams()) {
    ++preferred_streams_;
    d.action = AutoAction::more_streams;
    d.reason = "at the maximum of files, rate still rising";
  } else {
    d.action = AutoAction::hold;
    d.reason = "at the maximum";
  }
  // Streams per file follow the budget as files come and go; keep the budget from being crossed.
  d.to = concurrency_;
  d.streams_to = streams();
  return d;
}

std::string format_decision(const AutoDecision& d) {
  std::string text = "auto: ";
  if (d.to != d.from) text += std::to_string(d.from) + " -> " + std::to_string(d.to) + " files in flight";
  else text += std::to_string(d.to) + (d.to == 1 ? " file in flight" : " files in flight");
  if (d.streams_to != d.streams_from)
    text += ", " + std::to_string(d.streams_from) + " -> " + std::to_string(d.streams_to) + " streams per file";
  if (d.to == d.from && d.streams_to == d.streams_from) text += ", unchanged";
  char rate[64];
  std::snprintf(rate, sizeof rate, " (rate %.1f MB/s avg, ", to_megabytes_per_s(d.smoothed_Bps));
  text += rate;
  if (!d.change) text += "baseline";
  else text += (*d.change >= 0 ? "up " : "down ") + percent(*d.change);
  text += ", " + std::to_string(d.failed) + (d.failed == 1 ? " failure" : " failures");
  text += "; " + d.reason + ")";
  return text;
}

}  // namespace pxfer
