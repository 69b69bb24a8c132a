#include "pxfer/common/interruption.hpp"

#include <atomic>

namespace pxfer {

namespace {
std::atomic<int> interrupted_by{0};
static_assert(std::atomic<int>::is_always_lock_free, "note_interruption runs in signal handlers");
}  // namespace

void note_interruption(int signo) noexcept {
  int none = 0;
  interrupted_by.compare_exchange_strong(none, signo);
}

int interruption_signal() noexcept { return interrupted_by.load(); }

Error interruption_error(const std::string& what) {
  const int signo = interruption_signal();
  return Error(Errc::interrupted,
               std::string("interrupted by ") + (signo == SIGTERM ? "SIGTERM" : "SIGINT") + "; " + what);
}

void throw_if_interrupted(const std::string& what) {
  if (interruption_signal() != 0) throw interruption_error(what);
}

}  // namespace pxfer
