#include "pxfer/block_mac.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <string>

#include "pxfer/error.hpp"

namespace pxfer {
namespace {

std::array<std::uint8_t, 2> be16(std::uint16_t v) {
  return {static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
}

std::span<const std::uint8_t> text(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

[[noreturn]] void crypto_failed(const char* what) {
  throw Error(Errc::internal, std::string("OpenSSL failed to ") + what + " (block authentication)");
}

}  // namespace

MacKey hmac_sha256(const MacKey& key, std::initializer_list<std::span<const std::uint8_t>> parts) {
  MacKey out{};
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  EVP_MAC_CTX* ctx = mac ? EVP_MAC_CTX_new(mac) : nullptr;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
  bool ok = ctx && EVP_MAC_init(ctx, key.data(), key.size(), params) == 1;
  for (auto part : parts) ok = ok && EVP_MAC_update(ctx, part.data(), part.size()) == 1;
  std::size_t n = 0;
  ok = ok && EVP_MAC_final(ctx, out.data(), &n, out.size()) == 1 && n == out.size();
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  if (!ok) crypto_failed("compute HMAC-SHA256");
  return out;
}

AttachProof attach_proof(const MacKey& transfer_key, std::span<const std::uint8_t> token, std::uint16_t stream,
                         const AttachNonce& nonce) {
  auto index = be16(stream);
  return hmac_sha256(transfer_key, {text("pxfer attach"), token, index, nonce});
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
BlockMac::BlockMac(const MacKey& key) : key_(key) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "POLY1305", nullptr);
  ctx_ = mac ? EVP_MAC_CTX_new(mac) : nullptr;
  EVP_MAC_free(mac);  // the context keeps its own reference
  if (!ctx_) crypto_failed("set up Poly1305");
}

BlockMac::~BlockMac() { EVP_MAC_CTX_free(static_cast<EVP_MAC_CTX*>(ctx_)); }

MacKey BlockMac::one_time_key(const MacKey& stream_key, std::uint64_t sequence) {
  std::array<std::uint8_t, 8> seq{};
  for (int i = 0; i < 8; ++i) seq[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(sequence >> (56 - 8 * i));
  return hmac_sha256(stream_key, {text("pxfer poly1305"), seq});
}

void BlockMac::begin(std::span<const std::uint8_t> headers) {
  const MacKey otk = one_time_key(key_, sequence_++);
  if (EVP_MAC_init(static_cast<EVP_MAC_CTX*>(ctx_), otk.data(), otk.size(), nullptr) != 1)
    crypto_failed("start a block MAC");
  update(headers);
}

void BlockMac::update(std::span<const std::uint8_t> chunk) {
  if (!chunk.empty() && EVP_MAC_update(static_cast<EVP_MAC_CTX*>(ctx_), chunk.data(), chunk.size()) != 1)
    crypto_failed("authenticate a block");
}

BlockTag BlockMac::finish() {
  BlockTag tag{};
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
