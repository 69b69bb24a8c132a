#pragma once
// Directory trees below an export root, for LIST and MKDIR: walked and created through
// descriptors, never following a symlink, so nothing outside the root is ever reached.
#include "pxfer/io/layer.hpp"
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/file_io.hpp"
#include "wire/wire.hpp"

namespace pxfer {

// The walk below a LIST's path, a LISTING frame at a time: only one frame's entries and one open
// directory per level are held, however big the tree (pxferd streams each frame out before it
// reads on). Same entries, same order and same errors as list_tree.
class TreeWalk {
 public:
  // Opens `path` (a directory, or a single file); throws the open errors (not found, refused).
  TreeWalk(const Directory& root, const std::string& path, std::size_t max_entries = wire::max_list_entries);
  ~TreeWalk();
  TreeWalk(const TreeWalk&) = delete;
  TreeWalk& operator=(const TreeWalk&) = delete;

  // The next frame, filled up to max_control_payload; more = 0 on the last (an empty tree: one
  // empty frame). Throws Error(usage) past max_entries, and when a directory cannot be read.
  wire::Listing next();

 private:
  struct Level;
  std::optional<wire::ListEntry> read_one();
  void add_count();
  std::string top_;
  std::size_t max_entries_;
  std::size_t count_ = 0;
  std::vector<std::unique_ptr<Level>> levels_;  // the directories being read, outermost first
  std::optional<wire::ListEntry> pending_;       // read, but did not fit in the last frame
};

// Every directory and regular file below `path` (a directory, or a file: then one entry with an
// empty relative path), parents before their contents. Symlinks and special files are skipped.
// Throws Error(usage) past `max_entries`, and the usual open errors (not found, refused).
std::vector<wire::ListEntry> list_tree(const Directory& root, const std::string& path,
                                       std::size_t max_entries = wire::max_list_entries);

// mkdir -p below the root, mode 0777 & ~umask; an existing directory is fine, a file or a
// symlink in the way is an error. True when the last directory of `path` was made here (it did
// not exist before).
bool make_directories(const Directory& root, const std::string& path);

// Directory::open_beneath's fallback where openat2 is missing: opens `path` (relative, no "..")
// below `dirfd` one component at a time, each with O_NOFOLLOW. Returns the fd, or -1 with errno
// (ELOOP for a symlink anywhere on the way). In this header for its unit test.
int open_each_component(int dirfd, const std::string& path, int flags, unsigned mode);

}  // namespace pxfer
