// gfal2's streamed I/O on pxfer:// (gfal2_open, read, write, lseek, pread, pwrite, close): gfal-cat,
// gfal2's own streamed copy, Python's ctx.open(). Each open file is a pxfer::RemoteFile
// (pxfer/client/stream_io.hpp, a control connection of its own) with a position and a read-ahead window.
// A file opened for writing is new: it appears under its name, whole and durable, at the close.
#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "plugin_common.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/client/stream_io.hpp"

namespace pxfer::gfal {
namespace {

// Reads are served from a window of limits::max_stream_chunk bytes read ahead: gfal-cat and
// Python's read() ask for small pieces in order, and a window costs one round trip for them all.
struct OpenFile {
  explicit OpenFile(RemoteFile opened) : file(std::move(opened)) {}
  RemoteFile file;
  std::uint64_t position = 0;
  std::vector<std::uint8_t> window;
  std::uint64_t window_offset = 0;
};

OpenFile& file_of(gfal_file_handle fh) { return *static_cast<OpenFile*>(gfal_file_handle_get_fdesc(fh)); }

// Some of the `count` bytes at `offset` (none at the end of the file).
std::size_t read_some(OpenFile& f, std::uint8_t* out, std::size_t count, std::uint64_t offset) {
  if (count >= limits::max_stream_chunk) return f.file.read_at(offset, {out, count});  // a window would only copy
  const bool inside = offset >= f.window_offset && offset - f.window_offset < f.window.size();
  if (!inside) {
    if (offset >= f.file.size()) return 0;  // the server answers from the size at the open too
    f.window.resize(limits::max_stream_chunk);
    f.window_offset = offset;
    f.window.resize(f.file.read_at(offset, f.window));
    if (f.window.empty()) return 0;
  }
  const std::size_t from = static_cast<std::size_t>(offset - f.window_offset);
  const std::size_t n = std::min(count, f.window.size() - from);
  std::memcpy(out, f.window.data() + from, n);
  return n;
}

// All `count` bytes at `offset`, fewer only at the end of the file, as read(2) of a regular file.
ssize_t read_at(OpenFile& f, void* buff, std::size_t count, std::uint64_t offset) {
  if (f.file.writing()) throw PosixError{EBADF, "the file is open for writing only"};
  auto* out = static_cast<std::uint8_t*>(buff);
  std::size_t done = 0;
  while (done < count) {
    const std::size_t n = read_some(f, out + done, count - done, offset + done);
    if (n == 0) break;
    done += n;
  }
  return static_cast<ssize_t>(done);
}

// A write past the bytes written so far (a gap) is EINVAL: pxferd writes files in order.
ssize_t write_at(OpenFile& f, const void* buff, std::size_t count, std::uint64_t offset) {
  if (!f.file.writing()) throw PosixError{EBADF, "the file is open for reading only"};
  f.file.write_at(offset, {static_cast<const std::uint8_t*>(buff), count});
  return static_cast<ssize_t>(count);
}

// O_RDONLY reads; O_WRONLY writes a new file, replacing one already there only with O_TRUNC (and
// without O_EXCL): without, an existing file is EEXIST, at the open or, if one appeared, at the
// close. O_RDWR and O_APPEND would need the file changed in place, which pxferd never does.
RemoteFile open_file(plugin_handle h, const char* url, int flags) {
  const int access = flags & O_ACCMODE;
  if (access == O_RDWR || (flags & O_APPEND))
    throw PosixError{EOPNOTSUPP, std::string(url) + ": pxfer opens a file to read it or to write a new one "
                                                    "(O_RDONLY, or O_WRONLY with O_CREAT), never to change it in place"};
  gfal2_context_t c = context_of(h);
  const std::chrono::seconds timeout(connect_timeout_seconds(c));
  if (access == O_RDONLY) return RemoteFile::open_read(security_for(c, url), parse_pxfer_url(url), timeout);
  RemoteFile::WriteOptions options;
  options.overwrite = (flags & O_TRUNC) != 0 && (flags & O_EXCL) == 0;
  options.sync = (flags & O_DSYNC) != 0;  // O_SYNC includes it
  return RemoteFile::open_write(security_for(c, url), parse_pxfer_url(url), options, timeout);
}

gfal_file_handle open_url(plugin_handle h, const char* url, int flags, mode_t, GError** err) {
  std::unique_ptr<OpenFile> f;
  if (guarded(err, __func__, [&] { f = std::make_unique<OpenFile>(open_file(h, url, flags)); }) != 0)
    return nullptr;
  // gfal2 routes read/write/close by this name: it must be the one getName() gives.
  return gfal_file_handle_new2(plugin_versioned_name(), f.release(), nullptr, url);
}

ssize_t read_url(plugin_handle, gfal_file_handle fh, void* buff, size_t count, GError** err) {
  ssize_t n = -1;
  if (guarded(err, __func__, [&] { n = read_at(file_of(fh), buff, count, file_of(fh).position); }) != 0) return -1;
  file_of(fh).position += static_cast<std::uint64_t>(n);
  return n;
}

ssize_t pread_url(plugin_handle, gfal_file_handle fh, void* buff, size_t count, off_t offset, GError** err) {
  ssize_t n = -1;
  if (guarded(err, __func__, [&] {
        if (offset < 0) throw PosixError{EINVAL, "pread at a negative offset"};
        n = read_at(file_of(fh), buff, count, static_cast<std::uint64_t>(offset));
      }) != 0)
    return -1;
  return n;
}

ssize_t write_url(plugin_handle, gfal_file_handle fh, const void* buff, size_t count, GError** err) {
  ssize_t n = -1;
  if (guarded(err, __func__, [&] { n = write_at(file_of(fh), buff, count, file_of(fh).position); }) != 0) return -1;
  file_of(fh).position += static_cast<std::uint64_t>(n);
  return n;
}

ssize_t pwrite_url(plugin_handle, gfal_file_handle fh, const void* buff, size_t count, off_t offset, GError** err) {
  ssize_t n = -1;
  if (guarded(err, __func__, [&] {
        if (offset < 0) throw PosixError{EINVAL, "pwrite at a negative offset"};
        n = write_at(file_of(fh), buff, count, static_cast<std::uint64_t>(offset));
      }) != 0)
    return -1;
  return n;
}

// SEEK_END is the size at the open (a read) or the bytes written so far (a write). A position past
// the end reads nothing; a write there is the gap pwrite refuses.
off_t lseek_url(plugin_handle, gfal_file_handle fh, off_t offset, int whence, GError** err) {
  off_t result = -1;
  guarded(err, __func__, [&] {
    OpenFile& f = file_of(fh);
    std::int64_t base = 0;
    if (whence == SEEK_CUR) base = static_cast<std::int64_t>(f.position);
    else if (whence == SEEK_END) base = static_cast<std::int64_t>(f.file.size());
    else if (whence != SEEK_SET) throw PosixError{EINVAL, "lseek: whence must be SEEK_SET, SEEK_CUR or SEEK_END"};
    if (base + offset < 0) throw PosixError{EINVAL, "lseek to a negative position"};
    f.position = static_cast<std::uint64_t>(base + offset);
    result = static_cast<off_t>(f.position);
  });
  return result;
}

// The handle goes whatever the answer (as gfal2's xrootd plugin does); a write that fails here
// leaves nothing under its name.
int close_url(plugin_handle, gfal_file_handle fh, GError** err) {
  std::unique_ptr<OpenFile> f(&file_of(fh));
  const int rc = guarded(err, __func__, [&] { f->file.close(); });
  gfal_file_handle_delete(fh);
  return rc;
}

}  // namespace

void add_stream_io(gfal_plugin_interface& p) {
  p.openG = open_url;
  p.readG = read_url;
  p.writeG = write_url;
  p.lseekG = lseek_url;
  p.preadG = pread_url;
  p.pwriteG = pwrite_url;
  p.closeG = close_url;
}

}  // namespace pxfer::gfal
