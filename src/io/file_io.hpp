#pragma once
// Files at both ends of a transfer: the source read at offsets, and the sink written at offsets
// into a preallocated temporary file that only becomes the final name after it was verified.
#include "pxfer/io/layer.hpp"
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "pxfer/core/checksum.hpp"
#include "pxfer/core/rate_pacer.hpp"
#include "io/resume_journal.hpp"
#include "io/space_reservation.hpp"

namespace pxfer {

// A failed file operation as pxfer reports it: "WHAT PATH: reason", with a hint for a full disk
// or quota (local_io), otherwise the errno's class.
[[noreturn]] void throw_io(const std::string& what, const std::string& path, int err);

// A directory that confines every path opened through it: with `confined`, paths are resolved
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so "..", absolute paths and symlinks
// that leave the directory are refused by the kernel. Without it (the client's own files),
// paths are opened as the user typed them.
class Directory {
 public:
  static Directory open_root(const std::string& path, bool confined);
  // A client's get -r target (named by the user, so opened as typed): everything below it is
  // opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), or, where openat2 is missing,
  // one component at a time with O_NOFOLLOW; a server can only have files written beneath it.
  static Directory open_beneath(const std::string& path);
  static Directory current();  // the process's working directory, unconfined
  Directory(Directory&& other) noexcept;
  Directory& operator=(Directory&& other) noexcept;
  Directory(const Directory&) = delete;
  ~Directory();

  int fd() const { return fd_; }
  bool confined() const { return confined_; }
  const std::string& display() const { return display_; }

  // Opens `relative` (validated by check_relative_path when confined) with open(2) flags.
  int open_file(const std::string& relative, int flags, unsigned mode = 0) const;
  // open_file without blocking: the open is done only when the kernel can resolve the whole path
  // from its caches (openat2 RESOLVE_CACHED), else -1 and nothing happened (do it off the
  // network thread then). Never for O_CREAT/O_TRUNC. Errors other than "not cached" throw as
  // from open_file.
  int open_file_if_cached(const std::string& relative, int flags) const;
  // Opens the directory that would hold `relative` and returns its fd; `leaf` gets the last part.
  int open_parent(const std::string& relative, std::string& leaf) const;
  // open_parent's two steps: the parent's path ("." for this directory itself), `relative` checked
  // as open_parent checks it; and opening that parent.
  std::string parent_path(const std::string& relative, std::string& leaf) const;
  int open_directory(const std::string& parent) const;

 private:
  Directory(int fd, bool confined, std::string display) : fd_(fd), confined_(confined), display_(std::move(display)) {}
  int fd_ = -1;
  bool confined_ = false;
  bool no_symlinks_ = false;  // open_beneath: no symlink anywhere below, not even one that stays inside
  std::string display_;
};

// Deletes a regular file (never a directory) named relative to `dir`, confined like open_file.
void remove_file(const Directory& dir, const std::string& path);

// A regular file's size and, when it has `expected_size` bytes, its whole-file checksum
// (lower-case hex; empty for another size), confined like open_file.
struct FileSum {
  std::uint64_t size = 0;
  std::string value;
};
// With `cancelled`, the read stops with Error(interrupted) once it turns true (pxferd stopping).
// With `stored`, a checksum kept in the file's extended attributes answers while it still
// describes the file, and one computed is kept (io/stored_checksum.hpp).
FileSum sum_file(const Directory& dir, const std::string& path, ChecksumAlgo algo, std::uint64_t expected_size,
                 const std::atomic<bool>* cancelled = nullptr, bool stored = false);
// Sets a regular file's permission bits (mode & 0775: never world-writable, no set-id or sticky
// bits) and modification time, confined like open_file (put --preserve).
void set_file_attributes(const Directory& dir, const std::string& path, std::uint32_t mode, std::int64_t mtime_ns);

// Refuses what a client must never name relative to an export root: empty, absolute, NUL bytes,
// "..". Throws Error(permission / usage) with a message naming the path.
void check_relative_path(const std::string& path);

class FileSource {
 public:
  FileSource(const Directory& dir, const std::string& path);
  // Opened on the calling thread when that cannot block (Directory::open_file_if_cached), else
  // nullopt: a get of a file whose path the kernel has cached skips the blocking pool's hop.
  static std::optional<FileSource> open_if_cached(const Directory& dir, const std::string& path);
  FileSource(FileSource&&) noexcept;
  FileSource(const FileSource&) = delete;
  ~FileSource();

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads exactly out.size() bytes at offset; a short read means the file shrank under us.
  void read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;
  // Throws Error(integrity) if size or mtime changed since open (file modified during transfer).
  void check_unchanged() const;
  std::int64_t mtime_ns() const { return mtime_ns_; }
  // For the sender's mapped reads (io/mapped_block.hpp).
  int fd() const { return fd_; }
  // The error of a read that found the file shorter than at open (ended at byte `at`).
  [[noreturn]] void shrank(std::uint64_t at) const;

 private:
  FileSource(int fd, const std::string& path);  // takes `fd`, checks it is a regular file
  int fd_ = -1;
  std::string path_;
  std::uint64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;
};

// How a sink treats an earlier, interrupted transfer to the same destination.
struct SinkOptions {
  bool overwrite = false;
  // Keep ".NAME.pxfer-part" and its journal when the transfer fails, and pick them up again when
  // the same source (size, mtime) arrives in the same blocks. Off: a random temporary name that
  // is removed on failure, and any partial file of an earlier attempt is discarded.
  bool resume = false;
  bool sync = false;  // fdatasync every block before it counts as written
  std::uint32_t block_size = 0;       // with resume
  std::int64_t source_mtime_ns = 0;   // with resume
  std::int64_t stale_after_seconds = 7 * 24 * 3600;  // abandoned partial files older than this go
  // Lab only (pxferd --emulate-disk-rate): every write waits its turn in this byte-per-second
  // bucket, shared by all the server's sinks as a slow disk is shared by all its transfers.
  RatePacer* write_pacer = nullptr;
  // With write_pacer: once due, a write still waiting its turn gives up (the server is stopping).
  const PacingStop* pacing_stop = nullptr;
  // A claimed size over this is refused before anything is allocated (pxferd --max-file-size); 0 = none.
  std::uint64_t max_file_size = 0;
  // Reserve the whole file before the first byte is written, so that a disk others fill cannot
  // fail the transfer halfway. Off for a file written in one piece right after it is created (a
  // small file: PUT_SMALL / GET_SMALL), where a full disk fails that one write just the same and
  // reserving first would only zero the pages once more on tmpfs.
  bool reserve = true;
  // Notice the destination directory being renamed away between blocks (check_directory), which
  // costs a descriptor held for the whole transfer. Off for a small file, written and committed
  // without blocks in between: a commit group holds many such sinks at once.
  bool watch_directory = true;
  // The file's directory was made by this run (get -r: client/local_tree.hpp) or by this pxferd's
  // MKDIR (server/made_directories.hpp), so nothing is expected under its name: the sink does not
  // look for an existing file, or for an earlier attempt's partial file to discard, first. That
  // lookup of a name that does not exist is not cached on tmpfs, and it waits for the directory's
  // lock behind every other file's create and rename (docs/performance.md section 23). A name that
  // is taken all the same is still never replaced: the final renameat2 (RENAME_NOREPLACE) refuses
  // it ("destination exists"), after the bytes were written to the temporary file.
  bool new_directory = false;
  // Keep the verified checksum (set_checksum) in the file's extended attributes once it is in
  // place (io/stored_checksum.hpp); pxferd's sinks, unless --no-stored-checksums.
  bool store_checksum = false;
};

// A directory that sinks write into, opened once: its descriptor and its (device, inode), shared
// by every sink made in it and closed with the last of them.
struct OpenDirectory {
  explicit OpenDirectory(int fd);  // takes `fd`
  ~OpenDirectory();
  OpenDirectory(const OpenDirectory&) = delete;
  OpenDirectory& operator=(const OpenDirectory&) = delete;
  int fd = -1;
  std::pair<std::uint64_t, std::uint64_t> id{0, 0};
};

// Where a sink's file goes: its directory, opened, and its name there.
struct SinkTarget {
  std::shared_ptr<const OpenDirectory> parent;
  std::string leaf;
  const Directory* root = nullptr;  // the directory the path started from (SinkOptions::watch_directory)
};
SinkTarget sink_target(const Directory& root, const std::string& path);

// The directories of a run of files written beneath `root`: a small-file run puts thousands of
// files into a few directories, so each path is checked as Directory::open_parent checks it but
// its parent is opened only when it differs from the previous file's (one openat2, and the fstat
// that identifies it, per directory instead of per file: docs/performance.md section 25).
// `root` must outlive it.
class ParentDirectories {
 public:
  explicit ParentDirectories(const Directory& root) : root_(root) {}
  SinkTarget target(const std::string& path);

 private:
  const Directory& root_;
  std::string last_;
  std::shared_ptr<const OpenDirectory> open_;
};

class FileSink {
 public:
  // Creates (or, resuming, reopens) the hidden partial file with `size` bytes preallocated.
  // Refuses right away when the final name exists and overwrite is off, or names a directory.
  FileSink(const Directory& dir, const std::string& path, std::uint64_t size, const SinkOptions& options)
      : FileSink(sink_target(dir, path), path, size, options) {}
  // The same in a directory opened already (ParentDirectories); `path` names the file in messages.
  FileSink(SinkTarget target, const std::string& path, std::uint64_t size, const SinkOptions& options);
  FileSink(const Directory& dir, const std::string& path, std::uint64_t size, bool overwrite)
      : FileSink(dir, path, size, SinkOptions{overwrite}) {}
  FileSink(const FileSink&) = delete;
  ~FileSink();  // like abandon(): keeps a resumable partial file, removes anything else

  void write_at(std::uint64_t offset, std::span<const std::uint8_t> data);
  // A file whose size is not known at its creation (a streamed write, server/stream_files.hpp: made
  // with size 0 and reserve off) grows to `size` bytes before a write_at reaches that far.
  void extend(std::uint64_t size) { size_ = std::max(size_, size); }
  void read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;
  // Block `index` is written in full (its Adler-32 given): with sync it is made durable first;
  // with resume the journal records it.
  void block_written(std::size_t index, std::uint32_t adler32);
  // The journal of an earlier attempt (resume only; null otherwise). Blocks it lists must still
  // be checked against the data before they count: see Transfer::receiving.
  ResumeJournal* journal() { return journal_.get(); }
  // fsync, then rename onto the final name (never replacing it without overwrite), then fsync
  // the directory so the rename itself is durable; the journal goes. The same three steps one at a
  // time, for many files made durable together (CommitGroup): flush(), place(), sync_directory().
  void commit();
  void start_writeback() noexcept;  // asks the kernel to begin writing the data out now
  void flush();                     // the data is on disk
  void place();                     // renamed onto the final name; durable after sync_directory()
  // The file's whole-file checksum, verified against the sender's, before commit()/place(): kept
  // with the file when the options say so.
  void set_checksum(ChecksumAlgo algo, std::string hex) {
    checksum_algo_ = algo;
    checksum_ = std::move(hex);
  }
  void sync_directory() noexcept;
  // The destination directory's (device, inode): one directory fsync serves all files placed in it.
  std::pair<std::uint64_t, std::uint64_t> directory_id() const;
  // After commit(): the file's inode and mtime (ns) as it was put in place, from its descriptor.
  struct Placed {
    std::uint64_t inode = 0;
    std::int64_t mtime_ns = 0;
  };
  Placed placed() const;
  // The transfer failed: a resumable partial file stays for the next attempt when
  // `keep_for_resume` (and resume is on); otherwise it is removed now.
  void abandon(bool keep_for_resume) noexcept;
  // Removes the temporary file now.
  void abort() noexcept { abandon(false); }

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  const std::string& temp_name() const { return temp_name_; }
  bool resuming() const { return journal_ != nullptr; }

 private:
  void check_space(const SinkOptions& options) const;
  void check_directory() const;
  void open_partial(const SinkOptions& options);
  void discard_partial() noexcept;
  void open_temporary();
  void preallocate();
  std::shared_ptr<const OpenDirectory> dir_;  // never null
  int fd_ = -1;
  std::string path_;
  std::string leaf_;
  std::string temp_name_;
  std::uint64_t size_ = 0;
  bool overwrite_ = false;
  bool looked_first_ = true;  // the final name was looked up before the temporary was made
  bool sync_ = false;
  bool store_checksum_ = false;
  ChecksumAlgo checksum_algo_ = ChecksumAlgo::none;
  std::string checksum_;
  RatePacer* write_pacer_ = nullptr;
  const PacingStop* pacing_stop_ = nullptr;
  void pace(std::size_t bytes);
  bool committed_ = false;
  bool abandoned_ = false;
  std::unique_ptr<ResumeJournal> journal_;
  // To notice a destination directory removed or renamed during the transfer: the directory the
  // path started from, and the parent's name relative to it.
  int start_fd_ = -1;
  std::string parent_;
  std::atomic<std::uint64_t> blocks_written_{0};  // read by abandon() on another thread
  // The file's space, and one pwrite at a time: the kernel takes the file's inode lock for each
  // write anyway, and a stream's thread waiting for it spun on the CPU the sender needed
  // (docs/performance.md section 10). Stopped before fd_ is closed.
  SpaceReservation space_;
};

}  // namespace pxfer
