#pragma once
// The namespace requests below an export root that are not transfers: STAT, RENAME and
// REMOVE_TREE (pxfer stat / mv / rm -r, the gfal2 plugin). Like io/tree.hpp, everything goes
// through descriptors opened beneath the root, and no symlink is ever followed.
#include "pxfer/io/layer.hpp"
#include <string>
#include <vector>

#include "io/file_io.hpp"
#include "wire/wire.hpp"

namespace pxfer {

// The kind, size, permission bits and mtime of one name ("" or "." = the root itself). A symlink
// is refused (permission), a special file or nothing at all is not_found.
wire::ListEntry stat_entry(const Directory& root, const std::string& path);

// renameat2 from -> to, both below the root; RENAME_NOREPLACE unless `overwrite` (then an existing
// target of the same kind is replaced atomically). Neither may be the root.
void rename_entry(const Directory& root, const std::string& from, const std::string& to, bool overwrite);

// A file, or a directory: empty unless `recursive` (then its contents first, depth first, each
// opened with O_NOFOLLOW: a symlink inside is removed as a name, never followed). The root itself
// is refused. A directory that is not empty without `recursive`: Errc::exists, as rmdir(2) may say.
void remove_entry(const Directory& root, const std::string& path, bool recursive);

// The regular files and directories directly in `path` (a file: itself, with an empty relative
// path), as LIST_CHILDREN answers; symlinks and special files are left out, as LIST does.
std::vector<wire::ListEntry> list_children(const Directory& root, const std::string& path);

}  // namespace pxfer
