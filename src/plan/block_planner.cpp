#include "plan/block_planner.hpp"

#include <stdexcept>

namespace pxfer {

BlockPlanner::BlockPlanner(std::uint64_t file_size, std::uint32_t block_size)
    : file_size_(file_size), block_size_(block_size) {
  if (block_size == 0) throw std::invalid_argument("block size must be positive");
  states_.assign(static_cast<std::size_t>((file_size + block_size - 1) / block_size), State::pending);
  queued_bytes_ = file_size;
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

std::optional<Block> BlockPlanner::next() {
  std::lock_guard lock(mutex_);
  while (!requeued_.empty()) {
    std::size_t i = requeued_.front();
    requeued_.pop_front();
    if (states_[i] == State::pending) {
      states_[i] = State::in_flight;
      queued_bytes_ -= block_at(i).length;
      return block_at(i);
    }
  }
  while (next_fresh_ < states_.size()) {
    std::size_t i = next_fresh_++;
    if (states_[i] == State::pending) {
      states_[i] = State::in_flight;
      queued_bytes_ -= block_at(i).length;
      return block_at(i);
    }
  }
  return std::nullopt;
}

bool BlockPlanner::acknowledge(std::uint64_t offset) {
  std::lock_guard lock(mutex_);
  auto i = index_of(offset);
  if (!i || states_[*i] != State::in_flight) return false;
  states_[*i] = State::done;
  ++done_count_;
  done_bytes_ += block_at(*i).length;
  return true;
}

void BlockPlanner::requeue(Block block) {
  std::lock_guard lock(mutex_);
  auto i = index_of(block.offset);
  if (!i || states_[*i] != State::in_flight) return;
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
