// RemoteFile: STREAM_OPEN, STREAM_READ, STREAM_WRITE and STREAM_CLOSE over a control connection
// of its own (request_link.hpp), a chunk of at most limits::max_stream_chunk bytes per request.
#include "pxfer/client/stream_io.hpp"

#include <algorithm>
#include <cstring>

#include "pxfer/common/error.hpp"
#include "request_link.hpp"

namespace pxfer {
namespace {

const RequestLink::Needs stream_io{wire::cap_stream_io, "streamed reads and writes"};

}  // namespace

struct RemoteFile::State {
  State(ClientSecurity security, const Url& u, std::chrono::milliseconds timeout)
      : link(std::move(security), timeout), url(u) {}
  RequestLink link;
  Url url;
  bool write = false;
  bool closed = false;
  std::uint32_t handle = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;

  void open(wire::StreamMode mode, std::uint32_t flags) {
    write = mode == wire::StreamMode::write;
    auto ok = link.ask<wire::StreamOpenOk>(url, wire::StreamOpen{mode, flags, url.path}, stream_io);
    handle = ok.handle;
    size = ok.size;
    mtime_ns = ok.mtime_ns;
  }
  void check_open() const {
    if (closed) throw Error(Errc::usage, url.to_string() + ": the file was closed");
  }
};

RemoteFile::RemoteFile(std::unique_ptr<State> state) : state_(std::move(state)) {}
RemoteFile::RemoteFile(RemoteFile&&) noexcept = default;
RemoteFile& RemoteFile::operator=(RemoteFile&&) noexcept = default;
RemoteFile::~RemoteFile() = default;  // the link's connection closes: the server drops the handle

RemoteFile RemoteFile::open_read(ClientSecurity security, const Url& url, std::chrono::milliseconds connect_timeout) {
  auto state = std::make_unique<State>(std::move(security), url, connect_timeout);
  state->open(wire::StreamMode::read, 0);
  return RemoteFile(std::move(state));
}

RemoteFile RemoteFile::open_write(ClientSecurity security, const Url& url, WriteOptions options,
                                  std::chrono::milliseconds connect_timeout) {
  auto state = std::make_unique<State>(std::move(security), url, connect_timeout);
  const std::uint32_t flags = (options.overwrite ? wire::open_overwrite : 0u) | (options.sync ? wire::open_sync : 0u);
  state->open(wire::StreamMode::write, flags);
  return RemoteFile(std::move(state));
}

bool RemoteFile::writing() const { return state_->write; }
std::uint64_t RemoteFile::size() const { return state_->size; }
std::int64_t RemoteFile::mtime_ns() const { return state_->mtime_ns; }

std::size_t RemoteFile::read_at(std::uint64_t offset, std::span<std::uint8_t> out) {
  state_->check_open();
  std::size_t done = 0;
  while (done < out.size()) {
    const auto length = static_cast<std::uint32_t>(std::min<std::size_t>(out.size() - done, wire::max_stream_chunk));
    auto data = state_->link.ask<wire::StreamData>(state_->url, wire::StreamRead{state_->handle, offset + done, length});
    if (data.handle != state_->handle || data.offset != offset + done || data.data.size() > length)
      throw Error(Errc::protocol, state_->url.authority() + ": STREAM_DATA for another request than the one sent");
    if (!data.data.empty()) std::memcpy(out.data() + done, data.data.data(), data.data.size());
    done += data.data.size();
    if (data.eof || data.data.size() < length) break;
  }
  return done;
}

void RemoteFile::write_at(std::uint64_t offset, std::span<const std::uint8_t> data) {
  state_->check_open();
  if (!state_->write) throw Error(Errc::usage, state_->url.to_string() + ": opened for reading, not for writing");
  if (data.empty()) return;  // as pwrite(2) of nothing: nothing to refuse either
  std::size_t done = 0;
  do {
    const std::size_t n = std::min<std::size_t>(data.size() - done, wire::max_stream_chunk);
    wire::Message chunk = wire::StreamWrite{state_->handle, offset + done, wire::Blob(data.subspan(done, n))};
    state_->link.ask<wire::Done>(state_->url, chunk);
    done += n;
    state_->size = std::max<std::uint64_t>(state_->size, offset + done);
  } while (done < data.size());
}

void RemoteFile::close() {
  state_->check_open();
  state_->closed = true;
  try {
    state_->link.ask<wire::Done>(state_->url, wire::StreamClose{state_->handle});
  } catch (...) {
    state_->link.close();  // whatever the server still holds of the file goes with the connection
    throw;
  }
}

}  // namespace pxfer
