#include "support/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace pxfer::e2e {
namespace {

constexpr std::size_t chunk = 1 << 20;

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

int open_read(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", path);
  return fd;
}

// Reads up to `want` bytes, fewer only at end of file.
std::size_t read_full(int fd, char* buf, std::size_t want, const std::string& path) {
  std::size_t done = 0;
  while (done < want) {
    ssize_t n = ::read(fd, buf + done, want - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read", path);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

template <class F>
void for_each_chunk(const std::string& path, F&& f) {
  Fd in(open_read(path));
  std::vector<char> buf(chunk);
  for (;;) {
    std::size_t n = read_full(in.fd, buf.data(), buf.size(), path);
    if (n == 0) break;
    f(buf.data(), n);
    if (n < buf.size()) break;
  }
}

}  // namespace

void make_file(const std::string& path, std::uint64_t size, std::uint64_t seed) {
  Fd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (out.fd < 0) fail("cannot create", path);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  if (state == 0) state = 1;
  std::vector<std::uint64_t> buf(chunk / sizeof(std::uint64_t));
  std::uint64_t left = size;
  while (left > 0) {
    for (auto& w : buf) {
      state ^= state >> 12;
      state ^= state << 25;
      state ^= state >> 27;
      w = state * 0x2545F4914F6CDD1Dull;
    }
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk));
    const char* p = reinterpret_cast<const char*>(buf.data());
    std::size_t done = 0;
    while (done < n) {
      ssize_t w = ::write(out.fd, p + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail("cannot write", path);
      done += static_cast<std::size_t>(w);
    }
    left -= n;
  }
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

void write_private(const std::string& path, const std::string& text) {
  write_text(path, text);
  if (::chmod(path.c_str(), 0600) != 0) throw std::runtime_error("chmod 0600 " + path + " failed");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail("cannot stat", path);
  return static_cast<std::uint64_t>(st.st_size);
}

::testing::AssertionResult files_equal(const std::string& expected, const std::string& actual) {
  struct stat a {}, b {};
  if (::stat(expected.c_str(), &a) != 0) return ::testing::AssertionFailure() << "cannot stat " << expected;
  if (::stat(actual.c_str(), &b) != 0)
    return ::testing::AssertionFailure() << actual << " does not exist (" << std::strerror(errno) << ")";
  if (!S_ISREG(b.st_mode)) return ::testing::AssertionFailure() << actual << " is not a regular file";
  if (a.st_size != b.st_size)
    return ::testing::AssertionFailure() << actual << " has " << b.st_size << " bytes, " << expected << " has "
                                         << a.st_size;
  Fd fa(open_read(expected)), fb(open_read(actual));
  std::vector<char> ba(chunk), bb(chunk);
  std::uint64_t offset = 0;
  for (;;) {
    std::size_t na = read_full(fa.fd, ba.data(), chunk, expected);
    std::size_t nb = read_full(fb.fd, bb.data(), chunk, actual);
    if (na != nb) return ::testing::AssertionFailure() << "short read at offset " << offset;
    if (std::memcmp(ba.data(), bb.data(), na) != 0) {
      std::size_t i = 0;
      while (ba[i] == bb[i]) ++i;
      return ::testing::AssertionFailure() << actual << " differs from " << expected << " at byte " << offset + i;
    }
    if (na < chunk) break;
    offset += na;
  }
  return ::testing::AssertionSuccess();
}

std::string sha256_hex(const std::string& path) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("EVP sha256 init");
  for_each_chunk(path, [&](const char* p, std::size_t n) { EVP_DigestUpdate(ctx.get(), p, n); });
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  std::string hex;
  char two[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(two, sizeof two, "%02x", md[i]);
    hex += two;
  }
  return hex;
}

std::string adler32_hex(const std::string& path) {
  constexpr std::uint32_t mod = 65521;
  std::uint32_t a = 1, b = 0;
  for_each_chunk(path, [&](const char* p, std::size_t n) {
    while (n > 0) {
      std::size_t run = std::min<std::size_t>(n, 5552);  // largest run without overflow (zlib's NMAX)
      for (std::size_t i = 0; i < run; ++i) {
        a += static_cast<unsigned char>(p[i]);
        b += a;
      }
      a %= mod;
      b %= mod;
      p += run;
      n -= run;
    }
  });
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", (b << 16) | a);
  return hex;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DirPtr d(::opendir(dir.c_str()));
  if (!d) fail("cannot open directory", dir);
  while (dirent* e = ::readdir(d.get())) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> open_files_of(int pid, const std::string& prefix) {
  std::vector<std::string> found;
  std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  DirPtr d(::opendir(fd_dir.c_str()));
  if (!d) return found;
  while (dirent* e = ::readdir(d.get())) {
    if (e->d_name[0] == '.') continue;
    char target[4096];
    ssize_t n = ::readlink((fd_dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    std::string t(target, static_cast<std::size_t>(n));
    if (t.starts_with(prefix)) found.push_back(t);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> hidden_temporaries(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& name : list_dir(dir))
    if (name.size() > 1 && name[0] == '.' && name.find(".pxfer-") != std::string::npos) found.push_back(name);
  return found;
}

std::vector<std::string> resumable_leftovers(const std::string& name) {
  return {"." + name + ".pxfer-journal", "." + name + ".pxfer-part"};
}

std::size_t journaled_blocks(const std::string& dir, const std::string& name) {
  // Read independently of ResumeJournal: a 64-byte header, then 8-byte records whose first
  // four bytes are "PXB1" (little-endian 0x31425850) for a written block.
  std::ifstream in(dir + "/." + name + ".pxfer-journal", std::ios::binary);
  if (!in) return 0;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t n = 0;
  for (std::size_t at = 64; at + 8 <= bytes.size(); at += 8) n += bytes.compare(at, 4, "PXB1") == 0;
  return n;
}

TemporaryWatcher::TemporaryWatcher(std::string dir) : dir_(std::move(dir)) {
  thread_ = std::thread([this] {
    namespace fs = std::filesystem;
    while (!stopping_.load()) {
      std::set<std::string> now;
      std::error_code ec;
      for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        std::string name = it->path().filename().string();
        auto mark = name.rfind(".pxfer-");
        if (name.size() < 2 || name[0] != '.' || mark == std::string::npos || mark < 2) continue;
        auto rel = fs::relative(it->path().parent_path(), dir_, ec).generic_string();
        now.insert((rel == "." || rel.empty() ? "" : rel + "/") + name.substr(1, mark - 1));
      }
      ++samples_;
      if (now.size() > most_.load()) most_.store(now.size());
      {
        std::lock_guard lock(mutex_);
        seen_.insert(now.begin(), now.end());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });
}

TemporaryWatcher::~TemporaryWatcher() { stop(); }

void TemporaryWatcher::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::set<std::string> TemporaryWatcher::seen() {
  std::lock_guard lock(mutex_);
  return seen_;
}

}  // namespace pxfer::e2e
