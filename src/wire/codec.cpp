#include "wire/wire.hpp"

#include "byte_codec.hpp"
#include "message_fields.hpp"
#include "message_traits.hpp"
#include "pxfer/core/checksum.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer::wire {
namespace {

using detail::Reader;
using detail::Writer;

using namespace message_fields;  // Encode, Decode and each message's fields

void put_header(std::uint8_t* out, FrameType type, std::uint32_t length) {
  std::vector<std::uint8_t> tmp;
  Writer w(tmp);
  w.u32(length);
  w.u16(static_cast<std::uint16_t>(type));
  w.u16(0);
  std::copy(tmp.begin(), tmp.end(), out);
}

template <class M>
DecodeStatus decode_as(std::span<const std::uint8_t> payload, Message& out, Blob* source) {
  M m{};
  Decode io{Reader(payload)};
  if (source) io.r.take_from(*source);
  fields(io, m);
  if (io.r.too_long()) return DecodeStatus::too_long;
  if (io.r.truncated()) return DecodeStatus::truncated;
  if (!io.r.at_end()) return DecodeStatus::trailing_bytes;
  out = std::move(m);
  return DecodeStatus::ok;
}

// OPEN's values within pxfer/core/limits.hpp and the enums it carries. (Unknown flags are the server's
// to refuse with a clear message: transfer/negotiate.cpp.)
bool within_limits(const Open& o) {
  return (o.direction == Direction::put || o.direction == Direction::get) && o.compress_mode <= 2 &&
         o.checksum <= last_checksum_algo &&
         limits::streams_problem(o.streams).empty() && limits::block_size_problem(o.block_size).empty();
}

bool known_kind(EntryKind k) { return k == EntryKind::file || k == EntryKind::directory; }

// What a message's fields cannot say: values out of their range, checked once it decoded. A
// message without such values is valid as decoded.
template <class M>
bool valid(const M&) {
  return true;
}
bool valid(const Open& o) { return within_limits(o); }
bool valid(const OpenOk& o) { return !o.has_admission || (o.streams != 0 && o.streams <= max_streams); }
bool valid(const Have& h) { return h.more <= 1; }
bool valid(const Sum& s) { return s.checksum >= 1 && s.checksum <= last_checksum_algo; }  // "none" sums nothing
bool valid(const StatOk& s) { return known_kind(s.entry.kind); }
bool valid(const Rename& r) { return r.overwrite <= 1; }
bool valid(const RemoveTree& r) { return r.recursive <= 1; }
bool valid(const AuthOk& a) { return (a.rights & ~(right_read | right_write)) == 0; }
bool known_direction(Direction d) { return d == Direction::put || d == Direction::get; }
bool valid(const TpcGrantRequest& g) { return known_direction(g.direction); }
bool valid(const TpcStart& t) {
  return (t.mode == CopyMode::pull || t.mode == CopyMode::push) && t.checksum <= last_checksum_algo &&
         limits::streams_problem(t.streams).empty() && limits::block_size_problem(t.block_size).empty() &&
         t.auto_streams <= 1;
}
bool valid(const TpcDone& d) { return d.checksum <= last_checksum_algo && d.streams <= max_streams; }
bool valid(const PutSmall& p) { return p.checksum <= last_checksum_algo; }
bool valid(const GetSmall& g) { return g.checksum <= last_checksum_algo; }
// A success that is not too_large carries exactly the size it claims (the client reads no data
// from any other answer).
// Empty data with a size: the bytes follow on the small-file channel (the client checks their size).
bool valid(const GetSmallOk& g) {
  return g.too_large <= 1 && (g.code != 0 || g.too_large || g.data.size() == g.size || g.data.empty());
}
// A stream's mode is read or write; only a write takes flags (open_overwrite, open_sync).
bool valid(const StreamOpen& s) {
  if (s.mode == StreamMode::read) return s.flags == 0;
  return s.mode == StreamMode::write && (s.flags & ~(open_overwrite | open_sync)) == 0;
}
bool valid(const StreamOpenOk& s) { return s.handle != 0; }
bool valid(const StreamRead& s) { return s.handle != 0 && s.length <= max_stream_chunk; }
bool valid(const StreamData& s) { return s.eof <= 1; }
bool valid(const StreamWrite& s) { return s.handle != 0; }
bool valid(const StreamClose& s) { return s.handle != 0; }
bool valid(const Listing& l) {
  if (l.more > 1) return false;
  for (const auto& e : l.entries)
    if (!known_kind(e.kind)) return false;
  return true;
}

}  // namespace

std::uint32_t max_payload(FrameType type) noexcept {
  if (type == FrameType::block) return static_cast<std::uint32_t>(block_header_size + block_tag_size) + max_block_size;
  std::uint32_t limit = 0;
  traits::with_message_type(type, [&](auto m) { limit = traits::Traits<decltype(m)>::max_payload; });
  return limit;
}

DecodeStatus decode_header(std::span<const std::uint8_t> bytes, FrameHeader& out) noexcept {
  if (bytes.size() < header_size) return DecodeStatus::truncated;
  Reader r(bytes.first(header_size));
  std::uint32_t length = r.u32();
  auto type = static_cast<FrameType>(r.u16());
  std::uint16_t flags = r.u16();
  const bool known = type == FrameType::block || traits::with_message_type(type, [](auto) {});
  if (!known) return DecodeStatus::unknown_type;
  std::uint32_t limit = max_payload(type);
  if (length > limit) return DecodeStatus::too_long;
  out = FrameHeader{type, flags, length};
  return DecodeStatus::ok;
}

namespace {
DecodeStatus decode_frame(const FrameHeader& header, std::span<const std::uint8_t> payload, Message& out,
                          Blob* source) {
  if (payload.size() < header.length) return DecodeStatus::truncated;
  payload = payload.first(header.length);
  if (header.type == FrameType::hello) {
    // The magic is checked before the fields so that a wrong one reads as bad_field.
    Reader r(payload);
    if (r.u32() != magic) return r.truncated() ? DecodeStatus::truncated : DecodeStatus::bad_field;
  }
  if (header.type == FrameType::block) return DecodeStatus::bad_field;  // blocks go through decode_block_header
  DecodeStatus st = DecodeStatus::unknown_type;
  traits::with_message_type(header.type, [&](auto m) {
    using M = decltype(m);
    st = decode_as<M>(payload, out, source);
    if (st == DecodeStatus::ok && !valid(std::get<M>(out))) st = DecodeStatus::bad_field;
  });
  return st;
}
}  // namespace

DecodeStatus decode_message(const FrameHeader& header, std::span<const std::uint8_t> payload, Message& out) {
  return decode_frame(header, payload, out, nullptr);
}

DecodeStatus decode_message(const FrameHeader& header, Blob&& payload, Message& out) {
  // Only a payload of exactly the frame's length may be taken (the blob must end the frame).
  return decode_frame(header, payload, out, payload.size() == header.length ? &payload : nullptr);
}

FrameType type_of(const Message& message) noexcept {
  return std::visit([](const auto& m) { return traits::Traits<std::decay_t<decltype(m)>>::type; }, message);
}

std::span<const std::uint8_t> encode_append_head(const Message& message, std::vector<std::uint8_t>& out) {
  const std::size_t start = out.size();
  out.resize(start + header_size);
  std::span<const std::uint8_t> tail;
  std::visit(
      [&](const auto& m) {
        Encode io{Writer(out)};
        io.deferred = &tail;
        fields(io, m);
      },
      message);
  // Only a byte field that ends its frame may be left out: anything written after it would land
  // before its bytes on the wire.
  const std::size_t end_of_head = out.size();
  if (!tail.empty()) {
    const Blob* last = nullptr;
    std::visit(
        [&](const auto& m) {
          if constexpr (requires { m.data; })
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(m.data)>, Blob>) last = &m.data;
        },
        message);
    if (!last || last->data() != tail.data())
      throw Error(Errc::internal, std::string(type_name(type_of(message))) + ": a byte field that does not end its frame");
  }
  put_header(out.data() + start, type_of(message),
             static_cast<std::uint32_t>(end_of_head - start - header_size + tail.size()));
  return tail;
}

void encode_append(const Message& message, std::vector<std::uint8_t>& out) {
  const std::span<const std::uint8_t> tail = encode_append_head(message, out);  // in the message, not in `out`
  out.insert(out.end(), tail.begin(), tail.end());
}

std::vector<std::uint8_t> encode(const Message& message) {
  std::vector<std::uint8_t> out;
  encode_append(message, out);
  return out;
}

}  // namespace pxfer::wire
