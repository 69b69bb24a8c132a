#include "pxfer/json_printer.hpp"

#include <nlohmann/json.hpp>

namespace pxfer {
namespace {

using nlohmann::json;

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

}  // namespace

std::string json_interval(const IntervalReport& report) {
  json j = rate_json(report.total);
  j["event"] = "interval";
  if (!report.streams.empty()) {
    j["streams"] = json::array();
    for (const auto& s : report.streams) j["streams"].push_back(stream_json(s));
  }
  return j.dump();
}

std::string json_summary(const IntervalReport& report, const TransferSummary& s) {
  double rate = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0;
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
            {"checksum", {{"algorithm", checksum_name(s.checksum)}, {"value", s.checksum_value}}},
            {"buffers", {{"local", buffers_json(s.local_buffers)}, {"remote", buffers_json(s.remote_buffers)}}},
            {"warnings", s.warnings},
            {"final", rate_json(report.total)}};
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
  return j.dump();
}

void JsonPrinter::emit(const std::string& line) {
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void JsonPrinter::on_start(const TransferSummary& s) {
  emit(json{{"event", "start"},
            {"direction", s.direction == Direction::put ? "put" : "get"},
            {"source", s.source},
            {"dest", s.destination},
            {"bytes", s.bytes},
            {"streams", s.streams},
            {"block_size", s.block_size}}
           .dump());
}

void JsonPrinter::on_interval(const IntervalReport& report) { emit(json_interval(report)); }

void JsonPrinter::on_finish(const IntervalReport& report, const TransferSummary& s) {
  double rate = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0;
  emit(json{{"event", "file_done"},
            {"path", s.destination},
            {"bytes", s.bytes},
            {"seconds", s.seconds},
            {"rate_Bps", rate},
            {"checksum", format_checksum(s.checksum, s.checksum_value)}}
           .dump());
  emit(json_summary(report, s));
}

void JsonPrinter::on_queued(unsigned position, unsigned active, unsigned queued) {
  emit(json{{"event", "queued"}, {"position", position}, {"active", active}, {"queued", queued}}.dump());
}

void JsonPrinter::on_warning(const std::string& text) { emit(json{{"event", "warning"}, {"message", text}}.dump()); }

void JsonPrinter::on_error(const Error& error) {
  emit(json{{"event", "error"}, {"code", static_cast<int>(error.code())}, {"class", errc_name(error.code())},
            {"message", error.what()}}
           .dump());
}

}  // namespace pxfer
