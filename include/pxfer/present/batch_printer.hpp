#pragma once
// What `pxfer put/get -r` and `--from-file` print as text: a line per file as it finishes, the
// --auto decisions, then the aggregate report; on a terminal a bar (files done/total, bytes,
// rate, time left) stays under the lines, redrawn in place. The --json form is JsonPrinter's.
#include "pxfer/present/layer.hpp"
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "pxfer/core/progress_bar.hpp"
#include "pxfer/engine/progress_listener.hpp"

namespace pxfer {

class BatchPrinter final : public ProgressListener {
 public:
  // Lines go to `out`, failed files to `err`; `bar`: draw the bar (`width` columns) over
  // `total_bytes` (0 = unknown).
  BatchPrinter(std::FILE* out, std::FILE* err, bool quiet, bool bar = false, unsigned width = 80,
               std::uint64_t total_bytes = 0);
  void on_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned) override;
  void on_decision(const AutoDecision& decision) override;
  void on_batch_interval(const BatchInterval& interval) override;
  // Wipes the bar (before the final report or an error).
  void clear_bar();

 private:
  void redraw();
  std::FILE* out_;
  std::FILE* err_;
  bool quiet_;
  bool bar_;
  unsigned width_;
  BarState state_;
  std::size_t drawn_ = 0;
};

// "done PATH BYTES bytes SECONDS s RATE MB/s adler32: X", "skipped PATH (exists, same size and checksum)",
// "FAILED PATH: reason".
std::string format_outcome(const FileOutcome& outcome);
// The gridftp-style rate line over the whole run, then "N files: A done, S skipped, F failed"
// and one line per failed file.
std::string format_batch_report(const BatchReport& report);
// After Ctrl-C: "interrupted by SIGINT; N of M files did not finish: NAMES ..." (one line).
std::string format_unfinished(const BatchReport& report);

}  // namespace pxfer
