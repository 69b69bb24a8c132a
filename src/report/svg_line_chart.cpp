// Line charts over time: rate, cwnd, RTT, Send-Q; stacked bands for the per-stream rate.
#include <algorithm>
#include <cmath>
#include <functional>

#include "report/svg_chart.hpp"
#include "svg_draw.hpp"

namespace pxfer::report {
namespace {

using draw::n;

// Appends "M x y" (first point) or "L x y" to a path. (Appending, rather than "L" + n(...), also
// keeps g++ 12 from a false -Wrestrict on operator+(const char*, string&&).)
void path_to(std::string& d, const draw::Frame& f, double x, double y) {
  d += d.empty() ? 'M' : 'L';
  d += n(f.px(x));
  d += ' ';
  d += n(f.py(y));
}

// Markers on at most ~24 points of a series, so a long run stays a line.
std::size_t marker_stride(std::size_t points) { return std::max<std::size_t>(1, (points + 23) / 24); }

draw::Frame frame_for(const LineChart& c, double top) {
  draw::Frame f;
  f.top = top;
  f.width = c.width - f.left - 20;
  f.height = c.height - 60;
  f.x_unit = c.x_unit;
  f.y_unit = c.y_unit;
  double x_max = 0, y_max = 0;
  bool any = false;
  for (const auto& s : c.series)
    for (const auto& [x, y] : s.points) {
      x_max = any ? std::max(x_max, x) : x;
      y_max = any ? std::max(y_max, y) : y;
      any = true;
    }
  for (const auto& m : c.marks) x_max = std::max(x_max, m.x);
  x_max = std::max(x_max, c.x_max);
  f.x = nice_axis(0, x_max / c.x_unit.divisor, 8);
  f.y = nice_axis(0, std::max(0.0, y_max) / c.y_unit.divisor, 5);
  return f;
}

std::string polyline(const draw::Frame& f, const Series& s) {
  const char* colour = palette_colour(s.style.colour);
  std::string d;
  for (const auto& [x, y] : s.points) path_to(d, f, x, y);
  std::string out = "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"" + n(s.style.width) +
                    "\" stroke-dasharray=\"" + dash_pattern(s.style.dash) + "\" stroke-linejoin=\"round\"/>\n";
  const std::size_t stride = marker_stride(s.points.size());
  for (std::size_t i = 0; i < s.points.size(); i += stride)
    out += draw::marker(s.style.marker, f.px(s.points[i].first), f.py(s.points[i].second), 3.5, colour) + "\n";
  return out;
}

// An id for this chart's band pattern: charts share a page, so ids must differ between them.
std::string pattern_id(const LineChart& c) { return "bands-" + std::to_string(std::hash<std::string>{}(c.title) % 1000000007); }

// Band i: from series i-1's tops (or the axis) up to series i's tops, at the same x values; a
// band whose colour an earlier band already has (stream 8 and up) is hatched as well.
std::string band(const draw::Frame& f, const Series* below, const Series& s, const std::string& pattern) {
  std::string d;
  for (const auto& [x, y] : s.points) path_to(d, f, x, y);
  if (below && below->points.size() == s.points.size()) {
    for (auto it = below->points.rbegin(); it != below->points.rend(); ++it) path_to(d, f, it->first, it->second);
  } else if (!s.points.empty()) {
    path_to(d, f, s.points.back().first, 0);
    path_to(d, f, s.points.front().first, 0);
  }
  std::string out = "<path d=\"" + d + "Z\" fill=\"" + palette_colour(s.style.colour) + "\" stroke=\"#ffffff\" stroke-width=\"1\"/>\n";
  if (s.style.dash > 0) out += "<path d=\"" + d + "Z\" fill=\"url(#" + pattern + ")\"/>\n";
  return out;
}

std::string marks(const draw::Frame& f, const std::vector<Mark>& ms) {
  std::string out = "<g class=\"file-marks\">\n";
  const double bottom = f.top + f.height;
  for (const auto& m : ms) {
    const double x = f.px(m.x);
    const char* colour = palette_colour(m.colour);
    if (m.end)
      out += "<path d=\"M" + n(x - 4) + " " + n(f.top) + "L" + n(x + 4) + " " + n(f.top) + "L" + n(x) + " " + n(f.top + 7) +
             "Z\" fill=\"" + colour + "\" stroke=\"" + colour + "\"/>\n";
    else
      out += "<path d=\"M" + n(x - 4) + " " + n(bottom) + "L" + n(x + 4) + " " + n(bottom) + "L" + n(x) + " " + n(bottom - 7) +
             "Z\" fill=\"#ffffff\" stroke=\"" + colour + "\" stroke-width=\"1.5\"/>\n";
  }
  return out + "</g>\n";
}

std::vector<draw::LegendItem> legend_items(const LineChart& c) {
  std::vector<draw::LegendItem> items;
  for (const auto& s : c.series)
    items.push_back({s.name, s.style, c.stacked, c.stacked && s.style.dash > 0 ? "url(#" + pattern_id(c) + ")" : ""});
  return items;
}

}  // namespace

std::string render_line_chart(const LineChart& c) {
  auto [legend_svg, legend_height] = draw::legend(legend_items(c), 70, 32, c.width - 90);
  std::string extra_legend;
  double extra = 0;
  if (!c.marks.empty()) {
    extra_legend = draw::text(70, 32 + legend_height + 12,
                              "\xE2\x96\xB3 at the bottom: a file starts;  \xE2\x96\xBC at the top: a file ends");
    extra = 20;
  }
  draw::Frame f = frame_for(c, 32 + legend_height + extra + 14);
  const double total_height = f.top + f.height + 50;
  std::string out = draw::open_svg(c.width, total_height, c.title) + legend_svg + extra_legend;
  out += draw::axes(f, c.x_label + " (" + c.x_unit.name + ")",
                    c.y_label + (c.y_unit.name.empty() ? "" : " (" + c.y_unit.name + ")"));
  out += "<g class=\"series\">\n";
  if (c.stacked) {
    out += draw::hatch_pattern(pattern_id(c));
    for (std::size_t i = c.series.size(); i-- > 0;) out += band(f, i ? &c.series[i - 1] : nullptr, c.series[i], pattern_id(c));
  } else {
    for (const auto& s : c.series) out += polyline(f, s);
  }
  out += "</g>\n";
  if (!c.marks.empty()) out += marks(f, c.marks);
  if (c.series.empty() || std::all_of(c.series.begin(), c.series.end(), [](const Series& s) { return s.points.empty(); }))
    out += draw::text(f.left + f.width / 2, f.top + f.height / 2, "no samples in the input", "middle");
  return out + "</svg>\n";
}

}  // namespace pxfer::report
