#pragma once
// A file's whole-file checksum kept beside its bytes, in an extended attribute of the file
// (`user.pxfer.adler32`, `user.pxfer.sha256`), as XRootD, dCache and EOS keep theirs: pxferd
// records it when a put commits a verified file, and a SUM or a get of the whole file reads it
// instead of reading every byte again (docs/protocol.md "Stored checksums").
//
// A stored value is used only while the file is as it was when the value was recorded: same
// size, same mtime, and no inode change (ctime) since, beyond the recording itself. Anything that
// writes, truncates, chmods, renames or sets the mtime of the file changes its ctime, which no
// user can set back; so a value that describes other bytes is never used. Where it cannot be
// told (no xattr support, a read-only export, too little permission), nothing is stored and the
// checksum is computed as before. A stale value could only ever fail a transfer (the receiver
// computes its own and compares), never let wrong bytes pass.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pxfer/checksum.hpp"

namespace pxfer {

// What the checksum of a file describes: fstat(2)'s view of it at one moment.
struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
std::optional<FileStamp> stamp_of(int fd) noexcept;

// The stored checksum of `fd`'s file for `algo`, if one is stored and still describes the file.
std::optional<std::string> stored_checksum(int fd, ChecksumAlgo algo) noexcept;

// Who may have written the file while its checksum was computed.
enum class Writer {
  us,      // pxferd wrote it into a hidden temporary and just renamed it into place
  anyone,  // a file of the export: stored only if it had been quiet for a while (below)
};

// Records `hex` as `fd`'s checksum for `algo`, if the file is still as `seen` describes it (taken
// before its bytes were read). A file of the export that changed less than a second before `seen`
// is not recorded: a write in the same tick of the file system's clock would leave its mtime as
// it was. Returns whether a value was stored; failures are silent (the checksum is a cache).
bool store_checksum(int fd, ChecksumAlgo algo, std::string_view hex, const FileStamp& seen, Writer writer) noexcept;

// The attribute's name for `algo` ("user.pxfer.adler32"); empty for none.
std::string stored_checksum_name(ChecksumAlgo algo);

}  // namespace pxfer
