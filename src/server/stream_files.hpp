#pragma once
// A control session's streamed files (cap_stream_io, wire/stream_messages.hpp): the gfal2
// plugin's open/read/write/close. A read handle reads the file at offsets; a write handle writes
// a hidden temporary (a FileSink, as a put's) that only its close makes durable and renames onto
// the name, so nothing is ever under the name half-written. Every request is authorized again
// against the session's rights as they are now (a reload may have narrowed them), and the handles
// all go with the session: an unclosed write's temporary is removed.
#include "pxfer/server/layer.hpp"
#include <cstdint>
#include <map>
#include <memory>

#include "authenticator.hpp"
#include "io/file_io.hpp"
#include "pxfer/server/server.hpp"
#include "unfinished_space.hpp"
#include "wire/wire.hpp"

namespace pxfer::server {

class StreamFiles {
 public:
  // `rights` and the rest outlive it (the session's). Writes count against `unfinished` as they
  // grow (--max-unfinished-per-identity), stop at --max-file-size, and a write paced by
  // --emulate-disk-rate gives up when `pacing_stop` is due (the server stopping).
  StreamFiles(const ServerOptions& options, const Directory& root, UnfinishedSpace& unfinished,
              const PacingStop* pacing_stop, const SessionRights& rights, std::string peer);
  StreamFiles(const StreamFiles&) = delete;
  StreamFiles& operator=(const StreamFiles&) = delete;
  ~StreamFiles();

  // Each request's answer (STREAM_OPEN_OK, STREAM_DATA, DONE); blocking file work, for the
  // blocking pool. Throws Error with what the client is told; the session goes on.
  wire::Message serve(const wire::StreamOpen& m);
  wire::Message serve(const wire::StreamRead& m);
  wire::Message serve(const wire::StreamWrite& m);
  wire::Message serve(const wire::StreamClose& m);

 private:
  struct Handle;
  Handle& find(std::uint32_t handle, bool write);
  std::unique_ptr<Handle> open_for_write(const wire::StreamOpen& m);

  const ServerOptions& options_;
  const Directory& root_;
  UnfinishedSpace& unfinished_;
  const PacingStop* pacing_stop_;
  const SessionRights& rights_;
  const std::string peer_;
  std::map<std::uint32_t, std::unique_ptr<Handle>> open_;
  std::uint32_t next_handle_ = 1;
};

}  // namespace pxfer::server
