#pragma once
// A small file's bytes in a PUT_SMALL or GET_SMALL_OK (wire.hpp). Decoded from a received frame,
// the blob is the frame's own buffer, from where the bytes start: the payload was read into
// memory that is not zero-filled first, and the bytes are not moved to the buffer's front. Both
// were done per small file before (a vector of the payload's length, zero-filled: 2 % of pxferd's
// CPU in a put -r of 64 KiB files; then erase() of the fields in front of the data, a 64 KiB
// move: ~1.4 µs per file, docs/performance.md sections 9 and 18).
#include "pxfer/core/layer.hpp"
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace pxfer::wire {

// A contiguous range: std::span takes it as it is.
class Blob {
 public:
  Blob() = default;
  Blob(std::initializer_list<std::uint8_t> bytes) { assign(bytes.begin(), bytes.end()); }
  explicit Blob(std::span<const std::uint8_t> bytes) { assign(bytes.begin(), bytes.end()); }
  explicit Blob(const std::vector<std::uint8_t>& bytes) { assign(bytes.begin(), bytes.end()); }
  Blob(const Blob& other) { assign(other.begin(), other.end()); }
  Blob& operator=(const Blob& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Blob(Blob&&) noexcept = default;
  Blob& operator=(Blob&&) noexcept = default;

  // `n` bytes whose contents are whatever the memory held: for a buffer about to be filled (a
  // frame's payload read from the network, a file read with read_at).
  static Blob uninitialized(std::size_t n) {
    Blob b;
    b.resize(n);
    return b;
  }
  // Sized to `n` bytes; new bytes are not zeroed (see uninitialized), kept ones stay.
  void resize(std::size_t n) {
    if (n > capacity_ - offset_) {
      std::unique_ptr<std::uint8_t[]> grown(new std::uint8_t[n]);  // default-initialized: not zeroed
      if (size_ > 0) std::memcpy(grown.get(), data(), std::min(size_, n));
      buffer_ = std::move(grown);
      offset_ = 0;
      capacity_ = n;
    }
    size_ = n;
  }
  // Drops the first `n` bytes without moving the rest (the fields in front of a frame's blob).
  void drop_front(std::size_t n) {
    n = std::min(n, size_);
    offset_ += n;
    size_ -= n;
  }
  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    resize(n);
    std::copy(first, last, data());
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::uint8_t* data() { return buffer_ ? buffer_.get() + offset_ : nullptr; }
  const std::uint8_t* data() const { return buffer_ ? buffer_.get() + offset_ : nullptr; }
  std::uint8_t* begin() { return data(); }
  std::uint8_t* end() { return data() + size_; }
  const std::uint8_t* begin() const { return data(); }
  const std::uint8_t* end() const { return data() + size_; }
  friend bool operator==(const Blob& a, const Blob& b) { return std::ranges::equal(a, b); }

 private:
  std::unique_ptr<std::uint8_t[]> buffer_;
  std::size_t offset_ = 0;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // bytes of buffer_
};

}  // namespace pxfer::wire
