#include "support/temp_dir.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace pxfer::e2e {

namespace fs = std::filesystem;

const std::string& big_file_base() {
  static const std::string base = [] {
    struct stat st {};
    if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0)
      return std::string("/dev/shm");
    return std::string("/tmp");
  }();
  return base;
}

TempDir::TempDir(const std::string& base) {
  std::string pattern = base + "/pxfer-e2e-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

std::string TempDir::subdir(const std::string& name) const {
  std::string p = *this / name;
  fs::create_directories(p);
  return p;
}

TempDir::~TempDir() {
  std::error_code ec;
  // remove_all does not follow symlinks: links to /etc placed by the tests are removed as links.
  fs::remove_all(path_, ec);
  if (!ec) return;
  // A test may have left a directory read-only (non-root runs): make directories writable again
  // (without following symlinks) and retry.
  for (auto it = fs::recursive_directory_iterator(path_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
  }
  ::chmod(path_.c_str(), 0700);
  fs::remove_all(path_, ec);
}

}  // namespace pxfer::e2e
