#pragma once
// --report FILE.html: the run's events recorded in memory as the NDJSON --json would print
// (docs/json.md), then rendered by report::render_page, so `--report` and `pxfer report` on a
// saved --json make the same page. The tees let the recorder listen beside the printer.
#include "pxfer/present/layer.hpp"
#include <string>
#include <vector>

#include "pxfer/engine/progress_listener.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer {

// Now, as "2026-11-23T18:40:59Z".
std::string utc_now_iso8601();
// The first event of a recorded run: {"event":"run","version":...,"date":...,"command":...}.
std::string json_run(const std::string& command);

class ReportRecorder final : public ProgressListener {
 public:
  explicit ReportRecorder(const std::string& command) { lines_.push_back(json_run(command)); }
  // One transfer.
  void on_start(const TransferSummary& summary) override;
  void on_interval(const IntervalReport& report) override;
  void on_finish(const IntervalReport& report, const TransferSummary& summary) override;
  void on_warning(const std::string& text) override;
  void on_streams_changed(const std::string& text) override;
  void on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) override;
  // A batch.
  void on_file_start(const BatchFile& file, std::size_t number, std::size_t planned, std::uint16_t streams,
                     double started_s) override;
  void on_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned) override;
  void on_batch_interval(const BatchInterval& interval) override;
  void on_decision(const AutoDecision& decision) override;
  // Anything else: the batch summary, an error, sweep cells (one or more lines).
  void add(const std::string& ndjson);
  void on_error(const Error& error);
  std::string ndjson() const;
  bool empty() const { return lines_.size() <= 1; }  // nothing but the "run" event

 private:
  std::vector<std::string> lines_;
};

// Passes every call to both, the display and the recorder (--report): one tee for single and
// many-file runs. `display` sees no per-stream figures when `hide_streams` (the recorder asked
// for them, the user did not).
class ListenerTee final : public ProgressListener {
 public:
  ListenerTee(ProgressListener* display, ProgressListener* recorder, bool hide_streams = false)
      : display_(display), recorder_(recorder), hide_streams_(hide_streams) {}
  void on_start(const TransferSummary& s) override;
  void on_interval(const IntervalReport& r) override;
  void on_finish(const IntervalReport& r, const TransferSummary& s) override;
  void on_warning(const std::string& text) override;
  void on_queued(unsigned position, unsigned active, unsigned queued) override;
  void on_stream_event(const std::string& text) override;
  void on_streams_changed(const std::string& text) override;
  void on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) override;
  void on_file_start(const BatchFile& file, std::size_t number, std::size_t planned, std::uint16_t streams,
                     double started_s) override;
  void on_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned) override;
  void on_batch_interval(const BatchInterval& interval) override;
  void on_decision(const AutoDecision& decision) override;

 private:
  ProgressListener* display_;
  ProgressListener* recorder_;
  bool hide_streams_;
};

}  // namespace pxfer
