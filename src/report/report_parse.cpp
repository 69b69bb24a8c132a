// NDJSON events (docs/json.md) -> report::Run. Each event fills its part of the model; events this
// version does not know are skipped so that reports keep working on newer output.
#include <nlohmann/json.hpp>

#include "pxfer/common/error.hpp"
#include "pxfer/core/report_model.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer::report {
namespace {

using nlohmann::json;

double num(const json& j, const char* key, double fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

unsigned count(const json& j, const char* key) { return static_cast<unsigned>(std::max(0.0, num(j, key))); }

// "pxfer://se01.example.org:7521/a/b" -> "se01.example.org:7521"
std::string host_of(const std::string& url) {
  const std::string scheme = "pxfer://";
  if (url.rfind(scheme, 0) != 0) return "";
  auto slash = url.find('/', scheme.size());
  return url.substr(scheme.size(), slash == std::string::npos ? std::string::npos : slash - scheme.size());
}

void add_host(RunMeta& m, const std::string& url) {
  std::string h = host_of(url);
  if (h.empty() || m.hosts.find(h) != std::string::npos) return;
  m.hosts += (m.hosts.empty() ? "" : ", ") + h;
}

void add_direction(RunMeta& m, const std::string& d) {
  if (d.empty() || m.direction == d || m.direction == "put+get") return;
  m.direction = m.direction.empty() ? d : "put+get";
}

std::string buffers_text(const json& b) {
  auto side = [](const json& s) {
    if (!s.is_object()) return std::string("?");
    auto size = [](double v) { return v > 0 ? format_size(static_cast<std::uint64_t>(v)) : std::string("?"); };
    std::string out = "snd " + size(num(s, "sndbuf")) + " / rcv " + size(num(s, "rcvbuf"));
    double req = num(s, "requested");
    return out + (req > 0 ? " (asked " + format_size(static_cast<std::uint64_t>(req)) + ")" : " (autotuning)");
  };
  return "local " + side(b.value("local", json())) + "; remote " + side(b.value("remote", json()));
}

void on_start(Run& r, const json& j) {
  auto& m = r.meta;
  add_direction(m, str(j, "direction"));
  m.source = str(j, "source");
  m.dest = str(j, "dest");
  add_host(m, m.source);
  add_host(m, m.dest);
  m.bytes = num(j, "bytes");
  m.streams = count(j, "streams");
  m.block_size = num(j, "block_size");
}

void on_interval(Run& r, const json& j) {
  RatePoint p{num(j, "seconds"), num(j, "bytes"), num(j, "avg_Bps"), num(j, "inst_Bps")};
  r.rates.push_back(p);
  r.meta.max_in_flight = std::max(r.meta.max_in_flight, count(j, "in_flight"));
  r.meta.files_planned = std::max(r.meta.files_planned, count(j, "planned"));
  auto streams = j.find("streams");
  if (streams == j.end() || !streams->is_array()) return;
  for (const auto& s : *streams) {
    if (!s.is_object()) continue;
    r.streams.push_back({p.t, count(s, "stream"), num(s, "bytes"), num(s, "inst_Bps"), num(s, "cwnd"), num(s, "rtt_us"),
                         num(s, "retransmits"), num(s, "send_q"), num(s, "mss")});
  }
}

void on_summary(Run& r, const json& j) {
  auto& m = r.meta;
  on_start(r, j);
  m.seconds = num(j, "seconds");
  m.rate_Bps = num(j, "rate_Bps");
  m.congestion = str(j, "congestion");
  m.stream_choice = str(j, "streams_auto");
  m.send_window = str(j, "send_window");
  m.block_copies = num(j, "block_copies");
  m.streams_let_go = num(j, "streams_let_go");
  m.protection = str(j, "protection");
  m.identity = str(j, "identity");
  if (m.version.empty()) m.version = str(j, "version");
  if (auto c = j.find("checksum"); c != j.end() && c->is_object())
    m.checksum = str(*c, "algorithm") + (str(*c, "value").empty() ? "" : ": " + str(*c, "value"));
  if (auto b = j.find("buffers"); b != j.end() && b->is_object()) {
    m.buffers = buffers_text(*b);
    if (auto l = b->find("local"); l != b->end() && l->is_object()) m.window_requested = num(*l, "requested");
  }
  if (auto w = j.find("warnings"); w != j.end() && w->is_array())
    for (const auto& s : *w)
      if (s.is_string()) r.warnings.push_back(s.get<std::string>());
  // The last sample, taken when the transfer ended: after the last interval, or the only one of a
  // transfer shorter than --perf-interval.
  if (auto f = j.find("final"); f != j.end() && f->is_object() && (r.rates.empty() || num(*f, "seconds") > r.rates.back().t))
    r.rates.push_back({num(*f, "seconds"), num(*f, "bytes"), num(*f, "avg_Bps"), num(*f, "inst_Bps")});
  if (auto busy = j.find("busy_streams"); busy != j.end() && busy->is_number()) m.busy_streams = busy->get<unsigned>();
  if (auto cpu = j.find("cpu_s"); cpu != j.end() && cpu->is_number()) m.cpu_s = cpu->get<double>();
  if (auto t = j.find("stream_totals"); t != j.end() && t->is_array())
    for (const auto& s : *t)
      if (s.is_object())
        r.stream_totals.push_back(
            {count(s, "stream"), num(s, "bytes"), num(s, "share"), count(s, "intervals"), count(s, "intervals_send_q")});
}

FileSpan& file_named(Run& r, const std::string& path, double started_s) {
  for (auto& f : r.files)
    if (f.path == path && !f.end_s) return f;
  r.files.push_back({path, started_s, std::nullopt, FileState::running, 0, "", 0});
  return r.files.back();
}

void on_file_start(Run& r, const json& j) {
  r.meta.kind = RunKind::batch;
  add_direction(r.meta, str(j, "direction"));
  add_host(r.meta, str(j, "path"));
  add_host(r.meta, str(j, "dest"));
  r.meta.streams = std::max(r.meta.streams, count(j, "streams"));
  r.meta.files_planned = std::max(r.meta.files_planned, count(j, "planned"));
  file_named(r, str(j, "path"), num(j, "started_s"));
}

void on_file_end(Run& r, const json& j, FileState state) {
  // A single transfer's "file_done" has no started_s: it is the transfer's own file, not a batch's.
  if (j.find("started_s") == j.end()) return;
  r.meta.kind = RunKind::batch;
  add_direction(r.meta, str(j, "direction"));
  add_host(r.meta, str(j, "path"));
  add_host(r.meta, str(j, "dest"));
  r.meta.files_planned = std::max(r.meta.files_planned, count(j, "planned"));
  FileSpan& f = file_named(r, str(j, "path"), num(j, "started_s"));
  f.state = state;
  f.end_s = num(j, "finished_s", num(j, "started_s") + num(j, "seconds"));
  f.bytes = num(j, "bytes");
  f.data_s = num(j, "seconds");
  if (auto e = j.find("error"); e != j.end() && e->is_object()) f.error = str(*e, "message");
  if (state == FileState::failed) r.meta.ok = false;
  r.meta.streams = std::max(r.meta.streams, count(j, "streams"));
}

void on_batch_summary(Run& r, const json& j) {
  auto& m = r.meta;
  m.kind = RunKind::batch;
  m.files_planned = count(j, "files");
  m.files_done = count(j, "done");
  m.files_skipped = count(j, "skipped");
  m.files_failed = count(j, "failed");
  m.bytes = num(j, "bytes");
  m.seconds = num(j, "seconds");
  m.rate_Bps = num(j, "rate_Bps");
  if (m.version.empty()) m.version = str(j, "version");
  if (auto cpu = j.find("cpu_s"); cpu != j.end() && cpu->is_number()) m.cpu_s = cpu->get<double>();
  if (m.files_failed || count(j, "setup_errors")) m.ok = false;
}

void on_sweep_cell(Run& r, const json& j) {
  r.meta.kind = RunKind::sweep;
  add_direction(r.meta, str(j, "direction"));
  double window = num(j, "window");
  std::string setting = str(j, "direction") + ", window " +
                        (window > 0 ? format_size(static_cast<std::uint64_t>(window)) : std::string("auto")) +
                        ", congestion " + (str(j, "congestion").empty() ? std::string("default") : str(j, "congestion")) +
                        ", compress " + (str(j, "compress").empty() ? std::string("none") : str(j, "compress"));
  r.sweep.push_back({setting, count(j, "files"), count(j, "streams"), count(j, "runs"), count(j, "failures"),
                     num(j, "median_mbit")});
  if (count(j, "failures")) r.meta.ok = false;
}

std::string host_settings_text(const json& h) {
  if (!h.is_object()) return "";
  auto triple = [&](const char* key) {
    std::string out;
    if (auto t = h.find(key); t != h.end() && t->is_array())
      for (const auto& v : *t) {
        if (!out.empty()) out += ' ';
        out += std::to_string(v.is_number() ? v.get<std::uint64_t>() : 0);
      }
    return out;
  };
  const double mtu = num(h, "mtu");
  return "tcp_rmem " + triple("tcp_rmem") + ", tcp_wmem " + triple("tcp_wmem") + ", rmem_max " +
         std::to_string(static_cast<std::uint64_t>(num(h, "rmem_max"))) + ", wmem_max " +
         std::to_string(static_cast<std::uint64_t>(num(h, "wmem_max"))) + ", congestion " + str(h, "congestion") +
         ", MTU " + (mtu > 0 ? std::to_string(static_cast<unsigned>(mtu)) : std::string("unknown"));
}

void on_doctor(Run& r, const json& j) {
  r.meta.kind = RunKind::doctor;
  add_host(r.meta, str(j, "server"));
  if (r.meta.version.empty()) r.meta.version = str(j, "version");
  PathCheck p;
  p.rtt_s = num(j, "rtt_s");
  p.target_Bps = num(j, "target_Bps");
  p.loss = num(j, "loss");
  p.bdp_bytes = num(j, "bdp_bytes");
  p.local = host_settings_text(j.value("local", json()));
  p.remote = host_settings_text(j.value("remote", json()));
  for (const char* key : {"put", "get"}) {
    auto d = j.find(key);
    if (d == j.end() || !d->is_object()) continue;
    PathDirection pd{str(*d, "name"), num(*d, "per_stream_Bps"), num(*d, "window_bytes"), count(*d, "streams_needed"),
                     num(*d, "buffer_needed"), {}};
    if (auto a = d->find("advice"); a != d->end() && a->is_array())
      for (const auto& line : *a)
        if (line.is_string()) pd.advice.push_back(line.get<std::string>());
    p.directions.push_back(std::move(pd));
  }
  r.path = std::move(p);
}

void on_run(Run& r, const json& j) {
  r.meta.version = str(j, "version");
  r.meta.date = str(j, "date");
  r.meta.command = str(j, "command");
  if (j.contains("window") && j["window"].is_number()) r.meta.window_requested = num(j, "window");
}

// Returns false for an event this version does not know.
bool apply(Run& r, const std::string& event, const json& j) {
  if (event == "run") on_run(r, j);
  else if (event == "start") on_start(r, j);
  else if (event == "interval") on_interval(r, j);
  else if (event == "summary") on_summary(r, j);
  else if (event == "file_start") on_file_start(r, j);
  else if (event == "file_done") on_file_end(r, j, FileState::done);
  else if (event == "file_skipped") on_file_end(r, j, FileState::skipped);
  else if (event == "file_failed") on_file_end(r, j, FileState::failed);
  else if (event == "batch_summary") on_batch_summary(r, j);
  else if (event == "sweep_cell") on_sweep_cell(r, j);
  else if (event == "doctor") on_doctor(r, j);
  else if (event == "warning") r.warnings.push_back(str(j, "message"));
  // A sending stream's send buffer ("stream 0: send buffer pinned at ...") is in the summary's
  // send_window; the steps are auto's ("streams: 4 -> 8 streams (...)").
  else if (event == "streams" && !str(j, "message").starts_with("stream ")) r.meta.stream_steps.push_back(str(j, "message"));
  else if (event == "queued") ++r.meta.queued;
  else if (event == "error") {
    r.meta.ok = false;
    r.meta.error = str(j, "message");
  } else return event == "auto" || event == "retry" || event == "stream_recovery" || event == "streams";
  return true;
}

}  // namespace

Run parse_run(std::string_view text, const std::string& name) {
  Run r;
  r.name = name;
  std::size_t line_no = 0, known = 0, pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = name + ":" + std::to_string(line_no) + ": ";
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded())
      throw Error(Errc::usage, where + "not JSON; give the NDJSON that pxfer put|get|sweep --json wrote");
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string())
      throw Error(Errc::usage, where + "not a pxfer event (no \"event\" field); give the output of pxfer ... --json");
    known += apply(r, j["event"].get<std::string>(), j);
  }
  if (known == 0)
    throw Error(Errc::usage, name + ": no pxfer events in it; give the NDJSON that pxfer put|get|sweep --json wrote");
  if (r.meta.kind == RunKind::batch && !r.files.empty() && r.meta.files_done == 0)
    for (const auto& f : r.files) r.meta.files_done += f.state == FileState::done;
  return r;
}

}  // namespace pxfer::report
