#include "pxfer/version.hpp"

#ifndef PXFER_VERSION
#define PXFER_VERSION "unknown"
#endif

namespace pxfer {
const char* pxfer_version() { return PXFER_VERSION; }
}  // namespace pxfer
