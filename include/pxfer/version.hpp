#pragma once
// pxfer's version (CMake's project version), as reports and summaries state it.
namespace pxfer {
const char* pxfer_version();
}  // namespace pxfer
