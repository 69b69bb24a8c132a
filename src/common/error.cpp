#include "pxfer/common/error.hpp"

#include <cerrno>
#include <cstring>

namespace pxfer {

int exit_code(Errc code) noexcept { return static_cast<int>(code); }

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::ok: return "ok";
    case Errc::internal: return "internal";
    case Errc::usage: return "usage";
    case Errc::not_found: return "not-found";
    case Errc::permission: return "permission";
    case Errc::network: return "network";
    case Errc::protocol: return "protocol";
    case Errc::integrity: return "integrity";
    case Errc::local_io: return "local-io";
    case Errc::exists: return "exists";
    case Errc::interrupted: return "interrupted";
  }
  return "unknown";
}

Errc errc_from_wire(std::uint16_t value) noexcept {
  if (value <= static_cast<std::uint16_t>(Errc::interrupted)) return static_cast<Errc>(value);
  return Errc::protocol;
}

std::string errno_text(int err) { return std::strerror(err); }

Errc errc_from_errno(int err) noexcept {
  switch (err) {
    case ENOENT:
    case ENOTDIR: return Errc::not_found;
    case EACCES:
    case EPERM:
    case EROFS:
    case EXDEV:  // openat2 RESOLVE_BENEATH refusing an escape
    case ELOOP: return Errc::permission;
    case EEXIST: return Errc::exists;
    default: return Errc::local_io;
  }
}

}  // namespace pxfer
