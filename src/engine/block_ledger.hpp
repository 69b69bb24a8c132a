#pragma once
// The receiver's exactly-once rule (issue 11, point 3): a block reaches the file once, after it
// arrived whole and passed its MAC; a block already committed (or being written by another
// stream, or kept from an earlier attempt) is never written again. Thread-safe. No I/O.
#include "pxfer/engine/layer.hpp"
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace pxfer {

class BlockLedger {
 public:
  explicit BlockLedger(std::size_t blocks) : states_(blocks, State::absent) {}

  enum class Claim {
    write,      // this caller writes the block now, then calls committed()
    duplicate,  // already on disk (or being written by another stream): refuse, do not write
    unknown,    // not a block of this file
  };
  Claim claim(std::size_t index) {
    std::lock_guard lock(mutex_);
    if (index >= states_.size()) return Claim::unknown;
    if (states_[index] != State::absent) return Claim::duplicate;
    states_[index] = State::writing;
    return Claim::write;
  }
  // The claimed block is in the file.
  void committed(std::size_t index) { set(index, State::committed); }
  // The claimed block could not be written (the transfer fails anyway): another may try.
  void release(std::size_t index) {
    std::lock_guard lock(mutex_);
    if (index < states_.size() && states_[index] == State::writing) states_[index] = State::absent;
  }
  // Kept from an earlier attempt (resume): present without being claimed.
  void already_present(std::size_t index) { set(index, State::committed); }
  bool is_committed(std::size_t index) const {
    std::lock_guard lock(mutex_);
    return index < states_.size() && states_[index] == State::committed;
  }

 private:
  enum class State : std::uint8_t { absent, writing, committed };
  void set(std::size_t index, State s) {
    std::lock_guard lock(mutex_);
    if (index < states_.size()) states_[index] = s;
  }
  mutable std::mutex mutex_;
  std::vector<State> states_;
};

}  // namespace pxfer
