#pragma once
// The last component of a local path or a URL's path ("a/b/" -> "b"), as a transfer into a
// directory or a listing of one file names it; and the part before it.
#include "pxfer/client/layer.hpp"
#include <string>

namespace pxfer {

inline std::string basename_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// The directory part of a path ("a/b/f" -> "a/b", "/f" -> "/", "f" -> "").
inline std::string parent_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : p.substr(0, slash);
}

}  // namespace pxfer
