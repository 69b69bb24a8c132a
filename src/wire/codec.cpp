#include "pxfer/wire.hpp"

#include "byte_codec.hpp"
#include "message_fields.hpp"
#include "pxfer/error.hpp"

namespace pxfer::wire {
namespace {

using detail::Reader;
using detail::Writer;

using namespace message_fields;  // Encode, Decode and each message's fields

template <class M> constexpr FrameType type_for();
template <> constexpr FrameType type_for<Hello>() { return FrameType::hello; }
template <> constexpr FrameType type_for<HelloOk>() { return FrameType::hello_ok; }
template <> constexpr FrameType type_for<Open>() { return FrameType::open; }
template <> constexpr FrameType type_for<OpenOk>() { return FrameType::open_ok; }
template <> constexpr FrameType type_for<Attach>() { return FrameType::attach; }
template <> constexpr FrameType type_for<AttachOk>() { return FrameType::attach_ok; }
template <> constexpr FrameType type_for<Ack>() { return FrameType::ack; }
template <> constexpr FrameType type_for<End>() { return FrameType::end; }
template <> constexpr FrameType type_for<Commit>() { return FrameType::commit; }
template <> constexpr FrameType type_for<Result>() { return FrameType::result; }
template <> constexpr FrameType type_for<ErrorMsg>() { return FrameType::error; }
template <> constexpr FrameType type_for<Ping>() { return FrameType::ping; }
template <> constexpr FrameType type_for<Pong>() { return FrameType::pong; }
template <> constexpr FrameType type_for<Stats>() { return FrameType::stats; }
template <> constexpr FrameType type_for<InfoRequest>() { return FrameType::info_request; }
template <> constexpr FrameType type_for<Queued>() { return FrameType::queued; }
template <> constexpr FrameType type_for<Info>() { return FrameType::info; }
template <> constexpr FrameType type_for<Remove>() { return FrameType::remove; }
template <> constexpr FrameType type_for<Done>() { return FrameType::done; }
template <> constexpr FrameType type_for<List>() { return FrameType::list; }
template <> constexpr FrameType type_for<Listing>() { return FrameType::listing; }
template <> constexpr FrameType type_for<Mkdir>() { return FrameType::mkdir; }
template <> constexpr FrameType type_for<Have>() { return FrameType::have; }
template <> constexpr FrameType type_for<Auth>() { return FrameType::auth; }
template <> constexpr FrameType type_for<AuthOk>() { return FrameType::auth_ok; }
template <> constexpr FrameType type_for<Sum>() { return FrameType::sum; }
template <> constexpr FrameType type_for<SumOk>() { return FrameType::sum_ok; }
template <> constexpr FrameType type_for<SetAttributes>() { return FrameType::set_attributes; }
template <> constexpr FrameType type_for<Stat>() { return FrameType::stat; }
template <> constexpr FrameType type_for<StatOk>() { return FrameType::stat_ok; }
template <> constexpr FrameType type_for<Rename>() { return FrameType::rename; }
template <> constexpr FrameType type_for<RemoveTree>() { return FrameType::remove_tree; }
template <> constexpr FrameType type_for<ListChildren>() { return FrameType::list_children; }
template <> constexpr FrameType type_for<AttachChallenge>() { return FrameType::attach_challenge; }
template <> constexpr FrameType type_for<AttachProof>() { return FrameType::attach_proof; }

void put_header(std::uint8_t* out, FrameType type, std::uint32_t length) {
  std::vector<std::uint8_t> tmp;
  Writer w(tmp);
  w.u32(length);
  w.u16(static_cast<std::uint16_t>(type));
  w.u16(0);
  std::copy(tmp.begin(), tmp.end(), out);
}

template <class M>
DecodeStatus decode_as(std::span<const std::uint8_t> payload, Message& out) {
  M m{};
  Decode io{Reader(payload)};
  fields(io, m);
  if (io.r.too_long()) return DecodeStatus::too_long;
  if (io.r.truncated()) return DecodeStatus::truncated;
  if (!io.r.at_end()) return DecodeStatus::trailing_bytes;
  out = std::move(m);
  return DecodeStatus::ok;
}

// OPEN's values within pxfer/limits.hpp and the enums it carries. (Unknown flags are the server's
// to refuse with a clear message: transfer/negotiate.cpp.)
bool within_limits(const Open& o) {
  return (o.direction == Direction::put || o.direction == Direction::get) && o.compress_mode <= 2 && o.checksum <= 2 &&
         limits::streams_problem(o.streams).empty() && limits::block_size_problem(o.block_size).empty();
}

}  // namespace

std::uint32_t max_payload(FrameType type) noexcept {
  switch (type) {
    case FrameType::block: return static_cast<std::uint32_t>(block_header_size + block_tag_size) + max_block_size;
    case FrameType::ack: return 12;
    case FrameType::end:
    case FrameType::info_request:
    case FrameType::done: return 0;
    case FrameType::ping:
    case FrameType::pong: return 8;
    case FrameType::attach: return token_size + 2;
    case FrameType::attach_ok: return 8;
    case FrameType::attach_challenge: return attach_nonce_size;
    case FrameType::attach_proof: return attach_proof_size;
    case FrameType::queued: return 12;
    case FrameType::hello:
    case FrameType::hello_ok:
    case FrameType::open:
    case FrameType::open_ok:
    case FrameType::commit:
    case FrameType::result:
    case FrameType::error:
    case FrameType::stats:
    case FrameType::info:
    case FrameType::remove:
    case FrameType::list:
    case FrameType::listing:
    case FrameType::mkdir:
    case FrameType::have: return max_control_payload;
    case FrameType::auth:     // the token and identity fields have their own, smaller limits
    case FrameType::auth_ok:
    case FrameType::sum:
    case FrameType::sum_ok:
    case FrameType::set_attributes: return max_control_payload;
    case FrameType::stat:
    case FrameType::stat_ok:
    case FrameType::rename:
    case FrameType::remove_tree:
    case FrameType::list_children: return max_control_payload;
  }
  return 0;
}

DecodeStatus decode_header(std::span<const std::uint8_t> bytes, FrameHeader& out) noexcept {
  if (bytes.size() < header_size) return DecodeStatus::truncated;
  Reader r(bytes.first(header_size));
  std::uint32_t length = r.u32();
  auto type = static_cast<FrameType>(r.u16());
  std::uint16_t flags = r.u16();
  std::uint32_t limit = max_payload(type);
  const bool empty_frame = type == FrameType::end || type == FrameType::info_request || type == FrameType::done;
  if (limit == 0 && !empty_frame) return DecodeStatus::unknown_type;
  if (length > limit) return DecodeStatus::too_long;
  out = FrameHeader{type, flags, length};
  return DecodeStatus::ok;
}

DecodeStatus decode_message(const FrameHeader& header, std::span<const std::uint8_t> payload, Message& out) {
  if (payload.size() < header.length) return DecodeStatus::truncated;
  payload = payload.first(header.length);
  DecodeStatus st = DecodeStatus::unknown_type;
  switch (header.type) {
    case FrameType::hello: {
      // The magic is checked here rather than in fields() so a wrong one reads as bad_field.
      Reader r(payload);
      if (r.u32() != magic) return r.truncated() ? DecodeStatus::truncated : DecodeStatus::bad_field;
      st = decode_as<Hello>(payload, out);
      break;
    }
    case FrameType::hello_ok: st = decode_as<HelloOk>(payload, out); break;
    case FrameType::open:
      st = decode_as<Open>(payload, out);
      if (st == DecodeStatus::ok && !within_limits(std::get<Open>(out))) return DecodeStatus::bad_field;
      break;
    case FrameType::open_ok: {
      st = decode_as<OpenOk>(payload, out);
      if (st == DecodeStatus::ok) {
        const auto& o = std::get<OpenOk>(out);
        if (o.has_admission && (o.streams == 0 || o.streams > max_streams)) return DecodeStatus::bad_field;
      }
      break;
    }
    case FrameType::attach: st = decode_as<Attach>(payload, out); break;
    case FrameType::attach_ok: st = decode_as<AttachOk>(payload, out); break;
    case FrameType::attach_challenge: st = decode_as<AttachChallenge>(payload, out); break;
    case FrameType::attach_proof: st = decode_as<AttachProof>(payload, out); break;
    case FrameType::ack: st = decode_as<Ack>(payload, out); break;
    case FrameType::end: st = decode_as<End>(payload, out); break;
    case FrameType::commit: st = decode_as<Commit>(payload, out); break;
    case FrameType::result: st = decode_as<Result>(payload, out); break;
    case FrameType::error: st = decode_as<ErrorMsg>(payload, out); break;
    case FrameType::ping: st = decode_as<Ping>(payload, out); break;
    case FrameType::pong: st = decode_as<Pong>(payload, out); break;
    case FrameType::stats: st = decode_as<Stats>(payload, out); break;
    case FrameType::info_request: st = decode_as<InfoRequest>(payload, out); break;
    case FrameType::info: st = decode_as<Info>(payload, out); break;
    case FrameType::queued: st = decode_as<Queued>(payload, out); break;
    case FrameType::remove: st = decode_as<Remove>(payload, out); break;
    case FrameType::done: st = decode_as<Done>(payload, out); break;
    case FrameType::list: st = decode_as<List>(payload, out); break;
    case FrameType::mkdir: st = decode_as<Mkdir>(payload, out); break;
    case FrameType::have: {
      st = decode_as<Have>(payload, out);
      if (st == DecodeStatus::ok && std::get<Have>(out).more > 1) return DecodeStatus::bad_field;
      break;
    }
    case FrameType::auth: st = decode_as<Auth>(payload, out); break;
    case FrameType::sum: {
      st = decode_as<Sum>(payload, out);
      const auto algo = st == DecodeStatus::ok ? std::get<Sum>(out).checksum : 1;
      if (algo != 1 && algo != 2) return DecodeStatus::bad_field;  // adler32 or sha256: "none" sums nothing
      break;
    }
    case FrameType::sum_ok: st = decode_as<SumOk>(payload, out); break;
    case FrameType::set_attributes: st = decode_as<SetAttributes>(payload, out); break;
    case FrameType::stat: st = decode_as<Stat>(payload, out); break;
    case FrameType::list_children: st = decode_as<ListChildren>(payload, out); break;
    case FrameType::stat_ok: {
      st = decode_as<StatOk>(payload, out);
      const auto kind = st == DecodeStatus::ok ? std::get<StatOk>(out).entry.kind : EntryKind::file;
      if (kind != EntryKind::file && kind != EntryKind::directory) return DecodeStatus::bad_field;
      break;
    }
    case FrameType::rename: {
      st = decode_as<Rename>(payload, out);
      if (st == DecodeStatus::ok && std::get<Rename>(out).overwrite > 1) return DecodeStatus::bad_field;
      break;
    }
    case FrameType::remove_tree: {
      st = decode_as<RemoveTree>(payload, out);
      if (st == DecodeStatus::ok && std::get<RemoveTree>(out).recursive > 1) return DecodeStatus::bad_field;
      break;
    }
    case FrameType::auth_ok: {
      st = decode_as<AuthOk>(payload, out);
      if (st == DecodeStatus::ok && (std::get<AuthOk>(out).rights & ~(right_read | right_write)) != 0)
        return DecodeStatus::bad_field;
      break;
    }
    case FrameType::listing: {
      st = decode_as<Listing>(payload, out);
      if (st == DecodeStatus::ok) {
        const auto& l = std::get<Listing>(out);
        if (l.more > 1) return DecodeStatus::bad_field;
        for (const auto& e : l.entries)
          if (e.kind != EntryKind::file && e.kind != EntryKind::directory) return DecodeStatus::bad_field;
      }
      break;
    }
    case FrameType::block: return DecodeStatus::bad_field;  // blocks go through decode_block_header
  }
  return st;
}

FrameType type_of(const Message& message) noexcept {
  return std::visit([](const auto& m) { return type_for<std::decay_t<decltype(m)>>(); }, message);
}

std::vector<std::uint8_t> encode(const Message& message) {
  std::vector<std::uint8_t> out(header_size);
  std::visit(
      [&](const auto& m) {
        Encode io{Writer(out)};
        fields(io, m);
      },
      message);
  put_header(out.data(), type_of(message), static_cast<std::uint32_t>(out.size() - header_size));
  return out;
}

}  // namespace pxfer::wire
