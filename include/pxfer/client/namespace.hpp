#pragma once
// Namespace operations on a pxfer server without moving data: stat, list, mkdir, remove, rename
// and checksum. The one client-side home for them: the pxfer CLI (ls/stat/mkdir/rm/mv/sum) and
// the gfal2 plugin both call this. Every call throws pxfer::Error with the server's reason.
#include "pxfer/client/layer.hpp"
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pxfer/core/checksum.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/common/url.hpp"
#include "pxfer/core/wire_types.hpp"

namespace pxfer {

struct RemoteEntry {
  std::string name;  // relative to the directory listed ("" for stat)
  EntryKind kind = EntryKind::file;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  // permission bits
  std::int64_t mtime_ns = 0;
  bool is_directory() const { return kind == EntryKind::directory; }
};

// One control connection to one server, opened on first use and kept for the requests that
// follow (a gfal-ls then its stats, a stat then a SUM). Not thread-safe: one per thread.
class RemoteNamespace {
 public:
  // `security` as the CLI or the plugin resolved it (the process's set_client_security is not used:
  // a plugin may serve several credentials in one process).
  RemoteNamespace(ClientSecurity security, std::chrono::milliseconds connect_timeout = std::chrono::seconds(15));
  ~RemoteNamespace();
  RemoteNamespace(const RemoteNamespace&) = delete;
  RemoteNamespace& operator=(const RemoteNamespace&) = delete;

  // Throws Error(not_found) when nothing is there.
  RemoteEntry stat(const Url& url);
  // The directory's entries (its children; every name below it with `recursive`, parents first),
  // or the file itself as one entry named after it.
  std::vector<RemoteEntry> list(const Url& url, bool recursive);
  // With `parents`, missing parents are made and an existing directory is fine; without, the parent
  // must exist (not_found) and the name must not (exists).
  void mkdir(const Url& url, bool parents);
  // A file, or a directory (empty unless `recursive`).
  void remove(const Url& url, bool recursive);
  // Within one server (same host and port); atomic there. Throws Error(usage) across servers.
  void rename(const Url& from, const Url& to, bool overwrite);
  // The whole-file checksum the server computes (adler32, sha256, md5, crc32 or sha1), and the file's size.
  RemoteSum checksum(const Url& url, ChecksumAlgo algo);
  // chmod of a file (gfal2_chmod): its mtime stays; the server keeps at most rwxrwxr-x (never
  // world-writable, set-id or sticky) and asks for write access to the path.
  void chmod(const Url& url, std::uint32_t mode);
  // mkdir -p of the directory that would hold url.path (nothing for a name at the root).
  void make_parents(const Url& url);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "rwxr-x---" style permission text with the kind letter first ("drwxr-xr-x", "-rw-r--r--").
std::string mode_text(const RemoteEntry& entry);
// The parent directory of a relative path ("" at the root).
std::string parent_path(const std::string& path);

}  // namespace pxfer
