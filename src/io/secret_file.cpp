#include "pxfer/secret_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>

#include "pxfer/error.hpp"

namespace pxfer {

std::string mode_problem(unsigned mode, FileSecrecy secrecy) {
  if (mode & (S_IWGRP | S_IWOTH)) return "writable by other users";
  if (mode & S_IROTH) return "readable by every user";
  if (secrecy == FileSecrecy::private_secret && (mode & (S_IRGRP | S_IXGRP | S_IXOTH))) return "readable by its group";
  return "";
}

std::string read_protected_file(const std::string& path, const std::string& what, FileSecrecy secrecy) {
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    throw Error(err == ENOENT ? Errc::not_found : errc_from_errno(err), "cannot read " + what + " " + path + ": " + errno_text(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(errc_from_errno(errno), "cannot read " + what + " " + path + ": " + errno_text(errno));
  // A pipe (`--token-file <(pass show pxfer)`) leaves nothing on disk for others to read.
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) throw Error(Errc::usage, what + " " + path + ": not a regular file");
  std::string why = S_ISREG(st.st_mode) ? mode_problem(st.st_mode & 07777, secrecy) : "";
  if (!why.empty()) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(Errc::permission, what + " " + path + " is " + why + " (mode " + mode + "); refusing to use it: run `chmod 600 " +
                                      path + "`");
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(errc_from_errno(errno), "cannot read " + what + " " + path + ": " + errno_text(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (64u << 20)) throw Error(Errc::usage, what + " " + path + ": larger than 64 MiB, not a " + what);
  }
  return text;
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
