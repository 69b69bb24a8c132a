#include "io/resume_journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string_view>

#include "pxfer/common/error.hpp"

namespace pxfer {
namespace {

// Layout (little-endian): a 64-byte header, then one 8-byte record per block at 64 + 8 * index.
constexpr char magic[8] = {'P', 'X', 'F', 'R', 'J', 'N', 'L', '1'};
constexpr std::size_t header_bytes = 64;
constexpr std::size_t record_bytes = 8;
constexpr std::uint32_t record_present = 0x31425850;  // "PXB1"

template <class T>
void put(std::uint8_t* at, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
}
template <class T>
T get(const std::uint8_t* at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(at[i]) << (8 * i);
  return static_cast<T>(v);
}

std::array<std::uint8_t, header_bytes> encode_header(const ResumeIdentity& id) {
  std::array<std::uint8_t, header_bytes> h{};
  std::memcpy(h.data(), magic, sizeof magic);
  put(h.data() + 8, id.size);
  put(h.data() + 16, id.block_size);
  put(h.data() + 24, static_cast<std::uint64_t>(id.source_mtime_ns));
  put(h.data() + 32, static_cast<std::uint32_t>(adler32(1, h.data(), 32)));
  return h;
}

bool full_pwrite(int fd, const std::uint8_t* data, std::size_t n, off_t at) {
  std::size_t done = 0;
  while (done < n) {
    ssize_t w = ::pwrite(fd, data + done, n - done, at + static_cast<off_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<std::size_t>(w);
  }
  return true;
}

std::size_t block_count(const ResumeIdentity& id) {
  return id.block_size == 0 ? 0 : static_cast<std::size_t>((id.size + id.block_size - 1) / id.block_size);
}

// The journal's name is fixed, so someone with write access to the directory could plant a hard
// link there to a file this process may write: such a name is replaced, never written through.
int open_journal(int dir_fd, const std::string& name) {
  int fd = ::openat(dir_fd, name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  struct stat st {};
  if (fd < 0 || (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1)) return fd;
  ::close(fd);
  ::unlinkat(dir_fd, name.c_str(), 0);
  return ::openat(dir_fd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

}  // namespace

ResumeJournal::ResumeJournal(int dir_fd, const std::string& name, const ResumeIdentity& identity,
                             const std::string& display)
    : dir_fd_(dir_fd), name_(name), display_(display), identity_(identity) {
  // 0600: the journal says nothing secret, but nobody else has any business writing it.
  fd_ = open_journal(dir_fd_, name_);
  if (fd_ < 0) {
    int err = errno;
    // The journal is the first thing written beside the file, so a directory the user may not
    // write fails here: say so about the file the user named, not about our bookkeeping.
    if (err == EACCES || err == EPERM || err == EROFS)
      throw Error(errc_from_errno(err), "cannot write " + display_ + ": " + errno_text(err) +
                                            " (its directory is not writable; choose another destination or fix its permissions)");
    throw Error(errc_from_errno(err), "cannot open the resume journal of " + display_ + ": " + errno_text(err));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error(Errc::exists, display_ + ": another transfer is writing this file now; wait for it to end");
    throw Error(Errc::local_io, "cannot lock the resume journal of " + display_ + ": " + errno_text(err));
  }
  try {
    present_.assign(block_count(identity_), false);
    std::array<std::uint8_t, header_bytes> on_disk{};
    ssize_t n = ::pread(fd_, on_disk.data(), on_disk.size(), 0);
    matched_ = n == static_cast<ssize_t>(header_bytes) && on_disk == encode_header(identity_);
    if (!matched_) {
      reset();
      return;
    }
    load_records();
    reserve();  // a journal an older pxfer grew record by record
  } catch (...) {
    if (!matched_) ::unlinkat(dir_fd_, name_.c_str(), 0);  // ours (locked) and empty: nothing to resume
    ::close(fd_);  // no destructor for a constructor that throws: the lock goes with the descriptor
    fd_ = -1;
    throw;
  }
}

// In pieces: the records of a huge file are never all in memory at once, only their bits.
void ResumeJournal::load_records() {
  std::vector<std::uint8_t> chunk(64 * 1024);
  for (std::size_t first = 0; first < present_.size();) {
    std::size_t want = std::min(chunk.size() / record_bytes, present_.size() - first);
    ssize_t got = ::pread(fd_, chunk.data(), want * record_bytes, static_cast<off_t>(header_bytes + first * record_bytes));
    if (got <= 0) break;
    std::size_t complete = static_cast<std::size_t>(got) / record_bytes;
    for (std::size_t i = 0; i < complete; ++i)
      if (get<std::uint32_t>(chunk.data() + i * record_bytes) == record_present) {
        present_[first + i] = true;
        ++count_;
      }
    if (complete < want) break;
    first += complete;
  }
}

ResumeJournal::~ResumeJournal() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t ResumeJournal::bytes_for(const ResumeIdentity& identity) {
  return header_bytes + static_cast<std::uint64_t>(block_count(identity)) * record_bytes;
}

std::optional<std::uint32_t> ResumeJournal::recorded(std::size_t index) const {
  if (index >= present_.size() || !present_[index]) return std::nullopt;
  std::uint8_t r[record_bytes];
  if (::pread(fd_, r, record_bytes, static_cast<off_t>(header_bytes + index * record_bytes)) != record_bytes ||
      get<std::uint32_t>(r) != record_present)
    return std::nullopt;
  return get<std::uint32_t>(r + 4);
}

std::size_t ResumeJournal::recorded_count() const { return count_; }

void ResumeJournal::write_header() {
  auto h = encode_header(identity_);
  if (!full_pwrite(fd_, h.data(), h.size(), 0))
    throw Error(Errc::local_io, "cannot write the resume journal of " + display_ + ": " + errno_text(errno));
}

void ResumeJournal::reset() {
  if (::ftruncate(fd_, 0) != 0)
    throw Error(Errc::local_io, "cannot reset the resume journal of " + display_ + ": " + errno_text(errno));
  write_header();
  reserve();
  present_.assign(block_count(identity_), false);
  count_ = 0;
}

// Every record's place is reserved with the data file's space: a disk that fills up later cannot
// fail a journal write halfway through the transfer.
void ResumeJournal::reserve() {
  const auto bytes = static_cast<off_t>(bytes_for(identity_));
  int rc = ::posix_fallocate(fd_, 0, bytes);
  if (rc == EOPNOTSUPP || rc == EINVAL) rc = ::ftruncate(fd_, bytes) == 0 ? 0 : errno;
  if (rc != 0)
    throw Error(rc == ENOSPC || rc == EDQUOT ? Errc::local_io : errc_from_errno(rc),
                "cannot reserve space for the resume journal of " + display_ + ": " + errno_text(rc) +
                    (rc == ENOSPC ? " (free some space or choose another destination)" : ""));
}

void ResumeJournal::record(std::size_t index, std::uint32_t adler) {
  if (index >= present_.size()) return;
  std::uint8_t r[record_bytes];
  put(r, record_present);
  put(r + 4, adler);
  if (!full_pwrite(fd_, r, record_bytes, static_cast<off_t>(header_bytes + index * record_bytes))) {
    int err = errno;
    throw Error(err == ENOSPC || err == EDQUOT ? Errc::local_io : errc_from_errno(err),
                "cannot write the resume journal of " + display_ + ": " + errno_text(err) +
                    (err == ENOSPC ? " (free some space or choose another destination)" : ""));
  }
  if (!present_[index]) ++count_;
  present_[index] = true;
}

void ResumeJournal::forget(std::size_t index) {
  if (index >= present_.size() || !present_[index]) return;
  std::uint8_t zero[record_bytes] = {};
  full_pwrite(fd_, zero, record_bytes, static_cast<off_t>(header_bytes + index * record_bytes));
  present_[index] = false;
  --count_;
}

void ResumeJournal::remove() noexcept {
  ::unlinkat(dir_fd_, name_.c_str(), 0);
}

namespace {

bool is_hex_suffix(const std::string& name, std::size_t from) {
  if (name.size() - from != 16) return false;
  for (std::size_t i = from; i < name.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

// What a receiver names its temporary files: ".NAME.pxfer-journal", ".NAME.pxfer-part" (resume)
// and ".NAME.pxfer-" + 16 hex digits (no resume, or a file of one block).
enum class TempKind { none, journal, partial, random };

TempKind temp_kind(const std::string& name) {
  if (name.size() < 3 || name[0] != '.') return TempKind::none;
  if (name.size() > std::strlen(journal_suffix) + 1 && name.ends_with(journal_suffix)) return TempKind::journal;
  if (name.size() > std::strlen(partial_suffix) + 1 && name.ends_with(partial_suffix)) return TempKind::partial;
  constexpr std::string_view marker = ".pxfer-";
  if (name.size() > marker.size() + 17 && name.compare(name.size() - 16 - marker.size(), marker.size(), marker) == 0 &&
      is_hex_suffix(name, name.size() - 16))
    return TempKind::random;
  return TempKind::none;
}

// Last written more than `max_age_seconds` before `now`, to the nanosecond: whole seconds made a
// 1 s limit mean anything from 1 to 3 s (a test that waited 1.5 s found the file kept).
bool older_than(const struct stat& st, std::int64_t max_age_seconds, const timespec& now) {
  const std::int64_t age_ns = (static_cast<std::int64_t>(now.tv_sec) - st.st_mtim.tv_sec) * 1'000'000'000 +
                              (now.tv_nsec - st.st_mtim.tv_nsec);
  return age_ns > max_age_seconds * 1'000'000'000;
}

// Open, old enough and not locked (a running receiver holds an flock on what it writes).
bool stale_and_free(int dir_fd, const std::string& name, std::int64_t max_age_seconds, const timespec& now) {
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  bool stale = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && older_than(st, max_age_seconds, now) &&
               ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // the lock goes with it; the name is removed right after
  return stale;
}

}  // namespace

std::size_t remove_stale_partials(int dir_fd, std::int64_t max_age_seconds) {
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return 0;
  }
  std::vector<std::pair<std::string, TempKind>> found;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (auto kind = temp_kind(name); kind != TempKind::none) found.emplace_back(std::move(name), kind);
  }
  ::closedir(d);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::size_t removed = 0;
  auto exists = [&](const std::string& name) {
    struct stat st {};
    return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  };
  for (const auto& [name, kind] : found) {
    if (kind == TempKind::journal) {
      // The journal's lock and age decide for its partial file too.
      int jfd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (jfd < 0) continue;
      struct stat st {};
      bool stale = ::fstat(jfd, &st) == 0 && older_than(st, max_age_seconds, now) && ::flock(jfd, LOCK_EX | LOCK_NB) == 0;
      if (stale) {
        std::string partial = name.substr(0, name.size() - std::strlen(journal_suffix)) + partial_suffix;
        ::unlinkat(dir_fd, partial.c_str(), 0);
        ::unlinkat(dir_fd, name.c_str(), 0);
        ++removed;
      }
      ::close(jfd);
      continue;
    }
    // A partial file whose journal is gone, or a temporary file without one: its own age and lock.
    if (kind == TempKind::partial &&
        exists(name.substr(0, name.size() - std::strlen(partial_suffix)) + journal_suffix))
      continue;
    if (stale_and_free(dir_fd, name, max_age_seconds, now) && ::unlinkat(dir_fd, name.c_str(), 0) == 0) ++removed;
  }
  return removed;
}

}  // namespace pxfer
