#include "plan/block_planner.hpp"

#include <algorithm>
#include <stdexcept>

namespace pxfer {

BlockPlanner::BlockPlanner(std::uint64_t file_size, std::uint32_t block_size)
    : file_size_(file_size), block_size_(block_size) {
  if (block_size == 0) throw std::invalid_argument("block size must be positive");
  states_.assign(static_cast<std::size_t>((file_size + block_size - 1) / block_size), State::pending);
  queued_bytes_ = file_size;
  copies_.assign(states_.size(), 0);
  handed_at_.assign(states_.size(), Clock::time_point{});
}

Block BlockPlanner::block_at(std::size_t index) const {
  std::uint64_t offset = static_cast<std::uint64_t>(index) * block_size_;
  std::uint64_t left = file_size_ - offset;
  return Block{offset, static_cast<std::uint32_t>(left < block_size_ ? left : block_size_)};
}

std::optional<std::size_t> BlockPlanner::index_of(std::uint64_t offset) const {
  if (offset % block_size_ != 0) return std::nullopt;
  std::uint64_t index = offset / block_size_;
  if (index >= states_.size()) return std::nullopt;
  return static_cast<std::size_t>(index);
}

std::optional<Block> BlockPlanner::next(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto hand_out = [&](std::size_t i) {
    states_[i] = State::in_flight;
    queued_bytes_ -= block_at(i).length;
    copies_[i] = 1;
    handed_at_[i] = now;
    return block_at(i);
  };
  while (!requeued_.empty()) {
    std::size_t i = requeued_.front();
    requeued_.pop_front();
    if (states_[i] == State::pending) return hand_out(i);
  }
  while (next_fresh_ < states_.size()) {
    std::size_t i = next_fresh_++;
    if (states_[i] == State::pending) return hand_out(i);
  }
  return std::nullopt;
}

Clock::duration BlockPlanner::copy_after() const {
  std::lock_guard lock(mutex_);
  return std::max<Clock::duration>(min_copy_age, mean_latency_ * 3 / 2);
}

std::optional<Block> BlockPlanner::next_copy(Clock::time_point now) {
  const Clock::duration after = copy_after();
  std::lock_guard lock(mutex_);
  if (queued_bytes_ > 0 || !requeued_.empty()) return std::nullopt;  // fresh blocks first
  std::optional<std::size_t> oldest;
  for (std::size_t i = 0; i < states_.size(); ++i)
    if (states_[i] == State::in_flight && copies_[i] == 1 && (!oldest || handed_at_[i] < handed_at_[*oldest])) oldest = i;
  if (!oldest || now - handed_at_[*oldest] < after) return std::nullopt;
  copies_[*oldest] = 2;
  Block copy = block_at(*oldest);
  copy.copy = true;
  return copy;
}

bool BlockPlanner::acknowledge(std::uint64_t offset, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto i = index_of(offset);
  if (!i) return false;
  if (states_[*i] == State::done) {
    if (copies_[*i] < 2) return false;  // only a block sent twice is acknowledged twice
    copies_[*i] = 0;
    return true;
  }
  if (states_[*i] != State::in_flight) return false;
  states_[*i] = State::done;
  ++done_count_;
  done_bytes_ += block_at(*i).length;
  if (copies_[*i] == 1) copies_[*i] = 0;  // with two out, the other's acknowledgement is still due
  // A plain moving average (1/8 weight): the hand-out order makes late blocks wait no longer than
  // early ones, so the mean is what a block takes.
  const Clock::duration took = now - handed_at_[*i];
  mean_latency_ = latencies_++ == 0 ? took : mean_latency_ + (took - mean_latency_) / 8;
  return true;
}

void BlockPlanner::requeue(Block block) {
  std::lock_guard lock(mutex_);
  auto i = index_of(block.offset);
  if (!i) return;
  if (copies_[*i] == 2) {  // the other copy is still out, or was acknowledged already
    copies_[*i] = 1;
    if (states_[*i] == State::done) copies_[*i] = 0;
    return;
  }
  if (states_[*i] != State::in_flight) return;
  copies_[*i] = 0;
  states_[*i] = State::pending;
  queued_bytes_ += block_at(*i).length;
  requeued_.push_back(*i);
}

bool BlockPlanner::mark_done(std::uint64_t offset) {
  std::lock_guard lock(mutex_);
  auto i = index_of(offset);
  if (!i || states_[*i] == State::done) return false;
  if (states_[*i] == State::pending) queued_bytes_ -= block_at(*i).length;
  states_[*i] = State::done;
  ++done_count_;
  done_bytes_ += block_at(*i).length;
  return true;
}

bool BlockPlanner::is_block(const Block& block) const {
  auto i = index_of(block.offset);
  return i && block_at(*i).length == block.length;
}

bool BlockPlanner::all_acknowledged() const {
  std::lock_guard lock(mutex_);
  return done_count_ == states_.size();
}

std::uint64_t BlockPlanner::queued_bytes() const {
  std::lock_guard lock(mutex_);
  return queued_bytes_;
}

std::uint64_t BlockPlanner::acknowledged_bytes() const {
  std::lock_guard lock(mutex_);
  return done_bytes_;
}

}  // namespace pxfer
