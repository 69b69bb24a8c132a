#pragma once
// A file on a pxfer server read or written piecewise, at offsets (cap_stream_io): what the gfal2
// plugin's open/read/write/lseek/pread/pwrite/close run (gfal-cat, gfal2's streamed copy, a
// program reading a file in pieces). Each RemoteFile has a control connection of its own; every
// call throws pxfer::Error with the server's reason. Not thread-safe: one per thread.
#include "pxfer/client/layer.hpp"
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

#include "pxfer/client/client.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer {

class RemoteFile {
 public:
  // A new file written through a hidden temporary: nothing is under its name until close().
  struct WriteOptions {
    bool overwrite = false;  // replace a file already there (at close); without, Error(exists)
    bool sync = false;       // each write durable before it is answered
  };
  // For reading: Error(not_found) when nothing is there, Error(usage) for a directory.
  static RemoteFile open_read(ClientSecurity security, const Url& url,
                              std::chrono::milliseconds connect_timeout = std::chrono::seconds(15));
  // For writing: Error(exists) when a file is there and overwrite is off.
  static RemoteFile open_write(ClientSecurity security, const Url& url, WriteOptions options,
                               std::chrono::milliseconds connect_timeout = std::chrono::seconds(15));
  RemoteFile(RemoteFile&&) noexcept;
  RemoteFile& operator=(RemoteFile&&) noexcept;
  // Without close(): the connection goes, and with it an unclosed write (nothing under its name).
  ~RemoteFile();

  bool writing() const;
  // A read: the file's size when it was opened; a write: the bytes written so far.
  std::uint64_t size() const;
  std::int64_t mtime_ns() const;  // a read's; 0 for a write
  // Up to out.size() bytes at `offset`, fewer only at the end of the file (none past it); returns
  // how many. A write handle reads its own bytes so far.
  std::size_t read_at(std::uint64_t offset, std::span<std::uint8_t> out);
  // All of `data` at `offset`: within the bytes written so far or right at their end; past it (a
  // gap) is Error(usage), and nothing is written.
  void write_at(std::uint64_t offset, std::span<const std::uint8_t> data);
  // Releases the file; a write becomes durable and takes its name (Error(exists) when a file took
  // the name meanwhile and overwrite is off; nothing is left under the name after any failure).
  // No other call may follow.
  void close();

 private:
  struct State;
  explicit RemoteFile(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace pxfer
