#include "support/png.hpp"

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace pxfer::e2e {
namespace {

std::uint32_t be32(const std::string& s, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

std::optional<std::string> inflate_all(const std::string& in, std::size_t expected) {
  std::string out(expected, '\0');
  uLongf size = expected;
  if (uncompress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(in.data()), in.size()) != Z_OK)
    return std::nullopt;
  out.resize(size);
  return out;
}

int paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Undoes the per-row filters (PNG spec 9.2) in place; bpp = bytes per pixel.
bool unfilter(std::string& data, std::uint32_t width, std::uint32_t height, std::size_t bpp, std::vector<std::uint8_t>& out) {
  const std::size_t stride = width * bpp;
  out.assign(stride * height, 0);
  for (std::uint32_t y = 0; y < height; ++y) {
    const std::size_t row = y * (stride + 1);
    if (row + stride >= data.size() + 1) return false;
    const int filter = static_cast<unsigned char>(data[row]);
    for (std::size_t x = 0; x < stride; ++x) {
      const int raw = static_cast<unsigned char>(data[row + 1 + x]);
      const int a = x >= bpp ? out[y * stride + x - bpp] : 0;
      const int b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const int c = x >= bpp && y > 0 ? out[(y - 1) * stride + x - bpp] : 0;
      const int pred = filter == 0 ? 0 : filter == 1 ? a : filter == 2 ? b : filter == 3 ? (a + b) / 2 : paeth(a, b, c);
      if (filter > 4) return false;
      out[y * stride + x] = static_cast<std::uint8_t>(raw + pred);
    }
  }
  return true;
}

}  // namespace

std::optional<PngImage> read_png(const std::string& path, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() < 33 || s.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || s.compare(12, 4, "IHDR") != 0) {
    if (why) *why = path + ": not a PNG (" + std::to_string(s.size()) + " bytes)";
    return std::nullopt;
  }
  PngImage img;
  img.width = be32(s, 16);
  img.height = be32(s, 20);
  const int depth = static_cast<unsigned char>(s[24]), colour = static_cast<unsigned char>(s[25]);
  const int interlace = static_cast<unsigned char>(s[28]);
  if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) return img;
  std::string idat;
  for (std::size_t at = 8; at + 12 <= s.size();) {
    const std::uint32_t len = be32(s, at);
    if (at + 12 + len > s.size()) break;
    if (s.compare(at + 4, 4, "IDAT") == 0) idat.append(s, at + 8, len);
    at += 12 + len;
  }
  const std::size_t bpp = colour == 6 ? 4 : 3;
  auto raw = inflate_all(idat, (img.width * bpp + 1) * static_cast<std::size_t>(img.height));
  std::vector<std::uint8_t> px;
  if (!raw || !unfilter(*raw, img.width, img.height, bpp, px)) return img;
  img.pixels.reserve(static_cast<std::size_t>(img.width) * img.height);
  for (std::size_t i = 0; i + bpp <= px.size(); i += bpp)
    img.pixels.push_back(static_cast<std::uint32_t>(px[i]) << 16 | static_cast<std::uint32_t>(px[i + 1]) << 8 | px[i + 2]);
  return img;
}

}  // namespace pxfer::e2e
