#pragma once
// Small helpers shared by the unit tests: deterministic random data, a scratch directory that
// cleans up after itself, and whole-file read/write.
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "pxfer/common/error.hpp"

namespace pxfer::test {

// `n` pseudo-random bytes, the same for the same seed on every run.
inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// A fresh directory from mkdtemp(3), removed with everything in it when the object goes away.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/pxfer-unit-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = buf.data();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

  // Names of the entries in the directory (including hidden ones), sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::vector<std::uint8_t>& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Number of descriptors this process has open (entries of /proc/self/fd, minus the one the
// listing itself uses).
inline int open_fd_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;
}

// The class of the Error `f` throws; Errc::ok when it throws none.
inline Errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Errc::ok;
}

// A scratch directory on tmpfs: a small one mounted for the test as root (CI), else /dev/shm.
class TmpfsDir {
 public:
  TmpfsDir() {
    char pattern[] = "/dev/shm/pxfer-unit-tmpfs-XXXXXX";
    char tmp_pattern[] = "/tmp/pxfer-unit-tmpfs-XXXXXX";
    if (::geteuid() == 0 && ::mkdtemp(tmp_pattern) != nullptr) {
      path_ = tmp_pattern;
      mounted_ = ::mount("pxfer-test", path_.c_str(), "tmpfs", 0, "size=16m") == 0;
      if (mounted_) return;
      ::rmdir(path_.c_str());
    }
    struct statfs fs {};
    if (::statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC && ::mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~TmpfsDir() {
    if (path_.empty()) return;
    std::error_code ec;
    if (mounted_) {
      ::umount2(path_.c_str(), MNT_DETACH);
    } else {
      std::filesystem::remove_all(path_, ec);
      return;
    }
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  bool mounted() const { return mounted_; }  // a 16 MiB tmpfs of its own (root), not /dev/shm

 private:
  std::string path_;
  bool mounted_ = false;
};

}  // namespace pxfer::test
