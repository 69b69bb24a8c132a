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
#include "pxfer/io/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pxfer/core/checksum.hpp"

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

// Records `hex` as the checksum of `fd`'s file as it is now: for bytes pxferd wrote and verified
// itself (a put, just renamed into place) or left as they were (a new mode and mtime). Returns
// whether a value was stored; failures are silent (the checksum is a cache).
bool record_checksum(int fd, ChecksumAlgo algo, std::string_view hex) noexcept;

// Records `hex`, computed from bytes read after `seen` was taken, for a file of the export that
// anyone may write: only if the file is still as `seen` describes it and had been quiet for over
// a second before (a write within the same tick of the file system's clock would leave its mtime
// as it was).
bool store_checksum(int fd, ChecksumAlgo algo, std::string_view hex, const FileStamp& seen) noexcept;

// The attribute's name for `algo` ("user.pxfer.adler32"); empty for none.
std::string stored_checksum_name(ChecksumAlgo algo);

}  // namespace pxfer
