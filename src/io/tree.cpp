#include "io/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "pxfer/error.hpp"

namespace pxfer {
namespace {

// Owns a descriptor for the length of a scope.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Error symlink_refused(const std::string& path) {
  return Error(Errc::permission, path + ": refused: a symbolic link; LIST and MKDIR never follow one (name its target)");
}

wire::ListEntry entry_of(const struct stat& st, wire::EntryKind kind, std::string relative) {
  wire::ListEntry e;
  e.kind = kind;
  e.size = kind == wire::EntryKind::file ? static_cast<std::uint64_t>(st.st_size) : 0;
  e.mode = st.st_mode & 07777;
  e.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  e.relative_path = std::move(relative);
  return e;
}

struct Walk {
  const std::string& top;  // for messages
  std::size_t max_entries;
  std::vector<wire::ListEntry> out;

  void add(wire::ListEntry e) {
    if (out.size() >= max_entries)
      throw Error(Errc::usage, top + ": more than " + std::to_string(max_entries) +
                                   " entries below it; list or copy its subdirectories one by one");
    out.push_back(std::move(e));
  }

  // `dirfd` is owned by the caller; every child is opened with O_NOFOLLOW relative to it.
  void walk(int dirfd, const std::string& prefix) {
    int listed = ::dup(dirfd);
    DIR* dir = listed < 0 ? nullptr : ::fdopendir(listed);
    if (!dir) {
      int err = errno;
      if (listed >= 0) ::close(listed);
      throw Error(errc_from_errno(err), "cannot list " + top + "/" + prefix + ": " + errno_text(err));
    }
    std::vector<std::string> names;
    while (auto* d = ::readdir(dir)) {
      std::string name = d->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(dir);
    for (const auto& name : names) {
      std::string relative = prefix.empty() ? name : prefix + "/" + name;
      if (relative.size() > wire::max_path_length) continue;  // cannot be named on the wire
      struct stat st {};
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished meanwhile
      if (S_ISREG(st.st_mode)) {
        add(entry_of(st, wire::EntryKind::file, relative));
      } else if (S_ISDIR(st.st_mode)) {
        Fd child(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (child.fd < 0) {
          int err = errno;
          if (err == ELOOP || err == ENOTDIR || err == ENOENT) continue;  // replaced or removed meanwhile
          // Silently leaving it out would make a copy look complete when it is not.
          throw Error(errc_from_errno(err), "cannot list " + relative + ": " + errno_text(err));
        }
        add(entry_of(st, wire::EntryKind::directory, relative));
        walk(child.fd, relative);
      }
    }
  }
};

}  // namespace

std::vector<wire::ListEntry> list_tree(const Directory& root, const std::string& path, std::size_t max_entries) {
  const std::string top = path.empty() ? "." : path;
  if (root.confined()) check_relative_path(top);  // "..": refused (permission), not a bad name
  Walk walk{top, max_entries, {}};
  int fd = -1;
  try {
    fd = root.open_file(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (const Error&) {
    // A single file is a listing of one; anything else keeps the open error.
    std::string leaf;
    Fd parent(root.open_parent(top, leaf));
    struct stat st {};
    if (::fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw;
    if (S_ISLNK(st.st_mode)) throw symlink_refused(top);
    if (!S_ISREG(st.st_mode)) throw;
    walk.add(entry_of(st, wire::EntryKind::file, ""));
    return std::move(walk.out);
  }
  Fd dir(fd);
  walk.walk(dir.fd, "");
  return std::move(walk.out);
}

void make_directories(const Directory& root, const std::string& path) {
  if (path.empty() || path == ".") return;
  check_relative_path(path);
  Fd current(::dup(root.fd()));
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (::mkdirat(current.fd, part.c_str(), 0777) != 0 && errno != EEXIST) {
      int err = errno;
      throw Error(errc_from_errno(err), "cannot create directory " + path + ": " + errno_text(err));
    }
    // A symlink planted in the path is refused rather than followed out of the root.
    struct stat st {};
    if (::fstatat(current.fd, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      throw symlink_refused(path.substr(0, end));
    int next = ::openat(current.fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int err = errno;
      throw Error(errc_from_errno(err), "cannot create directory " + path + ": " + path.substr(0, end) +
                                            " is in the way (" + errno_text(err) + ")");
    }
    ::close(current.fd);
    current.fd = next;
  }
}

}  // namespace pxfer
