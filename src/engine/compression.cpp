#include "pxfer/core/compression.hpp"

#include <zstd.h>

#include <chrono>
#include <charconv>

#include "pxfer/common/error.hpp"

namespace pxfer {

std::optional<CompressionSetting> parse_compression(std::string_view text) {
  if (text == "none") return CompressionSetting{CompressMode::none, 0};
  if (text == "auto") return CompressionSetting{CompressMode::automatic, 1};
  if (text == "zstd") return CompressionSetting{CompressMode::zstd, 3};
  if (text.starts_with("zstd:")) {
    int level = 0;
    auto digits = text.substr(5);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), level);
    if (ec != std::errc{} || ptr != digits.data() + digits.size() || level < 1 || level > ZSTD_maxCLevel())
      return std::nullopt;
    return CompressionSetting{CompressMode::zstd, level};
  }
  return std::nullopt;
}

std::string describe(const CompressionSetting& s) {
  switch (s.mode) {
    case CompressMode::none: return "none";
    case CompressMode::zstd: return "zstd:" + std::to_string(s.level);
    case CompressMode::automatic: return "auto (zstd:" + std::to_string(s.level) + ")";
  }
  return "?";
}

namespace {
// Smoothing weight of the newest observation: a few blocks are enough to follow a change.
constexpr double weight = 0.3;
double smooth(double old_value, double sample, bool first) { return first ? sample : old_value + weight * (sample - old_value); }
}  // namespace

bool AutoCompressPolicy::paying() const {
  if (!have_compression_ || !have_send_) return true;  // not known yet: try
  return (1 - ratio_) * compress_Bps_ > wire_Bps_;
}

bool AutoCompressPolicy::should_compress() {
  if (paying()) {
    since_probe_ = 0;
    return true;
  }
  if (++since_probe_ >= probe_every_) {
    since_probe_ = 0;
    return true;
  }
  return false;
}

void AutoCompressPolicy::record_compression(std::uint64_t raw, std::uint64_t compressed, double seconds) {
  if (raw == 0 || seconds <= 0) return;
  ratio_ = smooth(ratio_, std::min(1.0, static_cast<double>(compressed) / static_cast<double>(raw)), !have_compression_);
  compress_Bps_ = smooth(compress_Bps_, static_cast<double>(raw) / seconds, !have_compression_);
  have_compression_ = true;
}

void AutoCompressPolicy::record_send(std::uint64_t wire_bytes, double seconds) {
  if (wire_bytes == 0 || seconds <= 0) return;
  wire_Bps_ = smooth(wire_Bps_, static_cast<double>(wire_bytes) / seconds, !have_send_);
  have_send_ = true;
}

BlockCompressor::BlockCompressor(CompressionSetting setting) : setting_(setting) {
  if (setting_.mode == CompressMode::none) return;
  cctx_ = ZSTD_createCCtx();
  if (!cctx_) throw Error(Errc::internal, "cannot create a zstd compression context");
  ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(cctx_), ZSTD_c_compressionLevel, setting_.level);
}

BlockCompressor::~BlockCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

std::span<const std::uint8_t> BlockCompressor::compress(std::span<const std::uint8_t> block) {
  if (setting_.mode == CompressMode::none) return {};
  if (setting_.mode == CompressMode::automatic && !policy_.should_compress()) return {};
  out_.resize(ZSTD_compressBound(block.size()));
  auto start = std::chrono::steady_clock::now();
  std::size_t n = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), out_.data(), out_.size(), block.data(), block.size());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ZSTD_isError(n)) return {};
  policy_.record_compression(block.size(), n, seconds);
  if (n >= block.size()) return {};  // did not shrink: raw is cheaper to receive
  return {out_.data(), n};
}

void BlockCompressor::sent(std::uint64_t wire_bytes, double seconds) { policy_.record_send(wire_bytes, seconds); }

BlockDecompressor::BlockDecompressor() : dctx_(ZSTD_createDCtx()) {
  if (!dctx_) throw Error(Errc::internal, "cannot create a zstd decompression context");
}

BlockDecompressor::~BlockDecompressor() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_)); }

void BlockDecompressor::decompress(std::span<const std::uint8_t> wire, std::span<std::uint8_t> out) {
  std::size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), out.data(), out.size(), wire.data(), wire.size());
  if (ZSTD_isError(n) || n != out.size())
    throw Error(Errc::protocol, std::string("a compressed block did not decompress to its size: ") +
                                    (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong length"));
}

std::size_t BlockDecompressor::bound(std::size_t raw) { return ZSTD_compressBound(raw); }

}  // namespace pxfer
