#pragma once
// Files at both ends of a transfer: the source read at offsets, and the sink written at offsets
// into a preallocated temporary file that only becomes the final name after it was verified.
#include <cstdint>
#include <span>
#include <string>

namespace pxfer {

// A directory that confines every path opened through it: with `confined`, paths are resolved
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so "..", absolute paths and symlinks
// that leave the directory are refused by the kernel. Without it (the client's own files),
// paths are opened as the user typed them.
class Directory {
 public:
  static Directory open_root(const std::string& path, bool confined);
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
  // Opens the directory that would hold `relative` and returns its fd; `leaf` gets the last part.
  int open_parent(const std::string& relative, std::string& leaf) const;

 private:
  Directory(int fd, bool confined, std::string display) : fd_(fd), confined_(confined), display_(std::move(display)) {}
  int fd_ = -1;
  bool confined_ = false;
  std::string display_;
};

// Deletes a regular file (never a directory) named relative to `dir`, confined like open_file.
void remove_file(const Directory& dir, const std::string& path);

// Refuses what a client must never name relative to an export root: empty, absolute, NUL bytes,
// "..". Throws Error(permission / usage) with a message naming the path.
void check_relative_path(const std::string& path);

class FileSource {
 public:
  FileSource(const Directory& dir, const std::string& path);
  FileSource(FileSource&&) noexcept;
  FileSource(const FileSource&) = delete;
  ~FileSource();

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads exactly out.size() bytes at offset; a short read means the file shrank under us.
  void read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;
  // Throws Error(integrity) if size or mtime changed since open (file modified during transfer).
  void check_unchanged() const;

 private:
  int fd_ = -1;
  std::string path_;
  std::uint64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;
};

class FileSink {
 public:
  // Creates "<dir>/.<name>.pxfer-<random>" with `size` bytes preallocated. Refuses right away
  // when the final name exists and `overwrite` is false, or names a directory.
  FileSink(const Directory& dir, const std::string& path, std::uint64_t size, bool overwrite);
  FileSink(const FileSink&) = delete;
  ~FileSink();  // removes the temporary file unless commit() succeeded

  void write_at(std::uint64_t offset, std::span<const std::uint8_t> data);
  void read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;
  // fsync, then rename onto the final name (never replacing it without overwrite), then fsync
  // the directory so the rename itself is durable.
  void commit();
  // Removes the temporary file now.
  void abort() noexcept;

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  const std::string& temp_name() const { return temp_name_; }

 private:
  int dir_fd_ = -1;
  int fd_ = -1;
  std::string path_;
  std::string leaf_;
  std::string temp_name_;
  std::uint64_t size_ = 0;
  bool overwrite_ = false;
  bool committed_ = false;
};

}  // namespace pxfer
