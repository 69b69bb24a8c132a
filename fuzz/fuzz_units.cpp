// libFuzzer target: the size, duration and rate parsers that read command-line values
// (--block-size 4M, --stall-timeout 30s, pxfer doctor --target 10gbit).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pxfer/core/doctor.hpp"
#include "pxfer/common/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto bytes = pxfer::parse_size(text)) (void)pxfer::format_size(*bytes);
  if (auto ms = pxfer::parse_duration(text)) {
    if (ms->count() < 0) std::abort();
  }
  if (auto rate = pxfer::parse_rate(text)) {
    // Callers convert the rate to integers: it must be a finite, positive number.
    if (!std::isfinite(*rate) || *rate <= 0) std::abort();
  }
  return 0;
}
