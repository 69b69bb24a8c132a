#include "stream_files.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "io/namespace_ops.hpp"
#include "pxfer/io/emulated_disk.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer::server {

struct StreamFiles::Handle {
  std::string path;
  std::unique_ptr<FileSource> source;  // a read
  std::unique_ptr<FileSink> sink;      // a write
  std::uint64_t written = 0;           // a write's size so far: no write may start past it
  UnfinishedSpace::Claim claim;        // a write's bytes, counted until it ends
  std::uint64_t size() const { return sink ? written : source->size(); }
};

namespace {

// gfal2 and FTS3 tell EISDIR from other refusals by strerror's words (plugin_common.cpp: errno_of).
void refuse_directory(const Directory& root, const std::string& path) {
  wire::ListEntry entry;
  try {
    entry = stat_entry(root, path);
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return;  // the open says so (a read) or creates it (a write)
    throw;
  }
  if (entry.kind == EntryKind::directory)
    throw Error(Errc::usage, path + ": " + errno_text(EISDIR) + "; streamed I/O opens files only");
}

}  // namespace

StreamFiles::StreamFiles(const ServerOptions& options, const Directory& root, UnfinishedSpace& unfinished,
                         const PacingStop* pacing_stop, const SessionRights& rights, std::string peer)
    : options_(options), root_(root), unfinished_(unfinished), pacing_stop_(pacing_stop), rights_(rights),
      peer_(std::move(peer)) {}

// Each unclosed write's sink removes its temporary as it goes: nothing appears under its name.
StreamFiles::~StreamFiles() {
  for (const auto& [number, handle] : open_)
    if (handle->sink)
      spdlog::info("client={} identity={} path={} streamed write abandoned (never closed), bytes={}", peer_,
                   rights_.identity, handle->path, handle->written);
}

StreamFiles::Handle& StreamFiles::find(std::uint32_t handle, bool write) {
  auto it = open_.find(handle);
  if (it == open_.end())
    throw Error(Errc::usage, "stream handle " + std::to_string(handle) + " is not open on this connection");
  Handle& h = *it->second;
  if (write && !h.sink) throw Error(Errc::usage, h.path + ": opened for reading; writes need a handle opened for writing");
  // Rights as they are now: a reload may have taken them away since the open.
  if (auto denied = Authenticator::authorize(rights_, h.path, h.sink != nullptr)) throw *denied;
  return h;
}

std::unique_ptr<StreamFiles::Handle> StreamFiles::open_for_write(const wire::StreamOpen& m) {
  auto h = std::make_unique<Handle>();
  h->path = m.path;
  SinkOptions sink;
  sink.overwrite = (m.flags & wire::open_overwrite) != 0;
  sink.sync = (m.flags & wire::open_sync) != 0;
  sink.stale_after_seconds = options_.partial_max_age.count();
  sink.write_pacer = options_.emulate_disk_rate > 0 ? emulated_disk() : nullptr;
  sink.pacing_stop = pacing_stop_;
  sink.max_file_size = options_.max_file_size;
  sink.reserve = false;  // its size is not known: each write extends it (FileSink::extend)
  h->sink = std::make_unique<FileSink>(root_, m.path, 0, sink);
  return h;
}

wire::Message StreamFiles::serve(const wire::StreamOpen& m) {
  if (open_.size() >= limits::stream_handles_per_session)
    throw Error(Errc::usage, m.path + ": this connection holds " + std::to_string(open_.size()) +
                                 " open files, the most a session may (close one first)");
  refuse_directory(root_, m.path);
  const bool write = m.mode == wire::StreamMode::write;
  std::unique_ptr<Handle> h = write ? open_for_write(m) : std::make_unique<Handle>();
  wire::StreamOpenOk ok{next_handle_, 0, 0};
  if (!write) {
    h->path = m.path;
    h->source = std::make_unique<FileSource>(root_, m.path);
    ok.size = h->source->size();
    ok.mtime_ns = h->source->mtime_ns();
  }
  open_.emplace(next_handle_, std::move(h));
  next_handle_ = next_handle_ == UINT32_MAX ? 1 : next_handle_ + 1;  // never 0; 4 billion opens from now
  while (open_.count(next_handle_)) ++next_handle_;
  return ok;
}

wire::Message StreamFiles::serve(const wire::StreamRead& m) {
  Handle& h = find(m.handle, false);
  const std::uint64_t size = h.size();
  const std::uint64_t n = m.offset >= size ? 0 : std::min<std::uint64_t>(m.length, size - m.offset);
  wire::StreamData data{m.handle, m.offset, static_cast<std::uint8_t>(m.offset + n >= size ? 1 : 0),
                        wire::Blob::uninitialized(static_cast<std::size_t>(n))};
  const std::span<std::uint8_t> out(data.data.data(), data.data.size());
  if (n > 0 && h.sink) h.sink->read_at(m.offset, out);
  if (n > 0 && h.source) h.source->read_at(m.offset, out);  // a file that shrank since the open fails here
  return data;
}

wire::Message StreamFiles::serve(const wire::StreamWrite& m) {
  Handle& h = find(m.handle, true);
  if (m.offset > h.written)
    throw Error(Errc::usage, h.path + ": a write at offset " + std::to_string(m.offset) + " would leave a gap after the " +
                                 std::to_string(h.written) + " bytes written so far (write in order; rewrite only within them)");
  const std::uint64_t end = m.offset + m.data.size();
  if (options_.max_file_size > 0 && end > options_.max_file_size)
    throw Error(Errc::usage, h.path + ": " + std::to_string(end) + " bytes is over this server's --max-file-size of " +
                                 std::to_string(options_.max_file_size) + " bytes");
  if (end > h.written) {
    unfinished_.grow(h.claim, rights_.identity, end - h.written, h.path);
    h.sink->extend(end);
  }
  h.sink->write_at(m.offset, std::span<const std::uint8_t>(m.data.data(), m.data.size()));
  h.written = std::max(h.written, end);
  return wire::Done{};
}

// The handle goes whatever happens; a write whose commit fails leaves its temporary to its sink,
// which removes it.
wire::Message StreamFiles::serve(const wire::StreamClose& m) {
  find(m.handle, false);  // open, and still allowed
  auto it = open_.find(m.handle);
  std::unique_ptr<Handle> h = std::move(it->second);
  open_.erase(it);
  if (!h->sink) return wire::Done{};
  h->sink->commit();
  spdlog::info("client={} identity={} path={} streamed write committed, bytes={}", peer_, rights_.identity, h->path,
               h->written);
  return wire::Done{};
}

}  // namespace pxfer::server
