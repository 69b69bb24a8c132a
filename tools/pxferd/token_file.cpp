#include "token_file.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "pxfer/error.hpp"
#include "pxfer/server_admin.hpp"

namespace pxfer::pxferd {
namespace {

std::optional<gid_t> service_group() {
  if (const group* g = ::getgrnam("pxferd")) return g->gr_gid;
  return std::nullopt;
}

// Like mkdir -p, but every directory it creates gets mode 0750 and the service group.
void make_parents(const std::string& file, std::optional<gid_t> gid) {
  auto slash = file.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  const std::string dir = file.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw Error(Errc::usage, "--tokens " + file + ": " + dir + " is not a directory");
    return;
  }
  make_parents(dir, gid);
  if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST)
    throw Error(errc_from_errno(errno), "cannot create directory " + dir + " for the tokens file: " + errno_text(errno) +
                                            " (run as root, or give another --tokens path)");
  ::chmod(dir.c_str(), 0750);  // whatever the umask
  if (gid && ::chown(dir.c_str(), static_cast<uid_t>(-1), *gid) != 0)
    throw Error(errc_from_errno(errno), "cannot give " + dir + " the group pxferd: " + errno_text(errno));
}

}  // namespace

std::string create_token_safely(const std::string& tokens_file, const std::string& name) {
  const auto gid = service_group();
  make_parents(tokens_file, gid);
  const bool existed = ::access(tokens_file.c_str(), F_OK) == 0;
  std::string token = create_client_token(tokens_file, name);
  if (!existed && gid) {
    if (::chown(tokens_file.c_str(), static_cast<uid_t>(-1), *gid) != 0 || ::chmod(tokens_file.c_str(), 0640) != 0)
      throw Error(errc_from_errno(errno), "identity added, but " + tokens_file + " could not be given group pxferd and "
                                              "mode 0640: " + errno_text(errno) + " (fix with chgrp/chmod)");
  }
  return token;
}

}  // namespace pxfer::pxferd
