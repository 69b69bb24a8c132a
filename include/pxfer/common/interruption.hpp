#pragma once
// SIGINT and SIGTERM end a whole command, not only the file in flight (issue 34: a `put -r`
// interrupted after 2 s started the remaining files and ran on for 10 s). The first signal marks
// the process interrupted here; every loop that would start more work (the batch's next file, a
// retry, its pause) asks interruption_signal() first and stops with interruption_error().
#include "pxfer/common/layer.hpp"
#include <csignal>
#include <string>

#include "pxfer/common/error.hpp"

namespace pxfer {

// Marks the process interrupted by `signo` (the first signal is kept). Async-signal-safe.
void note_interruption(int signo) noexcept;
// The signal that interrupted this process's command (SIGINT, SIGTERM), 0 while none came.
int interruption_signal() noexcept;
// Error(interrupted) "interrupted by SIGINT; WHAT": for work the interruption stopped or never started.
Error interruption_error(const std::string& what);
// Throws interruption_error(what) once the process is interrupted.
void throw_if_interrupted(const std::string& what);

}  // namespace pxfer
