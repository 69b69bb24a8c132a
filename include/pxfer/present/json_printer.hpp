#pragma once
// --json: newline-delimited JSON events on stdout, the same numbers as the text lines
// (docs/json.md describes every field).
#include "pxfer/present/layer.hpp"
#include <cstdio>
#include <string>

#include "pxfer/core/auto_controller.hpp"
#include "pxfer/engine/progress_listener.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer {

class JsonPrinter final : public ProgressListener {
 public:
  explicit JsonPrinter(std::FILE* out) : out_(out) {}
  void on_start(const TransferSummary& summary) override;
  void on_interval(const IntervalReport& report) override;
  void on_finish(const IntervalReport& report, const TransferSummary& summary) override;
  void on_warning(const std::string& text) override;
  void on_stream_event(const std::string& text) override;
  void on_streams_changed(const std::string& text) override;
  void on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) override;
  void on_queued(unsigned position, unsigned active, unsigned queued) override;
  void on_error(const Error& error);
  // A many-file run; a failed file is also one line on stderr.
  void on_file_start(const BatchFile& file, std::size_t number, std::size_t planned, std::uint16_t streams,
                     double started_s) override;
  void on_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned) override;
  void on_batch_interval(const BatchInterval& interval) override;
  void on_decision(const AutoDecision& decision) override;
  // One line of NDJSON (the batch summary, a sweep cell).
  void emit(const std::string& line);

 private:
  std::FILE* out_;
  Clock::time_point start_ = Clock::now();
};

// The JSON text of each event, for tests and for other printers (and the --report recorder).
std::string json_start(const TransferSummary& summary);
std::string json_file_done(const TransferSummary& summary);
std::string json_warning(const std::string& text);
std::string json_streams_changed(const std::string& text);  // {"event":"streams","message":...}
std::string json_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason);
std::string json_error(const Error& error);
std::string json_interval(const IntervalReport& report);
std::string json_summary(const IntervalReport& report, const TransferSummary& summary);

// Many files (-r, --from-file): one event per line, see docs/json.md.
// "file_start": a file's first attempt begins.
std::string json_batch_file_start(const BatchFile& file, std::size_t number, std::size_t planned, std::uint16_t streams,
                                  double started_s);
// "file_done", "file_skipped" or "file_failed".
std::string json_batch_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned);
// "interval": the aggregate over every file.
std::string json_batch_interval(const BatchInterval& interval);
// "auto": one --auto decision.
std::string json_auto_decision(const AutoDecision& decision);
// "batch_summary": the last line of a run.
std::string json_batch_summary(const BatchReport& report);

}  // namespace pxfer
