// Lists too long for one control frame (LISTING entries, HAVE bitmaps) cut into frames that fit.
#include <algorithm>

#include "wire/wire.hpp"

namespace pxfer::wire {

std::vector<Listing> split_listing(std::vector<ListEntry> entries) {
  std::vector<Listing> frames(1);
  std::size_t used = listing_header_bytes;
  for (auto& e : entries) {
    std::size_t bytes = min_entry_bytes + e.relative_path.size();
    if (used + bytes > max_control_payload) {
      frames.back().more = 1;
      frames.emplace_back();
      used = listing_header_bytes;
    }
    used += bytes;
    frames.back().entries.push_back(std::move(e));
  }
  return frames;
}

std::vector<Have> split_have(const std::vector<bool>& present) {
  constexpr std::size_t blocks_per_frame = max_have_bytes * 8;
  std::vector<Have> frames;
  for (std::size_t first = 0; first < present.size() || frames.empty(); first += blocks_per_frame) {
    Have h;
    h.first_block = static_cast<std::uint32_t>(first);
    std::size_t n = std::min(blocks_per_frame, present.size() - first);
    h.bitmap.assign((n + 7) / 8, 0);
    for (std::size_t i = 0; i < n; ++i)
      if (present[first + i]) h.bitmap[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
    h.more = 1;
    frames.push_back(std::move(h));
  }
  frames.back().more = 0;
  return frames;
}

}  // namespace pxfer::wire
