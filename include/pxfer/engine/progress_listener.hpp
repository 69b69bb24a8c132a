#pragma once
// The one observer of a run, single file or many (issue 10.5): the library calls it, the printers
// (report/: text lines, progress bars, --json, the --report recorder) implement it, and one tee
// passes it on to two. A single transfer calls the first group; a many-file run (-r, --from-file)
// calls the second group for the run and, through each file's transfer, nothing of the first.
// Calls come from one thread at a time (a batch makes them under one lock).
#include "pxfer/engine/layer.hpp"
#include <cstddef>
#include <cstdint>
#include <string>

#include "pxfer/core/auto_controller.hpp"
#include "pxfer/engine/batch_events.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/engine/transfer_events.hpp"

namespace pxfer {

class ProgressListener {
 public:
  virtual ~ProgressListener() = default;

  // One transfer.
  virtual void on_start(const TransferSummary&) {}
  virtual void on_interval(const IntervalReport&) {}
  virtual void on_finish(const IntervalReport&, const TransferSummary&) {}
  virtual void on_warning(const std::string&) {}
  // The server holds the transfer in line (pxferd --max-active) before it starts.
  virtual void on_queued(unsigned /*position*/, unsigned /*active*/, unsigned /*queued*/) {}
  // A data stream broke or stalled; its blocks went to the other streams and it reconnects.
  virtual void on_stream_event(const std::string&) {}
  // -p auto added or retired streams, or settled: "streams: 4 -> 8 streams (aggregate ...)".
  virtual void on_streams_changed(const std::string&) {}
  // The attempt failed with `reason`; attempt `next` of `total` starts in `delay_seconds`.
  virtual void on_retry(unsigned /*next*/, unsigned /*total*/, double /*delay_seconds*/, const std::string& /*reason*/) {}

  // A many-file run.
  // A file's first attempt begins: `number` counts starts from 1.
  virtual void on_file_start(const BatchFile& /*file*/, std::size_t /*number*/, std::size_t /*planned*/,
                             std::uint16_t /*streams*/, double /*started_s*/) {}
  // A file ended: done, skipped or failed.
  virtual void on_file(const FileOutcome& /*outcome*/, std::size_t /*finished*/, std::size_t /*planned*/) {}
  // The whole run's progress, every BatchOptions::interval.
  virtual void on_batch_interval(const BatchInterval& /*interval*/) {}
  // One --auto decision.
  virtual void on_decision(const AutoDecision& /*decision*/) {}
};

}  // namespace pxfer
