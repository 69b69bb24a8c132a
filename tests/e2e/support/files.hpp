#pragma once
// File helpers: fast pseudo-random content, comparisons and independent checksums.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pxfer::e2e {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;

// Writes `size` pseudo-random bytes (xorshift64*, reproducible from `seed`); throws on failure.
void make_file(const std::string& path, std::uint64_t size, std::uint64_t seed);
void write_text(const std::string& path, const std::string& text);
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

}  // namespace pxfer::e2e
