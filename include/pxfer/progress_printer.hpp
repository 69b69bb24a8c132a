#pragma once
// What `pxfer put/get` prints: globus-url-copy style "Source:/Dest:" headers, rate lines redrawn
// in place on a terminal (one line per interval otherwise), a summary and the checksum.
#include <cstdio>

#include "pxfer/client.hpp"

namespace pxfer {

class ProgressPrinter final : public ProgressListener {
 public:
  ProgressPrinter(std::FILE* out, bool terminal, bool quiet) : out_(out), terminal_(terminal), quiet_(quiet) {}
  void on_start(const TransferSummary& summary) override;
  void on_interval(const RateSample& sample) override;
  void on_finish(const RateSample& sample, const TransferSummary& summary) override;
  void on_warning(const std::string& text) override;

 private:
  std::FILE* out_;
  bool terminal_;
  bool quiet_;
  bool line_open_ = false;  // a \r-redrawn line is on screen without its newline
};

// "1073741824 bytes in 0.92 s, 1167.1 MB/s, 9.34 Gbit/s, 4 streams, block 4 MiB, buffers local
// auto (snd .. / rcv ..), remote ..."
std::string format_summary(const TransferSummary& summary);

}  // namespace pxfer
