// Per-block compression: round trips, raw fallback, and the auto policy's decisions on made-up
// timings.
#include <gtest/gtest.h>

#include <random>

#include "pxfer/core/compression.hpp"
#include "pxfer/common/error.hpp"

using namespace pxfer;

TEST(Compression, ParsesSettings) {
  EXPECT_EQ(parse_compression("none")->mode, CompressMode::none);
  EXPECT_EQ(*parse_compression("zstd"), (CompressionSetting{CompressMode::zstd, 3}));
  EXPECT_EQ(*parse_compression("zstd:9"), (CompressionSetting{CompressMode::zstd, 9}));
  EXPECT_EQ(parse_compression("auto")->mode, CompressMode::automatic);
  EXPECT_FALSE(parse_compression("zstd:0"));
  EXPECT_FALSE(parse_compression("zstd:99"));
  EXPECT_FALSE(parse_compression("gzip"));
  EXPECT_EQ(describe(*parse_compression("zstd:5")), "zstd:5");
}

TEST(Compression, TextRoundTripsAndShrinks) {
  std::string text;
  while (text.size() < (1u << 20)) text += "run 42 event 1234 energy 13.6 TeV detector ATLAS ";
  std::span<const std::uint8_t> block(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  BlockCompressor c(CompressionSetting{CompressMode::zstd, 3});
  auto packed = c.compress(block);
  ASSERT_FALSE(packed.empty());
  EXPECT_LT(packed.size(), block.size() / 10);
  std::vector<std::uint8_t> out(block.size());
  BlockDecompressor d;
  d.decompress(packed, out);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), block.begin()));
}

TEST(Compression, RandomDataGoesRaw) {
  std::vector<std::uint8_t> block(1 << 20);
  std::mt19937 rng(7);
  for (auto& b : block) b = static_cast<std::uint8_t>(rng());
  BlockCompressor c(CompressionSetting{CompressMode::zstd, 3});
  EXPECT_TRUE(c.compress(block).empty());
}

TEST(Compression, CorruptOrShortInputIsAProtocolError) {
  std::vector<std::uint8_t> garbage(100, 0xAB), out(1000);
  BlockDecompressor d;
  try {
    d.decompress(garbage, out);
    FAIL() << "garbage decompressed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol);
  }
}

TEST(AutoCompressPolicy, CompressesUntilItKnowsBetter) {
  AutoCompressPolicy p;
  EXPECT_TRUE(p.should_compress());
}

TEST(AutoCompressPolicy, StopsWhenTheWireIsFasterThanTheSavings) {
  AutoCompressPolicy p(16);
  // Loopback-like: 2 GB/s wire, 400 MB/s compression, ratio 0.5: saving 0.5 x 400 MB/s < 2 GB/s.
  p.record_compression(4 << 20, 2 << 20, (4 << 20) / 400e6);
  p.record_send(2 << 20, (2 << 20) / 2e9);
  EXPECT_FALSE(p.paying());
  int compressed = 0;
  for (int i = 0; i < 32; ++i) compressed += p.should_compress();
  EXPECT_EQ(compressed, 2);  // only the probes
}

TEST(AutoCompressPolicy, KeepsCompressingOnASlowLink) {
  AutoCompressPolicy p;
  // 100 Mbit/s wire (12.5 MB/s), 400 MB/s compression, ratio 0.3: clearly pays.
  p.record_compression(4 << 20, (4 << 20) * 3 / 10, (4 << 20) / 400e6);
  p.record_send(1 << 20, (1 << 20) / 12.5e6);
  EXPECT_TRUE(p.paying());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(p.should_compress());
}

TEST(AutoCompressPolicy, IncompressibleDataDoesNotPayEvenOnASlowLink) {
  AutoCompressPolicy p;
  p.record_compression(4 << 20, 4 << 20, (4 << 20) / 400e6);  // ratio 1.0
  p.record_send(4 << 20, (4 << 20) / 12.5e6);
  EXPECT_FALSE(p.paying());
}
