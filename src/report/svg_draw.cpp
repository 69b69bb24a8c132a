// Palette, markers, axes and legends for the report's SVG charts.
#include "svg_draw.hpp"

#include <cmath>
#include <cstdio>

namespace pxfer::report {

const char* palette_colour(unsigned index) {
  // Okabe & Ito (2008), "Color Universal Design": safe for the common colour-vision deficiencies.
  static const char* const colours[palette_size] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                    "#56B4E9", "#D55E00", "#000000", "#F0E442"};
  return colours[index % palette_size];
}

const char* dash_pattern(unsigned index) {
  static const char* const dashes[dash_count] = {"none", "7 4", "2 3", "9 3 2 3"};
  return dashes[index % dash_count];
}

SeriesStyle style_for(unsigned index) {
  SeriesStyle s;
  s.colour = index % palette_size;
  s.marker = index % marker_count;
  // The first 8 series are solid in 8 colours; then the colours repeat with the next dash.
  s.dash = (index / palette_size) % dash_count;
  return s;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace draw {

std::string n(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::isfinite(v) ? v : 0.0);
  std::string s = buf;
  return s == "-0.0" ? "0.0" : s;
}

std::string text(double x, double y, const std::string& content, const char* anchor, double size, const std::string& extra) {
  return "<text x=\"" + n(x) + "\" y=\"" + n(y) + "\" text-anchor=\"" + anchor + "\" font-size=\"" + n(size) + "\"" +
         (extra.empty() ? "" : " " + extra) + ">" + xml_escape(content) + "</text>\n";
}

std::string marker(unsigned kind, double x, double y, double r, const char* colour, bool open) {
  const std::string paint = std::string(" fill=\"") + (open ? "#ffffff" : colour) + "\" stroke=\"" + colour + "\" stroke-width=\"1.5\"";
  switch (kind % marker_count) {
    case 0: return "<circle cx=\"" + n(x) + "\" cy=\"" + n(y) + "\" r=\"" + n(r) + "\"" + paint + "/>";
    case 1:
      return "<rect x=\"" + n(x - r) + "\" y=\"" + n(y - r) + "\" width=\"" + n(2 * r) + "\" height=\"" + n(2 * r) + "\"" + paint + "/>";
    case 2:
      return "<path d=\"M" + n(x) + " " + n(y - r * 1.2) + "L" + n(x + r * 1.1) + " " + n(y + r * 0.8) + "L" + n(x - r * 1.1) +
             " " + n(y + r * 0.8) + "Z\"" + paint + "/>";
    case 3:
      return "<path d=\"M" + n(x) + " " + n(y - r * 1.3) + "L" + n(x + r) + " " + n(y) + "L" + n(x) + " " + n(y + r * 1.3) +
             "L" + n(x - r) + " " + n(y) + "Z\"" + paint + "/>";
    default:
      return "<path d=\"M" + n(x - r) + " " + n(y - r) + "L" + n(x + r) + " " + n(y + r) + "M" + n(x - r) + " " + n(y + r) +
             "L" + n(x + r) + " " + n(y - r) + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"/>";
  }
}

std::string open_svg(double width, double height, const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + n(width) + " " + n(height) + "\" width=\"" + n(width) +
         "\" height=\"" + n(height) + "\" role=\"img\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">\n<title>" +
         xml_escape(title) + "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" + text(10, 20, title, "start", 15, "font-weight=\"bold\"");
}

double Frame::px(double v) const { return left + (v / x_unit.divisor - x.lo) / (x.hi - x.lo) * width; }
double Frame::py(double v) const { return top + height - (v / y_unit.divisor - y.lo) / (y.hi - y.lo) * height; }

std::string axes(const Frame& f, const std::string& x_title, const std::string& y_title) {
  std::string out = "<g class=\"axes\">\n";
  for (double t : f.y.ticks) {
    const double y = f.top + f.height - (t - f.y.lo) / (f.y.hi - f.y.lo) * f.height;
    out += "<line x1=\"" + n(f.left) + "\" y1=\"" + n(y) + "\" x2=\"" + n(f.left + f.width) + "\" y2=\"" + n(y) +
           "\" stroke=\"" + grid_colour + "\"/>\n";
    out += text(f.left - 6, y + 4, format_tick(t, f.y.step), "end");
  }
  for (double t : f.x.ticks) {
    const double x = f.left + (t - f.x.lo) / (f.x.hi - f.x.lo) * f.width;
    out += "<line x1=\"" + n(x) + "\" y1=\"" + n(f.top + f.height) + "\" x2=\"" + n(x) + "\" y2=\"" + n(f.top + f.height + 5) +
           "\" stroke=\"" + axis_colour + "\"/>\n";
    out += text(x, f.top + f.height + 19, format_tick(t, f.x.step), "middle");
  }
  out += "<path d=\"M" + n(f.left) + " " + n(f.top) + "V" + n(f.top + f.height) + "H" + n(f.left + f.width) +
         "\" fill=\"none\" stroke=\"" + axis_colour + "\"/>\n";
  out += text(f.left + f.width / 2, f.top + f.height + 38, x_title, "middle");
  const double yc = f.top + f.height / 2;
  out += text(16, yc, y_title, "middle", font_size, "transform=\"rotate(-90 16 " + n(yc) + ")\"");
  return out + "</g>\n";
}

std::string hatch_pattern(const std::string& id) {
  return "<defs><pattern id=\"" + id +
         "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#ffffff\" stroke-width=\"2\"/></pattern></defs>\n";
}

std::pair<std::string, double> legend(const std::vector<LegendItem>& items, double x0, double y0, double width) {
  std::string out = "<g class=\"legend\">\n";
  double x = x0, y = y0 + 8;
  const double row = 20;
  for (const auto& item : items) {
    const double w = 44 + char_width * static_cast<double>(item.name.size()) + 16;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += row;
    }
    const char* colour = palette_colour(item.style.colour);
    if (item.band) {
      out += "<rect x=\"" + n(x + 8) + "\" y=\"" + n(y - 6) + "\" width=\"20\" height=\"12\" fill=\"" + colour +
             "\" stroke=\"#ffffff\"/>";
      if (!item.overlay.empty())
        out += "<rect x=\"" + n(x + 8) + "\" y=\"" + n(y - 6) + "\" width=\"20\" height=\"12\" fill=\"" + item.overlay + "\"/>";
    } else {
      out += "<line x1=\"" + n(x) + "\" y1=\"" + n(y) + "\" x2=\"" + n(x + 36) + "\" y2=\"" + n(y) + "\" stroke=\"" + colour +
             "\" stroke-width=\"" + n(item.style.width) + "\" stroke-dasharray=\"" + dash_pattern(item.style.dash) + "\"/>";
      out += marker(item.style.marker, x + 18, y, 3.5, colour);
    }
    out += text(x + 42, y + 4, item.name);
    x += w;
  }
  return {out + "</g>\n", y - y0 + row - 4};
}

}  // namespace draw
}  // namespace pxfer::report
