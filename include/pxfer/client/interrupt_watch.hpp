#pragma once
// Catches SIGINT and SIGTERM for as long as a command runs (pxfer's main holds one), so that no
// signal between two files, in a retry's pause or before a transfer's own guard is set up kills the
// process with files half-moved and no word of them: the first signal marks the process
// interrupted (pxfer/common/interruption.hpp) and runs every stop registered with on_interruption.
#include "pxfer/client/layer.hpp"
#include <functional>
#include <memory>

namespace pxfer {

class InterruptWatch {
 public:
  InterruptWatch();  // a thread of its own waits for the signals
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether an InterruptWatch is alive: a signal then stops the whole command, and a transfer's own
// guard marks the process interrupted too. Without one (a library user such as the gfal2 plugin)
// a signal fails only the transfer it met, and the process is never marked.
bool interrupt_watch_alive() noexcept;

// While the returned handle lives, an interruption runs `stop` (once, from the watch's thread; at
// once, here, when the process is interrupted already). `stop` must be quick: abort a session,
// wake a waiting thread; it must not drop a handle of its own. Dropping the handle waits for a
// `stop` that is running.
[[nodiscard]] std::shared_ptr<void> on_interruption(std::function<void()> stop);

}  // namespace pxfer
