// Issue 11: the keys and MACs that authenticate data streams and blocks (checksum/block_mac.hpp),
// and the receiver's exactly-once rule (transfer/block_ledger.hpp, and the SHA-256 digest when a
// block is completed twice).
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "engine/block_ledger.hpp"
#include "checksum/block_mac.hpp"
#include "pxfer/core/checksum.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using Bytes = std::vector<std::uint8_t>;

std::string hex(std::span<const std::uint8_t> b) {
  std::string out;
  char buf[3];
  for (auto c : b) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out;
}

MacKey key_of(std::uint8_t fill) {
  MacKey k;
  k.fill(fill);
  return k;
}

// An independent computation: the one-time key with OpenSSL's one-shot HMAC(), then one-shot
// Poly1305 through EVP_MAC over headers and payload together.
BlockTag poly1305_of(std::span<const std::uint8_t> key, const Bytes& message) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "POLY1305", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  BlockTag tag{};
  std::size_t n = 0;
  EXPECT_EQ(EVP_MAC_init(ctx, key.data(), key.size(), nullptr), 1);
  EXPECT_EQ(EVP_MAC_update(ctx, message.data(), message.size()), 1);
  EXPECT_EQ(EVP_MAC_final(ctx, tag.data(), &n, tag.size()), 1);
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return tag;
}

BlockTag reference_tag(const MacKey& key, std::uint64_t sequence, const Bytes& message) {
  Bytes input{'p', 'x', 'f', 'e', 'r', ' ', 'p', 'o', 'l', 'y', '1', '3', '0', '5'};
  for (int i = 7; i >= 0; --i) input.push_back(static_cast<std::uint8_t>(sequence >> (8 * i)));
  unsigned char otk[32];
  unsigned n = 0;
  EXPECT_NE(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), input.data(), input.size(), otk, &n), nullptr);
  return poly1305_of(std::span<const std::uint8_t>(otk, n), message);
}

TEST(BlockMac, Poly1305IsRfc8439s) {
  // RFC 8439 section 2.5.2: the primitive the block MAC is built on, as OpenSSL computes it.
  const Bytes key = {0x85, 0xd6, 0xbe, 0x78, 0x57, 0x55, 0x6d, 0x33, 0x7f, 0x44, 0x52, 0xfe, 0x42, 0xd5, 0x06, 0xa8,
                     0x01, 0x03, 0x80, 0x8a, 0xfb, 0x0d, 0xb2, 0xfd, 0x4a, 0xbf, 0xf6, 0xaf, 0x41, 0x49, 0xf5, 0x1b};
  const std::string text = "Cryptographic Forum Research Group";
  EXPECT_EQ(hex(poly1305_of(key, Bytes(text.begin(), text.end()))), "a8061dc1305136c6c22b8baf0c0127a9");
}

TEST(BlockMac, EqualsTheConstructionOverHeadersAndPayloadChunkByChunk) {
  const MacKey key = key_of(7);
  Bytes headers = test::random_bytes(24, 1);
  Bytes payload = test::random_bytes(1 << 20, 2);
  BlockMac mac(key);
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    mac.begin(headers);
    for (std::size_t done = 0; done < payload.size(); done += 100'000)
      mac.update(std::span(payload).subspan(done, std::min<std::size_t>(100'000, payload.size() - done)));
    Bytes all = headers;
    all.resize(32, 0);  // the headers padded with zeros to a 16-byte boundary
    all.insert(all.end(), payload.begin(), payload.end());
    EXPECT_EQ(mac.finish(), reference_tag(key, seq, all)) << "block " << seq;
  }
  EXPECT_EQ(mac.blocks(), 3u);
  EXPECT_NE(BlockMac::one_time_key(key, 0), BlockMac::one_time_key(key, 1)) << "a key per block";
}

TEST(BlockMac, AnyChangedByteHeaderSequenceOrKeyFailsVerification) {
  const MacKey key = key_of(9);
  Bytes headers = test::random_bytes(24, 3);
  Bytes payload = test::random_bytes(4096, 4);
  BlockMac sender(key);
  sender.begin(headers);
  sender.update(payload);
  const BlockTag tag = sender.finish();

  auto verifies = [&](const MacKey& k, const Bytes& h, const Bytes& p, std::uint64_t skip, const BlockTag& t) {
    BlockMac receiver(k);
    for (std::uint64_t i = 0; i < skip; ++i) {
      receiver.begin(h);
      (void)receiver.finish();
    }
    receiver.begin(h);
    receiver.update(p);
    return receiver.verify(t);
  };
  EXPECT_TRUE(verifies(key, headers, payload, 0, tag));
  Bytes h2 = headers;
  h2[3] ^= 1;  // the offset or length in the headers
  EXPECT_FALSE(verifies(key, h2, payload, 0, tag));
  Bytes p2 = payload;
  p2[4000] ^= 0x80;
  EXPECT_FALSE(verifies(key, headers, p2, 0, tag));
  EXPECT_FALSE(verifies(key, headers, payload, 1, tag)) << "the same block replayed as the next one";
  EXPECT_FALSE(verifies(key_of(10), headers, payload, 0, tag)) << "another stream's key";
  BlockTag t2 = tag;
  t2[15] ^= 1;
  EXPECT_FALSE(verifies(key, headers, payload, 0, t2));
}

TEST(BlockMac, HmacOfPartsEqualsHmacOfTheirConcatenation) {
  const MacKey key = key_of(0x42);
  Bytes a = test::random_bytes(13, 5), b = test::random_bytes(70, 6);
  Bytes ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  unsigned char md[32];
  unsigned n = 0;
  ASSERT_NE(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), ab.data(), ab.size(), md, &n), nullptr);
  EXPECT_EQ(hex(hmac_sha256(key, {a, b})), hex(std::span<const std::uint8_t>(md, n)));
}

TEST(AttachProof, DependsOnKeyTokenStreamAndNonce) {
  const MacKey k = key_of(1);
  Bytes token = test::random_bytes(16, 7);
  Bytes other_token = test::random_bytes(16, 8);
  const AttachNonce nonce = random_nonce();
  AttachNonce other_nonce = nonce;
  other_nonce[0] ^= 1;
  const AttachProof p = attach_proof(k, token, 0, nonce);
  EXPECT_EQ(p, attach_proof(k, token, 0, nonce));
  EXPECT_NE(p, attach_proof(key_of(2), token, 0, nonce));
  EXPECT_NE(p, attach_proof(k, other_token, 0, nonce));
  EXPECT_NE(p, attach_proof(k, token, 1, nonce));
  EXPECT_NE(p, attach_proof(k, token, 0, other_nonce));
  EXPECT_TRUE(equal_constant_time(p, attach_proof(k, token, 0, nonce)));
  EXPECT_FALSE(equal_constant_time(p, attach_proof(k, token, 0, other_nonce)));
  EXPECT_FALSE(equal_constant_time(p, std::span(p).first(31)));
}

TEST(AttachProof, ABindingToTheStreamsTlsChannelChangesTheProofAndNoneKeepsTheOldOne) {
  const MacKey k = key_of(5);
  Bytes token = test::random_bytes(16, 9);
  const AttachNonce nonce = random_nonce();
  const Bytes channel_a = test::random_bytes(32, 10), channel_b = test::random_bytes(32, 11);
  const AttachProof unbound = attach_proof(k, token, 2, nonce);
  EXPECT_EQ(unbound, attach_proof(k, token, 2, nonce, {}));  // what a peer without the capability sends
  EXPECT_NE(unbound, attach_proof(k, token, 2, nonce, channel_a));
  // A proof relayed from one TLS channel into another does not verify there.
  EXPECT_NE(attach_proof(k, token, 2, nonce, channel_a), attach_proof(k, token, 2, nonce, channel_b));
  EXPECT_EQ(attach_proof(k, token, 2, nonce, channel_a), attach_proof(k, token, 2, nonce, channel_a));
}

TEST(BlockMac, OnATlsBoundConnectionTheTagIsZeroAndNothingElseVerifies) {
  BlockMac mac{BlockMac::ByTls{}};
  EXPECT_TRUE(mac.by_tls());
  const Bytes headers = test::random_bytes(24, 12), payload = test::random_bytes(1000, 13);
  mac.begin(headers);
  mac.update(payload);
  EXPECT_EQ(mac.finish(), BlockTag{});
  mac.begin(headers);
  mac.update(payload);
  EXPECT_TRUE(mac.verify(BlockTag{}));
  BlockTag forged{};
  forged[15] = 1;
  mac.begin(headers);
  EXPECT_FALSE(mac.verify(forged));
  EXPECT_EQ(mac.blocks(), 3u);
  EXPECT_FALSE(BlockMac(key_of(6)).by_tls());
}

TEST(AttachProof, EveryConnectionHasItsOwnBlockKey) {
  const MacKey k = key_of(3);
  const AttachNonce n1 = random_nonce(), n2 = random_nonce();
  EXPECT_NE(n1, n2);
  EXPECT_NE(stream_block_key(k, 0, n1), stream_block_key(k, 0, n2));
  EXPECT_NE(stream_block_key(k, 0, n1), stream_block_key(k, 1, n1));
  EXPECT_NE(stream_block_key(k, 0, n1), control_block_key(k));
  EXPECT_NE(control_block_key(k), control_block_key(key_of(4)));
  // The proof a data stream sends is not the key of its blocks.
  EXPECT_NE(hex(attach_proof(k, {}, 0, n1)), hex(stream_block_key(k, 0, n1)));
}

TEST(BlockLedger, ABlockIsWrittenOnceAndADuplicateIsRefused) {
  BlockLedger ledger(4);
  EXPECT_EQ(ledger.claim(1), BlockLedger::Claim::write);
  EXPECT_EQ(ledger.claim(1), BlockLedger::Claim::duplicate) << "another stream is writing it";
  ledger.committed(1);
  EXPECT_TRUE(ledger.is_committed(1));
  EXPECT_EQ(ledger.claim(1), BlockLedger::Claim::duplicate) << "already on disk: never rewritten";
  EXPECT_EQ(ledger.claim(4), BlockLedger::Claim::unknown);
}

TEST(BlockLedger, ResumedBlocksAreNeverWrittenAndAFailedWriteMayBeRetried) {
  BlockLedger ledger(3);
  ledger.already_present(0);
  EXPECT_EQ(ledger.claim(0), BlockLedger::Claim::duplicate);
  EXPECT_EQ(ledger.claim(2), BlockLedger::Claim::write);
  ledger.release(2);
  EXPECT_FALSE(ledger.is_committed(2));
  EXPECT_EQ(ledger.claim(2), BlockLedger::Claim::write);
}

TEST(BlockLedger, OneWriterPerBlockAmongConcurrentStreams) {
  constexpr std::size_t blocks = 1000;
  BlockLedger ledger(blocks);
  std::atomic<std::size_t> writes{0};
  std::vector<std::thread> streams;
  for (int s = 0; s < 8; ++s)
    streams.emplace_back([&] {
      for (std::size_t i = 0; i < blocks; ++i)
        if (ledger.claim(i) == BlockLedger::Claim::write) {
          writes.fetch_add(1);
          ledger.committed(i);
        }
    });
  for (auto& t : streams) t.join();
  EXPECT_EQ(writes.load(), blocks);
}

// A block completed twice (it arrived on two streams) is hashed once: the digest is the file's.
TEST(Sha256Digest, ABlockCompletedTwiceIsHashedOnce) {
  constexpr std::uint32_t B = 4096;
  Bytes file = test::random_bytes(4 * B, 11);
  auto read_at = [&](std::uint64_t off, std::span<std::uint8_t> out) {
    std::copy_n(file.begin() + static_cast<std::ptrdiff_t>(off), out.size(), out.begin());
  };
  auto reference = FileDigest::create(ChecksumAlgo::sha256, file.size(), B, read_at);
  for (std::uint64_t off = 0; off < file.size(); off += B) reference->add_block(off, std::span(file).subspan(off, B));
  const std::string expected = reference->finish();

  auto digest = FileDigest::create(ChecksumAlgo::sha256, file.size(), B, read_at);
  Bytes other = test::random_bytes(B, 12);
  digest->add_block(0, std::span(file).subspan(0, B));
  digest->add_block(2 * B, std::span(file).subspan(2 * B, B));  // early
  digest->add_block(0, other);                                  // after the hash passed it
  digest->add_block(2 * B, std::span(file).subspan(2 * B, B));  // early, twice
  digest->add_block(B, std::span(file).subspan(B, B));
  digest->add_block(3 * B, std::span(file).subspan(3 * B, B));
  digest->add_block(B, other);
  EXPECT_EQ(digest->finish(), expected);
}

}  // namespace
}  // namespace pxfer
