#pragma once
// A data stream's block buffer, taken from buffers kept between transfers, and only when first
// used. Made fresh for every stream of every file (a std::vector: zero-filled, faulted in page by
// page, and handed back to the kernel when freed), the 2 MiB buffers were about 12 % of a
// sender's CPU in a -r of 4 MiB files, where a clear stream sends from a mapping of the file and
// never touches its buffer at all (docs/performance.md section 20).
//
// Not zeroed: whoever reads a range of it wrote that range first.
#include "pxfer/engine/layer.hpp"
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace pxfer::transfer {

class BlockBuffer {
 public:
  explicit BlockBuffer(std::size_t size) : size_(size) {}
  ~BlockBuffer();
  BlockBuffer(const BlockBuffer&) = delete;
  BlockBuffer& operator=(const BlockBuffer&) = delete;

  std::size_t size() const { return size_; }
  // The first call takes a kept buffer of at least size() bytes, or makes one.
  std::uint8_t* data();
  std::span<std::uint8_t> first(std::size_t n) { return {data(), n}; }

  // Bytes kept for later buffers now (tests and figures).
  static std::size_t kept_bytes();

 private:
  std::size_t size_;
  std::size_t capacity_ = 0;
  std::unique_ptr<std::uint8_t[]> bytes_;
};

}  // namespace pxfer::transfer
