#pragma once
// Runs the few system commands pxfer-wanem relies on (iproute2's `ip`) without a
// shell, so that link names can never be interpreted as shell syntax.

#include <string>
#include <vector>

namespace wanem {

struct CommandResult {
  int exit_status = -1;  // -1 when the command could not be started or was killed
  std::string output;    // stdout and stderr, interleaved
};

CommandResult run_command(const std::vector<std::string>& argv);

// Runs `ip ARGS...` and throws SetupError quoting the command and its output on failure.
void run_ip(const std::vector<std::string>& args);

}  // namespace wanem
