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

EVP_CIPHER_CTX* cipher(void* p) { return static_cast<EVP_CIPHER_CTX*>(p); }

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

BlockMac::BlockMac(const MacKey& key) : ctx_(EVP_CIPHER_CTX_new()) {
  if (!ctx_ || EVP_EncryptInit_ex(cipher(ctx_), EVP_aes_256_gcm(), nullptr, key.data(), nullptr) != 1) {
    EVP_CIPHER_CTX_free(cipher(ctx_));
    crypto_failed("set up AES-256-GCM");
  }
}

BlockMac::~BlockMac() { EVP_CIPHER_CTX_free(cipher(ctx_)); }

void BlockMac::begin(std::span<const std::uint8_t> headers) {
  // IV: 4 zero bytes and the block's sequence number on this connection (big-endian).
  std::array<std::uint8_t, 12> iv{};
  for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<std::uint8_t>(sequence_ >> (56 - 8 * i));
  ++sequence_;
  if (EVP_EncryptInit_ex(cipher(ctx_), nullptr, nullptr, nullptr, iv.data()) != 1) crypto_failed("start a block MAC");
  update(headers);
}

void BlockMac::update(std::span<const std::uint8_t> chunk) {
  // Everything is additional data: GCM then computes GHASH only (GMAC), with no ciphertext.
  int n = 0;
  if (!chunk.empty() &&
      EVP_EncryptUpdate(cipher(ctx_), nullptr, &n, chunk.data(), static_cast<int>(chunk.size())) != 1)
    crypto_failed("authenticate a block");
}

BlockTag BlockMac::finish() {
  BlockTag tag{};
  std::uint8_t unused[32];  // GCM writes nothing here; some OpenSSL builds want a buffer anyway
  int n = 0;
  if (EVP_EncryptFinal_ex(cipher(ctx_), unused, &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(cipher(ctx_), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag.size()), tag.data()) != 1)
    crypto_failed("finish a block MAC");
  return tag;
}

bool BlockMac::verify(const BlockTag& received) {
  BlockTag expected = finish();
  return equal_constant_time(expected, received);
}

}  // namespace pxfer
