// The whole-tree sweep of stale temporary files (pxferd at start and periodically): every
// directory below the export root, through descriptors (symbolic links are never followed), each
// handed to remove_stale_partials.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "io/resume_journal.hpp"

namespace pxfer {
namespace {

// Bounded: a tree deeper than this is swept down to here (the per-transfer sweep does the rest).
constexpr int max_depth = 64;

std::size_t sweep_dir(int dir_fd, std::int64_t max_age_seconds, const std::atomic<bool>& stop, int depth) {
  std::size_t removed = remove_stale_partials(dir_fd, max_age_seconds);
  if (depth >= max_depth) return removed;
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return removed;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return removed;
  }
  std::vector<std::string> children;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type == DT_DIR) {
      children.push_back(std::move(name));
    } else if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) children.push_back(std::move(name));
    }
  }
  ::closedir(d);
  for (const auto& child : children) {
    if (stop.load()) break;
    int cfd = ::openat(dir_fd, child.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) continue;
    removed += sweep_dir(cfd, max_age_seconds, stop, depth + 1);
    ::close(cfd);
  }
  return removed;
}

}  // namespace

std::size_t sweep_tree(int root_fd, std::int64_t max_age_seconds, const std::atomic<bool>& stop) {
  return sweep_dir(root_fd, max_age_seconds, stop, 0);
}

}  // namespace pxfer
