// Files over time in a batch run: one bar per file from its start to its end, packed into as few
// lanes as do not overlap, so 10,000 small files still fit on one chart.
#include <algorithm>

#include "report/svg_chart.hpp"
#include "svg_draw.hpp"

namespace pxfer::report {
namespace {

using draw::n;

constexpr std::size_t max_lanes = 40;

// Lane of each bar: the first lane whose last bar ended before this one starts (bars sorted by start).
std::vector<std::size_t> pack(const std::vector<Lane>& bars, std::size_t* lanes_used) {
  std::vector<std::size_t> order(bars.size()), lane_of(bars.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bars[a].start < bars[b].start; });
  std::vector<double> lane_end;
  for (std::size_t i : order) {
    std::size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > bars[i].start) ++lane;
    if (lane == lane_end.size()) {
      if (lane_end.size() < max_lanes) lane_end.push_back(0);
      else lane = lane_end.size() - 1;  // overflow: drawn over the last lane
    }
    lane_end[lane] = std::max(lane_end[lane], bars[i].end);
    lane_of[i] = lane;
  }
  *lanes_used = lane_end.size();
  return lane_of;
}

}  // namespace

std::string render_lane_chart(const LaneChart& c) {
  std::size_t lanes = 0;
  const auto lane_of = pack(c.lanes, &lanes);
  std::vector<draw::LegendItem> items;
  for (const auto& [name, colour] : c.legend) items.push_back({name, SeriesStyle{colour, 0, 0, 2}, true, ""});
  auto [legend_svg, legend_height] = draw::legend(items, 70, 32, c.width - 90);
  draw::Frame f;
  f.top = 32 + legend_height + 12;
  f.width = c.width - f.left - 20;
  const double lane_h = lanes > 20 ? 8 : 14;
  f.height = std::max(40.0, lane_h * static_cast<double>(lanes));
  f.x_unit = c.x_unit;
  double x_max = c.x_max;
  for (const auto& l : c.lanes) x_max = std::max(x_max, l.end);
  f.x = nice_axis(0, x_max / c.x_unit.divisor, 8);
  f.y = nice_axis(0, static_cast<double>(std::max<std::size_t>(1, lanes)), 4);
  f.y.ticks.clear();  // lanes have no scale
  std::string out = draw::open_svg(c.width, f.top + f.height + 50, c.title) + legend_svg;
  out += "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" fill=\"#ffffff\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#000000\" "
         "stroke-width=\"3\"/></pattern></defs>\n";
  out += draw::axes(f, "time (" + c.x_unit.name + ")", "files");
  for (std::size_t i = 0; i < c.lanes.size(); ++i) {
    const auto& l = c.lanes[i];
    const double x = f.px(l.start), w = std::max(1.5, f.px(l.end) - x);
    const double y = f.top + static_cast<double>(lane_of[i]) * lane_h + 1;
    out += "<rect x=\"" + n(x) + "\" y=\"" + n(y) + "\" width=\"" + n(w) + "\" height=\"" + n(lane_h - 2) + "\" fill=\"" +
           (l.hatched ? std::string("url(#hatch)") : std::string(palette_colour(l.colour))) +
           // A white edge parts files that follow each other in one lane; a hatched bar keeps its colour's.
           "\" stroke=\"" + (l.hatched ? palette_colour(l.colour) : "#ffffff") + "\"><title>" + xml_escape(l.name) +
           "</title></rect>\n";
  }
  return out + "</svg>\n";
}

}  // namespace pxfer::report
