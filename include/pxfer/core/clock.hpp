#pragma once
// The one clock of the pure layers (meters, pacer, controllers): monotonic; callers pass its
// readings in, so tests drive those layers with made-up times.
#include "pxfer/core/layer.hpp"
#include <chrono>

namespace pxfer {
using Clock = std::chrono::steady_clock;
}  // namespace pxfer
