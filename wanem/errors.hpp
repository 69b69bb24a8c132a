#pragma once
// The two ways pxfer-wanem fails on purpose. Both carry one line meant for a person:
// what is wrong, where, and what to do about it.

#include <stdexcept>

namespace wanem {

// Bad command line input; main() exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The system refused something (permissions, missing tools, leftovers); exit status 1.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace wanem
