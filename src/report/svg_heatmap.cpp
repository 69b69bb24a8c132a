// The sweep's files x streams matrix as a heatmap: darker = faster, the rate printed in each cell,
// failures printed and outlined, so the numbers stay readable without any colour at all.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/svg_chart.hpp"
#include "svg_draw.hpp"

namespace pxfer::report {
namespace {

using draw::n;

// A single-hue ramp from near white to dark blue: its lightness falls monotonically, so it reads
// the same in grey scale and to every colour-blind reader.
std::string ramp(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const double from[3] = {239, 246, 255}, to[3] = {8, 48, 107};
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(from[0] + (to[0] - from[0]) * t),
                static_cast<int>(from[1] + (to[1] - from[1]) * t), static_cast<int>(from[2] + (to[2] - from[2]) * t));
  return buf;
}

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Grid {
  double left = 120, top = 70, cell_w = 100, cell_h = 46;
};

std::string cell_svg(const Grid& g, const HeatCell& c, double max_value) {
  const double x = g.left + static_cast<double>(c.col) * g.cell_w, y = g.top + static_cast<double>(c.row) * g.cell_h;
  const double t = max_value > 0 ? c.value / max_value : 0;
  const char* ink = t > 0.5 ? "#ffffff" : "#000000";
  std::string out = "<rect x=\"" + n(x) + "\" y=\"" + n(y) + "\" width=\"" + n(g.cell_w - 2) + "\" height=\"" + n(g.cell_h - 2) +
                    "\" fill=\"" + ramp(t) + "\"" +
                    (c.failures ? std::string(" stroke=\"") + palette_colour(5) + "\" stroke-width=\"3\"" : "") + "/>\n";
  const double cx = x + (g.cell_w - 2) / 2;
  out += draw::text(cx, y + (c.failures ? 19 : 27), format_value(c.value), "middle", draw::font_size,
                    std::string("fill=\"") + ink + "\" font-weight=\"bold\"");
  if (c.failures)
    out += draw::text(cx, y + 36, "\xE2\x9C\x97 " + std::to_string(c.failures) + " failed", "middle", 11,
                      std::string("fill=\"") + ink + "\"");
  return out;
}

std::string labels(const Grid& g, const Heatmap& m) {
  std::string out;
  for (std::size_t i = 0; i < m.cols.size(); ++i)
    out += draw::text(g.left + (static_cast<double>(i) + 0.5) * g.cell_w, g.top - 8, m.cols[i], "middle");
  for (std::size_t i = 0; i < m.rows.size(); ++i)
    out += draw::text(g.left - 10, g.top + (static_cast<double>(i) + 0.5) * g.cell_h + 4, m.rows[i], "end");
  out += draw::text(g.left + g.cell_w * static_cast<double>(m.cols.size()) / 2, g.top - 28, m.col_label, "middle", draw::font_size,
                    "font-style=\"italic\"");
  const double yc = g.top + g.cell_h * static_cast<double>(m.rows.size()) / 2;
  out += draw::text(24, yc, m.row_label, "middle", draw::font_size,
                    "font-style=\"italic\" transform=\"rotate(-90 24 " + n(yc) + ")\"");
  return out;
}

}  // namespace

std::string render_heatmap(const Heatmap& m) {
  Grid g;
  if (!m.cols.empty()) g.cell_w = std::clamp((m.width - g.left - 20) / static_cast<double>(m.cols.size()), 60.0, 120.0);
  const double height = g.top + g.cell_h * static_cast<double>(std::max<std::size_t>(1, m.rows.size())) + 36;
  std::string out = draw::open_svg(m.width, height, m.title) + labels(g, m);
  double max_value = 0;
  for (const auto& c : m.cells) max_value = std::max(max_value, c.value);
  std::vector<bool> present(m.rows.size() * m.cols.size(), false);
  for (const auto& c : m.cells) {
    if (c.row >= m.rows.size() || c.col >= m.cols.size()) continue;
    present[c.row * m.cols.size() + c.col] = true;
    out += cell_svg(g, c, max_value);
  }
  for (std::size_t r = 0; r < m.rows.size(); ++r)
    for (std::size_t c = 0; c < m.cols.size(); ++c)
      if (!present[r * m.cols.size() + c])
        out += draw::text(g.left + (static_cast<double>(c) + 0.5) * g.cell_w, g.top + (static_cast<double>(r) + 0.5) * g.cell_h + 4,
                          "-", "middle");
  out += draw::text(g.left, height - 12,
                    "cell: median " + m.value_label + " (darker = faster); outlined cells had failures", "start", 12);
  return out + "</svg>\n";
}

}  // namespace pxfer::report
