// Issue 11: the keys and MACs that authenticate data streams and blocks (pxfer/block_mac.hpp),
// and the receiver's exactly-once rule (pxfer/block_ledger.hpp, and the SHA-256 digest when a
// block is completed twice).
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "pxfer/block_ledger.hpp"
#include "pxfer/block_mac.hpp"
#include "pxfer/checksum.hpp"
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

// An independent GMAC: one-shot AES-256-GCM with everything as AAD, through EVP directly.
BlockTag reference_gmac(const MacKey& key, std::uint64_t sequence, const Bytes& aad) {
  std::uint8_t iv[12] = {};
  for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<std::uint8_t>(sequence >> (56 - 8 * i));
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  std::uint8_t out[16];
  BlockTag tag{};
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), iv), 1);
  if (!aad.empty()) EXPECT_EQ(EVP_EncryptUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size())), 1);
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, out, &n), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data()), 1);
  EVP_CIPHER_CTX_free(ctx);
  return tag;
}

TEST(BlockMac, NistGcmTestCase13WithNothingToAuthenticate) {
  // AES-256, zero key, zero IV (sequence 0), no AAD, no plaintext (McGrew & Viega, test case 13).
  BlockMac mac(key_of(0));
  mac.begin({});
  EXPECT_EQ(hex(mac.finish()), "530f8afbc74536b9a963b4f1c4cb738b");
}

TEST(BlockMac, EqualsOneShotGcmOverHeadersAndPayloadChunkByChunk) {
  const MacKey key = key_of(7);
  Bytes headers = test::random_bytes(24, 1);
  Bytes payload = test::random_bytes(1 << 20, 2);
  BlockMac mac(key);
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    mac.begin(headers);
    for (std::size_t done = 0; done < payload.size(); done += 100'000)
      mac.update(std::span(payload).subspan(done, std::min<std::size_t>(100'000, payload.size() - done)));
    Bytes all = headers;
    all.insert(all.end(), payload.begin(), payload.end());
    EXPECT_EQ(mac.finish(), reference_gmac(key, seq, all)) << "block " << seq;
  }
  EXPECT_EQ(mac.blocks(), 3u);
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
