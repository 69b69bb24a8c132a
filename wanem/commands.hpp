#pragma once
// The two verbs of pxfer-wanem. Each returns the process exit status and throws
// UsageError / SetupError for problems that main() reports as one line.

#include "options.hpp"

namespace wanem {

int run_up(const UpConfig& config);
int run_down(const DownConfig& config);

// Throws SetupError unless this process may create namespaces and TUN devices.
void check_privileges();

}  // namespace wanem
