#pragma once
// What `pxfer put/get` prints: globus-url-copy style "Source:/Dest:" headers, then on a terminal a
// progress bar redrawn in place (progress_bar.hpp), otherwise (or with --rate-lines) one
// gridftp rate line per interval; a summary and the checksum; with --stream-stats a line per
// stream each interval and a per-stream summary.
#include "pxfer/present/layer.hpp"
#include <chrono>
#include <cstdio>
#include <optional>

#include "pxfer/engine/progress_listener.hpp"
#include "pxfer/core/transfer_limit.hpp"

namespace pxfer {

class ProgressPrinter final : public ProgressListener {
 public:
  // `terminal`: draw the bar (`width` columns) instead of rate lines.
  ProgressPrinter(std::FILE* out, bool terminal, bool quiet, unsigned width = 80)
      : out_(out), terminal_(terminal), quiet_(quiet), width_(width) {}
  void on_start(const TransferSummary& summary) override;
  void on_interval(const IntervalReport& report) override;
  void on_finish(const IntervalReport& report, const TransferSummary& summary) override;
  void on_warning(const std::string& text) override;
  void on_stream_event(const std::string& text) override;
  void on_streams_changed(const std::string& text) override;
  void on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) override;
  void on_queued(unsigned position, unsigned active, unsigned queued) override;
  // Ends a bar left on screen, so that an error starts on a line of its own.
  void close_line();

 private:
  void draw_bar(const RateSample& total);
  void print_limit(const TransferSummary& summary);
  std::FILE* out_;
  bool terminal_;
  bool quiet_;
  unsigned width_;
  bool line_open_ = false;  // a \r-redrawn line is on screen without its newline
  std::string name_;        // of the file, for the bar
  std::uint64_t size_ = 0;  // of the file, 0 = unknown
  std::size_t drawn_ = 0;   // length of the bar on screen
  // For the "Likely limit" line: when the server first queued the transfer, how long it waited,
  // and the streams' round trips, windows and segment sizes summed over the samples.
  std::optional<std::chrono::steady_clock::time_point> queued_at_;
  double queue_wait_s_ = 0;
  double rtt_s_ = 0, cwnd_ = 0, mss_ = 0;
  unsigned samples_ = 0;
};

// The figures of a finished transfer that say what limited it (transfer_limit.hpp).
LimitEvidence limit_evidence(const TransferSummary& summary);
// This process's CPU time so far, user + system, in seconds.
double process_cpu_seconds();

// "1073741824 bytes in 0.92 s, 1167.1 MB/s, 9.34 Gbit/s, 4 streams, block 4 MiB, buffers local
// auto (snd .. / rcv ..), remote ..."
std::string format_summary(const TransferSummary& summary);
// "  stream  3     12582912 bytes    12.58 MB/s  cwnd   345  rtt   50.21 ms  retrans     2  send-q  1.2 MiB  sndbuf 4 MiB"
std::string format_stream_line(const StreamSample& sample);
// "stream  3: 536870912 bytes (25.0%), 128.3 MB/s avg, 12 retransmits, Send-Q > 0 in 5/10 intervals"
std::string format_stream_total(const StreamTotals& totals);

}  // namespace pxfer
