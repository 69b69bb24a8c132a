#include "io/mapped_block.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace pxfer::io {
namespace {

// The block this thread is reading inside guarded(), if any. initial-exec: the signal handler
// must reach it without a TLS lookup that could allocate.
struct Guard {
  const std::uint8_t* begin = nullptr;
  const std::uint8_t* end = nullptr;  // page-rounded end of the mapping
  bool hit = false;
};
thread_local Guard guard __attribute__((tls_model("initial-exec")));

std::uintptr_t page_size = 4096;
struct sigaction previous {};

// A SIGBUS inside the guarded block: the file shrank under the mapping. Zero pages go over the
// rest of the block (so the interrupted read can finish) and the guard notes it. Any other SIGBUS
// is not ours: the previous disposition is put back and the fault repeats under it.
void on_sigbus(int, siginfo_t* info, void*) {
  const auto* at = static_cast<const std::uint8_t*>(info->si_addr);
  Guard& g = guard;
  if (g.begin != nullptr && at >= g.begin && at < g.end) {
    auto page = reinterpret_cast<std::uintptr_t>(at) & ~(page_size - 1);
    void* p = ::mmap(reinterpret_cast<void*>(page), reinterpret_cast<std::uintptr_t>(g.end) - page, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED) {
      g.hit = true;
      return;
    }
  }
  ::sigaction(SIGBUS, &previous, nullptr);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (long p = ::sysconf(_SC_PAGESIZE); p > 0) page_size = static_cast<std::uintptr_t>(p);
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &previous);
  });
}

}  // namespace

std::optional<MappedBlock> MappedBlock::map(int fd, std::uint64_t offset, std::size_t length) {
  install_handler();
  if (length == 0 || offset % page_size != 0) return std::nullopt;
  const std::size_t mapped = (length + page_size - 1) & ~(page_size - 1);
  // Without MAP_POPULATE: on tmpfs it saved nothing measurable (docs/performance.md), and on a
  // disk it would read the whole block before the first chunk could be sent; pages come in by
  // faults (16 at a time) with the readahead the source's POSIX_FADV_SEQUENTIAL asked for.
  void* p = ::mmap(nullptr, mapped, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) return std::nullopt;
  return MappedBlock(static_cast<const std::uint8_t*>(p), length, mapped);
}

MappedBlock::MappedBlock(MappedBlock&& other) noexcept
    : base_(other.base_), length_(other.length_), mapped_(other.mapped_) {
  other.base_ = nullptr;
}

MappedBlock& MappedBlock::operator=(MappedBlock&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(const_cast<std::uint8_t*>(base_), mapped_);
    base_ = other.base_;
    length_ = other.length_;
    mapped_ = other.mapped_;
    other.base_ = nullptr;
  }
  return *this;
}

MappedBlock::~MappedBlock() {
  if (base_ != nullptr) ::munmap(const_cast<std::uint8_t*>(base_), mapped_);
}

void MappedBlock::arm() const {
  guard.hit = false;
  guard.end = base_ + mapped_;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  guard.begin = base_;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

bool MappedBlock::disarm() const {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  guard.begin = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return !guard.hit;
}

}  // namespace pxfer::io
