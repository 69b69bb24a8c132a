#pragma once
// Big-endian field writer and bounds-checked reader used by the message codec.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "wire/blob.hpp"

namespace pxfer::wire::detail {

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  // Strings are u16 length + bytes; callers keep them under the per-field limit.
  void str(const std::string& s) {
    u16(static_cast<std::uint16_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  // Byte strings (a small file's contents) are u32 length + bytes.
  void blob(std::span<const std::uint8_t> b) {
    u32(static_cast<std::uint32_t>(b.size()));
    bytes(b);
  }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

// Every read checks the remaining length first; a failed read leaves `ok()` false and returns 0.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  template <std::size_t N>
  void bytes(std::array<std::uint8_t, N>& out) {
    if (!need(N)) return;
    std::memcpy(out.data(), in_.data() + pos_, N);
    pos_ += N;
  }
  // Reads a u16-prefixed string, refusing lengths over `limit` before touching memory.
  std::string str(std::size_t limit) {
    std::uint16_t n = u16();
    if (!truncated_ && n > limit) too_long_ = true;
    if (too_long_ || !need(n)) return {};
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // Reads a u32-prefixed byte string, refusing lengths over `limit` before allocating. A blob
  // that ends the input of a Reader given its input's buffer (take_from) takes that buffer and
  // drops the bytes before it without moving the rest: a small file's data stays where it was
  // read (wire/blob.hpp).
  void blob(Blob& out, std::size_t limit) {
    std::uint32_t n = u32();
    if (!truncated_ && n > limit) too_long_ = true;
    if (too_long_ || !need(n)) return;
    if (source_ && pos_ + n == in_.size()) {
      out = std::move(*source_);
      source_ = nullptr;  // in_ still points into `out`: nothing is read after this
      out.drop_front(pos_);
      pos_ += n;
      return;
    }
    out.assign(in_.begin() + static_cast<std::ptrdiff_t>(pos_), in_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
  }
  // `v` holds exactly this Reader's input; a final blob may take it (blob above).
  void take_from(Blob& v) {
    if (v.data() == in_.data() && v.size() == in_.size()) source_ = &v;
  }
  // For a count field over its limit: the message is refused as too long.
  void mark_too_long() { too_long_ = true; }
  bool truncated() const { return truncated_; }
  bool too_long() const { return too_long_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  bool need(std::size_t n) {
    if (truncated_ || in_.size() - pos_ < n) {
      truncated_ = true;
      return false;
    }
    return true;
  }
  std::uint64_t get(int n) {
    if (!need(static_cast<std::size_t>(n))) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | in_[pos_ + static_cast<std::size_t>(i)];
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  std::span<const std::uint8_t> in_;
  Blob* source_ = nullptr;
  std::size_t pos_ = 0;
  bool truncated_ = false;
  bool too_long_ = false;
};

}  // namespace pxfer::wire::detail
