#include "io/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "pxfer/common/error.hpp"
#include "scoped_fd.hpp"

namespace pxfer {
namespace {

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

Error too_many(const std::string& top, std::size_t max_entries) {
  return Error(Errc::usage, top + ": more than " + std::to_string(max_entries) +
                                " entries below it; list or copy its subdirectories one by one");
}

}  // namespace

// One directory being read: its stream (which owns the descriptor) and its path below the top.
struct TreeWalk::Level {
  DIR* dir = nullptr;
  std::string prefix;
  ~Level() {
    if (dir) ::closedir(dir);
  }
};

TreeWalk::TreeWalk(const Directory& root, const std::string& path, std::size_t max_entries)
    : top_(path.empty() ? "." : path), max_entries_(max_entries) {
  if (root.confined()) check_relative_path(top_);  // "..": refused (permission), not a bad name
  int fd = -1;
  try {
    fd = root.open_file(top_, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (const Error&) {
    // A single file is a listing of one; anything else keeps the open error.
    std::string leaf;
    Fd parent(root.open_parent(top_, leaf));
    struct stat st {};
    if (::fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw;
    if (S_ISLNK(st.st_mode)) throw symlink_refused(top_);
    if (!S_ISREG(st.st_mode)) throw;
    add_count();
    pending_ = entry_of(st, wire::EntryKind::file, "");
    return;
  }
  auto level = std::make_unique<Level>();
  level->dir = ::fdopendir(fd);
  if (!level->dir) {
    int err = errno;
    ::close(fd);
    throw Error(errc_from_errno(err), "cannot list " + top_ + ": " + errno_text(err));
  }
  levels_.push_back(std::move(level));
}

TreeWalk::~TreeWalk() = default;

void TreeWalk::add_count() {
  if (count_ >= max_entries_) throw too_many(top_, max_entries_);
  ++count_;
}

// The next directory or regular file, parents before their contents (a directory's entry comes
// when it is met, its contents right after); nothing once the walk is over. Every child is
// opened relative to its parent's descriptor with O_NOFOLLOW.
std::optional<wire::ListEntry> TreeWalk::read_one() {
  while (!levels_.empty()) {
    Level& level = *levels_.back();
    errno = 0;
    const dirent* d = ::readdir(level.dir);
    if (!d) {
      if (errno != 0) {
        int err = errno;
        throw Error(errc_from_errno(err), "cannot list " + top_ + "/" + level.prefix + ": " + errno_text(err));
      }
      levels_.pop_back();
      continue;
    }
    const std::string name = d->d_name;
    if (name == "." || name == "..") continue;
    std::string relative = level.prefix.empty() ? name : level.prefix + "/" + name;
    if (relative.size() > wire::max_path_length) continue;  // cannot be named on the wire
    const int dirfd = ::dirfd(level.dir);
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished meanwhile
    if (S_ISREG(st.st_mode)) {
      add_count();
      return entry_of(st, wire::EntryKind::file, std::move(relative));
    }
    if (!S_ISDIR(st.st_mode)) continue;  // symlinks and special files are not listed
    int child = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) {
      int err = errno;
      if (err == ELOOP || err == ENOTDIR || err == ENOENT) continue;  // replaced or removed meanwhile
      // Silently leaving it out would make a copy look complete when it is not.
      throw Error(errc_from_errno(err), "cannot list " + relative + ": " + errno_text(err));
    }
    auto next = std::make_unique<Level>();
    next->dir = ::fdopendir(child);
    if (!next->dir) {
      int err = errno;
      ::close(child);
      throw Error(errc_from_errno(err), "cannot list " + relative + ": " + errno_text(err));
    }
    add_count();
    next->prefix = relative;
    levels_.push_back(std::move(next));
    return entry_of(st, wire::EntryKind::directory, std::move(relative));
  }
  return std::nullopt;
}

wire::Listing TreeWalk::next() {
  wire::Listing frame;
  std::size_t used = wire::listing_header_bytes;
  for (;;) {
    std::optional<wire::ListEntry> e = pending_ ? std::move(pending_) : read_one();
    pending_.reset();
    if (!e) return frame;  // more = 0: the walk is over
    const std::size_t bytes = wire::min_entry_bytes + e->relative_path.size();
    if (used + bytes > wire::max_control_payload) {
      pending_ = std::move(e);
      frame.more = 1;
      return frame;
    }
    used += bytes;
    frame.entries.push_back(std::move(*e));
  }
}

std::vector<wire::ListEntry> list_tree(const Directory& root, const std::string& path, std::size_t max_entries) {
  TreeWalk walk(root, path, max_entries);
  std::vector<wire::ListEntry> out;
  for (;;) {
    wire::Listing frame = walk.next();
    for (auto& e : frame.entries) out.push_back(std::move(e));
    if (!frame.more) return out;
  }
}

bool make_directories(const Directory& root, const std::string& path) {
  if (path.empty() || path == ".") return false;
  check_relative_path(path);
  Fd current(::dup(root.fd()));
  bool made = false;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    made = ::mkdirat(current.fd, part.c_str(), 0777) == 0;
    if (!made && errno != EEXIST) {
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
  return made;
}

}  // namespace pxfer
