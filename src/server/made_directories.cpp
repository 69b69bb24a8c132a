#include "made_directories.hpp"

namespace pxfer::server {

std::string MadeDirectories::key(std::string_view path) {
  std::string out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") {
      if (!out.empty()) out += '/';
      out += part;
    }
    start = end + 1;
  }
  return out;
}

void MadeDirectories::made(std::string_view path) {
  std::string name = key(path);
  std::lock_guard lock(mutex_);
  // Bounded: past its capacity the set starts again (files in older directories keep their checks).
  if (names_.size() >= capacity_) names_.clear();
  names_.insert(std::move(name));
}

bool MadeDirectories::holds_parent_of(std::string_view path) const {
  std::string name = key(path);
  const auto slash = name.rfind('/');
  name.resize(slash == std::string::npos ? 0 : slash);
  std::lock_guard lock(mutex_);
  return names_.contains(name);
}

}  // namespace pxfer::server
