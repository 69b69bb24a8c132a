#pragma once
// Streamed file I/O (cap_stream_io): part of wire.hpp, the protocol's spec, kept in a file of its
// own. The gfal2 plugin's open/read/write/lseek/pread/pwrite/close (gfal-cat, gfal2's streamed
// copy, a program reading piecewise) on the control connection, one request and one answer at a
// time (docs/protocol.md "Streamed I/O").
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <string>

#include "pxfer/core/limits.hpp"
#include "wire/blob.hpp"
#include "wire/sizes.hpp"

namespace pxfer::wire {

// The bytes of one STREAM_READ's answer or one STREAM_WRITE, and the frames that carry them.
inline constexpr std::uint32_t max_stream_chunk = limits::max_stream_chunk;
inline constexpr std::uint32_t max_stream_payload = max_control_payload + max_stream_chunk;

enum class StreamMode : std::uint8_t { read = 1, write = 2 };

// Opens `path`: for reading (read right), or for writing a new file (write right) into a hidden
// temporary in its directory that STREAM_CLOSE makes durable and renames onto `path`: nothing is
// under the name before. With open_overwrite a file already there is replaced at the close; without
// it the open is refused (Errc::exists) and so is a close that finds the name taken. A session holds
// at most limits::stream_handles_per_session handles; they all go with the connection (an unclosed
// write's temporary is removed). The answer is STREAM_OPEN_OK or ERROR.
struct StreamOpen {
  StreamMode mode = StreamMode::read;
  std::uint32_t flags = 0;  // open_overwrite, open_sync (a write only; others refused)
  std::string path;
};
struct StreamOpenOk {
  std::uint32_t handle = 0;   // names the file in the requests that follow (never 0)
  std::uint64_t size = 0;     // a read: the file's size at the open; a write: 0
  std::int64_t mtime_ns = 0;  // a read: its mtime; a write: 0
};
// At most max_stream_chunk bytes at `offset` of a handle (of either mode: a write's own bytes so
// far). Answered with STREAM_DATA, shorter than asked at the end of the file, or ERROR.
struct StreamRead {
  std::uint32_t handle = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;  // <= max_stream_chunk
};
struct StreamData {
  std::uint32_t handle = 0;
  std::uint64_t offset = 0;
  std::uint8_t eof = 0;  // 1: the data ends at the end of the file
  Blob data;             // last, so it is never copied out of the frame
};
// Bytes at `offset` of a handle opened for writing: anywhere within what was written so far or
// right at its end; past it (a gap) is refused (Errc::usage), as is a file over the server's
// --max-file-size. Answered with DONE or ERROR (the handle stays open either way).
struct StreamWrite {
  std::uint32_t handle = 0;
  std::uint64_t offset = 0;
  Blob data;  // at most max_stream_chunk bytes
};
// Releases a handle. For a write: fdatasync, then the rename onto the final name (never replacing
// a file without open_overwrite), then the directory's fsync. DONE or ERROR; the handle is gone
// either way (a failed write leaves nothing under the final name).
struct StreamClose {
  std::uint32_t handle = 0;
};

}  // namespace pxfer::wire
