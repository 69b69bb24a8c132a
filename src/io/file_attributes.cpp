// Requests about a file already in place beneath an export root: its checksum (--skip-existing)
// and setting its mode and mtime (put --preserve). Opened confined and without following a final
// symlink, like every path a client names; only regular files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"

namespace pxfer {
namespace {

// A descriptor of the regular file `path` beneath `dir`, and its size.
int open_regular(const Directory& dir, const std::string& path, std::uint64_t& size) {
  int fd = dir.open_file(path, O_RDONLY | O_NOFOLLOW);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(Errc::usage, path + ": not a regular file");
  }
  size = static_cast<std::uint64_t>(st.st_size);
  return fd;
}

}  // namespace

FileSum sum_file(const Directory& dir, const std::string& path, ChecksumAlgo algo, std::uint64_t expected_size) {
  FileSum sum;
  int fd = open_regular(dir, path, sum.size);
  if (sum.size != expected_size) {
    ::close(fd);
    return sum;
  }
  sum.value = checksum_of_descriptor(algo, fd, path);  // closes fd
  return sum;
}

void set_file_attributes(const Directory& dir, const std::string& path, std::uint32_t mode, std::int64_t mtime_ns) {
  std::uint64_t size = 0;
  int fd = open_regular(dir, path, size);
  // Never world-writable, never set-id or sticky, whatever the source had.
  const mode_t safe = static_cast<mode_t>(mode) & 0775;
  struct timespec times[2] = {{0, UTIME_OMIT}, {mtime_ns / 1'000'000'000, mtime_ns % 1'000'000'000}};
  if (times[1].tv_nsec < 0) {  // before 1970: the remainder is negative
    times[1].tv_sec -= 1;
    times[1].tv_nsec += 1'000'000'000;
  }
  if (::fchmod(fd, safe) != 0 || ::futimens(fd, times) != 0) {
    int err = errno;
    ::close(fd);
    throw Error(errc_from_errno(err), "cannot set the mode and mtime of " + path + ": " + errno_text(err));
  }
  ::close(fd);
}

}  // namespace pxfer
