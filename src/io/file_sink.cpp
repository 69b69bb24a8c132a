#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/file.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cstdio>
#include <mutex>
#include <random>
#include <map>

#include "pxfer/core/clock.hpp"
#include "pxfer/io/emulated_disk.hpp"
#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "io/stored_checksum.hpp"

namespace pxfer {
namespace {

// A temporary's name only has to differ from its neighbours' (it is created O_EXCL|O_NOFOLLOW, and
// a clash is retried): 8 bytes from getrandom(2), one system call, instead of constructing a
// std::random_device for every file (2-3 % of a small-file get client's CPU). Not a thread_local
// engine: this code is also linked into the gfal2 plugin, which gfal2 loads with dlopen, and a
// 2.5 KB thread_local there exhausted glibc's static TLS ("cannot allocate memory in static TLS
// block": the plugin did not load; Grid.Gfal2Plugin caught it).
std::string random_suffix() {
  std::uint64_t value = 0;
  if (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value))
    value = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^ ::getpid();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace

[[noreturn]] void throw_io(const std::string& what, const std::string& path, int err) {
  Errc code = err == ENOSPC || err == EDQUOT ? Errc::local_io : errc_from_errno(err);
  std::string hint = err == ENOSPC ? " (free some space or choose another destination)"
                     : err == EDQUOT ? " (quota exceeded)" : "";
  throw Error(code, what + " " + path + ": " + errno_text(err) + hint);
}

namespace {
// Abandoned temporary files are looked for before a transfer into a directory, at most once a
// minute per directory: a batch of 10,000 files into one directory must not scan it 10,000
// times, and a long-lived pxferd must still find what a crash left there later.
void remove_stale_now_and_then(const OpenDirectory& dir, std::int64_t max_age) {
  static std::mutex mutex;
  static std::map<std::pair<std::uint64_t, std::uint64_t>, Clock::time_point> last;
  if (dir.id.first == 0) return;  // cannot tell which directory: the next sink's turn
  const auto now = Clock::now();
  {
    std::lock_guard lock(mutex);
    auto [it, fresh] = last.try_emplace(dir.id, now);
    if (!fresh && now - it->second < std::chrono::minutes(1)) return;
    it->second = now;
    if (last.size() > 100000) last.clear();  // bounded: forgetting only costs a scan
  }
  remove_stale_partials(dir.fd, max_age);
}

constexpr std::uint64_t MiB = 1024 * 1024;

std::string size_text(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(MiB));
  return text;
}
}  // namespace

// The claimed size is checked before anything is allocated or created: against --max-file-size
// and against the free space of the destination's file system (the data file, its journal, less
// what a partial file of an earlier attempt that is picked up again already holds). A claim of
// 1 PiB is refused here, in microseconds, before the journal or the block plan exists.
void FileSink::check_space(const SinkOptions& options) const {
  if (options.max_file_size > 0 && size_ > options.max_file_size)
    throw Error(Errc::usage, path_ + ": " + std::to_string(size_) + " bytes is over this server's --max-file-size of " +
                                 std::to_string(options.max_file_size) + " bytes");
  // A file that reserves nothing is written in one piece right after this (a small file): a full
  // file system fails that write with the same "No space left" line, and the probe was one
  // fstatfs per small file at each end.
  if (!options.reserve) return;
  const bool journaled = options.resume && size_ > options.block_size;
  std::uint64_t needed = size_;
  if (journaled) needed += ResumeJournal::bytes_for(ResumeIdentity{size_, options.block_size, options.source_mtime_ns});
  std::uint64_t held = 0;
  struct stat st {};
  const std::string partial = "." + leaf_ + partial_suffix;
  if (journaled && ::fstatat(dir_->fd, partial.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::uint64_t>(st.st_size) == size_)
    held = static_cast<std::uint64_t>(st.st_blocks) * 512;
  struct statvfs vfs {};
  if (::fstatvfs(dir_->fd, &vfs) != 0) return;  // cannot tell: preallocation will
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (needed > free_bytes + held)
    throw Error(Errc::local_io, "cannot allocate " + std::to_string(size_) + " bytes for " + path_ + ": " +
                                    errno_text(ENOSPC) + " (" + size_text(needed) + " needed, " +
                                    size_text(free_bytes + held) + " free; free some space or choose another destination)");
}

// A destination directory removed or renamed while the blocks move is noticed at the next block
// (with the journal write), not after every byte has moved: its hidden file could never be
// renamed into place where the user asked.
void FileSink::check_directory() const {
  struct stat now {}, named {};
  if (::fstat(dir_->fd, &now) != 0) return;
  bool gone = now.st_nlink == 0;
  if (!gone && start_fd_ >= 0)
    gone = ::fstatat(start_fd_, parent_.c_str(), &named, 0) != 0 || named.st_dev != now.st_dev || named.st_ino != now.st_ino;
  if (gone)
    throw Error(Errc::not_found, path_ + ": the destination directory was removed or renamed during the transfer; "
                                         "nothing was kept (create it again and rerun)");
  if (::faccessat(dir_->fd, ".", W_OK, AT_EACCESS) != 0 && errno != ENOSYS)
    throw Error(Errc::permission, path_ + ": the destination directory became unwritable during the transfer (" +
                                      errno_text(errno) + ")");
}

namespace {
std::atomic<RatePacer*> process_disk{nullptr};
}  // namespace

void set_emulated_disk_rate(double bytes_per_second) {
  // Never freed: sinks made before a change keep a valid (the old) pacer.
  process_disk = bytes_per_second > 0 ? new RatePacer(bytes_per_second) : nullptr;
}

RatePacer* emulated_disk() noexcept { return process_disk.load(); }

FileSink::FileSink(SinkTarget target, const std::string& path, std::uint64_t size, const SinkOptions& options)
    : dir_(std::move(target.parent)), path_(path), leaf_(std::move(target.leaf)), size_(size),
      overwrite_(options.overwrite), looked_first_(!options.new_directory), sync_(options.sync),
      store_checksum_(options.store_checksum),
      write_pacer_(options.write_pacer ? options.write_pacer : emulated_disk()), pacing_stop_(options.pacing_stop) {
  if (options.watch_directory && target.root) start_fd_ = ::fcntl(target.root->fd(), F_DUPFD_CLOEXEC, 0);
  {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    auto slash = p.rfind('/');
    parent_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
  }
  try {
    struct stat st {};
    if (!options.new_directory && ::fstatat(dir_->fd, leaf_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISDIR(st.st_mode))
        throw Error(Errc::exists, path + ": destination is a directory; name a file inside it or end the destination with '/'");
      if (!overwrite_) throw Error(Errc::exists, path + ": destination exists; use --overwrite to replace it");
    }
    remove_stale_now_and_then(*dir_, options.stale_after_seconds);
    check_space(options);
    // A file of one block has nothing to resume part of: no journal (a file created, locked and
    // removed per small file), and any partial of an earlier attempt is discarded.
    if (options.resume && size_ > options.block_size) {
      open_partial(options);
    } else {
      if (!options.new_directory) discard_partial();
      open_temporary();
      if (options.reserve) preallocate();
    }
  } catch (...) {
    abandon(false);
    space_.stop();
    if (fd_ >= 0) ::close(fd_);  // the destructor does not run for a constructor that throws
    if (start_fd_ >= 0) ::close(start_fd_);
    throw;
  }
}

// The partial file of an earlier attempt, unless a running receiver holds it: --no-resume
// starts over.
void FileSink::discard_partial() noexcept {
  std::string journal = "." + leaf_ + journal_suffix;
  int jfd = ::openat(dir_->fd, journal.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (jfd < 0) return;
  if (::flock(jfd, LOCK_EX | LOCK_NB) == 0) {
    std::string partial = "." + leaf_ + partial_suffix;
    ::unlinkat(dir_->fd, partial.c_str(), 0);
    ::unlinkat(dir_->fd, journal.c_str(), 0);
  }
  ::close(jfd);
}

void FileSink::open_partial(const SinkOptions& options) {
  // A fixed name, so the next attempt finds it; the journal's lock keeps two receivers apart.
  ResumeIdentity identity{size_, options.block_size, options.source_mtime_ns};
  journal_ = std::make_unique<ResumeJournal>(dir_->fd, "." + leaf_ + journal_suffix, identity, path_);
  temp_name_ = "." + leaf_ + partial_suffix;  // ours only once the lock is held
  if (journal_->matched()) {
    fd_ = ::openat(dir_->fd, temp_name_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    struct stat st {};
    if (fd_ >= 0 && (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) != size_)) {
      ::close(fd_);
      fd_ = -1;
    }
    if (fd_ >= 0) return;
  }
  journal_->reset();
  // Created 0666 so the process umask decides the final mode, as cp does. Exclusively: the name
  // is fixed, so whatever holds it now (a stale partial, a planted link) goes first.
  ::unlinkat(dir_->fd, temp_name_.c_str(), 0);
  fd_ = ::openat(dir_->fd, temp_name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd_ < 0) throw_io("cannot create a file in the directory of", path_, errno);
  preallocate();
}

void FileSink::open_temporary() {
  // Created 0666 so the process umask decides the final mode, as cp does.
  // The temporary name starts with a dot and lives in the destination directory, so the final
  // rename is atomic and never crosses file systems.
  for (int attempt = 0; attempt < 8 && fd_ < 0; ++attempt) {
    temp_name_ = "." + leaf_ + ".pxfer-" + random_suffix();
    fd_ = ::openat(dir_->fd, temp_name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  // Held while this sink owns the file, from its creation on: a sweep of stale temporary files
  // (which has no journal to ask here) leaves it alone however long preallocation takes.
  if (fd_ >= 0) ::flock(fd_, LOCK_EX | LOCK_NB);
  if (fd_ < 0) {
    int err = errno;
    temp_name_.clear();
    throw_io("cannot create a file in the directory of", path_, err);
  }
}

// The space is reserved ahead of the writes, by at most limits::reservation_window: an OPEN that
// sends nothing holds no more than that (issue 34). check_space refused a claim over the free
// space before this; on tmpfs the steps run in a thread of their own (io/space_reservation.hpp).
void FileSink::preallocate() { space_.start(fd_, size_, path_); }

FileSink::~FileSink() {
  space_.stop();
  if (!committed_) abandon(true);
  if (fd_ >= 0) ::close(fd_);
  if (start_fd_ >= 0) ::close(start_fd_);
}

void FileSink::block_written(std::size_t index, std::uint32_t adler) {
  if (sync_ && ::fdatasync(fd_) != 0) throw_io("cannot flush", path_, errno);
  check_directory();
  if (journal_) journal_->record(index, adler);
  ++blocks_written_;
}

void FileSink::write_at(std::uint64_t offset, std::span<const std::uint8_t> data) {
  if (offset > size_ || data.size() > size_ - offset)
    throw Error(Errc::protocol, path_ + ": block at offset " + std::to_string(offset) + " lies beyond the file size");
  if (write_pacer_) pace(data.size());
  auto gate = space_.enter(offset + data.size());
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

// A slow disk blocks the writing thread as this does, network threads included; in slices, so that
// a stopping server (its drain deadline, a second SIGTERM) is not held up by it (issue 34).
void FileSink::pace(std::size_t bytes) {
  const auto until = write_pacer_->reserve(Clock::now(), static_cast<double>(bytes));
  for (auto now = Clock::now(); now < until; now = Clock::now()) {
    if (pacing_stop_ && pacing_stop_->due(now))
      throw Error(Errc::network, path_ + ": the server is shutting down; retry later (a paced write was abandoned, "
                                         "the partial file is kept for a resume)");
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, std::chrono::milliseconds(20)));
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
  flush();
  place();
  sync_directory();
}

// Where the file system supports it (ext4, xfs; a no-op on tmpfs), the data of a file in a commit
// group starts its way to the disk while the next files are written, and the group's flush()es
// then mostly wait for writes already under way.
void FileSink::start_writeback() noexcept {
  if (fd_ >= 0) ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
}

void FileSink::flush() {
  if (::fdatasync(fd_) != 0) throw_io("cannot flush", path_, errno);
}

void FileSink::place() {
  space_.stop();  // every byte is written: any step left only covers kept blocks of a resume
  unsigned flags = overwrite_ ? 0 : RENAME_NOREPLACE;
  if (::renameat2(dir_->fd, temp_name_.c_str(), dir_->fd, leaf_.c_str(), flags) != 0) {
    int err = errno;
    if (err == EEXIST)
      throw Error(Errc::exists, path_ + (looked_first_ ? ": destination appeared during the transfer" : ": destination exists") +
                                    "; use --overwrite to replace it");
    throw_io("cannot rename the finished file onto", path_, err);
  }
  committed_ = true;
  if (journal_) journal_->remove();
  // After the rename, which changes the ctime the stored value is checked against.
  if (store_checksum_ && !checksum_.empty())
    record_checksum(fd_, checksum_algo_, checksum_);
}

void FileSink::sync_directory() noexcept { ::fsync(dir_->fd); }

std::pair<std::uint64_t, std::uint64_t> FileSink::directory_id() const { return dir_->id; }

FileSink::Placed FileSink::placed() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return {};
  return Placed{static_cast<std::uint64_t>(st.st_ino), st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec};
}

// May run on another thread than a stream still writing into the file (Transfer::fail): it
// only unlinks names; the descriptors, and the journal's lock, go with the sink.
void FileSink::abandon(bool keep_for_resume) noexcept {
  if (committed_ || abandoned_ || temp_name_.empty()) return;
  abandoned_ = true;
  // Stays, hidden, for the next attempt, unless it holds nothing yet: a put that never delivered
  // a block must not keep its preallocated space.
  if (keep_for_resume && journal_ && (blocks_written_ > 0 || journal_->recorded_count() > 0)) return;
  ::unlinkat(dir_->fd, temp_name_.c_str(), 0);
  if (journal_) journal_->remove();
}

}  // namespace pxfer
