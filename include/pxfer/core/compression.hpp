#pragma once
// Per-block compression on the wire (--compress none|zstd[:LEVEL]|auto). The sender compresses
// each block on its own; a block that does not shrink goes raw. In auto mode a policy keeps
// compressing only while it pays: while the wire time it saves exceeds the CPU time it costs.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pxfer {

enum class CompressMode : std::uint8_t { none = 0, zstd = 1, automatic = 2 };

struct CompressionSetting {
  CompressMode mode = CompressMode::none;
  int level = 3;
  bool operator==(const CompressionSetting&) const = default;
};

std::optional<CompressionSetting> parse_compression(std::string_view text);
std::string describe(const CompressionSetting& setting);  // "none", "zstd:3", "auto (zstd:1)"

// The auto mode's decision, pure so it can be tested on made-up timings. Compressing a block of
// R bytes to C costs R / compress_speed seconds and saves (R - C) / wire_speed seconds of sending:
// it pays while (1 - C/R) * compress_speed > wire_speed. When it stops paying, blocks go raw and
// every `probe_every`-th block is compressed again to notice when the data or the link changes.
class AutoCompressPolicy {
 public:
  explicit AutoCompressPolicy(unsigned probe_every = 16) : probe_every_(probe_every) {}
  bool should_compress();
  void record_compression(std::uint64_t raw, std::uint64_t compressed, double seconds);
  void record_send(std::uint64_t wire_bytes, double seconds);
  bool paying() const;
  double ratio() const { return ratio_; }  // compressed / raw, smoothed

 private:
  unsigned probe_every_;
  unsigned since_probe_ = 0;
  bool have_compression_ = false;
  bool have_send_ = false;
  double ratio_ = 1;
  double compress_Bps_ = 0;
  double wire_Bps_ = 0;
};

// One per sending stream (zstd contexts are not shared between threads).
class BlockCompressor {
 public:
  explicit BlockCompressor(CompressionSetting setting);
  ~BlockCompressor();
  BlockCompressor(const BlockCompressor&) = delete;
  BlockCompressor& operator=(const BlockCompressor&) = delete;
  // The compressed form of `block` when it should go compressed and is smaller; empty otherwise.
  std::span<const std::uint8_t> compress(std::span<const std::uint8_t> block);
  // How long sending the last block took, for the auto policy.
  void sent(std::uint64_t wire_bytes, double seconds);

 private:
  CompressionSetting setting_;
  void* cctx_ = nullptr;
  std::vector<std::uint8_t> out_;
  AutoCompressPolicy policy_;
};

// One per receiving stream.
class BlockDecompressor {
 public:
  BlockDecompressor();
  ~BlockDecompressor();
  BlockDecompressor(const BlockDecompressor&) = delete;
  BlockDecompressor& operator=(const BlockDecompressor&) = delete;
  // Decompresses into `out` (exactly out.size() bytes, or Error(protocol)).
  void decompress(std::span<const std::uint8_t> wire, std::span<std::uint8_t> out);
  // The largest compressed size a block of `raw` bytes may have on the wire.
  static std::size_t bound(std::size_t raw);

 private:
  void* dctx_ = nullptr;
};

}  // namespace pxfer
