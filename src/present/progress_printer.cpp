#include "pxfer/present/progress_printer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "pxfer/common/log_safe.hpp"
#include "pxfer/core/progress_bar.hpp"
#include "pxfer/io/socket_tuning.hpp"  // describe(BufferGrant)
#include "pxfer/common/units.hpp"

namespace pxfer {

std::string format_summary(const TransferSummary& s) {
  // A resumed transfer moved only what the receiver lacked: the head and the rate count that, and
  // the bytes that were already there are named apart (", resumed: ...").
  const std::uint64_t moved = s.bytes - std::min(s.bytes, s.resumed_bytes);
  double rate = s.seconds > 0 ? static_cast<double>(moved) / s.seconds : 0;
  char head[160];
  std::snprintf(head, sizeof head, "%llu bytes %sin %.2f s, %.1f MB/s, %.2f Gbit/s, %u streams, block %s",
                static_cast<unsigned long long>(moved), s.resumed_bytes > 0 ? "sent " : "", s.seconds, to_megabytes_per_s(rate),
                to_gigabits_per_s(rate), static_cast<unsigned>(s.streams), format_size(s.block_size).c_str());
  std::string out = std::string(head) + ", buffers local " + describe(s.local_buffers) + ", remote " + describe(s.remote_buffers);
  if (!s.congestion.empty()) out += ", congestion " + s.congestion;
  if (s.compression.mode != CompressMode::none) {
    char buf[96];
    std::snprintf(buf, sizeof buf, ", compression %s ratio %.2f, wire %llu bytes", describe(s.compression).c_str(),
                  s.wire_bytes ? static_cast<double>(s.bytes) / static_cast<double>(s.wire_bytes) : 1.0,
                  static_cast<unsigned long long>(s.wire_bytes));
    out += buf;
  }
  if (s.resumed_bytes > 0)
    out += ", resumed: " + std::to_string(s.resumed_bytes) + " bytes were already there (file " + std::to_string(s.bytes) +
           " bytes)";
  if (s.stream_recoveries > 0)
    out += ", " + std::to_string(s.stream_recoveries) + " data stream failures recovered (blocks re-sent on other streams)";
  if (s.block_copies > 0 || s.streams_let_go > 0) {
    const auto n = std::to_string(s.block_copies);
    // A get counts the copies that arrived: the first copy of such a block may never have.
    out += ", " + n + " copies of overdue blocks " + (s.direction == Direction::get ? "arrived" : "sent") + ", " +
           std::to_string(s.streams_let_go) + (s.streams_let_go == 1 ? " slow stream" : " slow streams") + " let go";
  }
  if (s.attempts > 1) out += ", attempt " + std::to_string(s.attempts);
  return out;
}

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

LimitEvidence limit_evidence(const TransferSummary& s) {
  LimitEvidence e;
  e.put = s.direction == Direction::put;
  e.seconds = s.seconds;
  e.bytes = static_cast<double>(s.bytes - std::min(s.bytes, s.resumed_bytes));
  e.streams = s.stream_totals.empty() ? s.streams : static_cast<unsigned>(s.stream_totals.size());
  if (!s.stream_totals.empty()) e.busy_streams = StreamMeter::busy_streams(s.stream_totals);
  for (const auto& t : s.stream_totals) e.retransmits += t.retransmits;
  e.cpu_s = process_cpu_seconds();
  return e;
}

std::string format_stream_line(const StreamSample& s) {
  const auto& f = s.figures;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "  stream %2u %12llu bytes %9.2f MB/s  cwnd %5u  rtt %8.2f ms  retrans %5u  send-q %10s  sndbuf %10s",
                static_cast<unsigned>(f.stream), static_cast<unsigned long long>(f.bytes),
                to_megabytes_per_s(s.inst_bytes_per_s), f.cwnd, f.rtt_us / 1000.0, f.retransmits,
                format_size(f.unsent).c_str(), format_size(f.sndbuf).c_str());
  return buf;
}

std::string format_stream_total(const StreamTotals& t) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "stream %2u: %llu bytes (%.1f%%), %.1f MB/s avg, %u retransmits, Send-Q > 0 in %u/%u intervals",
                static_cast<unsigned>(t.stream), static_cast<unsigned long long>(t.bytes), t.share * 100,
                to_megabytes_per_s(t.avg_bytes_per_s), t.retransmits, t.intervals_queued, t.intervals);
  return buf;
}

void ProgressPrinter::on_start(const TransferSummary& summary) {
  if (queued_at_) queue_wait_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - *queued_at_).count();
  if (quiet_) return;
  std::fprintf(out_, "Source: %s\nDest:   %s\n", log_safe(summary.source).c_str(), log_safe(summary.destination).c_str());
  std::fflush(out_);
  const auto slash = summary.destination.find_last_of('/');
  name_ = slash == std::string::npos ? summary.destination : summary.destination.substr(slash + 1);
  size_ = summary.bytes;
}

void ProgressPrinter::draw_bar(const RateSample& total) {
  const std::string bar = format_progress_bar({name_, total.bytes, size_, total.avg_bytes_per_s, 0, 0}, width_);
  // Spaces wipe what a longer previous bar left.
  std::fprintf(out_, "\r%s%s", bar.c_str(), std::string(drawn_ > bar.size() ? drawn_ - bar.size() : 0, ' ').c_str());
  drawn_ = bar.size();
  line_open_ = true;
}

void ProgressPrinter::close_line() {
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
  drawn_ = 0;
  std::fflush(out_);
}

void ProgressPrinter::on_interval(const IntervalReport& report) {
  for (const auto& s : report.streams) {
    if (s.figures.rtt_us == 0) continue;
    rtt_s_ += s.figures.rtt_us / 1e6;
    cwnd_ += s.figures.cwnd;
    mss_ += s.figures.mss;
    ++samples_;
  }
  if (quiet_) return;
  // The bar only when it is the sole line of the interval: --stream-stats prints lines.
  if (terminal_ && report.streams.empty()) {
    draw_bar(report.total);
  } else {
    close_line();
    std::fprintf(out_, "%s\n", format_rate_line(report.total).c_str());
    for (const auto& s : report.streams) std::fprintf(out_, "%s\n", format_stream_line(s).c_str());
  }
  std::fflush(out_);
}

void ProgressPrinter::on_finish(const IntervalReport& report, const TransferSummary& summary) {
  if (quiet_) return;
  IntervalReport last{report.total, {}};  // the streams' final figures are in the totals below
  on_interval(last);
  close_line();
  for (const auto& t : summary.stream_totals) std::fprintf(out_, "%s\n", format_stream_total(t).c_str());
  if (!summary.stream_totals.empty())
    std::fprintf(out_, "streams with data queued (Send-Q > 0) in at least half the intervals: %u of %zu\n",
                 StreamMeter::busy_streams(summary.stream_totals), summary.stream_totals.size());
  // On a terminal the ~200-character summary is broken to its width; piped, it stays one line.
  const std::string text = terminal_ ? fit_to_width(format_summary(summary), width_) : format_summary(summary);
  std::fprintf(out_, "%s\n%s\n", text.c_str(),
               format_checksum(summary.checksum, summary.checksum_value).c_str());
  if (!summary.stream_choice.empty()) std::fprintf(out_, "streams: %s\n", summary.stream_choice.c_str());
  if (!summary.send_window.empty()) std::fprintf(out_, "send buffers: %s\n", summary.send_window.c_str());
  if (!summary.protection.empty()) {
    const std::string line = "protection: " + summary.protection;
    std::fprintf(out_, "%s\n", (terminal_ ? fit_to_width(line, width_) : line).c_str());
  }
  print_limit(summary);
  std::fflush(out_);
}

// One "Likely limit: ..." line when the figures say something (transfer_limit.hpp).
void ProgressPrinter::print_limit(const TransferSummary& summary) {
  LimitEvidence e = limit_evidence(summary);
  e.queue_wait_s = queue_wait_s_;
  e.queued = queued_at_.has_value();
  if (samples_ > 0) {
    e.rtt_s = rtt_s_ / samples_;
    e.cwnd_segments = cwnd_ / samples_;
    e.mss = mss_ / samples_;
  }
  const Limit l = likely_limit(e);
  if (l.kind == LimitKind::unknown) return;
  const std::string line = l.sentence + " (" + l.evidence + ")";
  std::fprintf(out_, "%s\n", (terminal_ ? fit_to_width(line, width_) : line).c_str());
}

void ProgressPrinter::on_queued(unsigned position, unsigned active, unsigned queued) {
  if (!queued_at_) queued_at_ = std::chrono::steady_clock::now();
  if (quiet_) return;
  close_line();
  std::fprintf(out_, "queued, position %u (server: %u active, %u queued)\n", position, active, queued);
  std::fflush(out_);
}

void ProgressPrinter::on_stream_event(const std::string& text) { on_warning(text); }

void ProgressPrinter::on_streams_changed(const std::string& text) {
  if (quiet_) return;
  close_line();
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

void ProgressPrinter::on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "; retrying in %.1f s (attempt %u of %u), resuming", delay_seconds, next, total);
  on_warning("transfer failed: " + reason + buf);
}

void ProgressPrinter::on_warning(const std::string& text) {
  close_line();
  std::fprintf(stderr, "pxfer: warning: %s\n", log_safe(text).c_str());
}

}  // namespace pxfer
