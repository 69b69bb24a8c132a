#include <algorithm>
#include "pxfer/present/json_printer.hpp"

#include <nlohmann/json.hpp>

#include "pxfer/present/batch_printer.hpp"
#include "pxfer/present/progress_printer.hpp"
#include "pxfer/version.hpp"

namespace pxfer {
namespace {

using nlohmann::json;

// Names and messages may come from a server and need not be UTF-8 (a Latin-1 file name): such
// bytes become U+FFFD instead of throwing out of a printer (which aborted pxfer --json).
constexpr auto replace_invalid = json::error_handler_t::replace;

json stream_json(const StreamSample& s) {
  const auto& f = s.figures;
  return {{"stream", f.stream},       {"bytes", f.bytes},           {"inst_Bps", s.inst_bytes_per_s},
          {"cwnd", f.cwnd},           {"mss", f.mss},               {"rtt_us", f.rtt_us},
          {"retransmits", f.retransmits}, {"send_q", f.unsent},     {"sndbuf", f.sndbuf},
          {"delivery_rate_Bps", f.delivery_rate}};
}

json rate_json(const RateSample& r) {
  return {{"bytes", r.bytes}, {"seconds", r.seconds}, {"avg_Bps", r.avg_bytes_per_s}, {"inst_Bps", r.inst_bytes_per_s}};
}

json buffers_json(const BufferGrant& g) { return {{"requested", g.requested}, {"sndbuf", g.sndbuf}, {"rcvbuf", g.rcvbuf}}; }

const char* direction_name(Direction d) { return d == Direction::put ? "put" : "get"; }

// Files are named as the text lines name them: the local path of a put, the URL of a get.

json error_json(const Error& e) {
  return {{"code", exit_code(e.code())}, {"class", errc_name(e.code())}, {"message", e.what()}};
}

}  // namespace

std::string json_batch_file_start(const BatchFile& f, std::size_t number, std::size_t planned, std::uint16_t streams,
                                  double started_s) {
  json j = {{"event", "file_start"}, {"path", source_name(f)}, {"dest", destination_name(f)},
            {"direction", direction_name(f.direction)}, {"number", number}, {"planned", planned},
            {"streams", streams}, {"started_s", started_s}};
  if (f.direction == Direction::get && f.source_size) j["bytes"] = *f.source_size;
  return j.dump(-1, ' ', false, replace_invalid);
}

std::string json_batch_file(const FileOutcome& o, std::size_t finished, std::size_t planned) {
  json j = {{"path", source_name(o.file)}, {"dest", destination_name(o.file)}, {"direction", direction_name(o.file.direction)},
            {"finished", finished}, {"planned", planned}, {"attempts", o.attempts}, {"started_s", o.started_s},
            {"finished_s", o.finished_s}};
  if (o.status == FileStatus::done) {
    const auto& s = o.summary;
    const double rate = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0;
    j["event"] = "file_done";
    j["bytes"] = s.bytes;
    j["seconds"] = s.seconds;
    j["rate_Bps"] = rate;
    j["rate_MBps"] = to_megabytes_per_s(rate);
    j["streams"] = s.streams;
    j["checksum"] = format_checksum(s.checksum, s.checksum_value);
  } else if (o.status == FileStatus::skipped) {
    j["event"] = "file_skipped";
    j["reason"] = "exists, same size and checksum";
  } else {
    j["event"] = "file_failed";
    j["error"] = o.error ? error_json(*o.error) : json{{"code", 1}, {"class", "internal"}, {"message", "?"}};
  }
  return j.dump(-1, ' ', false, replace_invalid);
}

std::string json_batch_interval(const BatchInterval& i) {
  json j = rate_json(i.total);
  j["event"] = "interval";
  j["in_flight"] = i.in_flight;
  j["target"] = i.target;
  j["finished"] = i.finished;
  j["planned"] = i.planned;
  return j.dump(-1, ' ', false, replace_invalid);
}

std::string json_auto_decision(const AutoDecision& d) {
  json j = {{"event", "auto"},
            {"seconds", d.at_s},
            {"action", auto_action_name(d.action)},
            {"from", d.from},
            {"to", d.to},
            {"streams_from", d.streams_from},
            {"streams_to", d.streams_to},
            {"rate_Bps", d.rate_Bps},
            {"avg_Bps", d.smoothed_Bps},
            {"change", d.change ? json(*d.change) : json(nullptr)},
            {"succeeded", d.succeeded},
            {"failed", d.failed},
            {"reason", d.reason},
            {"text", format_decision(d)}};
  return j.dump(-1, ' ', false, replace_invalid);
}

std::string json_batch_summary(const BatchReport& r) {
  std::size_t done = 0;
  for (const auto& f : r.files) done += f.status == FileStatus::done;
  const double rate = r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds : 0;
  json failures = json::array();
  for (const auto& e : r.setup_errors) failures.push_back({{"path", nullptr}, {"error", error_json(e)}});
  for (const auto& f : r.files)
    if (f.status == FileStatus::failed && f.error) failures.push_back({{"path", source_name(f.file)}, {"error", error_json(*f.error)}});
  json j = {{"event", "batch_summary"},
            {"files", r.planned},
            {"done", done},
            {"skipped", r.skipped},
            {"failed", r.failed},
            {"setup_errors", r.setup_errors.size()},
            {"bytes", r.bytes},
            {"seconds", r.seconds},
            {"rate_Bps", rate},
            {"rate_MBps", to_megabytes_per_s(rate)},
            {"rate_Gbps", to_gigabits_per_s(rate)},
            {"exit_code", r.first_failure ? exit_code(*r.first_failure) : 0},
            {"failures", failures},
            {"cpu_s", process_cpu_seconds()},
            {"version", pxfer_version()}};
  return j.dump(-1, ' ', false, replace_invalid);
}

std::string json_start(const TransferSummary& s) {
  return json{{"event", "start"},
              {"direction", s.direction == Direction::put ? "put" : "get"},
              {"source", s.source},
              {"dest", s.destination},
              {"bytes", s.bytes},
              {"streams", s.streams},
              {"block_size", s.block_size}}
      .dump(-1, ' ', false, replace_invalid);
}

std::string json_file_done(const TransferSummary& s) {
  double rate = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0;
  return json{{"event", "file_done"},
              {"path", s.destination},
              {"bytes", s.bytes},
              {"seconds", s.seconds},
              {"rate_Bps", rate},
              {"checksum", format_checksum(s.checksum, s.checksum_value)}}
      .dump(-1, ' ', false, replace_invalid);
}

std::string json_warning(const std::string& text) { return json{{"event", "warning"}, {"message", text}}.dump(-1, ' ', false, replace_invalid); }

std::string json_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) {
  return json{{"event", "retry"}, {"attempt", next}, {"of", total}, {"delay_seconds", delay_seconds}, {"reason", reason}}.dump(-1, ' ', false, replace_invalid);
}

std::string json_error(const Error& error) {
  return json{{"event", "error"}, {"code", static_cast<int>(error.code())}, {"class", errc_name(error.code())},
              {"message", error.what()}}
      .dump(-1, ' ', false, replace_invalid);
}

std::string json_interval(const IntervalReport& report) {
  json j = rate_json(report.total);
  j["event"] = "interval";
  if (!report.streams.empty()) {
    j["streams"] = json::array();
    for (const auto& s : report.streams) j["streams"].push_back(stream_json(s));
  }
  return j.dump(-1, ' ', false, replace_invalid);
}

std::string json_summary(const IntervalReport& report, const TransferSummary& s) {
  const std::uint64_t moved = s.bytes - std::min(s.bytes, s.resumed_bytes);
  double rate = s.seconds > 0 ? static_cast<double>(moved) / s.seconds : 0;
  json j = {{"event", "summary"},
            {"direction", s.direction == Direction::put ? "put" : "get"},
            {"source", s.source},
            {"dest", s.destination},
            {"bytes", s.bytes},
            {"seconds", s.seconds},
            {"rate_Bps", rate},
            {"rate_MBps", to_megabytes_per_s(rate)},
            {"rate_Gbps", to_gigabits_per_s(rate)},
            {"streams", s.streams},
            {"block_size", s.block_size},
            {"congestion", s.congestion},
            {"compression", describe(s.compression)},
            {"wire_bytes", s.wire_bytes},
            {"resumed_bytes", s.resumed_bytes},
            {"stream_recoveries", s.stream_recoveries},
            {"block_copies", s.block_copies},
            {"streams_let_go", s.streams_let_go},
            {"attempts", s.attempts},
            {"checksum", {{"algorithm", checksum_name(s.checksum)}, {"value", s.checksum_value}}},
            {"buffers", {{"local", buffers_json(s.local_buffers)}, {"remote", buffers_json(s.remote_buffers)}}},
            {"warnings", s.warnings},
            {"protection", s.protection},
            {"identity", s.identity},
            {"final", rate_json(report.total)},
            {"cpu_s", process_cpu_seconds()},
            {"version", pxfer_version()}};
  if (!s.stream_choice.empty()) j["streams_auto"] = s.stream_choice;  // -p auto: what it chose and why
  if (!s.send_window.empty()) j["send_window"] = s.send_window;  // send buffers past autotuning
  if (!s.stream_totals.empty()) {
    j["stream_totals"] = json::array();
    for (const auto& t : s.stream_totals)
      j["stream_totals"].push_back({{"stream", t.stream},
                                    {"bytes", t.bytes},
                                    {"share", t.share},
                                    {"avg_Bps", t.avg_bytes_per_s},
                                    {"retransmits", t.retransmits},
                                    {"intervals", t.intervals},
                                    {"intervals_send_q", t.intervals_queued}});
    j["busy_streams"] = StreamMeter::busy_streams(s.stream_totals);
  }
  return j.dump(-1, ' ', false, replace_invalid);
}

void JsonPrinter::emit(const std::string& line) {
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void JsonPrinter::on_file_start(const BatchFile& file, std::size_t number, std::size_t planned, std::uint16_t streams,
                                double started_s) {
  emit(json_batch_file_start(file, number, planned, streams, started_s));
}
void JsonPrinter::on_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned) {
  emit(json_batch_file(outcome, finished, planned));
  if (outcome.status == FileStatus::failed) std::fprintf(stderr, "pxfer: %s\n", format_outcome(outcome).c_str());
}
void JsonPrinter::on_batch_interval(const BatchInterval& interval) { emit(json_batch_interval(interval)); }
void JsonPrinter::on_decision(const AutoDecision& decision) { emit(json_auto_decision(decision)); }

void JsonPrinter::on_start(const TransferSummary& s) { emit(json_start(s)); }

void JsonPrinter::on_interval(const IntervalReport& report) { emit(json_interval(report)); }

void JsonPrinter::on_finish(const IntervalReport& report, const TransferSummary& s) {
  emit(json_file_done(s));
  emit(json_summary(report, s));
}

void JsonPrinter::on_queued(unsigned position, unsigned active, unsigned queued) {
  emit(json{{"event", "queued"}, {"position", position}, {"active", active}, {"queued", queued}}
           .dump(-1, ' ', false, replace_invalid));
}

std::string json_streams_changed(const std::string& text) {
  return json{{"event", "streams"}, {"message", text}}.dump(-1, ' ', false, replace_invalid);
}

void JsonPrinter::on_streams_changed(const std::string& text) { emit(json_streams_changed(text)); }

void JsonPrinter::on_stream_event(const std::string& text) {
  emit(json{{"event", "stream_recovery"}, {"message", text}}.dump(-1, ' ', false, replace_invalid));
}

void JsonPrinter::on_retry(unsigned next, unsigned total, double delay_seconds, const std::string& reason) {
  emit(json_retry(next, total, delay_seconds, reason));
}

void JsonPrinter::on_warning(const std::string& text) { emit(json_warning(text)); }

void JsonPrinter::on_error(const Error& error) { emit(json_error(error)); }

}  // namespace pxfer
