#include <fcntl.h>
#include <isa-l.h>
#include <openssl/evp.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "checksum/adler32_simd.hpp"
#include "pxfer/core/checksum.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer {
namespace {

std::string hex32(std::uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// Adler-32 (or CRC-32) of each block is computed independently (in parallel, out of order) and the
// block values are folded together at the end with zlib's adler32_combine (crc32_combine), which
// needs only lengths.
class Adler32Digest final : public FileDigest {
 public:
  Adler32Digest(std::uint64_t file_size, std::uint32_t block_size, bool crc = false)
      : file_size_(file_size), block_size_(block_size), crc_(crc),
        values_(static_cast<std::size_t>((file_size + block_size - 1) / block_size), crc ? 0 : 1) {}

  void update(BlockDigest& block, std::span<const std::uint8_t> chunk) override {
    if (!crc_) {
      block.running = adler32_of(chunk, block.running);
      return;
    }
    // A block starts at running = 1, Adler-32's empty value; CRC-32's is 0: for CRC the running
    // value is kept XOR 1, so that every caller's fresh BlockDigest stays right for both.
    const auto crc = crc32_z(block.running ^ 1u, chunk.data(), static_cast<z_size_t>(chunk.size()));
    block.running = static_cast<std::uint32_t>(crc) ^ 1u;
  }

  void complete(BlockDigest& block, std::span<const std::uint8_t>) override {
    const std::uint32_t v = crc_ ? block.running ^ 1u : block.running;
    std::size_t index = static_cast<std::size_t>(block.offset / block_size_);
    std::lock_guard lock(mutex_);
    if (index < values_.size()) values_[index] = v;
  }

  std::string finish() override {
    std::lock_guard lock(mutex_);
    uLong total = crc_ ? 0 : 1;
    for (std::size_t i = 0; i < values_.size(); ++i) {
      std::uint64_t offset = static_cast<std::uint64_t>(i) * block_size_;
      const auto len = static_cast<z_off64_t>(std::min<std::uint64_t>(block_size_, file_size_ - offset));
      total = crc_ ? crc32_combine64(total, values_[i], len) : adler32_combine64(total, values_[i], len);
    }
    return hex32(static_cast<std::uint32_t>(total));
  }

 private:
  const std::uint64_t file_size_;
  const std::uint32_t block_size_;
  const bool crc_;
  std::mutex mutex_;
  std::vector<std::uint32_t> values_;
};

// SHA-256 (and MD5, SHA-1: any OpenSSL digest) must see the bytes in file order. The block that continues the hashed prefix is hashed
// from memory; blocks that arrived early are noted and read back (from page cache) once the
// prefix reaches them. One thread hashes at a time; the others only note their block and go on.
class Sha256Digest final : public FileDigest {
 public:
  Sha256Digest(ReadAt read_at, const EVP_MD* md) : read_at_(std::move(read_at)), ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_, md, nullptr) != 1)
      throw Error(Errc::internal, "cannot initialise a digest (OpenSSL)");
  }
  ~Sha256Digest() override { EVP_MD_CTX_free(ctx_); }

  void update(BlockDigest&, std::span<const std::uint8_t>) override {}

  void complete(BlockDigest& block, std::span<const std::uint8_t> data) override {
    const std::uint64_t offset = block.offset;
    {
      std::lock_guard lock(mutex_);
      // A block completed a second time (it arrived on two streams) is hashed once; the
      // receiver never writes it twice either (BlockLedger), so what was hashed is on disk.
      if (offset < hashed_) return;
      if (hashing_ || offset != hashed_) {
        early_[offset] = static_cast<std::uint32_t>(data.size());
        return;
      }
      hashing_ = true;
    }
    EVP_DigestUpdate(ctx_, data.data(), data.size());
    std::vector<std::uint8_t> buffer;
    std::unique_lock lock(mutex_);
    hashed_ += data.size();
    // Catch up on blocks that arrived while this thread was hashing or before their turn.
    for (auto it = early_.find(hashed_); it != early_.end(); it = early_.find(hashed_)) {
      std::uint32_t len = it->second;
      early_.erase(it);
      lock.unlock();
      buffer.resize(len);
      read_at_(hashed_, buffer);
      EVP_DigestUpdate(ctx_, buffer.data(), len);
      lock.lock();
      hashed_ += len;
    }
    hashing_ = false;
  }

  std::string finish() override {
    std::lock_guard lock(mutex_);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, md, &n);
    std::string out;
    char buf[3];
    for (unsigned i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, "%02x", md[i]);
      out += buf;
    }
    return out;
  }

 private:
  ReadAt read_at_;
  EVP_MD_CTX* ctx_;
  std::mutex mutex_;
  bool hashing_ = false;
  std::uint64_t hashed_ = 0;
  std::map<std::uint64_t, std::uint32_t> early_;
};

class NoDigest final : public FileDigest {
 public:
  void update(BlockDigest&, std::span<const std::uint8_t>) override {}
  void complete(BlockDigest&, std::span<const std::uint8_t>) override {}
  std::string finish() override { return {}; }
  bool reads_bytes() const override { return false; }
};

class KnownDigest final : public FileDigest {
 public:
  explicit KnownDigest(std::string hex) : hex_(std::move(hex)) {}
  void update(BlockDigest&, std::span<const std::uint8_t>) override {}
  void complete(BlockDigest&, std::span<const std::uint8_t>) override {}
  std::string finish() override { return hex_; }
  bool reads_bytes() const override { return false; }

 private:
  std::string hex_;
};

}  // namespace

std::optional<ChecksumAlgo> parse_checksum_algo(std::string_view name) {
  if (name == "adler32") return ChecksumAlgo::adler32;
  if (name == "sha256") return ChecksumAlgo::sha256;
  if (name == "md5") return ChecksumAlgo::md5;
  if (name == "crc32") return ChecksumAlgo::crc32;
  if (name == "sha1") return ChecksumAlgo::sha1;
  if (name == "none") return ChecksumAlgo::none;
  return std::nullopt;
}

std::string_view checksum_name(ChecksumAlgo algo) {
  switch (algo) {
    case ChecksumAlgo::adler32: return "adler32";
    case ChecksumAlgo::sha256: return "sha256";
    case ChecksumAlgo::md5: return "md5";
    case ChecksumAlgo::crc32: return "crc32";
    case ChecksumAlgo::sha1: return "sha1";
    case ChecksumAlgo::none: return "none";
  }
  return "unknown";
}

std::string format_checksum(ChecksumAlgo algo, const std::string& hex) {
  if (algo == ChecksumAlgo::none) return "checksum: none";
  return std::string(checksum_name(algo)) + ": " + hex;
}

std::uint32_t adler32_of(std::span<const std::uint8_t> data, std::uint32_t start) {
  return adler32_simd(start, data.data(), data.size());
}

std::unique_ptr<FileDigest> FileDigest::create(ChecksumAlgo algo, std::uint64_t file_size,
                                               std::uint32_t block_size, ReadAt read_at) {
  switch (algo) {
    case ChecksumAlgo::adler32: return std::make_unique<Adler32Digest>(file_size, block_size);
    case ChecksumAlgo::sha256: return std::make_unique<Sha256Digest>(std::move(read_at), EVP_sha256());
    case ChecksumAlgo::md5: return std::make_unique<Sha256Digest>(std::move(read_at), EVP_md5());
    case ChecksumAlgo::sha1: return std::make_unique<Sha256Digest>(std::move(read_at), EVP_sha1());
    case ChecksumAlgo::crc32: return std::make_unique<Adler32Digest>(file_size, block_size, true);
    case ChecksumAlgo::none: return std::make_unique<NoDigest>();
  }
  throw Error(Errc::usage, "unknown checksum algorithm");
}

std::unique_ptr<FileDigest> FileDigest::known(std::string hex) { return std::make_unique<KnownDigest>(std::move(hex)); }

std::string checksum_of_file(ChecksumAlgo algo, const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(errc_from_errno(errno), "cannot open " + path + ": " + errno_text(errno));
  return checksum_of_descriptor(algo, fd, path);
}

std::string checksum_of_bytes(ChecksumAlgo algo, std::span<const std::uint8_t> data) {
  constexpr std::uint32_t chunk = 4 << 20;
  auto digest = FileDigest::create(algo, data.size(), chunk, nullptr);
  for (std::size_t offset = 0; offset < data.size(); offset += chunk)
    digest->add_block(offset, data.subspan(offset, std::min<std::size_t>(chunk, data.size() - offset)));
  return digest->finish();
}

std::string checksum_of_descriptor(ChecksumAlgo algo, int fd, const std::string& path) {
  constexpr std::uint32_t chunk = 4 << 20;
  off_t size = ::lseek(fd, 0, SEEK_END);
  auto digest = FileDigest::create(algo, static_cast<std::uint64_t>(size), chunk, nullptr);
  std::vector<std::uint8_t> buf(chunk);
  std::uint64_t offset = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf.data(), chunk, static_cast<off_t>(offset));
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error(Errc::local_io, "cannot read " + path + ": " + errno_text(err));
    }
    if (n == 0) break;
    digest->add_block(offset, std::span(buf.data(), static_cast<std::size_t>(n)));
    offset += static_cast<std::uint64_t>(n);
    if (static_cast<std::uint32_t>(n) < chunk) break;
  }
  ::close(fd);
  return digest->finish();
}

}  // namespace pxfer
