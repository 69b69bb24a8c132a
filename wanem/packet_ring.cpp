#include "packet_ring.hpp"

#include <algorithm>

namespace wanem {

PacketRing::PacketRing(std::size_t capacity_bytes, std::size_t max_packet_bytes)
    : capacity_(round_up(std::max(capacity_bytes, 2 * round_up(sizeof(Header) + max_packet_bytes)))),
      slot_bytes_(round_up(sizeof(Header) + max_packet_bytes)),
      data_end_(capacity_) {
  // Default-initialised (not zeroed) so the kernel only backs the pages actually used:
  // a ring sized for a long, fast link costs nothing while the link is idle.
  buffer_.reset(new std::byte[capacity_]);  // operator new aligns to 16 >= kAlignment
}

std::byte* PacketRing::reserve() {
  if (count_ == 0) {
    // Start over at the beginning: maximum contiguous room, and no wrap pending.
    head_ = tail_ = 0;
    data_end_ = capacity_;
    writer_wrapped_ = false;
  }
  if (!writer_wrapped_) {
    if (capacity_ - tail_ < slot_bytes_) {
      if (head_ < slot_bytes_) return nullptr;
      data_end_ = tail_;
      tail_ = 0;
      writer_wrapped_ = true;
    }
  } else if (head_ - tail_ < slot_bytes_) {
    return nullptr;
  }
  return buffer_.get() + tail_ + sizeof(Header);
}

void PacketRing::commit(std::size_t length, Nanos release_at) {
  auto* header = reinterpret_cast<Header*>(buffer_.get() + tail_);
  header->release_at = release_at;
  header->length = static_cast<std::uint32_t>(length);
  header->record_bytes = static_cast<std::uint32_t>(round_up(sizeof(Header) + length));
  tail_ += header->record_bytes;
  ++count_;
}

std::span<const std::byte> PacketRing::front_packet() const {
  const Header* header = header_at(head_);
  return {buffer_.get() + head_ + sizeof(Header), header->length};
}

void PacketRing::pop_front() {
  head_ += header_at(head_)->record_bytes;
  --count_;
  if (writer_wrapped_ && head_ == data_end_) {
    head_ = 0;
    data_end_ = capacity_;
    writer_wrapped_ = false;
  }
}

}  // namespace wanem
