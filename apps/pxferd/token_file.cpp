#include "token_file.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "pxfer/common/error.hpp"
#include "pxfer/server/server_admin.hpp"

namespace pxfer::pxferd {
namespace {

// The group the packaged service reads its tokens file through: pxferd, or $PXFERD_SERVICE_GROUP
// (a site whose service runs under another group).
std::string service_group_name() {
  const char* env = std::getenv("PXFERD_SERVICE_GROUP");
  return env && *env ? env : "pxferd";
}

std::optional<gid_t> service_group() {
  if (const group* g = ::getgrnam(service_group_name().c_str())) return g->gr_gid;
  return std::nullopt;
}

// Like mkdir -p, but every directory it creates gets mode 0750, and the service group when root
// creates it (a fresh /etc/pxferd); anyone else's directories keep their own group.
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
  if (gid && ::geteuid() == 0 && ::chown(dir.c_str(), static_cast<uid_t>(-1), *gid) != 0)
    throw Error(errc_from_errno(errno), "cannot give " + dir + " the group " + service_group_name() + ": " + errno_text(errno));
}

// A new tokens file gets the service group (and 0640) only where the service is meant to read it:
// in a directory of that group, as the package's /etc/pxferd is. Anywhere else it stays 0600.
bool group_wanted(const std::string& file, std::optional<gid_t> gid) {
  if (!gid) return false;
  auto slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && st.st_gid == *gid;
}

}  // namespace

CreatedToken create_token_safely(const std::string& tokens_file, const std::string& name) {
  const auto gid = service_group();
  make_parents(tokens_file, gid);
  const bool wanted = group_wanted(tokens_file, gid);
  CreatedToken out;
  // On the new file's descriptor, never its name: nothing here follows a symlink. The token is
  // written by then, so a failure is a warning, not an error.
  out.token = create_client_token(tokens_file, name, [&](int fd) {
    if (wanted && (::fchown(fd, static_cast<uid_t>(-1), *gid) != 0 || ::fchmod(fd, 0640) != 0))
      out.warning = tokens_file + " could not be given group " + service_group_name() + " and mode 0640: " +
                    errno_text(errno) + " (the service may not read it; fix with chgrp/chmod)";
  });
  return out;
}

}  // namespace pxfer::pxferd
