#pragma once
// The receiver's record of the blocks it has written, kept beside the hidden partial file so an
// interrupted transfer can go on where it stopped. One fixed-size record per block, written in
// place right after the block into space reserved when the journal was started (a disk that
// fills up during the transfer cannot fail a journal write); in memory one bit per block, the
// Adler-32 values stay on disk. A killed process loses nothing (the page cache keeps it), and
// after a power loss a record whose block did not reach the disk is caught when the block is
// read back and its Adler-32 compared on resume. The file is locked (flock) while a receiver
// uses it, so two receivers never share one partial file.
#include "pxfer/io/layer.hpp"
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pxfer {

// What a partial file must match to be resumed: the same source (size and mtime) cut into the
// same blocks.
struct ResumeIdentity {
  std::uint64_t size = 0;
  std::uint32_t block_size = 0;
  std::int64_t source_mtime_ns = 0;
  bool operator==(const ResumeIdentity&) const = default;
};

class ResumeJournal {
 public:
  // Opens (creating it if needed) `name` in the directory `dir_fd` and locks it; throws
  // Error(exists) when another receiver holds the lock. A journal for a different identity, or
  // a damaged one, is reset to empty.
  ResumeJournal(int dir_fd, const std::string& name, const ResumeIdentity& identity, const std::string& display);
  ResumeJournal(const ResumeJournal&) = delete;
  ~ResumeJournal();  // closes, which releases the lock; the file stays

  // True when the journal on disk was for this identity (its records are worth checking).
  bool matched() const { return matched_; }
  // The recorded Adler-32 of block `index`, when the journal says it was written.
  std::optional<std::uint32_t> recorded(std::size_t index) const;
  std::size_t recorded_count() const;
  void record(std::size_t index, std::uint32_t adler32);  // throws Error(local_io)
  void forget(std::size_t index);                          // a block that failed its check
  void reset();                                            // empty, same identity, space reserved
  void remove() noexcept;                                  // unlink the journal file

  // Bytes a journal for `identity` takes on disk once its space is reserved.
  static std::uint64_t bytes_for(const ResumeIdentity& identity);

 private:
  void write_header();
  void load_records();
  void reserve();
  int dir_fd_;
  int fd_ = -1;
  std::string name_;
  std::string display_;
  ResumeIdentity identity_;
  bool matched_ = false;
  std::vector<bool> present_;  // one bit per block
  std::size_t count_ = 0;
};

// Removes the temporary files of receivers that are gone, in `dir_fd`: partial files and their
// journals (".NAME.pxfer-part" / ".NAME.pxfer-journal"), judged by the journal, and temporary
// files without a journal (".NAME.pxfer-" + 16 hex digits, or a partial whose journal is gone),
// judged by themselves: last written more than `max_age_seconds` ago and not locked by a running
// receiver (it holds an flock on what it writes). Returns how many transfers' files were removed.
std::size_t remove_stale_partials(int dir_fd, std::int64_t max_age_seconds);

// remove_stale_partials in `root_fd` and every directory below it (no symbolic link followed),
// until `stop` is set. pxferd runs it at start and then periodically.
std::size_t sweep_tree(int root_fd, std::int64_t max_age_seconds, const std::atomic<bool>& stop);

inline constexpr const char* partial_suffix = ".pxfer-part";
inline constexpr const char* journal_suffix = ".pxfer-journal";

}  // namespace pxfer
