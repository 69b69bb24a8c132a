#include "pxfer/wire.hpp"

#include "byte_codec.hpp"
#include "pxfer/error.hpp"

namespace pxfer::wire {
namespace {

using detail::Reader;
using detail::Writer;

// Each message's layout is written once, as a list of fields, and serves both the encoder and the
// decoder: the two can never disagree.
struct Encode {
  Writer w;
  void u8(const std::uint8_t& v) { w.u8(v); }
  void u16(const std::uint16_t& v) { w.u16(v); }
  void u32(const std::uint32_t& v) { w.u32(v); }
  void u64(const std::uint64_t& v) { w.u64(v); }
  void token(const Token& t) { w.bytes(t); }
  // Never truncated: a shortened path would name a different file.
  void str(const std::string& s, std::size_t limit) {
    if (s.size() > limit)
      throw Error(Errc::usage, "a text field of " + std::to_string(s.size()) + " bytes is over its limit of " +
                                   std::to_string(limit) + " bytes (\"" + s.substr(0, 40) + "...\")");
    w.str(s);
  }
  // A list's length as a Count field; over `limit` it is refused, like an over-long string.
  template <class Count, class Vector>
  bool count(const Vector& v, std::size_t limit) {
    if (v.size() > limit)
      throw Error(Errc::usage, "a list of " + std::to_string(v.size()) + " entries is over its limit of " +
                                   std::to_string(limit));
    put_count<Count>(v.size());
    return true;
  }
  // Optional trailing fields (a capability's extension): written when `present`.
  bool tail(const bool& present) { return present; }

 private:
  template <class Count>
  void put_count(std::size_t n) {
    if constexpr (sizeof(Count) == 2) w.u16(static_cast<std::uint16_t>(n));
    else w.u32(static_cast<std::uint32_t>(n));
  }
};
struct Decode {
  Reader r;
  void u8(std::uint8_t& v) { v = r.u8(); }
  void u16(std::uint16_t& v) { v = r.u16(); }
  void u32(std::uint32_t& v) { v = r.u32(); }
  void u64(std::uint64_t& v) { v = r.u64(); }
  void token(Token& t) { r.bytes(t); }
  void str(std::string& s, std::size_t limit) { s = r.str(limit); }
  // Reads a list's length and sizes the vector, refusing a count over `limit` before allocating.
  template <class Count, class Vector>
  bool count(Vector& v, std::size_t limit) {
    std::size_t n = sizeof(Count) == 2 ? r.u16() : r.u32();
    if (n > limit) {
      r.mark_too_long();
      return false;
    }
    v.resize(n);
    return true;
  }
  // Optional trailing fields: present when the payload goes on.
  bool tail(bool& present) {
    present = !r.at_end();
    return present;
  }
};

template <class IO, class M>
void enum8(IO& io, M& e) {
  auto v = static_cast<std::uint8_t>(e);
  io.u8(v);
  e = static_cast<M>(v);
}

// Signed nanoseconds travel as their two's-complement u64.
template <class IO, class T>
void mtime(IO& io, T& ns) {
  if constexpr (std::is_same_v<IO, Decode>) {
    std::uint64_t v = 0;
    io.u64(v);
    ns = static_cast<std::int64_t>(v);
  } else {
    io.u64(static_cast<std::uint64_t>(ns));
  }
}

template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Hello> {
  std::uint32_t mg = magic;  // checked by decode_message before the fields are read
  io.u32(mg);
  io.u16(m.version);
  io.u16(m.min_version);
  io.u64(m.capabilities);
  io.str(m.agent, 256);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, HelloOk> {
  io.u16(m.version);
  io.u64(m.capabilities);
  io.str(m.agent, 256);
  io.u32(m.max_block);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Open> {
  if constexpr (std::is_same_v<IO, Decode>) enum8(io, m.direction);
  else io.u8(static_cast<std::uint8_t>(m.direction));
  io.u8(m.checksum);
  io.u32(m.flags);
  io.u16(m.streams);
  io.u32(m.block_size);
  io.u32(m.window);
  io.u64(m.size);
  io.str(m.path, max_path_length);
  io.str(m.congestion, max_congestion_name);
  io.u32(m.window_clamp);
  io.u32(m.stats_interval_ms);
  io.u8(m.compress_mode);
  io.u8(m.compress_level);
  mtime(io, m.mtime_ns);
  io.u32(m.stall_timeout_ms);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, OpenOk> {
  io.token(m.token);
  io.u64(m.size);
  io.u32(m.block_size);
  mtime(io, m.mtime_ns);
  if (!io.tail(m.has_admission)) return;  // cap_admission
  io.u16(m.streams);
  io.u32(m.active);
  io.u32(m.queued);
  io.u32(m.max_active);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Have> {
  io.u8(m.more);
  io.u32(m.first_block);
  if (!io.template count<std::uint32_t>(m.bitmap, max_have_bytes)) return;
  for (auto& byte : m.bitmap) io.u8(byte);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Attach> {
  io.token(m.token);
  io.u16(m.stream);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, AttachChallenge> {
  for (auto& b : m.nonce) io.u8(b);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, AttachProof> {
  for (auto& b : m.mac) io.u8(b);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, AttachOk> {
  io.u32(m.sndbuf);
  io.u32(m.rcvbuf);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Ack> {
  io.u64(m.offset);
  io.u32(m.length);
}
template <class IO, class H> void fields(IO&, H&) requires std::same_as<std::remove_const_t<H>, End> {}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Commit> {
  io.u64(m.bytes);
  io.u8(m.checksum);
  io.str(m.value, 128);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Result> {
  io.u16(m.code);
  io.str(m.value, 128);
  io.str(m.message, max_text_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, ErrorMsg> {
  io.u16(m.code);
  io.str(m.message, max_text_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Stats> {
  if (!io.template count<std::uint16_t>(m.streams, max_streams)) return;
  for (auto& s : m.streams) {
    io.u16(s.stream);
    io.u64(s.bytes);
    io.u32(s.cwnd);
    io.u32(s.mss);
    io.u32(s.rtt_us);
    io.u32(s.retransmits);
    io.u32(s.unsent);
    io.u32(s.sndbuf);
    io.u64(s.delivery_rate);
  }
}
template <class IO, class H> void fields(IO&, H&) requires std::same_as<std::remove_const_t<H>, InfoRequest> {}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Queued> {
  io.u32(m.position);
  io.u32(m.active);
  io.u32(m.queued);
}
template <class IO, class H> void fields(IO&, H&) requires std::same_as<std::remove_const_t<H>, Done> {}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Auth> {
  io.str(m.token, max_auth_token);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, AuthOk> {
  io.str(m.identity, max_identity_length);
  io.u8(m.rights);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Remove> {
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, List> {
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Mkdir> {
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Sum> {
  io.str(m.path, max_path_length);
  io.u8(m.checksum);
  io.u64(m.size);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, SumOk> {
  io.u64(m.size);
  io.str(m.value, 128);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, SetAttributes> {
  io.str(m.path, max_path_length);
  io.u32(m.mode);
  mtime(io, m.mtime_ns);
}
template <class IO, class E> void entry_fields(IO& io, E& e) {
  if constexpr (std::is_same_v<IO, Decode>) enum8(io, e.kind);
  else io.u8(static_cast<std::uint8_t>(e.kind));
  io.u64(e.size);
  io.u32(e.mode);
  mtime(io, e.mtime_ns);
  io.str(e.relative_path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Listing> {
  io.u8(m.more);
  // The count cannot promise more entries than one payload holds.
  if (!io.template count<std::uint32_t>(m.entries, max_control_payload / min_entry_bytes)) return;
  for (auto& e : m.entries) entry_fields(io, e);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Info> {
  if (!io.template count<std::uint16_t>(m.entries, 64)) return;
  for (auto& [key, value] : m.entries) {
    io.str(key, 64);
    io.str(value, 256);
  }
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Ping> { io.u64(m.nonce); }
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Pong> { io.u64(m.nonce); }

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

DecodeStatus decode_block_header(const FrameHeader& header, std::span<const std::uint8_t> payload,
                                 BlockHeader& out) noexcept {
  if (header.type != FrameType::block) return DecodeStatus::bad_field;
  if (header.length < block_header_size + block_tag_size) return DecodeStatus::truncated;
  if (payload.size() < block_header_size) return DecodeStatus::truncated;
  Reader r(payload.first(block_header_size));
  BlockHeader b;
  b.offset = r.u64();
  b.raw_length = r.u32();
  b.flags = r.u32();
  b.wire_length = header.length - static_cast<std::uint32_t>(block_header_size + block_tag_size);
  if (b.raw_length == 0 || b.raw_length > max_block_size) return DecodeStatus::bad_field;
  if ((b.flags & ~std::uint32_t{block_compressed_zstd}) != 0) return DecodeStatus::bad_field;
  if (!(b.flags & block_compressed_zstd) && b.wire_length != b.raw_length) return DecodeStatus::bad_field;
  // A compressed block is only sent when it shrank, so it is never longer than its data.
  if ((b.flags & block_compressed_zstd) && (b.wire_length == 0 || b.wire_length >= b.raw_length)) return DecodeStatus::bad_field;
  if (b.offset > UINT64_MAX - b.raw_length) return DecodeStatus::bad_field;
  out = b;
  return DecodeStatus::ok;
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

std::array<std::uint8_t, header_size + block_header_size> encode_block_header(const BlockHeader& block) {
  std::vector<std::uint8_t> tmp;
  Writer w(tmp);
  w.u32(static_cast<std::uint32_t>(block_header_size + block_tag_size) + block.wire_length);
  w.u16(static_cast<std::uint16_t>(FrameType::block));
  w.u16(0);
  w.u64(block.offset);
  w.u32(block.raw_length);
  w.u32(block.flags);
  std::array<std::uint8_t, header_size + block_header_size> out{};
  std::copy(tmp.begin(), tmp.end(), out.begin());
  return out;
}

}  // namespace pxfer::wire
