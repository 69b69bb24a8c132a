#include "pxfer/io/secret_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>

#include "pxfer/common/error.hpp"

namespace pxfer {

std::string mode_problem(unsigned mode, FileSecrecy secrecy) {
  if (mode & (S_IWGRP | S_IWOTH)) return "writable by other users";
  if (mode & S_IROTH) return "readable by every user";
  if (secrecy == FileSecrecy::private_secret && (mode & (S_IRGRP | S_IXGRP | S_IXOTH))) return "readable by its group";
  return "";
}

std::string owner_problem(unsigned owner, unsigned me) {
  if (owner == 0 || owner == me) return "";
  return "owned by uid " + std::to_string(owner) + ", neither root nor this user (uid " + std::to_string(me) +
         "), who could change it";
}

namespace {

// The checks of read_protected_file on an open descriptor: a regular file (or a pipe), of a safe
// mode, owned by root or by this user.
void check_descriptor(int fd, const std::string& path, const std::string& what, FileSecrecy secrecy) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(errc_from_errno(errno), "cannot read " + what + " " + path + ": " + errno_text(errno));
  // A pipe (`--token-file <(pass show pxfer)`) leaves nothing on disk for others to read.
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) throw Error(Errc::usage, what + " " + path + ": not a regular file");
  if (!S_ISREG(st.st_mode)) return;
  std::string why = mode_problem(st.st_mode & 07777, secrecy);
  if (!why.empty()) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(Errc::permission, what + " " + path + " is " + why + " (mode " + mode + "); refusing to use it: run `chmod 600 " +
                                      path + "`");
  }
  why = owner_problem(st.st_uid, ::geteuid());
  if (!why.empty())
    throw Error(Errc::permission, what + " " + path + " is " + why + "; refusing to use it: run `chown root " + path + "`");
}

}  // namespace

std::string read_protected_descriptor(int fd, const std::string& path, const std::string& what, FileSecrecy secrecy) {
  check_descriptor(fd, path, what, secrecy);
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(text.size()));
    if (n < 0 && errno == ESPIPE) n = ::read(fd, buf, sizeof buf);  // a pipe
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(errc_from_errno(errno), "cannot read " + what + " " + path + ": " + errno_text(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (64u << 20)) throw Error(Errc::usage, what + " " + path + ": larger than 64 MiB, not a " + what);
  }
  return text;
}

namespace {

int open_protected(const std::string& path, const std::string& what) {
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    throw Error(err == ENOENT ? Errc::not_found : errc_from_errno(err), "cannot read " + what + " " + path + ": " + errno_text(err));
  }
  return fd;
}

struct Closer {
  int fd;
  ~Closer() { ::close(fd); }
};

}  // namespace

std::string read_protected_file(const std::string& path, const std::string& what, FileSecrecy secrecy) {
  Closer closer{open_protected(path, what)};
  return read_protected_descriptor(closer.fd, path, what, secrecy);
}

void check_protected_file(const std::string& path, const std::string& what, FileSecrecy secrecy) {
  Closer closer{open_protected(path, what)};
  check_descriptor(closer.fd, path, what, secrecy);
}

void write_file_atomically(const std::string& path, const std::string& content, unsigned mode) {
  std::random_device random;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp-%08x%08x", random(), random());
  const std::string tmp = path + suffix;
  int fd;
  do fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) throw Error(errc_from_errno(errno), "cannot create " + tmp + ": " + errno_text(errno));
  std::size_t done = 0;
  int err = 0;
  while (done < content.size() && err == 0) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw Error(err == EACCES || err == EPERM ? Errc::permission : Errc::local_io, "cannot write " + path + ": " + errno_text(err));
  }
}

}  // namespace pxfer
