#pragma once
// Files that grant access (pxferd's tokens and access files, a client's token file) are read only
// when no other user could have read or changed them, as ssh treats its keys.
#include "pxfer/io/layer.hpp"
#include <string>

namespace pxfer {

enum class FileSecrecy {
  // pxferd's tokens and access files: no write for the group or others, no read for others.
  // 0640 with the service's group is fine (a root-owned file pxferd reads through its group).
  server_config,
  // A client's token file: nothing at all for the group or others (0600, 0400).
  private_secret,
};

// The whole file, after its mode was checked on the opened descriptor (no race with a chmod).
// A pipe is accepted as it is (nothing on disk); anything else but a regular file is refused.
// Throws Error(not_found) when it is missing, Error(permission) when it is too open, with the
// command that fixes it: "run `chmod 600 FILE`". `what` names it: "tokens file", "--token-file".
// The file must also belong to root or to this user: another user could rewrite it whatever its mode.
std::string read_protected_file(const std::string& path, const std::string& what, FileSecrecy secrecy);
// The same checks and read on a descriptor the caller opened (O_NOFOLLOW, locked); read with
// pread from offset 0, so the descriptor's offset is left alone. `path` is for the messages.
std::string read_protected_descriptor(int fd, const std::string& path, const std::string& what, FileSecrecy secrecy);
// The checks of read_protected_file without reading (a private key that OpenSSL reads itself).
void check_protected_file(const std::string& path, const std::string& what, FileSecrecy secrecy);

// Writes `content` to `path` as a new file: first to PATH.tmp-RANDOM, created with
// O_CREAT|O_EXCL|O_NOFOLLOW and `mode`, written and fsynced, then renamed onto PATH. Nothing that
// already holds either name (a planted symlink, another process's file) is opened or written
// through; a rename replaces a symlink at PATH rather than following it. For keys, certificates
// and other state. Throws Error(local_io / permission) naming the file.
void write_file_atomically(const std::string& path, const std::string& content, unsigned mode);

// Why a file of this mode may not be used, or "" when it may (for tests and the checks above).
std::string mode_problem(unsigned mode, FileSecrecy secrecy);
// Why a file owned by `owner` may not be used by the user `me`, or "": root's and one's own files only.
std::string owner_problem(unsigned owner, unsigned me);

}  // namespace pxfer
