// From runs to charts: which series go on which chart, in which units and styles.
#include <algorithm>
#include <map>
#include <set>

#include "pxfer/core/report_html.hpp"
#include "report/svg_chart.hpp"

namespace pxfer::report {
namespace {

constexpr std::size_t max_runs_with_inst = 4;
constexpr std::size_t max_file_marks = 400;

double max_time(const std::vector<const Run*>& runs) {
  double t = 0;
  for (const Run* r : runs) {
    for (const auto& p : r->rates) t = std::max(t, p.t);
    for (const auto& f : r->files) t = std::max(t, f.end_s.value_or(f.start_s));
    for (const auto& s : r->streams) t = std::max(t, s.t);
  }
  return t;
}

// Series of one per-stream figure, one per stream, in stream order.
std::vector<Series> per_stream(const Run& run, double StreamPoint::*field, double scale = 1) {
  std::map<unsigned, Series> by_stream;
  for (const auto& p : run.streams) {
    auto& s = by_stream[p.stream];
    s.points.emplace_back(p.t, p.*field * scale);
  }
  std::vector<Series> out;
  for (auto& [stream, s] : by_stream) {
    s.name = "stream " + std::to_string(stream);
    s.style = style_for(stream);
    s.style.width = 1.5;
    out.push_back(std::move(s));
  }
  return out;
}

double max_y(const std::vector<Series>& series) {
  double m = 0;
  for (const auto& s : series)
    for (const auto& p : s.points) m = std::max(m, p.second);
  return m;
}

LineChart stream_chart(const Run& run, const std::string& title, const std::string& y_label, std::vector<Series> series,
                       Unit y_unit) {
  LineChart c;
  c.title = title + ": " + run.label;
  c.y_label = y_label;
  c.x_max = max_time({&run});
  c.x_unit = time_unit(c.x_max);
  c.y_unit = std::move(y_unit);
  c.series = std::move(series);
  c.height = 240;
  return c;
}

// Stacked per-stream rate: each band's top is the sum of the streams up to it, at the run's
// interval times (a stream missing from an interval adds nothing there).
LineChart stacked_rate(const Run& run) {
  std::set<double> times;
  std::set<unsigned> streams;
  std::map<std::pair<unsigned, double>, double> rate;
  for (const auto& p : run.streams) {
    times.insert(p.t);
    streams.insert(p.stream);
    rate[{p.stream, p.t}] = p.inst_Bps;
  }
  std::vector<Series> bands;
  std::map<double, double> running;
  for (unsigned s : streams) {
    Series band;
    band.name = "stream " + std::to_string(s);
    band.style = style_for(s);
    for (double t : times) {
      auto it = rate.find({s, t});
      running[t] += it == rate.end() ? 0 : it->second;
      band.points.emplace_back(t, running[t]);
    }
    bands.push_back(std::move(band));
  }
  LineChart c = stream_chart(run, "Rate per stream, stacked", "rate", std::move(bands), Unit{});
  c.y_unit = rate_unit(max_y(c.series));
  c.stacked = true;
  c.height = 280;
  return c;
}

}  // namespace

std::string aggregate_rate_chart(const std::vector<Run>& runs) {
  std::vector<const Run*> with_rates;
  std::size_t files = 0;
  for (const auto& r : runs)
    if (!r.rates.empty() || !r.files.empty()) {
      with_rates.push_back(&r);
      files += r.files.size();
    }
  // Many runs: the avg lines alone stay readable. Many files: the files chart shows them instead.
  const bool with_inst = with_rates.size() <= max_runs_with_inst;
  const bool with_marks = files <= max_file_marks;
  LineChart c;
  c.title = with_inst ? "Aggregate rate over time (avg since the start, inst over each interval)"
                      : "Aggregate rate over time (avg since the start; inst left out with this many runs)";
  c.y_label = "rate";
  c.x_max = max_time(with_rates);
  c.x_unit = time_unit(c.x_max);
  double peak = 0;
  for (std::size_t i = 0; i < with_rates.size(); ++i) {
    const Run& r = *with_rates[i];
    const SeriesStyle style = style_for(static_cast<unsigned>(i));
    Series avg{r.label + " avg", {}, {style.colour, style.dash, style.marker, 2.5}};
    Series inst{r.label + " inst", {}, {style.colour, (style.dash + 1) % dash_count, style.marker, 1.5}};
    for (const auto& p : r.rates) {
      avg.points.emplace_back(p.t, p.avg_Bps);
      inst.points.emplace_back(p.t, p.inst_Bps);
      peak = std::max({peak, p.avg_Bps, with_inst ? p.inst_Bps : 0.0});
    }
    c.series.push_back(std::move(avg));
    if (with_inst) c.series.push_back(std::move(inst));
    for (const auto& f : r.files) {
      if (!with_marks) break;
      c.marks.push_back({f.start_s, false, style.colour});
      if (f.end_s) c.marks.push_back({*f.end_s, true, style.colour});
    }
  }
  c.y_unit = rate_unit(peak);
  return render_line_chart(c);
}

std::vector<std::string> stream_charts(const Run& run) {
  if (run.streams.empty()) return {};
  std::vector<std::string> out;
  out.push_back(render_line_chart(stacked_rate(run)));
  auto cwnd = per_stream(run, &StreamPoint::cwnd);
  out.push_back(render_line_chart(stream_chart(run, "Congestion window per stream", "cwnd", std::move(cwnd), Unit{1, "segments"})));
  auto rtt = per_stream(run, &StreamPoint::rtt_us);
  Unit rtt_u = rtt_unit(max_y(rtt));
  out.push_back(render_line_chart(stream_chart(run, "Round-trip time per stream", "smoothed RTT", std::move(rtt), rtt_u)));
  auto retrans = per_stream(run, &StreamPoint::retransmits);
  out.push_back(render_line_chart(
      stream_chart(run, "Retransmits per stream (total so far)", "retransmitted", std::move(retrans), Unit{1, "segments"})));
  auto send_q = per_stream(run, &StreamPoint::send_q);
  Unit q_u = size_unit(max_y(send_q));
  out.push_back(render_line_chart(
      stream_chart(run, "Send-Q per stream (bytes waiting to be sent)", "Send-Q",
                   std::move(send_q), q_u)));
  return out;
}

std::string files_chart(const Run& run) {
  if (run.files.empty()) return "";
  LaneChart c;
  c.title = "Files over time: " + run.label;
  c.legend = {{"done", 0}, {"skipped", 4}, {"failed (hatched)", 5}, {"unfinished", 6}};
  double end = max_time({&run});
  c.x_max = end;
  c.x_unit = time_unit(end);
  for (const auto& f : run.files) {
    Lane l{f.path, f.start_s, f.end_s.value_or(end), 0, false};
    if (f.state == FileState::skipped) l.colour = 4;
    if (f.state == FileState::failed) l = {f.path + ": " + f.error, f.start_s, l.end, 5, true};
    if (f.state == FileState::running) l.colour = 6;
    c.lanes.push_back(std::move(l));
  }
  return render_lane_chart(c);
}

std::vector<std::string> sweep_heatmaps(const Run& run) {
  std::map<std::string, std::vector<const SweepPoint*>> groups;
  for (const auto& p : run.sweep) groups[p.setting].push_back(&p);
  std::vector<std::string> out;
  for (const auto& [setting, points] : groups) {
    std::set<unsigned> files, streams;
    for (const auto* p : points) {
      files.insert(p->files);
      streams.insert(p->streams);
    }
    Heatmap m;
    m.title = "Sweep, " + setting + ": median rate per cell";
    m.row_label = "files at once";
    m.col_label = "streams per file";
    m.value_label = "Mbit/s";
    for (unsigned f : files) m.rows.push_back(std::to_string(f));
    for (unsigned s : streams) m.cols.push_back(std::to_string(s));
    for (const auto* p : points) {
      auto row = static_cast<std::size_t>(std::distance(files.begin(), files.find(p->files)));
      auto col = static_cast<std::size_t>(std::distance(streams.begin(), streams.find(p->streams)));
      m.cells.push_back({row, col, p->median_mbit, p->failures});
    }
    out.push_back(render_heatmap(m));
  }
  return out;
}

}  // namespace pxfer::report
