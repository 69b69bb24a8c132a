#pragma once
// File helpers: fast pseudo-random content, comparisons and independent checksums.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace pxfer::e2e {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;

// Writes `size` pseudo-random bytes (xorshift64*, reproducible from `seed`); throws on failure.
void make_file(const std::string& path, std::uint64_t size, std::uint64_t seed);
void write_text(const std::string& path, const std::string& text);
// The same, mode 0600: a credentials file pxfer and pxferd accept (others may not read it).
void write_private(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);
// lstat: true for a dangling symlink too.
bool path_exists(const std::string& path);
std::uint64_t file_size(const std::string& path);

// Byte-for-byte comparison; on failure says where the files first differ.
::testing::AssertionResult files_equal(const std::string& expected, const std::string& actual);

// Lower-case hex digests computed here, independently of the library under test.
std::string sha256_hex(const std::string& path);  // OpenSSL EVP
std::string adler32_hex(const std::string& path);  // RFC 1950

// Names in `dir` that look like pxfer temporaries (".NAME.pxfer-XXXXXXXX").
std::vector<std::string> hidden_temporaries(const std::string& dir);
// What an interrupted transfer to NAME leaves for a resume: its partial file and its journal,
// sorted as list_dir sorts them.
std::vector<std::string> resumable_leftovers(const std::string& name);
// How many blocks the resume journal of NAME in `dir` records as written (0 without a journal).
std::size_t journaled_blocks(const std::string& dir, const std::string& name);
// Targets of the open descriptors of process `pid` (/proc/PID/fd) that start with `prefix`;
// an unlinked file shows as "PATH (deleted)".
std::vector<std::string> open_files_of(int pid, const std::string& prefix);
// All names in `dir` (not recursive), sorted.
std::vector<std::string> list_dir(const std::string& dir);

// Files being received in `dir` or below it, as the file system shows them: the distinct NAMEs
// of pxfer temporaries (".NAME.pxfer-*"; a partial file and its journal count once), sampled
// from a thread of its own every millisecond or so until stop(). The receiver creates them once a
// transfer is admitted and renames them when it commits, so the largest count seen at once is how
// many transfers were writing at once, measured without asking pxfer or pxferd.
class TemporaryWatcher {
 public:
  explicit TemporaryWatcher(std::string dir);
  ~TemporaryWatcher();
  TemporaryWatcher(const TemporaryWatcher&) = delete;
  TemporaryWatcher& operator=(const TemporaryWatcher&) = delete;
  void stop();
  std::size_t most_at_once() const { return most_.load(); }
  std::size_t samples() const { return samples_.load(); }
  // Every file (relative path of its final name) ever seen being received.
  std::set<std::string> seen();

 private:
  std::string dir_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> most_{0}, samples_{0};
  std::mutex mutex_;
  std::set<std::string> seen_;
  std::thread thread_;
};

}  // namespace pxfer::e2e
