#pragma once
// The small-file messages of the wire format (cap_small_files, cap_small_channel): part of
// wire.hpp, the protocol's spec, kept in a file of their own.
#include "pxfer/core/layer.hpp"
#include <array>
#include <cstdint>
#include <string>

#include "pxfer/core/limits.hpp"
#include "wire/blob.hpp"
#include "wire/sizes.hpp"

namespace pxfer::wire {

// Small files (docs/protocol.md "Small files"). A file of at most limits::max_small_file bytes
// moves whole: its request and answer on the TLS control connection, its bytes inside that frame
// or, once a small-file channel joined (below), in one SMALL_DATA frame on the channel (no
// OPEN, data stream of its own, HAVE or COMMIT). The client keeps up to limits::small_files_in_flight
// requests outstanding; the server answers each in the order it read them, by `id`. The server
// writes a PUT_SMALL through the same hidden temporary, fsync and rename as any put, and answers
// only once the file is durable under its final name.
inline constexpr std::uint32_t max_small_file = limits::max_small_file;
inline constexpr std::uint32_t max_small_payload = max_control_payload + max_small_file;
struct PutSmall {
  std::uint32_t id = 0;       // the client's number for this request, echoed in the answer
  std::uint32_t flags = 0;    // open_overwrite, open_sync (others refused)
  std::uint8_t checksum = 0;  // pxfer::ChecksumAlgo of `value`
  std::string path;
  std::string value;          // the sender's digest of `data`, lower-case hex ("" with none)
  std::int64_t mtime_ns = 0;  // the source's mtime
  // As OPEN's: a retry (with OPEN) of a put whose answer was lost is answered from the server's
  // record of this commit instead of failing on the file it finds in place.
  Token transfer_id{};
  Blob data;  // the whole file, at most max_small_file bytes
};
struct PutSmallOk {
  std::uint32_t id = 0;
  std::uint16_t code = 0;  // pxfer::Errc; 0: the file is in place and durable
  std::string value;       // the receiver's digest of what it wrote
  std::string message;     // why not, when code != 0
};
struct GetSmall {
  std::uint32_t id = 0;
  std::uint8_t checksum = 0;  // pxfer::ChecksumAlgo the answer's value is in
  std::string path;
};
struct GetSmallOk {
  std::uint32_t id = 0;
  std::uint16_t code = 0;     // pxfer::Errc; 0: data (or too_large) follows
  std::uint8_t too_large = 0; // 1: the file is over max_small_file; move it with OPEN (no data)
  std::uint64_t size = 0;     // the file's size
  std::int64_t mtime_ns = 0;
  std::string value;          // the server's digest of `data`
  std::string message;        // why not, when code != 0
  Blob data;
};
// The small-file channel (cap_small_channel; the client asks only without --encrypt). After
// SMALL_CHANNEL_OK the client connects a data connection that says ATTACH(token, 0) and proves it
// as any data stream does (block_mac.hpp), under K = TLS-Exporter of this control connection with
// the channel's token as context. From then on every PUT_SMALL of the session has empty `data`
// and its bytes follow on the channel as the next SMALL_DATA; every GET_SMALL_OK with code 0 and
// not too_large has empty `data` and its bytes follow on the channel as the next SMALL_DATA.
// Frames on the channel come in the order of their requests; a SMALL_DATA names its request's id.
struct SmallChannel {};
struct SmallChannelOk {
  Token token{};
};
struct SmallData {
  std::uint32_t id = 0;  // the PUT_SMALL's or GET_SMALL's id
  // Poly1305 under a one-time key per frame, over u32 id, u32 size (big-endian, 8 zero bytes of
  // padding) and the bytes (small_channel.hpp): the channel's keys differ per direction.
  std::array<std::uint8_t, block_tag_size> tag{};
  Blob data;             // the whole file, at most max_small_file bytes; last, so it is never copied out
};
}  // namespace pxfer::wire
