#pragma once
// Directory trees below an export root, for LIST and MKDIR: walked and created through
// descriptors, never following a symlink, so nothing outside the root is ever reached.
#include <string>
#include <vector>

#include "pxfer/file_io.hpp"
#include "pxfer/wire.hpp"

namespace pxfer {

// Every directory and regular file below `path` (a directory, or a file: then one entry with an
// empty relative path), parents before their contents. Symlinks and special files are skipped.
// Throws Error(usage) past `max_entries`, and the usual open errors (not found, refused).
std::vector<wire::ListEntry> list_tree(const Directory& root, const std::string& path,
                                       std::size_t max_entries = wire::max_list_entries);

// mkdir -p below the root, mode 0777 & ~umask; an existing directory is fine, a file or a
// symlink in the way is an error.
void make_directories(const Directory& root, const std::string& path);

// Directory::open_beneath's fallback where openat2 is missing: opens `path` (relative, no "..")
// below `dirfd` one component at a time, each with O_NOFOLLOW. Returns the fd, or -1 with errno
// (ELOOP for a symlink anywhere on the way). In this header for its unit test.
int open_each_component(int dirfd, const std::string& path, int flags, unsigned mode);

}  // namespace pxfer
