// The stream count: pure arithmetic on what each caller knows (pxfer/core/stream_count.hpp).
#include "pxfer/core/stream_count.hpp"

#include <algorithm>
#include <charconv>

namespace pxfer {

std::optional<StreamRequest> parse_stream_request(std::string_view text) {
  if (text == "auto") return StreamRequest{true, limits::default_streams};
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !limits::streams_problem(value).empty()) return std::nullopt;
  return StreamRequest{false, static_cast<std::uint16_t>(value)};
}

std::string to_string(const StreamRequest& request) {
  return request.automatic ? "auto" : std::to_string(request.count);
}

StreamCount stream_count(const StreamInputs& in) {
  StreamCount out;
  out.automatic = in.request.automatic;
  const unsigned ceiling = in.ceiling == 0 ? limits::max_streams : std::min<unsigned>(in.ceiling, limits::max_streams);
  unsigned n = in.request.automatic ? ceiling : in.request.count;
  n = std::clamp<unsigned>(n, limits::min_streams, limits::max_streams);
  auto lower = [&](unsigned to, const char* why) {
    if (to >= n) return;
    n = to;
    if (out.limited_by.empty()) out.limited_by = why;
  };
  if (in.budget > 0) lower(std::max(1u, in.budget / std::max(1u, in.files_in_flight)), "--max-streams");
  if (in.granted) lower(std::max(1u, *in.granted), "server");
  if (in.file_size) lower(limits::streams_for(*in.file_size, in.block_size, static_cast<std::uint16_t>(n)), "file size");
  out.slots = static_cast<std::uint16_t>(n);
  out.start = in.request.automatic ? std::min<std::uint16_t>(out.slots, limits::auto_start_streams) : out.slots;
  return out;
}

std::uint16_t fixed_streams(unsigned asked) {
  asked = std::min<unsigned>(asked, limits::max_streams);
  return stream_count(asking(StreamRequest{false, static_cast<std::uint16_t>(asked)})).slots;
}

unsigned admitted_streams(unsigned asked, bool can_lower, unsigned limit, unsigned in_use) {
  asked = std::max(1u, asked);
  if (limit == 0) return asked;
  const unsigned left = limit > in_use ? limit - in_use : 0;
  if (can_lower) return std::min(asked, left);
  if (asked <= left || in_use == 0) return asked;
  return 0;
}

}  // namespace pxfer
