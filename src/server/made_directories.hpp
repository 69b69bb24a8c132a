#pragma once
// The directories this pxferd made for MKDIR (a put -r makes its tree first, on a connection of its
// own). A small file put into one of them skips the lookups of its name before it is written
// (SinkOptions::new_directory): on tmpfs each such lookup of a name that does not exist waits for
// the directory's lock behind every other file's create and rename (docs/performance.md section 23).
// Nothing is ever replaced because of it: the final renameat2(RENAME_NOREPLACE) refuses a name that
// is taken, whoever took it and whenever. So a directory removed and made again by someone else
// under the same name costs only a later refusal, and the set is remembered by name.
#include "pxfer/server/layer.hpp"
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace pxfer::server {

class MadeDirectories {
 public:
  explicit MadeDirectories(std::size_t capacity) : capacity_(capacity) {}
  // `path` as MKDIR named it, relative to the export root.
  void made(std::string_view path);
  // Whether the directory of the file `path` (as PUT_SMALL names it) is one made here.
  bool holds_parent_of(std::string_view path) const;
  // "a//b/./c/" -> "a/b/c": the same directory however a request spells it.
  static std::string key(std::string_view path);

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_set<std::string> names_;
};

}  // namespace pxfer::server
