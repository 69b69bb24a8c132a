#pragma once
// What a many-file run reports: each file's outcome and the aggregate progress (the listener the
// printers implement is pxfer/engine/progress_listener.hpp, the same as for one transfer). Below the
// batch scheduler: printers include this, never batch.hpp.
#include "pxfer/engine/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pxfer/core/auto_controller.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/engine/transfer_events.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer {

// One file; `local` and `remote.path` are exact names (no "into this directory" expansion left).
struct BatchFile {
  Direction direction = Direction::put;
  std::string local;
  Url remote;
  std::optional<std::uint64_t> source_size;  // when the walk (put -r) or the listing (get -r) knows it
  std::optional<std::uint32_t> mode;    // a get's source mode and mtime, for --preserve
  std::optional<std::int64_t> mtime_ns;
};

// The file as the user named its source: a put's local path, a get's URL.
inline std::string source_name(const BatchFile& f) {
  return f.direction == Direction::put ? f.local : f.remote.to_string();
}
// And its destination: a put's URL, a get's local path.
inline std::string destination_name(const BatchFile& f) {
  return f.direction == Direction::put ? f.remote.to_string() : f.local;
}

enum class FileStatus { done, skipped, failed };

struct FileOutcome {
  BatchFile file;
  FileStatus status = FileStatus::failed;
  TransferSummary summary;      // done
  std::optional<Error> error;   // failed
  unsigned attempts = 0;
  std::uint16_t streams = 0;    // data streams of its (last) attempt
  double started_s = 0;         // when its first attempt began, seconds after the run started
  double finished_s = 0;        // when it ended (done, skipped or failed), likewise
};

// What a run did, at its end (format_batch_report, the JSON summary).
struct BatchReport {
  std::vector<FileOutcome> files;  // in the order they finished
  std::vector<Error> setup_errors;  // directories that could not be made
  std::uint64_t bytes = 0;         // moved by successful files
  double seconds = 0;              // wall time of the whole run
  std::size_t failed = 0;
  std::size_t skipped = 0;
  std::size_t planned = 0;         // files in the plan
  std::optional<Errc> first_failure;
  // After Ctrl-C or SIGTERM (issue 34): the files that did not finish, in flight (left resumable)
  // or never started, by source name; first_failure is then Errc::interrupted.
  std::vector<std::string> unfinished;
};

// The whole run's progress, sampled every BatchOptions::interval.
struct BatchInterval {
  RateSample total;           // bytes moved by every file so far (finished or not, retries too)
  unsigned in_flight = 0;     // files moving now
  unsigned target = 0;        // files in flight the scheduler aims for (--auto changes it)
  std::size_t finished = 0;   // files done, skipped or failed
  std::size_t planned = 0;
};

}  // namespace pxfer
