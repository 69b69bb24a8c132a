#pragma once
// Cuts a file into blocks and hands them out to streams from one shared queue, so a slow stream
// never holds the file back; tracks which blocks the receiver acknowledged. Thread-safe. No I/O.
//
// The end of a file (issue 39): once no block is left to hand out, a stream with nothing of its
// own in flight may send again a block another stream has held far longer than blocks take
// (next_copy). A reno stream that lost a few hundred packets in slow start's overshoot at 150 ms
// recovers at cwnd 2-6 and held its last blocks 22 s while the rest of the GiB took 11
// (bench/results/wan-matrix.md, "The tail"). Whichever copy arrives first is the one written; the
// receiver acknowledges both (engine/block_ledger.hpp), and each block has at most two copies out.
#include "pxfer/core/clock.hpp"
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
  bool copy = false;  // a second copy of a block overdue on another stream (next_copy)
  bool operator==(const Block&) const = default;
};

class BlockPlanner {
 public:
  BlockPlanner(std::uint64_t file_size, std::uint32_t block_size);

  // The next block nobody is sending; blocks given back by requeue() come first.
  std::optional<Block> next(Clock::time_point now = Clock::now());
  // Once nothing is left to hand out: the block out longest, when that is over copy_after() and it
  // has one copy out; it then has two. The caller holds no block of its own.
  std::optional<Block> next_copy(Clock::time_point now = Clock::now());
  // How long a block must be out before a second copy goes: 1.5 times the mean time from hand-out
  // to acknowledgement so far, at least `min_copy_age` (a disk or a LAN hiccup is no reason to send
  // a block twice). At 150 ms with 50-64 streams blocks take 2-3 s; 3x waited 5-8.5 s for a stream
  // stuck at cwnd 2-6, and the copy on an idle stream takes under a second.
  Clock::duration copy_after() const;
  static constexpr std::chrono::milliseconds min_copy_age{1000};
  // The receiver has this block; returns false for an offset that is not an outstanding block
  // (a confused or hostile peer), which the caller treats as a protocol error. A block sent twice
  // is acknowledged twice: the second acknowledgement is accepted once.
  bool acknowledge(std::uint64_t offset, Clock::time_point now = Clock::now());
  // A stream died holding this block: another stream will send it (stream recovery, resume),
  // unless its other copy is still out.
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
  std::vector<std::uint8_t> copies_;           // copies out and not yet acknowledged or lost
  std::vector<Clock::time_point> handed_at_;   // when each block's first copy was handed out
  Clock::duration mean_latency_{};             // hand-out to acknowledgement, moving average
  std::size_t latencies_ = 0;
};

}  // namespace pxfer
