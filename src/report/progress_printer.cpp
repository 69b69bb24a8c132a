#include "pxfer/progress_printer.hpp"

#include <cstdio>

#include "pxfer/units.hpp"

namespace pxfer {

std::string format_summary(const TransferSummary& s) {
  double rate = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0;
  char head[160];
  std::snprintf(head, sizeof head, "%llu bytes in %.2f s, %.1f MB/s, %.2f Gbit/s, %u streams, block %s",
                static_cast<unsigned long long>(s.bytes), s.seconds, to_megabytes_per_s(rate),
                to_gigabits_per_s(rate), static_cast<unsigned>(s.streams), format_size(s.block_size).c_str());
  return std::string(head) + ", buffers local " + describe(s.local_buffers) + ", remote " + describe(s.remote_buffers);
}

void ProgressPrinter::on_start(const TransferSummary& summary) {
  if (quiet_) return;
  std::fprintf(out_, "Source: %s\nDest:   %s\n", summary.source.c_str(), summary.destination.c_str());
  std::fflush(out_);
}

void ProgressPrinter::on_interval(const RateSample& sample) {
  if (quiet_) return;
  std::string line = format_rate_line(sample);
  if (terminal_) {
    std::fprintf(out_, "\r%s", line.c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressPrinter::on_finish(const RateSample& sample, const TransferSummary& summary) {
  if (quiet_) return;
  on_interval(sample);
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
  std::fprintf(out_, "%s\n%s\n", format_summary(summary).c_str(),
               format_checksum(summary.checksum, summary.checksum_value).c_str());
  std::fflush(out_);
}

void ProgressPrinter::on_warning(const std::string& text) {
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
  std::fprintf(stderr, "pxfer: warning: %s\n", text.c_str());
}

}  // namespace pxfer
