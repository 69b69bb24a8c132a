#include "pxfer/present/report_recorder.hpp"

#include <ctime>
#include <nlohmann/json.hpp>

#include "pxfer/present/json_printer.hpp"
#include "pxfer/version.hpp"

namespace pxfer {

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string json_run(const std::string& command) {
  return nlohmann::json{{"event", "run"}, {"version", pxfer_version()}, {"date", utc_now_iso8601()}, {"command", command}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void ReportRecorder::on_start(const TransferSummary& s) { lines_.push_back(json_start(s)); }
void ReportRecorder::on_interval(const IntervalReport& r) { lines_.push_back(json_interval(r)); }
void ReportRecorder::on_finish(const IntervalReport& r, const TransferSummary& s) {
  lines_.push_back(json_file_done(s));
  lines_.push_back(json_summary(r, s));
}
void ReportRecorder::on_warning(const std::string& text) { lines_.push_back(json_warning(text)); }
void ReportRecorder::on_streams_changed(const std::string& text) { lines_.push_back(json_streams_changed(text)); }
void ReportRecorder::on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) {
  lines_.push_back(json_retry(next, total, delay_seconds, reason));
}
void ReportRecorder::on_file_start(const BatchFile& f, std::size_t number, std::size_t planned, std::uint16_t streams,
                                   double started_s) {
  lines_.push_back(json_batch_file_start(f, number, planned, streams, started_s));
}
void ReportRecorder::on_file(const FileOutcome& o, std::size_t finished, std::size_t planned) {
  lines_.push_back(json_batch_file(o, finished, planned));
}
void ReportRecorder::on_batch_interval(const BatchInterval& i) { lines_.push_back(json_batch_interval(i)); }
void ReportRecorder::on_decision(const AutoDecision& d) { lines_.push_back(json_auto_decision(d)); }
void ReportRecorder::add(const std::string& ndjson) { lines_.push_back(ndjson); }
void ReportRecorder::on_error(const Error& error) { lines_.push_back(json_error(error)); }

std::string ReportRecorder::ndjson() const {
  std::string out;
  for (const auto& l : lines_) {
    out += l;
    if (out.empty() || out.back() != '\n') out += '\n';
  }
  return out;
}

void ListenerTee::on_start(const TransferSummary& s) {
  display_->on_start(s);
  recorder_->on_start(s);
}

void ListenerTee::on_interval(const IntervalReport& r) {
  recorder_->on_interval(r);
  if (!hide_streams_) return display_->on_interval(r);
  display_->on_interval(IntervalReport{r.total, {}});
}

void ListenerTee::on_finish(const IntervalReport& r, const TransferSummary& s) {
  recorder_->on_finish(r, s);
  if (!hide_streams_) return display_->on_finish(r, s);
  TransferSummary plain = s;
  plain.stream_totals.clear();
  display_->on_finish(IntervalReport{r.total, {}}, plain);
}

void ListenerTee::on_warning(const std::string& text) {
  display_->on_warning(text);
  recorder_->on_warning(text);
}
void ListenerTee::on_queued(unsigned position, unsigned active, unsigned queued) {
  display_->on_queued(position, active, queued);
  recorder_->on_queued(position, active, queued);
}
void ListenerTee::on_streams_changed(const std::string& text) {
  display_->on_streams_changed(text);
  recorder_->on_streams_changed(text);
}

void ListenerTee::on_stream_event(const std::string& text) {
  display_->on_stream_event(text);
  recorder_->on_stream_event(text);
}
void ListenerTee::on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) {
  display_->on_retry(next, total, delay_seconds, reason);
  recorder_->on_retry(next, total, delay_seconds, reason);
}

void ListenerTee::on_file_start(const BatchFile& f, std::size_t number, std::size_t planned, std::uint16_t streams,
                             double started_s) {
  display_->on_file_start(f, number, planned, streams, started_s);
  recorder_->on_file_start(f, number, planned, streams, started_s);
}
void ListenerTee::on_file(const FileOutcome& o, std::size_t finished, std::size_t planned) {
  display_->on_file(o, finished, planned);
  recorder_->on_file(o, finished, planned);
}
void ListenerTee::on_batch_interval(const BatchInterval& i) {
  display_->on_batch_interval(i);
  recorder_->on_batch_interval(i);
}
void ListenerTee::on_decision(const AutoDecision& d) {
  display_->on_decision(d);
  recorder_->on_decision(d);
}

}  // namespace pxfer
