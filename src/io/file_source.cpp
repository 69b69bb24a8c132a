#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"

namespace pxfer {
namespace {
std::int64_t mtime_of(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "it is a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a special file";
}
}  // namespace

// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer (a server thread
// hung until someone wrote to it), and a device's open may wait too. Nothing but a regular
// file gets past the check below, and for those the flag changes nothing.
FileSource::FileSource(const Directory& dir, const std::string& path)
    : FileSource(dir.open_file(path, O_RDONLY | O_NONBLOCK), path) {}

std::optional<FileSource> FileSource::open_if_cached(const Directory& dir, const std::string& path) {
  int fd = dir.open_file_if_cached(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  return FileSource(fd, path);
}

FileSource::FileSource(int fd, const std::string& path) : fd_(fd), path_(path) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    ::close(fd_);
    throw Error(Errc::local_io, path + ": " + errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(S_ISDIR(st.st_mode) ? Errc::usage : Errc::permission,
                path + ": not a regular file (" + file_kind(st.st_mode) + "); only regular files are copied");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  mtime_ns_ = mtime_of(st);
  // Tell the kernel we read ahead sequentially per stream; it widens readahead.
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

FileSource::FileSource(FileSource&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), size_(other.size_), mtime_ns_(other.mtime_ns_) {
  other.fd_ = -1;
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

void FileSource::read_at(std::uint64_t offset, std::span<std::uint8_t> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(Errc::local_io, "cannot read " + path_ + ": " + errno_text(errno));
    }
    if (n == 0) shrank(offset + done);
    done += static_cast<std::size_t>(n);
  }
}

void FileSource::shrank(std::uint64_t at) const {
  throw Error(Errc::integrity, path_ + ": source file shrank during the transfer (read ended at byte " +
                                   std::to_string(at) + " of " + std::to_string(size_) +
                                   "); rerun once it is no longer being written");
}

void FileSource::check_unchanged() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw Error(Errc::local_io, path_ + ": " + errno_text(errno));
  if (static_cast<std::uint64_t>(st.st_size) != size_ || mtime_of(st) != mtime_ns_)
    throw Error(Errc::integrity, path_ + ": source file changed during the transfer (size or modification time); "
                                         "rerun once it is no longer being written");
}

}  // namespace pxfer
