#pragma once
// The last component of a local path or a URL's path ("a/b/" -> "b"), as a transfer into a
// directory or a listing of one file names it.
#include <string>

namespace pxfer {

inline std::string basename_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

}  // namespace pxfer
