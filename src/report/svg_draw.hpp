#pragma once
// Drawing helpers shared by the SVG charts (private to src/report).
#include "pxfer/core/layer.hpp"
#include <string>
#include <utility>
#include <vector>

#include "report/chart_scale.hpp"
#include "report/svg_chart.hpp"

namespace pxfer::report::draw {

inline constexpr double font_size = 13;
inline constexpr double char_width = 7.2;  // of the sans-serif at font_size, a generous estimate
inline constexpr const char* axis_colour = "#333333";
inline constexpr const char* grid_colour = "#dddddd";

// A coordinate with one decimal ("12.5"), never "-0.0".
std::string n(double v);
std::string text(double x, double y, const std::string& content, const char* anchor = "start", double size = font_size,
                 const std::string& extra = "");
// A marker centred on (x, y), radius r, outlined in `colour` (filled unless `open`).
std::string marker(unsigned kind, double x, double y, double r, const char* colour, bool open = false);
// Opening <svg> of a chart of this size, with its title as <title> and a visible heading.
std::string open_svg(double width, double height, const std::string& title);

// Plot area and its scales; values are in data units, divided by the unit before scaling.
struct Frame {
  double left = 70, top = 40, width = 860, height = 220;
  Axis x, y;
  Unit x_unit, y_unit;
  double px(double v) const;
  double py(double v) const;
};
// Grid, ticks, tick labels and the two axis titles.
std::string axes(const Frame& f, const std::string& x_title, const std::string& y_title);

struct LegendItem {
  std::string name;
  SeriesStyle style;
  bool band = false;  // a filled square instead of a line sample
  std::string overlay;  // a band's pattern over its colour ("url(#id)"), "" for none
};
// <defs> with a pattern of white diagonal lines, for bands that share a colour with another.
std::string hatch_pattern(const std::string& id);
// Laid out left to right, wrapping at `width`; returns the SVG and the height it takes.
std::pair<std::string, double> legend(const std::vector<LegendItem>& items, double x, double y, double width);

}  // namespace pxfer::report::draw
