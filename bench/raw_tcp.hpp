#pragma once
// The reference every transfer figure is compared with: a plain blocking TCP copy over loopback,
// one sender thread and one receiver thread, no files, no checksum.
#include <cstdint>

namespace pxfer::bench {
// Moves `bytes` over 127.0.0.1 and returns the seconds it took.
double raw_loopback_copy(std::uint64_t bytes, std::uint32_t chunk = 1 << 20);
}
