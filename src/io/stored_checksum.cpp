#include "io/stored_checksum.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>

namespace pxfer {
namespace {

// The recording itself (fsetxattr) moves the ctime a little past the moment written into the
// value; a later change of the inode moves it further. One second tells the two apart, and no
// clock of a file system is coarser.
constexpr std::int64_t ctime_slack_ns = 1'000'000'000;

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return ns_of(t);
}

std::size_t hex_length(ChecksumAlgo algo) {
  switch (algo) {
    case ChecksumAlgo::adler32: return 8;
    case ChecksumAlgo::sha256: return 64;
    case ChecksumAlgo::md5: return 32;
    case ChecksumAlgo::crc32: return 8;
    case ChecksumAlgo::sha1: return 40;
    case ChecksumAlgo::none: break;
  }
  return 0;
}

bool lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// "pxfer1 SIZE MTIME_NS STORED_AT_NS HEX"
template <typename T>
bool take_number(std::string_view& s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end == s.data() || end == s.data() + s.size() || *end != ' ') return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()) + 1);
  return true;
}

}  // namespace

std::string stored_checksum_name(ChecksumAlgo algo) {
  if (algo == ChecksumAlgo::none) return {};
  return "user.pxfer." + std::string(checksum_name(algo));
}

std::optional<FileStamp> stamp_of(int fd) noexcept {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileStamp{static_cast<std::uint64_t>(st.st_size), ns_of(st.st_mtim), ns_of(st.st_ctim)};
}

std::optional<std::string> stored_checksum(int fd, ChecksumAlgo algo) noexcept {
  try {
    const std::string name = stored_checksum_name(algo);
    if (name.empty()) return std::nullopt;
    char buf[160];
    const ssize_t n = ::fgetxattr(fd, name.c_str(), buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    std::string_view s(buf, static_cast<std::size_t>(n));
    constexpr std::string_view magic = "pxfer1 ";
    if (!s.starts_with(magic)) return std::nullopt;
    s.remove_prefix(magic.size());
    FileStamp recorded;
    std::int64_t stored_at = 0;
    if (!take_number(s, recorded.size) || !take_number(s, recorded.mtime_ns) || !take_number(s, stored_at)) return std::nullopt;
    if (s.size() != hex_length(algo) || !lower_hex(s)) return std::nullopt;
    auto now = stamp_of(fd);
    if (!now || now->size != recorded.size || now->mtime_ns != recorded.mtime_ns || now->ctime_ns > stored_at + ctime_slack_ns)
      return std::nullopt;
    return std::string(s);
  } catch (...) {
    return std::nullopt;
  }
}

namespace {
// "pxfer1 SIZE MTIME_NS STORED_AT_NS HEX" for the file as `now` describes it.
bool write_value(int fd, ChecksumAlgo algo, std::string_view hex, const FileStamp& now, std::int64_t stored_at) {
  const std::string name = stored_checksum_name(algo);
  if (name.empty() || hex.size() != hex_length(algo) || !lower_hex(hex)) return false;
  char buf[160];
  const int n = std::snprintf(buf, sizeof buf, "pxfer1 %llu %lld %lld %.*s", static_cast<unsigned long long>(now.size),
                              static_cast<long long>(now.mtime_ns), static_cast<long long>(stored_at),
                              static_cast<int>(hex.size()), hex.data());
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) return false;
  return ::fsetxattr(fd, name.c_str(), buf, static_cast<std::size_t>(n), 0) == 0;
}
}  // namespace

bool record_checksum(int fd, ChecksumAlgo algo, std::string_view hex) noexcept {
  try {
    const std::int64_t stored_at = now_ns();
    auto now = stamp_of(fd);
    return now && write_value(fd, algo, hex, *now, stored_at);
  } catch (...) {
    return false;
  }
}

bool store_checksum(int fd, ChecksumAlgo algo, std::string_view hex, const FileStamp& seen) noexcept {
  try {
    const std::int64_t stored_at = now_ns();
    if (seen.ctime_ns > stored_at - ctime_slack_ns || seen.mtime_ns > stored_at - ctime_slack_ns) return false;
    auto now = stamp_of(fd);
    return now && *now == seen && write_value(fd, algo, hex, *now, stored_at);
  } catch (...) {
    return false;
  }
}

}  // namespace pxfer
