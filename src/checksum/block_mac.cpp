#include "checksum/block_mac.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <string>

#include "pxfer/common/error.hpp"

namespace pxfer {
namespace {

std::array<std::uint8_t, 2> be16(std::uint16_t v) {
  return {static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
}

std::array<std::uint8_t, 8> be64(std::uint64_t v) {
  std::array<std::uint8_t, 8> out{};
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
  return out;
}

std::span<const std::uint8_t> text(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

[[noreturn]] void crypto_failed(const char* what) {
  throw Error(Errc::internal, std::string("OpenSSL failed to ") + what + " (block authentication)");
}

// A context of each kind with its algorithm already fetched (and HMAC's digest chosen), copied
// for each use: fetching by name takes OpenSSL's provider locks and string compares, several
// times per small file at each end before (docs/performance.md section 5). One set per thread,
// so no two threads ever read the same prototype at once.
struct Prototypes {
  EVP_MAC_CTX* hmac = nullptr;
  EVP_MAC_CTX* poly = nullptr;
  Prototypes() {
    EVP_MAC* h = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    EVP_MAC* p = EVP_MAC_fetch(nullptr, "POLY1305", nullptr);
    hmac = h ? EVP_MAC_CTX_new(h) : nullptr;
    poly = p ? EVP_MAC_CTX_new(p) : nullptr;
    EVP_MAC_free(h);  // a context keeps its own reference
    EVP_MAC_free(p);
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
    if (hmac && EVP_MAC_CTX_set_params(hmac, params) != 1) {
      EVP_MAC_CTX_free(hmac);
      hmac = nullptr;
    }
  }
  ~Prototypes() {
    EVP_MAC_CTX_free(hmac);
    EVP_MAC_CTX_free(poly);
  }
  Prototypes(const Prototypes&) = delete;
  Prototypes& operator=(const Prototypes&) = delete;
};

EVP_MAC_CTX* new_context(bool hmac) {
  thread_local Prototypes prototypes;
  EVP_MAC_CTX* from = hmac ? prototypes.hmac : prototypes.poly;
  return from ? EVP_MAC_CTX_dup(from) : nullptr;
}

}  // namespace

MacKey hmac_sha256(const MacKey& key, std::initializer_list<std::span<const std::uint8_t>> parts) {
  MacKey out{};
  EVP_MAC_CTX* ctx = new_context(true);
  bool ok = ctx && EVP_MAC_init(ctx, key.data(), key.size(), nullptr) == 1;
  for (auto part : parts) ok = ok && EVP_MAC_update(ctx, part.data(), part.size()) == 1;
  std::size_t n = 0;
  ok = ok && EVP_MAC_final(ctx, out.data(), &n, out.size()) == 1 && n == out.size();
  EVP_MAC_CTX_free(ctx);
  if (!ok) crypto_failed("compute HMAC-SHA256");
  return out;
}

AttachProof attach_proof(const MacKey& transfer_key, std::span<const std::uint8_t> token, std::uint16_t stream,
                         const AttachNonce& nonce, std::span<const std::uint8_t> binding) {
  auto index = be16(stream);
  return hmac_sha256(transfer_key, {text("pxfer attach"), token, index, nonce, binding});
}

MacKey stream_block_key(const MacKey& transfer_key, std::uint16_t stream, const AttachNonce& nonce) {
  auto index = be16(stream);
  return hmac_sha256(transfer_key, {text("pxfer block"), index, nonce});
}

MacKey control_block_key(const MacKey& transfer_key) {
  return hmac_sha256(transfer_key, {text("pxfer control block")});
}

bool equal_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) noexcept {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

AttachNonce random_nonce() {
  AttachNonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1)
    throw Error(Errc::internal, "cannot draw a random nonce (OpenSSL RAND_bytes failed)");
  return nonce;
}

// Poly1305 under a one-time key per block: HMAC-SHA256(K_stream, "pxfer poly1305" || u64
// sequence), the construction ChaCha20-Poly1305 uses with its keystream (a PRF output, never
// repeated). Chosen over AES-GMAC after measuring both through OpenSSL on the machines we run on:
// 11.9 GB/s against 8.1 GB/s per core (bench/results/auth-cost.md).
BlockMac::BlockMac(const MacKey& key) {
  ctx_ = new_context(false);
  // HMAC keyed once; each block's key re-initialises it with the same key (EVP_MAC_init with a
  // NULL key), which costs a fraction of a fresh HMAC context per block.
  hmac_ = new_context(true);
  if (!ctx_ || !hmac_ || EVP_MAC_init(static_cast<EVP_MAC_CTX*>(hmac_), key.data(), key.size(), nullptr) != 1) {
    EVP_MAC_CTX_free(static_cast<EVP_MAC_CTX*>(ctx_));
    EVP_MAC_CTX_free(static_cast<EVP_MAC_CTX*>(hmac_));
    crypto_failed("set up Poly1305");
  }
}

BlockMac::~BlockMac() {
  EVP_MAC_CTX_free(static_cast<EVP_MAC_CTX*>(ctx_));
  EVP_MAC_CTX_free(static_cast<EVP_MAC_CTX*>(hmac_));
}

MacKey BlockMac::one_time_key(const MacKey& stream_key, std::uint64_t sequence) {
  return hmac_sha256(stream_key, {text("pxfer poly1305"), be64(sequence)});
}

void BlockMac::begin(std::span<const std::uint8_t> headers) {
  if (by_tls()) {
    ++sequence_;
    return;
  }
  // one_time_key(the connection key, sequence_), on the HMAC context keyed in the constructor.
  auto* hmac = static_cast<EVP_MAC_CTX*>(hmac_);
  const auto label = text("pxfer poly1305");
  const auto seq = be64(sequence_++);
  MacKey otk{};
  std::size_t n = 0;
  if (EVP_MAC_init(hmac, nullptr, 0, nullptr) != 1 || EVP_MAC_update(hmac, label.data(), label.size()) != 1 ||
      EVP_MAC_update(hmac, seq.data(), seq.size()) != 1 || EVP_MAC_final(hmac, otk.data(), &n, otk.size()) != 1)
    crypto_failed("derive a block key");
  if (EVP_MAC_init(static_cast<EVP_MAC_CTX*>(ctx_), otk.data(), otk.size(), nullptr) != 1)
    crypto_failed("start a block MAC");
  update(headers);
  // Zeros up to a multiple of 16 bytes, so the payload starts on a Poly1305 block boundary:
  // OpenSSL's vector code is about 20 % slower on a stream that starts unaligned (pxfer-bench).
  static constexpr std::array<std::uint8_t, 16> zeros{};
  if (headers.size() % 16 != 0) update(std::span(zeros).first(16 - headers.size() % 16));
}

void BlockMac::update(std::span<const std::uint8_t> chunk) {
  if (!chunk.empty() && !by_tls() && EVP_MAC_update(static_cast<EVP_MAC_CTX*>(ctx_), chunk.data(), chunk.size()) != 1)
    crypto_failed("authenticate a block");
}

BlockTag BlockMac::finish() {
  BlockTag tag{};
  if (by_tls()) return tag;
  std::size_t n = 0;
  if (EVP_MAC_final(static_cast<EVP_MAC_CTX*>(ctx_), tag.data(), &n, tag.size()) != 1 || n != tag.size())
    crypto_failed("finish a block MAC");
  return tag;
}

bool BlockMac::verify(const BlockTag& received) {
  BlockTag expected = finish();
  return equal_constant_time(expected, received);
}

}  // namespace pxfer
