#include "pxfer/present/batch_printer.hpp"

#include <algorithm>

#include "pxfer/core/checksum.hpp"
#include "pxfer/common/interruption.hpp"
#include "pxfer/common/log_safe.hpp"
#include "pxfer/core/rate_meter.hpp"

namespace pxfer {

BatchPrinter::BatchPrinter(std::FILE* out, std::FILE* err, bool quiet, bool bar, unsigned width,
                           std::uint64_t total_bytes)
    : out_(out), err_(err), quiet_(quiet), bar_(bar && !quiet), width_(width) {
  state_.total = total_bytes;
}

void BatchPrinter::on_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned) {
  const std::string line = format_outcome(outcome) + " [" + std::to_string(finished) + "/" + std::to_string(planned) + "]";
  clear_bar();
  if (outcome.status == FileStatus::failed) std::fprintf(err_, "pxfer: %s\n", line.c_str());
  else if (!quiet_) std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  state_.files_done = finished;
  state_.files_total = planned;
  redraw();
}

void BatchPrinter::on_decision(const AutoDecision& decision) {
  if (quiet_) return;
  clear_bar();
  std::fprintf(out_, "%s\n", format_decision(decision).c_str());
  redraw();
}

void BatchPrinter::on_batch_interval(const BatchInterval& interval) {
  if (!bar_) return;
  state_.bytes = interval.total.bytes;
  state_.rate_Bps = interval.total.avg_bytes_per_s;
  state_.files_done = interval.finished;
  state_.files_total = interval.planned;
  redraw();
}

void BatchPrinter::clear_bar() {
  if (!drawn_) return;
  std::fprintf(out_, "\r%s\r", std::string(drawn_, ' ').c_str());
  std::fflush(out_);
  drawn_ = 0;
}

void BatchPrinter::redraw() {
  if (!bar_ || state_.files_total == 0) return;
  const std::string line = format_progress_bar(state_, width_);
  std::fprintf(out_, "\r%s%s", line.c_str(), std::string(drawn_ > line.size() ? drawn_ - line.size() : 0, ' ').c_str());
  drawn_ = std::max(drawn_, line.size());
  std::fflush(out_);
}

std::string format_outcome(const FileOutcome& outcome) {
  // A name from a server's listing and an error quoting server text reach the terminal: escaped.
  const std::string path = log_safe(source_name(outcome.file));
  if (outcome.status == FileStatus::skipped) return "skipped " + path + " (exists, same size and checksum)";
  if (outcome.status == FileStatus::failed) {
    std::string line = "FAILED " + path + ": " + (outcome.error ? log_safe(outcome.error->what()) : "?");
    if (outcome.attempts > 1) line += " (after " + std::to_string(outcome.attempts) + " attempts)";
    return line;
  }
  const auto& s = outcome.summary;
  const double rate = s.seconds > 0 ? to_megabytes_per_s(static_cast<double>(s.bytes) / s.seconds) : 0;
  char numbers[128];
  std::snprintf(numbers, sizeof numbers, " %llu bytes %.3f s %.1f MB/s ", static_cast<unsigned long long>(s.bytes),
                s.seconds, rate);
  char started[48];
  std::snprintf(started, sizeof started, " (started +%.2f s)", outcome.started_s);
  return "done " + path + numbers + format_checksum(s.checksum, s.checksum_value) + started;
}

std::string format_batch_report(const BatchReport& report) {
  std::size_t done = 0, skipped = 0;
  for (const auto& f : report.files) {
    done += f.status == FileStatus::done;
    skipped += f.status == FileStatus::skipped;
  }
  const double avg = report.seconds > 0 ? static_cast<double>(report.bytes) / report.seconds : 0;
  std::string text = format_rate_line(RateSample{report.bytes, report.seconds, avg, avg}) + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "%zu files: %zu done, %zu skipped, %zu failed; %llu bytes in %.2f s, %.1f MB/s\n",
                report.files.size(), done, skipped, report.failed, static_cast<unsigned long long>(report.bytes),
                report.seconds, to_megabytes_per_s(avg));
  text += line;
  for (const auto& e : report.setup_errors) text += "failed: " + log_safe(e.what()) + "\n";
  for (const auto& f : report.files)
    if (f.status == FileStatus::failed && f.error->code() != Errc::interrupted)
      text += "failed: " + log_safe(source_name(f.file)) + ": " + log_safe(f.error->what()) + "\n";
  if (!report.unfinished.empty()) text += format_unfinished(report) + "\n";
  return text;
}

std::string format_unfinished(const BatchReport& report) {
  constexpr std::size_t named = 10;  // a line, not a screenful: the rest are counted
  std::string names;
  for (std::size_t i = 0; i < report.unfinished.size() && i < named; ++i)
    names += (i ? ", " : "") + log_safe(report.unfinished[i]);
  if (report.unfinished.size() > named) names += " and " + std::to_string(report.unfinished.size() - named) + " more";
  return interruption_error(std::to_string(report.unfinished.size()) + " of " + std::to_string(report.planned) +
                            " files did not finish: " + names +
                            " (partial files are kept: run the same command again to resume)")
      .what();
}

}  // namespace pxfer
