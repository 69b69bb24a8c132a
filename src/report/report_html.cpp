// The report page: a header saying what was measured, then the charts, all inline.
#include "pxfer/core/report_html.hpp"

#include <cstdio>

#include "report/svg_chart.hpp"
#include "report/printf_number.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer::report {
namespace {

const char* const style_sheet =
    "body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;color:#111;background:#fff;max-width:1000px;margin:0 auto;"
    "padding:12px 20px;line-height:1.35}\n"
    "h1{font-size:1.5em;margin:.3em 0}h2{font-size:1.2em;margin:1.4em 0 .4em;border-bottom:1px solid #999}\n"
    "svg{width:100%;height:auto;display:block;margin:6px 0 14px}\n"
    ".wide{overflow-x:auto}table{border-collapse:collapse;font-size:.9em;margin:6px 0}th,td{border:1px solid #bbb;padding:3px 7px;"
    "text-align:left;vertical-align:top}th{background:#eee}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    ".verdict{font-size:1.15em;font-weight:bold;margin:.5em 0}.bad{color:#a33c00}.muted{color:#555}\n";

std::string cell(const std::string& text, bool numeric = false) {
  return std::string(numeric ? "<td class=\"num\">" : "<td>") + xml_escape(text) + "</td>";
}

std::string bytes_text(double bytes) {
  if (bytes <= 0) return "";
  auto b = static_cast<std::uint64_t>(bytes);
  return std::to_string(b) + " bytes (" + format_size(b) + ")";
}

std::string rate_text(const RunMeta& m) {
  if (m.rate_Bps <= 0) return "";
  return printf_number("%.1f MB/s", m.rate_Bps / 1e6) + printf_number(" = %.2f Gbit/s", m.rate_Bps * 8 / 1e9);
}

std::string files_text(const RunMeta& m) {
  if (m.kind != RunKind::batch) return "";
  return std::to_string(m.files_planned) + " planned: " + std::to_string(m.files_done) + " done, " +
         std::to_string(m.files_skipped) + " skipped, " + std::to_string(m.files_failed) + " failed";
}

std::string kind_text(RunKind k) {
  return k == RunKind::batch ? "batch" : k == RunKind::sweep ? "sweep" : k == RunKind::doctor ? "path check (doctor)" : "one file";
}

// One row of the header table: a name, then one cell per run; rows empty for every run are left out.
using Field = std::pair<std::string, std::string (*)(const Run&)>;
const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {"input", [](const Run& r) { return r.name; }},
      {"kind", [](const Run& r) { return kind_text(r.meta.kind); }},
      {"direction", [](const Run& r) { return r.meta.direction; }},
      {"hosts", [](const Run& r) { return r.meta.hosts; }},
      {"source", [](const Run& r) { return r.meta.source; }},
      {"destination", [](const Run& r) { return r.meta.dest; }},
      {"bytes", [](const Run& r) { return bytes_text(r.meta.bytes); }},
      {"files", [](const Run& r) { return files_text(r.meta); }},
      {"seconds", [](const Run& r) { return r.meta.seconds > 0 ? printf_number("%.2f s", r.meta.seconds) : std::string(); }},
      {"rate", [](const Run& r) { return rate_text(r.meta); }},
      {"streams", [](const Run& r) {
         if (!r.meta.stream_choice.empty()) return r.meta.stream_choice;
         return r.meta.streams ? std::to_string(r.meta.streams) : std::string();
       }},
      {"streams added and retired", [](const Run& r) {
         std::string out;
         for (const auto& s : r.meta.stream_steps) out += (out.empty() ? "" : "; ") + s;
         return out;
       }},
      {"end of the file", [](const Run& r) {
         if (r.meta.block_copies == 0 && r.meta.streams_let_go == 0) return std::string();
         return printf_number("%.0f copies of overdue blocks, ", r.meta.block_copies) +
                printf_number("%.0f slow streams let go", r.meta.streams_let_go);
       }},
      {"most files in flight", [](const Run& r) { return r.meta.max_in_flight ? std::to_string(r.meta.max_in_flight) : std::string(); }},
      {"block size", [](const Run& r) { return r.meta.block_size > 0 ? format_size(static_cast<std::uint64_t>(r.meta.block_size)) : std::string(); }},
      {"buffers granted", [](const Run& r) { return r.meta.buffers; }},
      {"send buffers past autotuning", [](const Run& r) { return r.meta.send_window; }},
      {"congestion control", [](const Run& r) { return r.meta.congestion; }},
      {"protection", [](const Run& r) { return r.meta.protection; }},
      {"identity", [](const Run& r) { return r.meta.identity; }},
      {"checksum", [](const Run& r) { return r.meta.checksum; }},
      {"busy streams", [](const Run& r) {
         return r.meta.busy_streams ? std::to_string(*r.meta.busy_streams) + " of " + std::to_string(r.stream_totals.size()) : std::string();
       }},
      {"pxfer version", [](const Run& r) { return r.meta.version.empty() ? std::string("not recorded") : r.meta.version; }},
      {"date", [](const Run& r) { return r.meta.date.empty() ? std::string("not recorded") : r.meta.date; }},
      {"result", [](const Run& r) { return r.meta.ok ? std::string("ok") : "FAILED" + (r.meta.error.empty() ? "" : ": " + r.meta.error); }},
  };
  return f;
}

std::string header_table(const std::vector<Run>& runs) {
  std::string out = "<table class=\"measured\">\n<tr><th></th>";
  for (const auto& r : runs) out += "<th>" + xml_escape(r.label) + "</th>";
  out += "</tr>\n";
  for (const auto& [name, get] : fields()) {
    std::string row;
    bool any = false;
    for (const auto& r : runs) {
      std::string v = get(r);
      any = any || !v.empty();
      row += cell(v, name == "bytes" || name == "seconds" || name == "rate" || name == "streams");
    }
    if (any) out += "<tr><th>" + xml_escape(name) + "</th>" + row + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string stream_totals_table(const Run& r) {
  std::string out = "<table class=\"streams\">\n<tr><th>stream</th><th>bytes</th><th>share</th><th>intervals with Send-Q &gt; 0</th></tr>\n";
  for (const auto& t : r.stream_totals)
    out += "<tr>" + cell(std::to_string(t.stream), true) + cell(std::to_string(static_cast<std::uint64_t>(t.bytes)), true) +
           cell(printf_number("%.1f%%", t.share * 100), true) +
           cell(std::to_string(t.intervals_send_q) + " of " + std::to_string(t.intervals), true) + "</tr>\n";
  return out + "</table>\n";
}

std::string streams_section(const Run& r) {
  auto charts = stream_charts(r);
  if (charts.empty()) return "";
  std::string out = "<h2>Streams: " + xml_escape(r.label) + "</h2>\n";
  if (r.meta.busy_streams)
    out += "<p class=\"verdict\">" + std::to_string(*r.meta.busy_streams) + " of " + std::to_string(r.stream_totals.size()) +
           " streams had data queued (Send-Q &gt; 0) in at least half of the intervals.</p>\n";
  if (!r.stream_totals.empty()) out += stream_totals_table(r);
  for (const auto& c : charts) out += c;
  return out;
}

// doctor --json: the path's figures and, per direction, what one stream reaches and what to change.
std::string path_section(const Run& r) {
  if (!r.path) return "";
  const PathCheck& p = *r.path;
  std::string out = "<h2>Path: " + xml_escape(r.label) + "</h2>\n<table class=\"path\">\n";
  out += "<tr><th>round trip</th>" + cell(printf_number("%.2f ms", p.rtt_s * 1000), true) + "</tr>\n";
  out += "<tr><th>target</th>" + cell(printf_number("%.2f Gbit/s", p.target_Bps * 8 / 1e9), true) + "</tr>\n";
  out += "<tr><th>bandwidth-delay product</th>" + cell(bytes_text(p.bdp_bytes), true) + "</tr>\n";
  if (p.loss > 0) out += "<tr><th>loss</th>" + cell(printf_number("%.4f %%", p.loss * 100), true) + "</tr>\n";
  out += "<tr><th>this host</th>" + cell(p.local) + "</tr>\n<tr><th>server</th>" + cell(p.remote) + "</tr>\n</table>\n";
  for (const auto& d : p.directions) {
    out += "<p class=\"verdict\">" + xml_escape(d.name) + ": one stream " + printf_number("%.1f MB/s", d.per_stream_Bps / 1e6) +
           " (window " + xml_escape(bytes_text(d.window_bytes)) + "); streams for the target: " +
           std::to_string(d.streams_needed) + "</p>\n<ul>\n";
    for (const auto& a : d.advice) out += "<li>" + xml_escape(a) + "</li>\n";
    out += "</ul>\n";
  }
  return out;
}

std::string notes_section(const Run& r) {
  if (r.warnings.empty() && r.meta.error.empty()) return "";
  std::string out = "<h2>Warnings and errors: " + xml_escape(r.label) + "</h2>\n<ul>\n";
  for (const auto& w : r.warnings) out += "<li>warning: " + xml_escape(w) + "</li>\n";
  if (!r.meta.error.empty()) out += "<li class=\"bad\">error: " + xml_escape(r.meta.error) + "</li>\n";
  return out + "</ul>\n";
}

}  // namespace

std::string render_page(std::vector<Run> runs, const PageOptions& options) {
  label_runs(runs);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + xml_escape(options.title) +
                    "</title>\n<style>\n" + style_sheet + "</style>\n</head>\n<body>\n<h1>" + xml_escape(options.title) + "</h1>\n";
  if (!options.generated.empty()) out += "<p class=\"muted\">made " + xml_escape(options.generated) + " by pxfer report</p>\n";
  out += "<h2>What was measured</h2>\n<div class=\"wide\">\n" + header_table(runs) + "</div>\n";
  out += limits_section(runs);
  bool any_rates = false;
  for (const auto& r : runs) any_rates = any_rates || !r.rates.empty() || !r.files.empty();
  if (any_rates) out += "<h2>Rate over time</h2>\n" + aggregate_rate_chart(runs);
  for (const auto& r : runs)
    if (!r.files.empty()) out += files_chart(r);
  for (const auto& r : runs) out += streams_section(r);
  for (const auto& r : runs) {
    auto maps = sweep_heatmaps(r);
    if (!maps.empty()) out += "<h2>Files x streams: " + xml_escape(r.label) + "</h2>\n";
    for (const auto& m : maps) out += m;
  }
  for (const auto& r : runs) out += path_section(r);
  for (const auto& r : runs) out += notes_section(r);
  return out + "</body>\n</html>\n";
}

}  // namespace pxfer::report
