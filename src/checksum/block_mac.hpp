#pragma once
// Authenticated data streams (issue 11, points 1 and 2). Pure functions over bytes (OpenSSL's
// libcrypto only): the engine and the server feed them keys the TLS exporter of the control
// connection produced, so nothing that crosses a clear data stream is enough to join, replay or
// forge a transfer. docs/protocol.md, "Data-stream authentication", describes the derivations.
//
//   K        = TLS-Exporter("EXPORTER-pxfer-data", context = session token, 32 bytes)
//   proof    = HMAC-SHA256(K, "pxfer attach" | token | u16 stream | server nonce)
//   K_stream = HMAC-SHA256(K, "pxfer block" | u16 stream | server nonce)   (one data connection)
//   K_ctl    = HMAC-SHA256(K, "pxfer control block")                       (one-block transfers on
//                                                                           the control connection)
//   K_block  = HMAC-SHA256(K_stream, "pxfer poly1305" | u64 block sequence on that connection)
//   tag      = Poly1305 under the one-time key K_block, over the 24 bytes of the BLOCK frame and
//              block headers and 8 zero bytes, then the payload as it crosses the wire.
// Every ATTACH gets a fresh server nonce, so every data connection has its own key, and the
// sequence number never repeats on a connection: a Poly1305 key is never used twice.
//
// A connection under TLS, when both ends offered cap_tls_bound_streams (wire.hpp):
//   binding  = TLS-Exporter of that data connection ("EXPORTER-pxfer-stream", context = token)
//   proof    = HMAC-SHA256(K, "pxfer attach" | token | u16 stream | server nonce | binding)
//   tag      = 16 zero bytes: TLS's AEAD already authenticates every byte of the connection, and the
//              binding proves that the two ends of this TLS channel are the two ends of the
//              control connection (a relay that terminates TLS has another exporter), so a
//              Poly1305 per block would only repeat it (docs/security.md).
#include "pxfer/core/layer.hpp"
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

namespace pxfer {

inline constexpr std::size_t mac_key_size = 32;
using MacKey = std::array<std::uint8_t, mac_key_size>;
inline constexpr std::size_t attach_nonce_size = 32;
using AttachNonce = std::array<std::uint8_t, attach_nonce_size>;
inline constexpr std::size_t attach_proof_size = 32;
using AttachProof = std::array<std::uint8_t, attach_proof_size>;
inline constexpr std::size_t block_tag_size = 16;
using BlockTag = std::array<std::uint8_t, block_tag_size>;
// The TLS exporter label (RFC 8446 7.5); the context is the transfer's session token.
inline constexpr std::string_view data_exporter_label = "EXPORTER-pxfer-data";
// The exporter label of a data connection's own TLS channel (its binding); same context.
inline constexpr std::string_view stream_exporter_label = "EXPORTER-pxfer-stream";

// HMAC-SHA256 of the concatenated parts under `key`.
MacKey hmac_sha256(const MacKey& key, std::initializer_list<std::span<const std::uint8_t>> parts);
// What a data connection sends to prove it belongs to the transfer whose key is `transfer_key`.
// `binding`: the data connection's exporter when it runs under TLS with cap_tls_bound_streams,
// else empty.
AttachProof attach_proof(const MacKey& transfer_key, std::span<const std::uint8_t> token, std::uint16_t stream,
                         const AttachNonce& nonce, std::span<const std::uint8_t> binding = {});
// The key of the blocks on one data connection (stream index and the nonce of its ATTACH).
MacKey stream_block_key(const MacKey& transfer_key, std::uint16_t stream, const AttachNonce& nonce);
// The key of the blocks of a transfer that moves on its control connection.
MacKey control_block_key(const MacKey& transfer_key);
// Compares without an early exit, so timing tells nothing about where two MACs differ.
bool equal_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) noexcept;
// A fresh random nonce (OpenSSL RAND_bytes); throws Error(internal) when none can be drawn.
AttachNonce random_nonce();

// Poly1305 of one block after another on one connection: begin() with the block's encoded headers,
// update() with each payload chunk as it crosses the wire, then finish() (sender) or verify()
// (receiver). The sequence advances by one per begin(); both ends count the same blocks. update()
// is fastest with pieces whose sizes are multiples of 16 bytes (all but the last).
class BlockMac {
 public:
  explicit BlockMac(const MacKey& key);
  // On a connection whose TLS authenticates the blocks (cap_tls_bound_streams): the tag is 16 zero
  // bytes, and verify() accepts only those; begin() still counts the blocks.
  struct ByTls {};
  explicit BlockMac(ByTls) {}
  ~BlockMac();
  BlockMac(const BlockMac&) = delete;
  BlockMac& operator=(const BlockMac&) = delete;

  void begin(std::span<const std::uint8_t> headers);
  void update(std::span<const std::uint8_t> chunk);
  BlockTag finish();
  bool verify(const BlockTag& received);
  std::uint64_t blocks() const { return sequence_; }
  bool by_tls() const { return ctx_ == nullptr; }
  // The one-time Poly1305 key of block `sequence` under a connection's key.
  static MacKey one_time_key(const MacKey& stream_key, std::uint64_t sequence);

 private:
  void* ctx_ = nullptr;   // EVP_MAC_CTX for Poly1305, re-keyed per block
  void* hmac_ = nullptr;  // EVP_MAC_CTX for HMAC-SHA256 under the connection's key (one-time keys)
  std::uint64_t sequence_ = 0;
};

}  // namespace pxfer
