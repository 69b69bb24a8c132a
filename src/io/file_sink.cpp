#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>

#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"

namespace pxfer {
namespace {

std::string random_suffix() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

[[noreturn]] void throw_io(const std::string& what, const std::string& path, int err) {
  Errc code = err == ENOSPC || err == EDQUOT ? Errc::local_io : errc_from_errno(err);
  std::string hint = err == ENOSPC ? " (free some space or choose another destination)"
                     : err == EDQUOT ? " (quota exceeded)" : "";
  throw Error(code, what + " " + path + ": " + errno_text(err) + hint);
}

}  // namespace

FileSink::FileSink(const Directory& dir, const std::string& path, std::uint64_t size, bool overwrite)
    : path_(path), size_(size), overwrite_(overwrite) {
  dir_fd_ = dir.open_parent(path, leaf_);
  struct stat st {};
  if (::fstatat(dir_fd_, leaf_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(dir_fd_);
      throw Error(Errc::exists, path + ": destination is a directory; name a file inside it or end the destination with '/'");
    }
    if (!overwrite) {
      ::close(dir_fd_);
      throw Error(Errc::exists, path + ": destination exists; use --overwrite to replace it");
    }
  }
  // Created 0666 so the process umask decides the final mode, as cp does.
  // The temporary name starts with a dot and lives in the destination directory, so the final
  // rename is atomic and never crosses file systems.
  for (int attempt = 0; attempt < 8 && fd_ < 0; ++attempt) {
    temp_name_ = "." + leaf_ + ".pxfer-" + random_suffix();
    fd_ = ::openat(dir_fd_, temp_name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    int err = errno;
    ::close(dir_fd_);
    throw_io("cannot create a file in the directory of", path, err);
  }
  if (size > 0) {
    int rc = ::posix_fallocate(fd_, 0, static_cast<off_t>(size));
    if (rc == EOPNOTSUPP || rc == EINVAL) rc = ::ftruncate(fd_, static_cast<off_t>(size)) == 0 ? 0 : errno;
    if (rc != 0) {
      abort();
      ::close(fd_);  // the destructor does not run for a constructor that throws
      ::close(dir_fd_);
      throw_io("cannot allocate " + std::to_string(size) + " bytes for", path, rc);
    }
  }
}

FileSink::~FileSink() {
  if (!committed_) abort();
  if (fd_ >= 0) ::close(fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void FileSink::write_at(std::uint64_t offset, std::span<const std::uint8_t> data) {
  if (offset > size_ || data.size() > size_ - offset)
    throw Error(Errc::protocol, path_ + ": block at offset " + std::to_string(offset) + " lies beyond the file size");
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io("cannot write", path_, errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

void FileSink::read_at(std::uint64_t offset, std::span<std::uint8_t> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_io("cannot read back", path_, n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
}

void FileSink::commit() {
  if (::fdatasync(fd_) != 0) throw_io("cannot flush", path_, errno);
  unsigned flags = overwrite_ ? 0 : RENAME_NOREPLACE;
  if (::renameat2(dir_fd_, temp_name_.c_str(), dir_fd_, leaf_.c_str(), flags) != 0) {
    int err = errno;
    if (err == EEXIST) throw Error(Errc::exists, path_ + ": destination appeared during the transfer; use --overwrite to replace it");
    throw_io("cannot rename the finished file onto", path_, err);
  }
  committed_ = true;
  ::fsync(dir_fd_);
}

void FileSink::abort() noexcept {
  if (!committed_ && !temp_name_.empty() && dir_fd_ >= 0) ::unlinkat(dir_fd_, temp_name_.c_str(), 0);
  temp_name_.clear();
}

}  // namespace pxfer
