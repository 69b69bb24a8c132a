// libFuzzer target (issue 11): a data stream as a receiver reads it, with block authentication.
// The input is a byte stream of frames; every BLOCK frame is parsed as the engine does (header,
// payload, 16-byte tag after it) and its tag checked with BlockMac under a fixed key, the block
// sequence advancing per block. Besides "no crash, no sanitizer report": verify() must accept a
// tag exactly when it equals the tag an honest sender computes over the same bytes (a second
// BlockMac in lockstep), so no parse path can accept an unauthenticated block.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "checksum/block_mac.hpp"
#include "wire/wire.hpp"

using namespace pxfer;
using namespace pxfer::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static_assert(wire::block_tag_size == pxfer::block_tag_size);
  MacKey key{};
  key.fill(0x5c);
  BlockMac receiver(key);
  BlockMac honest(key);
  std::span<const std::uint8_t> rest(data, size);
  while (rest.size() >= header_size) {
    FrameHeader header;
    if (decode_header(rest, header) != DecodeStatus::ok) return 0;
    if (header.length > max_payload(header.type)) std::abort();
    if (rest.size() < header_size + header.length) return 0;  // a cut frame: the reader waits, then fails
    auto payload = rest.subspan(header_size, header.length);
    rest = rest.subspan(header_size + header.length);
    if (header.type != FrameType::block) continue;
    BlockHeader block;
    if (decode_block_header(header, payload, block) != DecodeStatus::ok) continue;
    if (block.wire_length + block_header_size + wire::block_tag_size != header.length) std::abort();
    auto headers = encode_block_header(block);
    auto body = payload.subspan(block_header_size, block.wire_length);
    BlockTag tag{};
    std::memcpy(tag.data(), payload.data() + block_header_size + block.wire_length, tag.size());
    receiver.begin(headers);
    receiver.update(body);
    honest.begin(headers);
    honest.update(body);
    const BlockTag expected = honest.finish();
    const bool accepted = receiver.verify(tag);
    if (accepted != (tag == expected)) std::abort();
  }
  return 0;
}
