#pragma once
#include <string>

namespace pxfer::pxferd {

// `pxferd token create NAME --tokens FILE` on a fresh machine: missing directories of FILE are
// created 0750 and a new FILE ends up 0640, both with group pxferd when that group exists (the
// service reads the file, root writes it); without the group the file stays 0600. An existing
// FILE keeps its owner and mode. Returns the new token (printed once by the caller).
std::string create_token_safely(const std::string& tokens_file, const std::string& name);

}  // namespace pxfer::pxferd
