#pragma once
// --auto: how many files a batch keeps in flight, and how many streams each file gets, decided
// every interval from the aggregate throughput, in the spirit of FTS3's per-link optimizer.
// Pure: no clock reads, no I/O; the caller passes the time and the counters, so tests replay
// recorded traces.
//
// Rules, once per decision interval:
//   rate      = bytes moved in the interval / its length
//   smoothed  = EWMA of rate (weight `smoothing` on the newest interval)
//   change    = smoothed / previous smoothed - 1
//   a failure in the interval      -> back off by halving the files in flight
//   change < -tolerance            -> back off by one file
//   otherwise (holds or rises)     -> one more file in flight; at the maximum, with a stream
//                                     budget (--max-streams) and change > +tolerance, one more
//                                     stream per file
//   the first interval only sets the baseline (nothing to compare with).
// Backing off undoes added streams first (they are only added at the maximum), then files.
// Files in flight never leave [min, max]; files x streams never exceed the stream budget.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "pxfer/core/rate_meter.hpp"

namespace pxfer {

struct AutoLimits {
  unsigned min_concurrency = 1;
  unsigned max_concurrency = 8;
  std::uint16_t streams = 4;   // -p: streams per file to begin with
  unsigned max_streams = 0;    // budget for files x streams; 0 = none (then streams stay at -p)
};

struct AutoSettings {
  double tolerance = 0.05;  // a fall of more than this fraction of the smoothed rate is a fall
  double smoothing = 0.5;   // EWMA weight of the newest interval, (0, 1]
};

// What a server may one day announce (HELLO_OK does not carry it yet): hard caps that narrow the
// user's limits. Empty = no opinion.
struct ServerLimits {
  std::optional<unsigned> max_concurrency;
  std::optional<unsigned> max_streams;
};

enum class AutoAction { baseline, hold, more_files, fewer_files, more_streams, fewer_streams };
std::string_view auto_action_name(AutoAction action);

struct AutoDecision {
  double at_s = 0;                  // seconds since the controller started
  AutoAction action = AutoAction::hold;
  unsigned from = 0, to = 0;        // files in flight before and after
  std::uint16_t streams_from = 0, streams_to = 0;  // streams per file before and after
  double rate_Bps = 0;              // this interval
  double smoothed_Bps = 0;          // the moving average the rules compare
  std::optional<double> change;     // fraction against the previous average; none at the baseline
  unsigned succeeded = 0, failed = 0;  // in this interval
  std::string reason;               // why, in words: "at the maximum", "2 failures", ...
};

// "auto: 3 -> 4 files in flight (rate 412.3 MB/s avg, up 6.1%, 0 failures)".
std::string format_decision(const AutoDecision& d);

class AutoController {
 public:
  AutoController(const AutoLimits& limits, Clock::time_point start, const AutoSettings& settings = {});

  // Narrows the limits (the hook for a server that announces its own); clamps the current shape.
  void apply_server_limits(const ServerLimits& server);

  unsigned concurrency() const { return concurrency_; }
  std::uint16_t streams() const;  // per file, for the next file that starts
  unsigned min_concurrency() const { return min_; }
  unsigned max_concurrency() const { return max_; }

  // One decision: `total_bytes` moved since the start (a running counter), `succeeded` and
  // `failed` files (or attempts) that ended since the previous call.
  AutoDecision decide(Clock::time_point now, std::uint64_t total_bytes, unsigned succeeded, unsigned failed);

 private:
  std::uint16_t streams_for(unsigned concurrency, unsigned preferred) const;
  AutoLimits limits_;
  AutoSettings settings_;
  Clock::time_point start_, last_time_;
  std::uint64_t last_bytes_ = 0;
  unsigned min_, max_;
  unsigned max_streams_;          // the budget after server limits; 0 = none
  std::string server_note_;       // what the server's limits changed, told with the baseline
  unsigned concurrency_;
  unsigned preferred_streams_;    // per file, before the budget
  std::optional<double> smoothed_;
};

}  // namespace pxfer
