#pragma once
// The sender's read without a copy: one block of the source file mapped read-only, so the hash,
// the block MAC and send() read the page cache directly. With pread every byte was copied into
// the stream's buffer first, 27-34 % of the sender's cycles (docs/performance.md, section 2).
//
// A mapped file that shrinks under the reader raises SIGBUS at the next touch of a page past its
// new end, which would kill pxferd and every transfer in it. So the bytes are only read by user
// code inside guarded(): there a SIGBUS in this block maps zero pages over the rest of the block
// and guarded() reports it, and the sender fails the transfer as the pread path does ("source
// file shrank"). The kernel's own reads (send(2) from the mapping) do not signal; they fail with
// EFAULT, which the sender also turns into the source check.
#include "pxfer/io/layer.hpp"
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace pxfer::io {

class MappedBlock {
 public:
  // [offset, offset + length) of the open file `fd` (offset a multiple of the page size), or
  // nothing when this file cannot be mapped (a file system without mmap): read it with pread.
  static std::optional<MappedBlock> map(int fd, std::uint64_t offset, std::size_t length);
  MappedBlock(MappedBlock&& other) noexcept;
  MappedBlock& operator=(MappedBlock&& other) noexcept;
  MappedBlock(const MappedBlock&) = delete;
  MappedBlock& operator=(const MappedBlock&) = delete;
  ~MappedBlock();

  // Only read inside guarded() (or by the kernel): a page may vanish with a truncation.
  std::span<const std::uint8_t> bytes() const { return {base_, length_}; }

  // Runs `read` (which may read bytes()); false if part of the block was gone (the file shrank),
  // in which case `read` saw zeros there.
  template <class Read>
  bool guarded(Read&& read) const {
    arm();
    struct Disarm {
      const MappedBlock* block;
      bool done = false;
      ~Disarm() {
        if (!done) block->disarm();  // `read` threw
      }
    } disarm_on_throw{this};
    read();
    disarm_on_throw.done = true;
    return disarm();
  }

 private:
  MappedBlock(const std::uint8_t* base, std::size_t length, std::size_t mapped)
      : base_(base), length_(length), mapped_(mapped) {}
  void arm() const;
  bool disarm() const;
  const std::uint8_t* base_ = nullptr;
  std::size_t length_ = 0;
  std::size_t mapped_ = 0;  // length rounded up to whole pages
};

}  // namespace pxfer::io
