#pragma once
// Just enough PNG reading to check a screenshot: its size from IHDR, and its pixels (8-bit RGB or
// RGBA, non-interlaced, as Chromium writes them) to tell a rendered page from a blank one.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pxfer::e2e {

struct PngImage {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint32_t> pixels;  // 0xRRGGBB, row by row; empty when the format is not supported
};

// nullopt (and *why) when the file is not a PNG; pixels empty when it is one this cannot decode.
std::optional<PngImage> read_png(const std::string& path, std::string* why);

}  // namespace pxfer::e2e
