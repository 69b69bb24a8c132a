#pragma once
// One number through a printf format ("%.1f"), for the report's figures and the limit's evidence.
#include "pxfer/core/layer.hpp"
#include <cstdio>
#include <string>

namespace pxfer {

inline std::string printf_number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace pxfer
