#pragma once
// The sizes and limits of the wire format that every message and the codec share (wire.hpp is
// the protocol's spec; docs/protocol.md describes it).
#include "pxfer/core/layer.hpp"
#include <array>
#include <cstdint>

#include "pxfer/core/limits.hpp"

namespace pxfer::wire {

inline constexpr std::uint32_t magic = 0x50584652;  // "PXFR", first field of HELLO
// 2: TLS 1.3 control connections, AUTH. 3: data streams prove themselves on ATTACH (a MAC under
// a key from the control connection's TLS exporter, ATTACH_CHALLENGE / ATTACH_PROOF) and every
// BLOCK carries a 16-byte Poly1305 tag (checksum/block_mac.hpp). Peers of different versions refuse
// each other at HELLO with one clear line.
inline constexpr std::uint16_t protocol_version = 3;
inline constexpr std::size_t header_size = 8;       // u32 length, u16 type, u16 flags
inline constexpr std::uint32_t max_control_payload = 64 * 1024;
inline constexpr std::uint32_t min_block_size = limits::min_block_size;  // limits.hpp is their home
inline constexpr std::uint32_t max_block_size = limits::max_block_size;
inline constexpr std::size_t block_header_size = 16;  // u64 offset, u32 raw length, u32 flags
inline constexpr std::size_t block_tag_size = 16;     // Poly1305 tag after a BLOCK's payload (version 3)
inline constexpr std::size_t attach_nonce_size = 32;  // ATTACH_CHALLENGE
inline constexpr std::size_t attach_proof_size = 32;  // ATTACH_PROOF (HMAC-SHA256)
inline constexpr std::size_t max_path_length = 4096;
inline constexpr std::size_t max_text_length = 1024;
inline constexpr std::size_t token_size = 16;
inline constexpr std::uint16_t max_streams = limits::max_streams;
inline constexpr std::size_t max_congestion_name = 16;  // TCP_CA_NAME_MAX
inline constexpr std::size_t max_stream_choice = 256;   // TPC_DONE's account of -p auto: one line
using Token = std::array<std::uint8_t, token_size>;

}  // namespace pxfer::wire
