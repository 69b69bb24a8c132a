// Names of frame types and decode results, for messages and logs.
#include "message_traits.hpp"
#include "wire/wire.hpp"

namespace pxfer::wire {

const char* to_string(DecodeStatus status) noexcept {
  switch (status) {
    case DecodeStatus::ok: return "ok";
    case DecodeStatus::truncated: return "truncated frame";
    case DecodeStatus::unknown_type: return "unknown frame type";
    case DecodeStatus::too_long: return "length over limit";
    case DecodeStatus::bad_field: return "invalid field value";
    case DecodeStatus::trailing_bytes: return "trailing bytes after message";
  }
  return "?";
}

const char* type_name(FrameType type) noexcept {
  if (type == FrameType::block) return "BLOCK";
  const char* name = "UNKNOWN";
  traits::with_message_type(type, [&](auto m) { name = traits::Traits<decltype(m)>::name; });
  return name;
}

}  // namespace pxfer::wire
