#include "pxfer/resume_journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "pxfer/error.hpp"

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
  records_.assign(block_count(identity_), std::nullopt);
  std::array<std::uint8_t, header_bytes> on_disk{};
  ssize_t n = ::pread(fd_, on_disk.data(), on_disk.size(), 0);
  matched_ = n == static_cast<ssize_t>(header_bytes) && on_disk == encode_header(identity_);
  if (!matched_) {
    reset();
    return;
  }
  std::vector<std::uint8_t> body(records_.size() * record_bytes);
  ssize_t got = ::pread(fd_, body.data(), body.size(), static_cast<off_t>(header_bytes));
  std::size_t complete = got > 0 ? static_cast<std::size_t>(got) / record_bytes : 0;
  for (std::size_t i = 0; i < complete; ++i) {
    const std::uint8_t* r = body.data() + i * record_bytes;
    if (get<std::uint32_t>(r) == record_present) records_[i] = get<std::uint32_t>(r + 4);
  }
}

ResumeJournal::~ResumeJournal() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::uint32_t> ResumeJournal::recorded(std::size_t index) const {
  return index < records_.size() ? records_[index] : std::nullopt;
}

std::size_t ResumeJournal::recorded_count() const {
  std::size_t n = 0;
  for (const auto& r : records_) n += r.has_value();
  return n;
}

void ResumeJournal::write_header() {
  auto h = encode_header(identity_);
  if (!full_pwrite(fd_, h.data(), h.size(), 0))
    throw Error(Errc::local_io, "cannot write the resume journal of " + display_ + ": " + errno_text(errno));
}

void ResumeJournal::reset() {
  if (::ftruncate(fd_, 0) != 0)
    throw Error(Errc::local_io, "cannot reset the resume journal of " + display_ + ": " + errno_text(errno));
  write_header();
  records_.assign(block_count(identity_), std::nullopt);
}

void ResumeJournal::record(std::size_t index, std::uint32_t adler) {
  if (index >= records_.size()) return;
  std::uint8_t r[record_bytes];
  put(r, record_present);
  put(r + 4, adler);
  if (!full_pwrite(fd_, r, record_bytes, static_cast<off_t>(header_bytes + index * record_bytes))) {
    int err = errno;
    throw Error(err == ENOSPC || err == EDQUOT ? Errc::local_io : errc_from_errno(err),
                "cannot write the resume journal of " + display_ + ": " + errno_text(err));
  }
  records_[index] = adler;
}

void ResumeJournal::forget(std::size_t index) {
  if (index >= records_.size() || !records_[index]) return;
  std::uint8_t zero[record_bytes] = {};
  full_pwrite(fd_, zero, record_bytes, static_cast<off_t>(header_bytes + index * record_bytes));
  records_[index].reset();
}

void ResumeJournal::remove() noexcept {
  ::unlinkat(dir_fd_, name_.c_str(), 0);
}

std::size_t remove_stale_partials(int dir_fd, std::int64_t max_age_seconds) {
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return 0;
  }
  std::vector<std::string> journals;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > std::strlen(journal_suffix) + 1 && name[0] == '.' && name.ends_with(journal_suffix))
      journals.push_back(name);
  }
  ::closedir(d);
  const std::time_t now = std::time(nullptr);
  std::size_t removed = 0;
  for (const auto& journal : journals) {
    int jfd = ::openat(dir_fd, journal.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (jfd < 0) continue;
    struct stat st {};
    // Held by a running receiver, or still young: leave it.
    bool stale = ::fstat(jfd, &st) == 0 && now - st.st_mtime > max_age_seconds && ::flock(jfd, LOCK_EX | LOCK_NB) == 0;
    if (stale) {
      std::string partial = journal.substr(0, journal.size() - std::strlen(journal_suffix)) + partial_suffix;
      ::unlinkat(dir_fd, partial.c_str(), 0);
      ::unlinkat(dir_fd, journal.c_str(), 0);
      ++removed;
    }
    ::close(jfd);
  }
  return removed;
}

}  // namespace pxfer
