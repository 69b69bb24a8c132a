#include "io/namespace_ops.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "pxfer/common/error.hpp"
#include "scoped_fd.hpp"

namespace pxfer {
namespace {

bool names_root(const std::string& path) {
  std::string p = path;
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p.empty() || p == ".";
}

wire::ListEntry entry_of(const struct stat& st) {
  wire::ListEntry e;
  e.kind = S_ISDIR(st.st_mode) ? wire::EntryKind::directory : wire::EntryKind::file;
  e.size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  e.mode = st.st_mode & 07777;
  e.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return e;
}

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw Error(errc_from_errno(err), "cannot " + what + " " + path + ": " + errno_text(err));
}

// Empties the directory `dirfd` (owned by the caller): files and symlinks are unlinked as names,
// subdirectories are opened with O_NOFOLLOW and emptied first.
void empty_directory(int dirfd, const std::string& shown) {
  int listed = ::dup(dirfd);
  DIR* dir = listed < 0 ? nullptr : ::fdopendir(listed);
  if (!dir) {
    int err = errno;
    if (listed >= 0) ::close(listed);
    fail("list", shown, err);
  }
  std::vector<std::string> names;
  while (auto* d = ::readdir(dir)) {
    std::string name = d->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  for (const auto& name : names) {
    const std::string child = shown + "/" + name;
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (S_ISDIR(st.st_mode)) {
      Fd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.fd < 0) fail("remove", child, errno);
      empty_directory(sub.fd, child);
      if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) fail("remove", child, errno);
    } else if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) {
      fail("remove", child, errno);
    }
  }
}

}  // namespace

wire::ListEntry stat_entry(const Directory& root, const std::string& path) {
  struct stat st {};
  if (names_root(path)) {
    if (::fstat(root.fd(), &st) != 0) fail("stat", ".", errno);
    return entry_of(st);
  }
  if (root.confined()) check_relative_path(path);
  std::string leaf;
  Fd parent(root.open_parent(path, leaf));
  if (::fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) fail("stat", path, errno);
  if (S_ISLNK(st.st_mode)) throw Error(Errc::permission, path + ": refused: a symbolic link; name its target");
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    throw Error(Errc::not_found, path + ": not a regular file or directory");
  return entry_of(st);
}

void rename_entry(const Directory& root, const std::string& from, const std::string& to, bool overwrite) {
  if (names_root(from) || names_root(to)) throw Error(Errc::permission, "refused: the export root cannot be renamed");
  if (root.confined()) {
    check_relative_path(from);
    check_relative_path(to);
  }
  std::string from_leaf, to_leaf;
  Fd from_dir(root.open_parent(from, from_leaf));
  Fd to_dir(root.open_parent(to, to_leaf));
  const unsigned flags = overwrite ? 0u : RENAME_NOREPLACE;
  if (::renameat2(from_dir.fd, from_leaf.c_str(), to_dir.fd, to_leaf.c_str(), flags) != 0) {
    int err = errno;
    if (err == EEXIST || err == ENOTEMPTY)
      throw Error(Errc::exists, "cannot rename " + from + " to " + to + ": the target exists" +
                                    (overwrite ? " and is a directory that is not empty" : "; ask to overwrite it"));
    fail("rename " + from + " to", to, err);
  }
}

void remove_entry(const Directory& root, const std::string& path, bool recursive) {
  if (names_root(path)) throw Error(Errc::permission, "refused: the export root itself is never removed");
  if (root.confined()) check_relative_path(path);
  std::string leaf;
  Fd parent(root.open_parent(path, leaf));
  struct stat st {};
  if (::fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) fail("remove", path, errno);
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent.fd, leaf.c_str(), 0) != 0) fail("remove", path, errno);
    return;
  }
  if (recursive) {
    Fd dir(::openat(parent.fd, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.fd < 0) fail("remove", path, errno);
    empty_directory(dir.fd, path);
  }
  if (::unlinkat(parent.fd, leaf.c_str(), AT_REMOVEDIR) != 0) {
    int err = errno;
    if (err == ENOTEMPTY || err == EEXIST)
      throw Error(Errc::exists, "cannot remove " + path + ": the directory is not empty (remove it recursively)");
    fail("remove", path, err);
  }
}

std::vector<wire::ListEntry> list_children(const Directory& root, const std::string& path) {
  wire::ListEntry self = stat_entry(root, path);
  if (self.kind == wire::EntryKind::file) return {self};
  Fd dir(names_root(path) ? ::dup(root.fd()) : root.open_file(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  int listed = ::dup(dir.fd);
  DIR* d = listed < 0 ? nullptr : ::fdopendir(listed);
  if (!d) {
    int err = errno;
    if (listed >= 0) ::close(listed);
    fail("list", path, err);
  }
  std::vector<wire::ListEntry> out;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    struct stat st {};
    if (name == "." || name == ".." || ::fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) continue;
    if (out.size() >= wire::max_list_entries) {
      ::closedir(d);
      throw Error(Errc::usage, path + ": more than " + std::to_string(wire::max_list_entries) + " names in it");
    }
    wire::ListEntry entry = entry_of(st);
    entry.relative_path = std::move(name);
    out.push_back(std::move(entry));
  }
  ::closedir(d);
  return out;
}

}  // namespace pxfer
