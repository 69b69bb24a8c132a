#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "io/tree.hpp"

namespace pxfer {
namespace {

int openat2_beneath(int dirfd, const std::string& path, int flags, unsigned mode, bool no_symlinks,
                    std::uint64_t more_resolve = 0) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0) | more_resolve;
  long fd;
  do fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
  while (fd < 0 && errno == EINTR);
  return static_cast<int>(fd);
}

}  // namespace

// Without openat2 (kernels before 5.6, or a seccomp filter that hides it): one component at a
// time, each opened with O_NOFOLLOW, so no symlink is followed anywhere. `path` was checked by
// check_relative_path: relative, no "..".
int open_each_component(int dirfd, const std::string& path, int flags, unsigned mode) {
  int current = ::dup(dirfd);
  std::size_t start = 0;
  while (current >= 0) {
    std::size_t end = path.find('/', start);
    std::string part = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const bool last = end == std::string::npos || path.find_first_not_of('/', end) == std::string::npos;
    if (part.empty()) part.push_back('.');  // "a//b": the directory itself (push_back: g++ 12's -Wrestrict misfires on = ".")
    int next;
    do next = last ? ::openat(current, part.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode)
                   : ::openat(current, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    while (next < 0 && errno == EINTR);
    int err = errno;
    struct stat st {};
    // O_DIRECTORY meets a symlink before O_NOFOLLOW does: say ELOOP, as openat2 would.
    if (next < 0 && err == ENOTDIR && ::fstatat(current, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      err = ELOOP;
    ::close(current);
    errno = err;
    current = next;
    if (last) break;
    start = end + 1;
  }
  return current;
}

namespace {

std::string describe_open_error(const std::string& path, int err, bool beneath_target, const std::string& target) {
  if (beneath_target && (err == EXDEV || err == ELOOP))
    return path + ": refused: a symbolic link on the way, or outside " + target +
           " (get -r writes only beneath the directory named, following no symlink)";
  if (err == EXDEV) return path + ": refused: the path leaves the export root";
  if (err == ELOOP) return path + ": refused: the path leaves the export root or runs through a symbolic link";
  return path + ": " + errno_text(err);
}

}  // namespace

void check_relative_path(const std::string& path) {
  if (path.empty()) throw Error(Errc::usage, "empty path: name a file below the export root");
  if (path.find('\0') != std::string::npos) throw Error(Errc::usage, "path contains a NUL byte");
  if (path.front() == '/')
    throw Error(Errc::permission, path + ": refused: absolute paths are not allowed, paths are relative to the export root");
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0)
      throw Error(Errc::permission, path + ": refused: '..' would leave the export root");
    start = end + 1;
  }
}

void remove_file(const Directory& dir, const std::string& path) {
  std::string leaf;
  int parent = dir.open_parent(path, leaf);
  struct stat st {};
  int rc = ::fstatat(parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  if (rc == 0 && S_ISDIR(st.st_mode)) {
    ::close(parent);
    throw Error(Errc::usage, path + ": is a directory; only files are removed");
  }
  if (rc != 0 || ::unlinkat(parent, leaf.c_str(), 0) != 0) {
    int err = errno;
    ::close(parent);
    throw Error(errc_from_errno(err), "cannot remove " + path + ": " + errno_text(err));
  }
  ::close(parent);
}

Directory Directory::open_root(const std::string& path, bool confined) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    throw Error(errc_from_errno(err), "cannot open directory " + path + ": " + errno_text(err));
  }
  return Directory(fd, confined, path);
}

Directory Directory::current() { return open_root(".", false); }

Directory Directory::open_beneath(const std::string& path) {
  Directory dir = open_root(path, true);
  dir.no_symlinks_ = true;
  return dir;
}

Directory::Directory(Directory&& other) noexcept
    : fd_(other.fd_), confined_(other.confined_), no_symlinks_(other.no_symlinks_), display_(std::move(other.display_)) {
  other.fd_ = -1;
}

Directory& Directory::operator=(Directory&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    confined_ = other.confined_;
    no_symlinks_ = other.no_symlinks_;
    display_ = std::move(other.display_);
    other.fd_ = -1;
  }
  return *this;
}

Directory::~Directory() {
  if (fd_ >= 0) ::close(fd_);
}

int Directory::open_file(const std::string& relative, int flags, unsigned mode) const {
  int fd;
  if (confined_) {
    check_relative_path(relative);
    fd = openat2_beneath(fd_, relative, flags, mode, no_symlinks_);
    if (fd < 0 && errno == ENOSYS && no_symlinks_) fd = open_each_component(fd_, relative, flags, mode);
  } else {
    do fd = ::openat(fd_, relative.c_str(), flags | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
  }
  if (fd < 0) {
    int err = errno;
    throw Error(errc_from_errno(err), describe_open_error(relative, err, no_symlinks_, display_));
  }
  return fd;
}

int Directory::open_file_if_cached(const std::string& relative, int flags) const {
#ifdef RESOLVE_CACHED
  if (!confined_ || (flags & (O_CREAT | O_TRUNC)) != 0) return -1;
  check_relative_path(relative);
  int fd = openat2_beneath(fd_, relative, flags, 0, no_symlinks_, RESOLVE_CACHED);
  if (fd >= 0) return fd;
  int err = errno;
  // EAGAIN: something on the path is not in the kernel's caches (or needs revalidating, as on
  // NFS); ENOSYS/EINVAL: a kernel without openat2 or RESOLVE_CACHED (before 5.12). Either way
  // the caller opens it where blocking is allowed.
  if (err == EAGAIN || err == ENOSYS || err == EINVAL) return -1;
  throw Error(errc_from_errno(err), describe_open_error(relative, err, no_symlinks_, display_));
#else
  (void)relative;
  (void)flags;
  return -1;
#endif
}

std::string Directory::parent_path(const std::string& relative, std::string& leaf) const {
  std::string path = relative;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  auto slash = path.rfind('/');
  std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  leaf = slash == std::string::npos ? path : path.substr(slash + 1);
  if (leaf.empty() || leaf == "." || leaf == "..")
    throw Error(Errc::usage, relative + ": not a file name");
  if (confined_) check_relative_path(relative);
  return parent;
}

int Directory::open_directory(const std::string& parent) const {
  // The directory itself (every file of a get -r into one directory): a descriptor of its own
  // without resolving a path again, one openat2 fewer per small file.
  if (parent == ".") {
    int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw Error(errc_from_errno(errno), "cannot open directory " + display_ + ": " + errno_text(errno));
    return fd;
  }
  return open_file(parent, O_RDONLY | O_DIRECTORY);
}

int Directory::open_parent(const std::string& relative, std::string& leaf) const {
  return open_directory(parent_path(relative, leaf));
}

OpenDirectory::OpenDirectory(int descriptor) : fd(descriptor) {
  struct stat st {};
  // Unknown (0, fd): a directory of its own for CommitGroup's one fsync per directory.
  id = ::fstat(fd, &st) == 0 ? std::pair<std::uint64_t, std::uint64_t>{st.st_dev, st.st_ino}
                             : std::pair<std::uint64_t, std::uint64_t>{0, static_cast<std::uint64_t>(fd)};
}

OpenDirectory::~OpenDirectory() {
  if (fd >= 0) ::close(fd);
}

SinkTarget sink_target(const Directory& root, const std::string& path) {
  SinkTarget target;
  target.parent = std::make_shared<OpenDirectory>(root.open_parent(path, target.leaf));
  target.root = &root;
  return target;
}

SinkTarget ParentDirectories::target(const std::string& path) {
  SinkTarget target;
  std::string parent = root_.parent_path(path, target.leaf);
  if (!open_ || parent != last_) {
    open_ = std::make_shared<OpenDirectory>(root_.open_directory(parent));
    last_ = std::move(parent);
  }
  target.parent = open_;
  target.root = &root_;
  return target;
}

}  // namespace pxfer
