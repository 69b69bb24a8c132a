#include "token_admin.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <sstream>

#include "auth.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/io/secret_file.hpp"

namespace pxfer::server {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Error open_error(const std::string& path, int err) {
  if (err == ELOOP)
    return Error(Errc::usage, "tokens file " + path + " is a symbolic link; refusing to follow it (remove the link, or "
                              "give the file it points to as --tokens)");
  return Error(err == ENOENT ? Errc::not_found : errc_from_errno(err), "cannot open tokens file " + path + ": " + errno_text(err));
}

// Opens `path` without following a symlink and takes its lock. When another command renamed a
// new file over the name while this one waited for the lock, the new file is opened instead: a
// line appended to the old one would be lost. `created` says whether this call made the file.
int open_locked(const std::string& path, bool create, bool& created) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    Fd f;
    created = false;
    if (create) {
      f.fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      created = f.fd >= 0;
    }
    if (f.fd < 0 && (!create || errno == EEXIST)) f.fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (f.fd < 0) throw open_error(path, errno);
    ::flock(f.fd, LOCK_EX);
    struct stat held {}, named {};
    if (::fstat(f.fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      int fd = f.fd;
      f.fd = -1;
      return fd;
    }
  }
  throw Error(Errc::local_io, "tokens file " + path + " keeps being replaced; try again");
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm {};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string created_comment(const std::string& name) { return "# created " + name + " "; }

void write_all(int fd, const std::string& data, const std::string& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(Errc::local_io, "cannot write tokens file " + path + ": " + errno_text(errno));
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) throw Error(Errc::local_io, "cannot write tokens file " + path + ": " + errno_text(errno));
}

// `text` without NAME's entry and the `# created NAME` comment just above it; nullopt when NAME
// has no entry.
std::optional<std::string> without(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line, out, pending;  // pending: a `# created NAME` line waiting for its entry
  bool found = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (line.rfind(created_comment(name), 0) == 0) {
      out += pending;
      pending = line + "\n";
      continue;
    }
    if (first == name) {
      found = true;
      pending.clear();
      continue;
    }
    out += pending + line + "\n";
    pending.clear();
  }
  out += pending;
  if (!found) return std::nullopt;
  return out;
}

// Writes `text` to a new file beside `path` with the mode, owner and group of `old` and renames it
// over `path`.
void replace_file(const std::string& path, const std::string& text, const struct stat& old) {
  const std::string tmp = path + ".revoke-" + std::to_string(::getpid());
  Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
  if (f.fd < 0) throw Error(errc_from_errno(errno), "cannot create " + tmp + ": " + errno_text(errno));
  try {
    struct stat now {};
    ::fstat(f.fd, &now);
    if ((now.st_uid != old.st_uid || now.st_gid != old.st_gid) && ::fchown(f.fd, old.st_uid, old.st_gid) != 0)
      throw Error(errc_from_errno(errno), "cannot give " + tmp + " the owner and group of " + path + ": " + errno_text(errno));
    if (::fchmod(f.fd, old.st_mode & 0777) != 0)
      throw Error(errc_from_errno(errno), "cannot chmod " + tmp + ": " + errno_text(errno));
    write_all(f.fd, text, tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(errc_from_errno(errno), "cannot rename " + tmp + " to " + path + ": " + errno_text(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace

std::string create_token(const std::string& path, const std::string& name, const std::function<void(int fd)>& on_new_file) {
  if (!valid_identity_name(name))
    throw Error(Errc::usage, "identity name '" + name + "': use 1-64 characters of A-Z a-z 0-9 . _ @ -");
  if (reserved_identity_name(name))
    throw Error(Errc::usage, "identity name '" + name + "' is reserved for clients without credentials; choose another name");
  bool created = false;
  Fd f{open_locked(path, true, created)};
  try {
    TokenStore existing =
        TokenStore::parse(read_protected_descriptor(f.fd, path, "tokens file", FileSecrecy::server_config), path);
    if (existing.contains(name)) throw Error(Errc::exists, "identity " + name + " is already in " + path + " (pxferd token revoke " + name + " first to replace it)");
  } catch (...) {
    if (created) ::unlink(path.c_str());  // the empty file this call made
    throw;
  }
  std::string token = generate_token();
  write_all(f.fd, created_comment(name) + utc_now() + "\n" + token_line(name, token) + "\n", path);
  if (created && on_new_file) on_new_file(f.fd);
  return token;
}

std::vector<TokenInfo> list_tokens(const std::string& path) {
  bool created = false;
  Fd f{open_locked(path, false, created)};
  const std::string text = read_protected_descriptor(f.fd, path, "tokens file", FileSecrecy::server_config);
  const TokenStore store = TokenStore::parse(text, path);  // refuses a malformed file as the server does
  std::vector<TokenInfo> out;
  for (const auto& name : store.names()) out.push_back({name, ""});
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string hash, created_word, name, when;
    if (!(words >> hash >> created_word >> name >> when) || hash != "#" || created_word != "created") continue;
    for (auto& info : out)
      if (info.name == name) info.created = when;
  }
  return out;
}

void revoke_token(const std::string& path, const std::string& name) {
  bool created = false;
  Fd f{open_locked(path, false, created)};
  const std::string text = read_protected_descriptor(f.fd, path, "tokens file", FileSecrecy::server_config);
  TokenStore::parse(text, path);
  auto kept = without(text, name);
  if (!kept) throw Error(Errc::not_found, "identity " + name + " is not in " + path + " (pxferd token list --tokens " + path + " shows who is)");
  struct stat old {};
  if (::fstat(f.fd, &old) != 0) throw Error(errc_from_errno(errno), "cannot stat " + path + ": " + errno_text(errno));
  replace_file(path, *kept, old);
}

}  // namespace pxfer::server
