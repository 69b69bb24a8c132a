// BLOCK frames: the only frames whose payload is not a message. Their 16-byte block header is
// decoded and encoded here (moved out of codec.cpp when that passed 500 lines); the data that
// follows goes straight to the block buffer.
#include "byte_codec.hpp"
#include "wire/wire.hpp"

namespace pxfer::wire {

using detail::Reader;
using detail::Writer;

DecodeStatus decode_block_header(const FrameHeader& header, std::span<const std::uint8_t> payload,
                                 BlockHeader& out) noexcept {
  if (header.type != FrameType::block) return DecodeStatus::bad_field;
  if (header.length < block_header_size + block_tag_size) return DecodeStatus::truncated;
  if (payload.size() < block_header_size) return DecodeStatus::truncated;
  Reader r(payload.first(block_header_size));
  BlockHeader b;
  b.offset = r.u64();
  b.raw_length = r.u32();
  b.flags = r.u32();
  b.wire_length = header.length - static_cast<std::uint32_t>(block_header_size + block_tag_size);
  if (b.raw_length == 0 || b.raw_length > max_block_size) return DecodeStatus::bad_field;
  if ((b.flags & ~std::uint32_t{block_compressed_zstd | block_copy}) != 0) return DecodeStatus::bad_field;
  if (!(b.flags & block_compressed_zstd) && b.wire_length != b.raw_length) return DecodeStatus::bad_field;
  // A compressed block is only sent when it shrank, so it is never longer than its data.
  if ((b.flags & block_compressed_zstd) && (b.wire_length == 0 || b.wire_length >= b.raw_length)) return DecodeStatus::bad_field;
  if (b.offset > UINT64_MAX - b.raw_length) return DecodeStatus::bad_field;
  out = b;
  return DecodeStatus::ok;
}

std::array<std::uint8_t, header_size + block_header_size> encode_block_header(const BlockHeader& block) {
  std::vector<std::uint8_t> tmp;
  Writer w(tmp);
  w.u32(static_cast<std::uint32_t>(block_header_size + block_tag_size) + block.wire_length);
  w.u16(static_cast<std::uint16_t>(FrameType::block));
  w.u16(0);
  w.u64(block.offset);
  w.u32(block.raw_length);
  w.u32(block.flags);
  std::array<std::uint8_t, header_size + block_header_size> out{};
  std::copy(tmp.begin(), tmp.end(), out.begin());
  return out;
}


}  // namespace pxfer::wire
