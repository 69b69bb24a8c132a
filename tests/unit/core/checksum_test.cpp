// Whole-file checksums built from blocks in any order (and from any thread) must equal the
// one-shot value over the whole file, as zlib and OpenSSL compute it.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "checksum/adler32_simd.hpp"
#include "pxfer/core/checksum.hpp"
#include "pxfer/common/error.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::random_bytes;

constexpr std::uint32_t B = 4096;  // block size used throughout

std::uint32_t zlib_adler32(std::span<const std::uint8_t> data) {
  // zlib takes uInt lengths; feed it in pieces so the reference itself never truncates.
  uLong v = adler32(0L, Z_NULL, 0);
  std::size_t done = 0;
  while (done < data.size()) {
    auto n = static_cast<uInt>(std::min<std::size_t>(data.size() - done, 1u << 30));
    v = adler32(v, data.data() + done, n);
    done += n;
  }
  return static_cast<std::uint32_t>(v);
}

std::string hex8(std::uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

std::string openssl_digest(std::span<const std::uint8_t> data, const EVP_MD* md_type) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), md, &n, md_type, nullptr), 1);
  std::string out;
  char buf[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", md[i]);
    out += buf;
  }
  return out;
}
std::string openssl_sha256(std::span<const std::uint8_t> data) { return openssl_digest(data, EVP_sha256()); }

// The blocks of a buffer, as the planner cuts it.
std::vector<std::pair<std::uint64_t, std::uint32_t>> blocks_of(std::size_t size, std::uint32_t block) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
  for (std::size_t off = 0; off < size; off += block)
    out.emplace_back(off, static_cast<std::uint32_t>(std::min<std::size_t>(block, size - off)));
  return out;
}

ReadAt read_from(const Bytes& data) {
  return [&data](std::uint64_t offset, std::span<std::uint8_t> out) {
    ASSERT_LE(offset + out.size(), data.size());
    std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
  };
}

// A ReadAt for digests that must never need one.
ReadAt no_reads() {
  return [](std::uint64_t offset, std::span<std::uint8_t>) { ADD_FAILURE() << "unexpected read at " << offset; };
}

enum class Order { forward, reverse, shuffled };

std::string digest_in_order(ChecksumAlgo algo, const Bytes& data, std::uint32_t block, Order order, ReadAt read_at,
                            std::uint32_t seed = 1) {
  auto digest = FileDigest::create(algo, data.size(), block, std::move(read_at));
  auto blocks = blocks_of(data.size(), block);
  if (order == Order::reverse) std::reverse(blocks.begin(), blocks.end());
  if (order == Order::shuffled) std::shuffle(blocks.begin(), blocks.end(), std::mt19937(seed));
  for (auto [off, len] : blocks) digest->add_block(off, std::span(data).subspan(off, len));
  return digest->finish();
}

const std::vector<std::size_t>& interesting_sizes() {
  static const std::vector<std::size_t> sizes = {0, 1, B - 1, B, B + 1, 5 * B + 3, 37 * B};
  return sizes;
}

// ---------------------------------------------------------------------------------------------
// adler32_of against zlib

TEST(Adler32Of, MatchesZlib) {
  std::mt19937 rng(7);
  // Sizes around zlib's NMAX (5552) and the vector widths an optimised implementation uses.
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 5551, 5552, 5553, 11104, 65536,
                                    1u << 20, (1u << 20) + 13};
  for (int i = 0; i < 200; ++i) sizes.push_back(std::uniform_int_distribution<std::size_t>(0, 70000)(rng));
  for (std::size_t n : sizes) {
    Bytes data = random_bytes(n, static_cast<std::uint32_t>(n));
    EXPECT_EQ(adler32_of(data), zlib_adler32(data)) << n;
  }
}

TEST(Adler32Of, WorstCaseBytesMatchZlib) {
  // All 0xff maximises the sums and so the modulo reductions.
  for (std::size_t n : {5552u, 5553u, 100000u, 3u << 20}) {
    Bytes data(n, 0xff);
    EXPECT_EQ(adler32_of(data), zlib_adler32(data)) << n;
  }
}

// The AVX-512 routine (checksum/adler32_simd.cpp) loads 64 bytes at a time from wherever the span
// starts, reduces once per 64 KiB segment and finishes the last 63 bytes one at a time: every
// alignment, lengths either side of a chunk and a segment, and running values that continue an
// earlier sum, against zlib and against ISA-L's routine.
TEST(Adler32Of, EveryAlignmentLengthAndRunningValueMatchesZlibAndIsal) {
  std::printf("adler32_of uses %s on this CPU\n", adler32_simd_in_use() ? "AVX-512 VNNI" : "ISA-L");
  Bytes data = random_bytes(3 * 65536 + 300, 11);
  Bytes ones(3 * 65536 + 300, 0xff);
  std::mt19937 rng(5);
  const std::vector<std::size_t> lengths = {0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 4096, 65472, 65535, 65536, 65537,
                                            65536 + 64, 131072 + 63, 3 * 65536};
  for (const Bytes* bytes : {&data, &ones}) {
    for (std::size_t align = 0; align < 64; ++align) {
      for (std::size_t n : lengths) {
        const std::uint32_t start = align % 3 == 0 ? 1u : zlib_adler32(std::span(*bytes).first(align + 1));
        auto piece = std::span(*bytes).subspan(align, n);
        const auto want = static_cast<std::uint32_t>(adler32(start, piece.data(), static_cast<uInt>(piece.size())));
        ASSERT_EQ(adler32_of(piece, start), want) << "align " << align << " length " << n;
        ASSERT_EQ(adler32_isal(start, piece.data(), piece.size()), want) << "align " << align << " length " << n;
      }
    }
  }
  // Running values with both halves near the modulus.
  for (int i = 0; i < 1000; ++i) {
    const std::uint32_t a = std::uniform_int_distribution<std::uint32_t>(65400, 65520)(rng);
    const std::uint32_t b = std::uniform_int_distribution<std::uint32_t>(65400, 65520)(rng);
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, data.size())(rng);
    auto piece = std::span(i % 2 ? ones : data).first(n);
    const std::uint32_t start = (b << 16) | a;
    ASSERT_EQ(adler32_of(piece, start), adler32(start, piece.data(), static_cast<uInt>(piece.size()))) << n;
  }
}

TEST(Adler32Of, EmptyIsOneAndRunningValuesChain) {
  EXPECT_EQ(adler32_of({}), 1u);
  Bytes data = random_bytes(100000, 3);
  std::uint32_t running = 1;
  for (std::size_t off = 0; off < data.size(); off += 777)
    running = adler32_of(std::span(data).subspan(off, std::min<std::size_t>(777, data.size() - off)), running);
  EXPECT_EQ(running, zlib_adler32(data));
  const std::string abc = "abc";
  EXPECT_EQ(adler32_of(std::span(reinterpret_cast<const std::uint8_t*>(abc.data()), abc.size())), 0x024d0127u);
}

// ---------------------------------------------------------------------------------------------
// FileDigest adler32: blocks in any order

TEST(Adler32Digest, AnyBlockOrderEqualsOneShot) {
  for (std::size_t size : interesting_sizes()) {
    SCOPED_TRACE(size);
    Bytes data = random_bytes(size, static_cast<std::uint32_t>(size) + 11);
    const std::string expected = hex8(zlib_adler32(data));
    EXPECT_EQ(digest_in_order(ChecksumAlgo::adler32, data, B, Order::forward, no_reads()), expected);
    EXPECT_EQ(digest_in_order(ChecksumAlgo::adler32, data, B, Order::reverse, no_reads()), expected);
    for (std::uint32_t seed = 1; seed <= 5; ++seed)
      EXPECT_EQ(digest_in_order(ChecksumAlgo::adler32, data, B, Order::shuffled, no_reads(), seed), expected);
  }
}

TEST(Adler32Digest, ChunkedUpdatesEqualWholeBlocks) {
  const Bytes data = random_bytes(3 * B + 100, 5);
  auto digest = FileDigest::create(ChecksumAlgo::adler32, data.size(), B, no_reads());
  auto blocks = blocks_of(data.size(), B);
  std::reverse(blocks.begin(), blocks.end());
  for (auto [off, len] : blocks) {
    BlockDigest block{off};
    auto whole = std::span(data).subspan(off, len);
    for (std::size_t c = 0; c < len; c += 1000) digest->update(block, whole.subspan(c, std::min<std::size_t>(1000, len - c)));
    digest->complete(block, whole);
  }
  EXPECT_EQ(digest->finish(), hex8(zlib_adler32(data)));
}

TEST(Adler32Digest, HexIsZeroPadded) {
  // adler32("a") = 0x00620062: the leading zeros must be printed.
  const Bytes a = {'a'};
  EXPECT_EQ(digest_in_order(ChecksumAlgo::adler32, a, B, Order::forward, no_reads()), "00620062");
  EXPECT_EQ(digest_in_order(ChecksumAlgo::adler32, {}, B, Order::forward, no_reads()), "00000001");
}

TEST(Adler32Digest, LargeBlocksAcrossTheUint32Boundary) {
  // The fold must use 64-bit lengths: a file over 4 GiB, faked with few distinct blocks. Every
  // 1 MiB block has the same content, so the reference is zlib's own adler32_combine64 chain.
  const std::uint32_t block = 1u << 20;
  const std::uint64_t size = (std::uint64_t{4} << 30) + 12345;
  const Bytes chunk = random_bytes(block, 9);
  const std::uint32_t chunk_adler = zlib_adler32(chunk);
  const std::uint32_t tail_adler = zlib_adler32(std::span(chunk).first(12345));

  auto digest = FileDigest::create(ChecksumAlgo::adler32, size, block, no_reads());
  uLong expected = 1;
  const std::uint64_t count = (size + block - 1) / block;
  for (std::uint64_t i = count; i-- > 0;) {  // last block first
    const std::uint64_t off = i * block;
    const std::uint32_t len = static_cast<std::uint32_t>(std::min<std::uint64_t>(block, size - off));
    BlockDigest b{off, len == block ? chunk_adler : tail_adler};  // as if update() had seen the bytes
    digest->complete(b, std::span(chunk).first(len));
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t len = std::min<std::uint64_t>(block, size - i * block);
    expected = adler32_combine64(expected, len == block ? chunk_adler : tail_adler, static_cast<z_off64_t>(len));
  }
  EXPECT_EQ(digest->finish(), hex8(static_cast<std::uint32_t>(expected)));
}

// ---------------------------------------------------------------------------------------------
// FileDigest sha256: out of order, with read-back of early blocks

TEST(Sha256Digest, KnownValueForAbc) {
  const Bytes abc = {'a', 'b', 'c'};
  const std::string expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  EXPECT_EQ(openssl_sha256(abc), expected);
  EXPECT_EQ(digest_in_order(ChecksumAlgo::sha256, abc, B, Order::forward, no_reads()), expected);
  // One byte per block, out of order: the early ones are read back.
  EXPECT_EQ(digest_in_order(ChecksumAlgo::sha256, abc, 1, Order::reverse, read_from(abc)), expected);
}

TEST(Sha256Digest, EmptyFile) {
  EXPECT_EQ(digest_in_order(ChecksumAlgo::sha256, {}, B, Order::forward, no_reads()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Digest, AnyBlockOrderEqualsOpenSsl) {
  for (std::size_t size : interesting_sizes()) {
    SCOPED_TRACE(size);
    const Bytes data = random_bytes(size, static_cast<std::uint32_t>(size) + 29);
    const std::string expected = openssl_sha256(data);
    EXPECT_EQ(digest_in_order(ChecksumAlgo::sha256, data, B, Order::forward, no_reads()), expected);
    EXPECT_EQ(digest_in_order(ChecksumAlgo::sha256, data, B, Order::reverse, read_from(data)), expected);
    for (std::uint32_t seed = 1; seed <= 5; ++seed)
      EXPECT_EQ(digest_in_order(ChecksumAlgo::sha256, data, B, Order::shuffled, read_from(data), seed), expected);
  }
}

TEST(Sha256Digest, ReadsBackOnlyBlocksThatArrivedEarly) {
  const Bytes data = random_bytes(4 * B, 31);
  std::vector<std::uint64_t> reads;
  ReadAt read_at = [&](std::uint64_t offset, std::span<std::uint8_t> out) {
    reads.push_back(offset);
    std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
  };
  auto digest = FileDigest::create(ChecksumAlgo::sha256, data.size(), B, read_at);
  auto add = [&](std::size_t i) { digest->add_block(i * B, std::span(data).subspan(i * B, B)); };
  add(2);  // early
  add(0);  // in order: hashed from memory, then nothing to catch up yet (block 1 missing)
  add(3);  // early
  add(1);  // in order: hashed from memory, then 2 and 3 are read back
  EXPECT_EQ(digest->finish(), openssl_sha256(data));
  EXPECT_EQ(reads, (std::vector<std::uint64_t>{2 * B, 3 * B}));
}

TEST(Sha256Digest, ConcurrentBlocksFromFourThreads) {
  // Many rounds with small blocks so the threads really interleave: the block continuing the
  // hashed prefix, blocks arriving while another thread hashes, and read-backs all happen.
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(round);
    const std::size_t size = 64 * 1024 + static_cast<std::size_t>(round) * 97;
    const std::uint32_t block = 512;
    const Bytes data = random_bytes(size, 1000u + static_cast<std::uint32_t>(round));
    auto blocks = blocks_of(size, block);
    if (round % 2) std::shuffle(blocks.begin(), blocks.end(), std::mt19937(static_cast<std::uint32_t>(round)));

    std::atomic<std::uint64_t> read_bytes{0};
    ReadAt read_at = [&](std::uint64_t offset, std::span<std::uint8_t> out) {
      std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
      read_bytes += out.size();
    };
    auto digest = FileDigest::create(ChecksumAlgo::sha256, size, block, read_at);
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (std::size_t i = next++; i < blocks.size(); i = next++) {
          auto [off, len] = blocks[i];
          digest->add_block(off, std::span(data).subspan(off, len));
        }
      });
    for (auto& t : threads) t.join();
    ASSERT_EQ(digest->finish(), openssl_sha256(data));
    EXPECT_LE(read_bytes.load(), size);  // each byte is hashed once: from memory or read back
  }
}

TEST(Adler32Digest, ConcurrentBlocksFromFourThreads) {
  const Bytes data = random_bytes(1000 * 512 + 7, 77);
  auto blocks = blocks_of(data.size(), 512);
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(5));
  auto digest = FileDigest::create(ChecksumAlgo::adler32, data.size(), 512, no_reads());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < blocks.size(); i = next++)
        digest->add_block(blocks[i].first, std::span(data).subspan(blocks[i].first, blocks[i].second));
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(digest->finish(), hex8(zlib_adler32(data)));
}

TEST(NoDigest, IsEmpty) {
  const Bytes data = random_bytes(3 * B, 1);
  EXPECT_EQ(digest_in_order(ChecksumAlgo::none, data, B, Order::reverse, no_reads()), "");
}

TEST(FileDigestCreate, UnknownAlgorithmIsUsageError) {
  try {
    FileDigest::create(static_cast<ChecksumAlgo>(9), 10, B, no_reads());
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
  }
}

// ---------------------------------------------------------------------------------------------
// Names and printing

TEST(ChecksumNames, ParseAndName) {
  EXPECT_EQ(parse_checksum_algo("adler32"), ChecksumAlgo::adler32);
  EXPECT_EQ(parse_checksum_algo("sha256"), ChecksumAlgo::sha256);
  EXPECT_EQ(parse_checksum_algo("none"), ChecksumAlgo::none);
  for (const char* bad : {"", "ADLER32", "Sha256", "MD5", "crc32c", "adler32 ", "sha-256"})
    EXPECT_FALSE(parse_checksum_algo(bad)) << '"' << bad << '"';
  for (ChecksumAlgo a : {ChecksumAlgo::none, ChecksumAlgo::adler32, ChecksumAlgo::sha256, ChecksumAlgo::md5,
                         ChecksumAlgo::crc32, ChecksumAlgo::sha1})
    EXPECT_EQ(parse_checksum_algo(checksum_name(a)), a);
}

TEST(ChecksumNames, FormatAsGridToolsPrintIt) {
  EXPECT_EQ(format_checksum(ChecksumAlgo::adler32, "0a3c1f2e"), "adler32: 0a3c1f2e");
  EXPECT_EQ(format_checksum(ChecksumAlgo::sha256, "ba7816bf"), "sha256: ba7816bf");
  EXPECT_EQ(format_checksum(ChecksumAlgo::none, ""), "checksum: none");
  // End to end: a digest whose value starts with zeros keeps them in the printed line.
  const Bytes a = {'a'};
  EXPECT_EQ(format_checksum(ChecksumAlgo::adler32, digest_in_order(ChecksumAlgo::adler32, a, B, Order::forward, no_reads())),
            "adler32: 00620062");
}

// MD5, SHA-1 (OpenSSL) and CRC-32 (zlib's crc32, as gfal2's CRC32): blocks in any order, chunked
// updates, empty input, against the one-shot values.
TEST(GridDigests, AnyBlockOrderEqualsOneShot) {
  for (std::size_t size : interesting_sizes()) {
    SCOPED_TRACE(size);
    const Bytes data = random_bytes(size, static_cast<std::uint32_t>(size) + 41);
    const std::string crc = hex8(static_cast<std::uint32_t>(crc32_z(0, data.data(), data.size())));
    const std::pair<ChecksumAlgo, std::string> cases[] = {{ChecksumAlgo::md5, openssl_digest(data, EVP_md5())},
                                                          {ChecksumAlgo::sha1, openssl_digest(data, EVP_sha1())},
                                                          {ChecksumAlgo::crc32, crc}};
    for (const auto& [algo, expected] : cases) {
      SCOPED_TRACE(std::string(checksum_name(algo)));
      EXPECT_EQ(digest_in_order(algo, data, B, Order::forward, no_reads()), expected);
      EXPECT_EQ(digest_in_order(algo, data, B, Order::reverse, read_from(data)), expected);
      EXPECT_EQ(digest_in_order(algo, data, B, Order::shuffled, read_from(data), 3), expected);
      EXPECT_EQ(checksum_of_bytes(algo, data), expected);
    }
  }
  const Bytes a = {'a'};
  EXPECT_EQ(digest_in_order(ChecksumAlgo::crc32, a, B, Order::forward, no_reads()), "e8b7be43");
  EXPECT_EQ(digest_in_order(ChecksumAlgo::crc32, {}, B, Order::forward, no_reads()), "00000000");
  EXPECT_EQ(digest_in_order(ChecksumAlgo::md5, {}, B, Order::forward, no_reads()), "d41d8cd98f00b204e9800998ecf8427e");
}

TEST(GridDigests, Crc32ChunkedUpdatesEqualWholeBlocks) {
  const Bytes data = random_bytes(3 * B + 100, 7);
  auto digest = FileDigest::create(ChecksumAlgo::crc32, data.size(), B, no_reads());
  auto blocks = blocks_of(data.size(), B);
  std::reverse(blocks.begin(), blocks.end());
  for (auto [off, len] : blocks) {
    BlockDigest block{off};
    auto whole = std::span(data).subspan(off, len);
    for (std::size_t c = 0; c < len; c += 1000) digest->update(block, whole.subspan(c, std::min<std::size_t>(1000, len - c)));
    digest->complete(block, whole);
  }
  EXPECT_EQ(digest->finish(), hex8(static_cast<std::uint32_t>(crc32_z(0, data.data(), data.size()))));
}

TEST(ChecksumOfFile, MatchesOneShotValues) {
  test::TempDir dir;
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{100000}, (std::size_t{4} << 20) + 5}) {
    SCOPED_TRACE(size);
    const Bytes data = random_bytes(size, static_cast<std::uint32_t>(size));
    const std::string path = dir / "f.bin";
    test::write_file(path, data);
    EXPECT_EQ(checksum_of_file(ChecksumAlgo::adler32, path), hex8(zlib_adler32(data)));
    EXPECT_EQ(checksum_of_file(ChecksumAlgo::sha256, path), openssl_sha256(data));
  }
  try {
    checksum_of_file(ChecksumAlgo::adler32, dir / "missing");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
}

}  // namespace
}  // namespace pxfer
