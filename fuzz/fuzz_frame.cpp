// libFuzzer target: the frame decoder (decode_header, decode_message, decode_block_header), the
// code that reads every byte a peer sends. Besides "no crash, no sanitizer report", it checks that
// whatever decodes also re-encodes to the same bytes: encoder and decoder share one field list, so
// a difference is a bug.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "pxfer/common/error.hpp"
#include "wire/wire.hpp"

using namespace pxfer::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  FrameHeader header;
  if (decode_header(bytes, header) != DecodeStatus::ok) return 0;
  if (header.length > max_payload(header.type)) std::abort();  // a reader allocates `length`
  auto payload = bytes.subspan(header_size);
  if (header.type == FrameType::block) {
    BlockHeader block;
    if (decode_block_header(header, payload, block) != DecodeStatus::ok) return 0;
    if (block.raw_length == 0 || block.raw_length > max_block_size) std::abort();
    // The tag (block_tag_size bytes) follows the payload, and is counted in the frame's length.
    if (block.wire_length + block_header_size + block_tag_size != header.length) std::abort();
    auto again = encode_block_header(block);
    if (std::memcmp(again.data(), data, header_size - 2) != 0) std::abort();  // flags aside
    if (std::memcmp(again.data() + header_size, payload.data(), block_header_size) != 0) std::abort();
    return 0;
  }
  Message message;
  DecodeStatus status = decode_message(header, payload, message);
  // The decoder that takes its payload (a final byte string moved, not copied) agrees with it.
  Message taken;
  DecodeStatus taken_status = payload.size() < header.length
                                  ? DecodeStatus::truncated
                                  : decode_message(header, Blob(payload.first(header.length)), taken);
  if (taken_status != status) std::abort();
  if (status == DecodeStatus::ok && encode(taken) != encode(message)) std::abort();
  if (status != DecodeStatus::ok) {
    (void)to_string(status);
    return 0;
  }
  if (type_of(message) != header.type) std::abort();

  (void)type_name(header.type);
  std::vector<std::uint8_t> again;
  try {
    again = encode(message);
  } catch (const pxfer::Error&) {
    std::abort();  // the decoder accepted a field the encoder refuses
  }
  // The frame re-encodes to the same bytes (the header's flags are not part of the message).
  if (again.size() != header_size + header.length) std::abort();
  if (std::memcmp(again.data(), data, header_size - 2) != 0) std::abort();
  if (std::memcmp(again.data() + header_size, payload.data(), header.length) != 0) std::abort();
  return 0;
}
