#include "block_buffer.hpp"

#include <mutex>
#include <utility>
#include <vector>

#include "pxfer/core/limits.hpp"

namespace pxfer::transfer {
namespace {

struct Kept {
  std::unique_ptr<std::uint8_t[]> bytes;
  std::size_t capacity;
};

// Process-wide: a client's next file, or the server's next transfer, takes what the last one left.
struct Keeper {
  std::mutex mutex;
  std::vector<Kept> kept;
  std::size_t bytes = 0;
};

// Never destroyed: a stream's buffer may be given back by a thread that outlives static
// destruction (a detached coroutine's frame freed as its io_context goes).
Keeper& keeper() {
  static Keeper* k = new Keeper;
  return *k;
}

}  // namespace

std::uint8_t* BlockBuffer::data() {
  if (bytes_) return bytes_.get();
  {
    Keeper& k = keeper();
    std::lock_guard lock(k.mutex);
    // The smallest that fits: a 1 MiB block does not take a 16 MiB buffer another stream wants.
    auto best = k.kept.end();
    for (auto it = k.kept.begin(); it != k.kept.end(); ++it)
      if (it->capacity >= size_ && (best == k.kept.end() || it->capacity < best->capacity)) best = it;
    if (best != k.kept.end()) {
      bytes_ = std::move(best->bytes);
      capacity_ = best->capacity;
      k.bytes -= capacity_;
      k.kept.erase(best);
      return bytes_.get();
    }
  }
  bytes_.reset(new std::uint8_t[size_ == 0 ? 1 : size_]);  // default-initialized: not zeroed
  capacity_ = size_;
  return bytes_.get();
}

BlockBuffer::~BlockBuffer() {
  if (!bytes_) return;
  Keeper& k = keeper();
  std::lock_guard lock(k.mutex);
  if (k.bytes + capacity_ > limits::kept_block_buffer_bytes) return;  // freed with bytes_
  k.bytes += capacity_;
  k.kept.push_back(Kept{std::move(bytes_), capacity_});
}

std::size_t BlockBuffer::kept_bytes() {
  Keeper& k = keeper();
  std::lock_guard lock(k.mutex);
  return k.bytes;
}

}  // namespace pxfer::transfer
