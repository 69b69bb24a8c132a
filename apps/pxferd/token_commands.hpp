#pragma once
// `pxferd token create | list | revoke`: what each prints and its exit code.
#include "cli.hpp"

namespace pxfer::pxferd {

// The exit code of the token subcommand that was parsed; throws Error like the rest of main.
int run_token_command(const Commands& commands);

}  // namespace pxfer::pxferd
