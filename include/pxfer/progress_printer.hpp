#pragma once
// What `pxfer put/get` prints: globus-url-copy style "Source:/Dest:" headers, rate lines redrawn
// in place on a terminal (one line per interval otherwise), a summary and the checksum; with
// --stream-stats a line per stream each interval and a per-stream summary.
#include <cstdio>

#include "pxfer/client.hpp"

namespace pxfer {

class ProgressPrinter final : public ProgressListener {
 public:
  ProgressPrinter(std::FILE* out, bool terminal, bool quiet) : out_(out), terminal_(terminal), quiet_(quiet) {}
  void on_start(const TransferSummary& summary) override;
  void on_interval(const IntervalReport& report) override;
  void on_finish(const IntervalReport& report, const TransferSummary& summary) override;
  void on_warning(const std::string& text) override;
  void on_stream_event(const std::string& text) override;
  void on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) override;
  void on_queued(unsigned position, unsigned active, unsigned queued) override;

 private:
  std::FILE* out_;
  bool terminal_;
  bool quiet_;
  bool line_open_ = false;  // a \r-redrawn line is on screen without its newline
};

// "1073741824 bytes in 0.92 s, 1167.1 MB/s, 9.34 Gbit/s, 4 streams, block 4 MiB, buffers local
// auto (snd .. / rcv ..), remote ..."
std::string format_summary(const TransferSummary& summary);
// "  stream  3     12582912 bytes    12.58 MB/s  cwnd   345  rtt   50.21 ms  retrans     2  send-q  1.2 MiB  sndbuf 4 MiB"
std::string format_stream_line(const StreamSample& sample);
// "stream  3: 536870912 bytes (25.0%), 128.3 MB/s avg, 12 retransmits, Send-Q > 0 in 5/10 intervals"
std::string format_stream_total(const StreamTotals& totals);

}  // namespace pxfer
