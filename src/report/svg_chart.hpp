#pragma once
// Inline SVG charts for `pxfer report`: lines (optionally stacked bands), a files-over-time lane
// chart and a heatmap. Plain strings out, nothing fetched: the page opens offline. Colours are the
// Okabe-Ito palette (told apart by colour-blind readers) and every series also has its own dash
// pattern and marker, so a grey-scale print still tells them apart.
#include "pxfer/core/layer.hpp"
#include <string>
#include <utility>
#include <vector>

#include "report/chart_scale.hpp"

namespace pxfer::report {

inline constexpr unsigned palette_size = 8;
// Okabe-Ito: black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple
// (reordered so that neighbours differ in lightness too).
const char* palette_colour(unsigned index);
inline constexpr unsigned dash_count = 4;
const char* dash_pattern(unsigned index);  // "none" (solid), "7 4", "2 3", "9 3 2 3"
inline constexpr unsigned marker_count = 5;

struct SeriesStyle {
  unsigned colour = 0;
  unsigned dash = 0;
  unsigned marker = 0;  // circle, square, triangle, diamond, cross
  double width = 2;
};
// The style of the `index`th series of a chart: colour first, then dash and marker, so that
// 8 x 4 series stay distinct.
SeriesStyle style_for(unsigned index);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y) in data units, x ascending
  SeriesStyle style;
};

// A tick on the time axis (a file starting or ending in a batch run).
struct Mark {
  double x = 0;
  bool end = false;  // start: open triangle at the bottom; end: filled triangle at the top
  unsigned colour = 0;
};

struct LineChart {
  std::string title;
  std::string x_label = "time";  // the unit is appended: "time (s)"
  std::string y_label;
  Unit x_unit{1, "s"};
  Unit y_unit{1, ""};
  std::vector<Series> series;
  std::vector<Mark> marks;
  double x_max = 0;  // the time axis reaches at least this far (charts of one run share it)
  // Series hold cumulative tops: band i fills between series i-1 (or 0) and series i.
  bool stacked = false;
  double width = 960;
  double height = 300;  // of the plot area and axes, legend not included
};

std::string render_line_chart(const LineChart& chart);

// One row per file (packed into lanes when there are many): a bar from start to end.
struct Lane {
  std::string name;
  double start = 0, end = 0;
  unsigned colour = 0;
  bool hatched = false;  // failed files: hatched as well as coloured
};
struct LaneChart {
  std::string title;
  Unit x_unit{1, "s"};
  std::vector<Lane> lanes;
  std::vector<std::pair<std::string, unsigned>> legend;  // text, colour
  double x_max = 0;  // the time axis reaches at least this far
  double width = 960;
};
std::string render_lane_chart(const LaneChart& chart);

struct HeatCell {
  std::size_t row = 0, col = 0;
  double value = 0;
  unsigned failures = 0;
};
struct Heatmap {
  std::string title;
  std::string row_label, col_label, value_label;  // "files at once", "streams per file", "Mbit/s"
  std::vector<std::string> rows, cols;
  std::vector<HeatCell> cells;  // absent cells show "-"
  double width = 960;
};
std::string render_heatmap(const Heatmap& map);

// &, <, >, " and ' as entities.
std::string xml_escape(const std::string& text);

}  // namespace pxfer::report
