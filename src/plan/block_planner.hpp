#pragma once
// Cuts a file into blocks and hands them out to streams from one shared queue, so a slow stream
// never holds the file back; tracks which blocks the receiver acknowledged. Thread-safe. No I/O.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace pxfer {

struct Block {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
  bool operator==(const Block&) const = default;
};

class BlockPlanner {
 public:
  BlockPlanner(std::uint64_t file_size, std::uint32_t block_size);

  // The next block nobody is sending; blocks given back by requeue() come first.
  std::optional<Block> next();
  // The receiver has this block; returns false for an offset that is not an outstanding block
  // (a confused or hostile peer), which the caller treats as a protocol error.
  bool acknowledge(std::uint64_t offset);
  // A stream died holding this block: another stream will send it (stream recovery, resume).
  void requeue(Block block);
  // Already present at the receiver (resume, or the receiver's own record of what arrived):
  // never handed out. Returns false when the offset is not a block or was already done.
  bool mark_done(std::uint64_t offset);
  // True when `block` is exactly one of this file's blocks (offset and length).
  bool is_block(const Block& block) const;

  bool all_acknowledged() const;
  // Bytes of the blocks no stream holds now: not handed out yet, or given back by requeue().
  std::uint64_t queued_bytes() const;
  std::uint64_t acknowledged_bytes() const;
  std::uint64_t file_size() const { return file_size_; }
  std::uint32_t block_size() const { return block_size_; }
  std::size_t block_count() const { return states_.size(); }
  Block block_at(std::size_t index) const;

 private:
  enum class State : std::uint8_t { pending, in_flight, done };
  std::optional<std::size_t> index_of(std::uint64_t offset) const;

  const std::uint64_t file_size_;
  const std::uint32_t block_size_;
  mutable std::mutex mutex_;
  std::vector<State> states_;
  std::size_t next_fresh_ = 0;       // blocks before this one were handed out at least once
  std::deque<std::size_t> requeued_;
  std::size_t done_count_ = 0;
  std::uint64_t done_bytes_ = 0;
  std::uint64_t queued_bytes_ = 0;  // blocks in State::pending
};

}  // namespace pxfer
