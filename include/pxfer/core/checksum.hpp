#pragma once
// Whole-file checksums computed while the blocks stream, in whatever order they arrive.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pxfer {

// md5, crc32 (zlib's, as gfal2 and gsiftp define CRC32) and sha1 for grid clients that ask for them
// (gfal-sum, FTS3 and Rucio configurations); adler32 stays the fast default.
enum class ChecksumAlgo : std::uint8_t { none = 0, adler32 = 1, sha256 = 2, md5 = 3, crc32 = 4, sha1 = 5 };
// The highest ChecksumAlgo value: wire decoders refuse anything above it.
inline constexpr std::uint8_t last_checksum_algo = static_cast<std::uint8_t>(ChecksumAlgo::sha1);

std::optional<ChecksumAlgo> parse_checksum_algo(std::string_view name);
std::string_view checksum_name(ChecksumAlgo algo);
// "adler32: 0a3c1f2e" as grid tools print it; "none" when there is no checksum.
std::string format_checksum(ChecksumAlgo algo, const std::string& hex);

// Reads `out.size()` bytes at `offset` of the file being checksummed (used by digests that must
// see the data in order, to catch up on blocks that arrived early).
using ReadAt = std::function<void(std::uint64_t offset, std::span<std::uint8_t> out)>;

// The digest of one block while its bytes stream through, chunk by chunk, so each chunk is hashed
// while it is still in the CPU cache.
struct BlockDigest {
  std::uint64_t offset = 0;
  std::uint32_t running = 1;  // adler32 of the bytes seen so far (1 = empty)
};

class FileDigest {
 public:
  virtual ~FileDigest() = default;
  // Blocks arrive from any thread, in any order; one block's chunks come in order from one thread:
  // update() for each chunk, then complete() with the whole block, once it is at its offset in
  // the file (a digest that reads blocks back in order must find it there).
  virtual void update(BlockDigest& block, std::span<const std::uint8_t> chunk) = 0;
  virtual void complete(BlockDigest& block, std::span<const std::uint8_t> whole_block) = 0;
  // Both steps at once, for callers that hold the whole block.
  void add_block(std::uint64_t offset, std::span<const std::uint8_t> data) {
    BlockDigest block{offset};
    update(block, data);
    complete(block, data);
  }
  // Lower-case hex of the whole file's digest; every block must have been added.
  virtual std::string finish() = 0;
  // False for a digest that never looks at the bytes (none, known): blocks that are not sent
  // (resumed) need not be read for it.
  virtual bool reads_bytes() const { return true; }

  // `block_size` is the planner's: blocks start at multiples of it.
  static std::unique_ptr<FileDigest> create(ChecksumAlgo algo, std::uint64_t file_size,
                                            std::uint32_t block_size, ReadAt read_at);
  // A digest that looks at no byte: the file's value is known already (a stored checksum,
  // io/stored_checksum.hpp), and finish() returns `hex`.
  static std::unique_ptr<FileDigest> known(std::string hex);
};

// One-shot helpers, for tests and for checking files outside a transfer.
std::uint32_t adler32_of(std::span<const std::uint8_t> data, std::uint32_t start = 1);
std::string checksum_of_file(ChecksumAlgo algo, const std::string& path);
// The same over bytes in memory (a small file moved whole in one frame).
std::string checksum_of_bytes(ChecksumAlgo algo, std::span<const std::uint8_t> data);
// The same over an open file (read from offset 0 with pread); closes `fd`. `path` names it in errors.
std::string checksum_of_descriptor(ChecksumAlgo algo, int fd, const std::string& path);

}  // namespace pxfer
