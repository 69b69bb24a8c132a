// Requests about a file already in place beneath an export root: its checksum (--skip-existing)
// and setting its mode and mtime (put --preserve). Opened confined and without following a final
// symlink, like every path a client names; only regular files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "io/stored_checksum.hpp"

namespace pxfer {
namespace {

// A descriptor of the regular file `path` beneath `dir`, and its size.
int open_regular(const Directory& dir, const std::string& path, std::uint64_t& size) {
  // O_NONBLOCK: a FIFO's open would wait for a writer; it is refused below instead.
  int fd = dir.open_file(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(Errc::usage, path + ": not a regular file; only regular files have a checksum or attributes");
  }
  size = static_cast<std::uint64_t>(st.st_size);
  return fd;
}

}  // namespace

FileSum sum_file(const Directory& dir, const std::string& path, ChecksumAlgo algo, std::uint64_t expected_size,
                 const std::atomic<bool>* cancelled, bool stored) {
  FileSum sum;
  int fd = open_regular(dir, path, sum.size);
  if (sum.size != expected_size) {
    ::close(fd);
    return sum;
  }
  // A stored checksum that still describes the file answers at once (io/stored_checksum.hpp);
  // one computed here is kept for the next SUM or get.
  std::optional<FileStamp> seen;
  if (stored) {
    if (auto value = stored_checksum(fd, algo)) {
      ::close(fd);
      sum.value = std::move(*value);
      return sum;
    }
    seen = stamp_of(fd);
  }
  // With a look at `cancelled` between chunks, so a server that stops does not wait for a hash
  // of a huge file to end.
  constexpr std::uint32_t chunk = 4 << 20;
  auto digest = FileDigest::create(algo, sum.size, chunk, nullptr);
  std::vector<std::uint8_t> buf(chunk);
  std::uint64_t offset = 0;
  while (offset < sum.size) {
    if (cancelled && cancelled->load()) {
      ::close(fd);
      throw Error(Errc::interrupted, path + ": checksum abandoned: the server is shutting down; retry later");
    }
    ssize_t n = ::pread(fd, buf.data(), chunk, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : 0;
      ::close(fd);
      throw Error(err ? Errc::local_io : Errc::integrity,
                  "cannot read " + path + ": " + (err ? errno_text(err) : std::string("it shrank while being read")));
    }
    digest->add_block(offset, std::span(buf.data(), static_cast<std::size_t>(n)));
    offset += static_cast<std::uint64_t>(n);
  }
  sum.value = digest->finish();
  if (seen) store_checksum(fd, algo, sum.value, *seen);
  ::close(fd);
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
  // A stored checksum describes the bytes, which this leaves as they are: it is kept across the
  // change (which alone would make it stale: a new mtime and ctime).
  std::vector<std::pair<ChecksumAlgo, std::string>> kept;
  for (ChecksumAlgo algo : {ChecksumAlgo::adler32, ChecksumAlgo::sha256, ChecksumAlgo::md5, ChecksumAlgo::crc32,
                            ChecksumAlgo::sha1})
    if (auto value = stored_checksum(fd, algo)) kept.emplace_back(algo, std::move(*value));
  if (::fchmod(fd, safe) != 0 || ::futimens(fd, times) != 0) {
    int err = errno;
    ::close(fd);
    throw Error(errc_from_errno(err), "cannot set the mode and mtime of " + path + ": " + errno_text(err));
  }
  for (const auto& [algo, value] : kept)
    record_checksum(fd, algo, value);
  ::close(fd);
}

}  // namespace pxfer
