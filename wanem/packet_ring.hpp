#pragma once
// A FIFO of packets stored back to back in one buffer allocated at start-up: the TUN
// read lands directly in the ring (no copy, no allocation per packet) and the packet is
// written out from there when its release time comes. Release times of one direction
// never decrease (constant delay, FIFO serialisation), so a FIFO is all the "timed
// queue" needs.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "clock.hpp"

namespace wanem {

class PacketRing {
 public:
  PacketRing(std::size_t capacity_bytes, std::size_t max_packet_bytes);

  // Room for one packet of up to max_packet_bytes, or nullptr when the ring is full.
  // Nothing is queued until commit(); reserving again without committing reuses the slot.
  std::byte* reserve();
  void commit(std::size_t length, Nanos release_at);

  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  std::size_t capacity_bytes() const { return capacity_; }

  // Only valid when !empty().
  Nanos front_release_at() const { return header_at(head_)->release_at; }
  std::span<const std::byte> front_packet() const;
  void pop_front();

 private:
  struct Header {
    Nanos release_at;
    std::uint32_t length;
    std::uint32_t record_bytes;  // header + packet, rounded up to kAlignment
  };
  static constexpr std::size_t kAlignment = alignof(Header);

  const Header* header_at(std::size_t offset) const {
    return reinterpret_cast<const Header*>(buffer_.get() + offset);
  }
  static std::size_t round_up(std::size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_;
  std::size_t slot_bytes_;       // header + max packet: the contiguous room reserve() needs
  std::size_t head_ = 0;         // oldest record
  std::size_t tail_ = 0;         // where the next record goes
  std::size_t data_end_;         // end of valid records before the writer wrapped to 0
  bool writer_wrapped_ = false;  // tail_ is one lap ahead of head_ (tail_ <= head_)
  std::size_t count_ = 0;
};

}  // namespace wanem
