#pragma once
#include <string>

namespace pxfer::pxferd {

struct CreatedToken {
  std::string token;    // printed once by the caller
  std::string warning;  // "" or what went wrong after the token was written (the file's group)
};

// `pxferd token create NAME --tokens FILE` on a fresh machine: missing directories of FILE are
// created 0750 (group pxferd when root creates them and that group exists); a new FILE is 0600,
// or 0640 with group pxferd when its directory has that group (the package's /etc/pxferd). An
// existing FILE keeps its owner and mode; a symlink at FILE is refused.
CreatedToken create_token_safely(const std::string& tokens_file, const std::string& name);

}  // namespace pxfer::pxferd
