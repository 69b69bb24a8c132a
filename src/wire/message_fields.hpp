#pragma once
// The layout of every control message, written once as a list of fields that serves both the
// encoder and the decoder (codec.cpp, its only user). Split from codec.cpp by size: adding a
// message is its struct in wire.hpp, its fields here and its entry in codec.cpp's tables.
#include "pxfer/core/layer.hpp"
#include <concepts>
#include <type_traits>

#include "byte_codec.hpp"
#include "pxfer/common/error.hpp"
#include "wire/wire.hpp"

namespace pxfer::wire::message_fields {

using detail::Reader;
using detail::Writer;

// Each message's layout is written once, as a list of fields, and serves both the encoder and the
// decoder: the two can never disagree.
struct Encode {
  Writer w;
  // When set (encode_append_head), a byte field's bytes are not written but left here, after its
  // length: the caller writes them right after the encoded frame, so the field must be its last.
  std::span<const std::uint8_t>* deferred = nullptr;
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
  void blob(const Blob& b, std::size_t limit) {
    if (b.size() > limit)
      throw Error(Errc::usage, "a byte field of " + std::to_string(b.size()) + " bytes is over its limit of " +
                                   std::to_string(limit) + " bytes");
    if (deferred && deferred->empty()) {
      w.u32(static_cast<std::uint32_t>(b.size()));
      *deferred = std::span<const std::uint8_t>(b.data(), b.size());
      return;
    }
    w.blob(b);
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
  void blob(Blob& b, std::size_t limit) { r.blob(b, limit); }
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
  if (!io.tail(m.has_transfer_id)) return;  // an older client sends none
  io.token(m.transfer_id);
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
  if (!io.tail(m.has_congestion)) return;  // cap_sender_congestion
  io.str(m.congestion, max_congestion_name);
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
  if (!io.tail(m.has_proof)) return;  // cap_attach_proven
  for (auto& b : m.nonce) io.u8(b);
  for (auto& b : m.mac) io.u8(b);
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
template <class IO, class H> void fields(IO&, H&) requires std::same_as<std::remove_const_t<H>, Retire> {}
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
// A u16 count and each stream's figures: STATS, and TPC_PROGRESS's per-stream view.
template <class IO, class V> void stream_figures(IO& io, V& streams) {
  if (!io.template count<std::uint16_t>(streams, max_streams)) return;
  for (auto& s : streams) {
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
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Stats> {
  stream_figures(io, m.streams);
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
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Stat> {
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, StatOk> {
  entry_fields(io, m.entry);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Rename> {
  io.str(m.from, max_path_length);
  io.str(m.to, max_path_length);
  io.u8(m.overwrite);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, ListChildren> {
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, RemoveTree> {
  io.str(m.path, max_path_length);
  io.u8(m.recursive);
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
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, TpcGrantRequest> {
  if constexpr (std::is_same_v<IO, Decode>) enum8(io, m.direction);
  else io.u8(static_cast<std::uint8_t>(m.direction));
  io.u32(m.flags);
  io.u64(m.size);
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, TpcGrant> {
  io.str(m.secret, max_grant_length);
  io.u32(m.lifetime_ms);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, TpcStart> {
  if constexpr (std::is_same_v<IO, Decode>) enum8(io, m.mode);
  else io.u8(static_cast<std::uint8_t>(m.mode));
  io.u8(m.checksum);
  io.u32(m.flags);
  io.u16(m.streams);
  io.u32(m.block_size);
  io.u32(m.interval_ms);
  io.u32(m.stall_timeout_ms);
  io.str(m.local_path, max_path_length);
  io.str(m.peer_url, max_path_length + 300);
  io.str(m.grant, max_grant_length);
  io.str(m.peer_fingerprint, 128);
  if (!io.tail(m.has_auto)) return;  // cap_tpc_auto_streams
  io.u8(m.auto_streams);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, TpcProgress> {
  io.u64(m.bytes);
  io.u64(m.total);
  stream_figures(io, m.streams);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, TpcDone> {
  io.u64(m.bytes);
  io.u64(m.resumed_bytes);
  io.u32(m.elapsed_ms);
  io.u16(m.streams);
  io.u32(m.block_size);
  io.u8(m.checksum);
  io.str(m.value, 128);
  io.u64(m.stream_recoveries);
  if (!io.tail(m.has_choice)) return;  // the answer to a TPC_START with auto, or cap_tpc_end_counts
  io.str(m.stream_choice, max_stream_choice);
  if (!io.tail(m.has_end_counts)) return;  // cap_tpc_end_counts
  io.u32(m.block_copies);
  io.u32(m.streams_let_go);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, PutSmall> {
  io.u32(m.id);
  io.u32(m.flags);
  io.u8(m.checksum);
  io.str(m.path, max_path_length);
  io.str(m.value, 128);
  mtime(io, m.mtime_ns);
  io.token(m.transfer_id);
  io.blob(m.data, max_small_file);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, PutSmallOk> {
  io.u32(m.id);
  io.u16(m.code);
  io.str(m.value, 128);
  io.str(m.message, max_text_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, GetSmall> {
  io.u32(m.id);
  io.u8(m.checksum);
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, GetSmallOk> {
  io.u32(m.id);
  io.u16(m.code);
  io.u8(m.too_large);
  io.u64(m.size);
  mtime(io, m.mtime_ns);
  io.str(m.value, 128);
  io.str(m.message, max_text_length);
  io.blob(m.data, max_small_file);
}
template <class IO, class H> void fields(IO&, H&) requires std::same_as<std::remove_const_t<H>, SmallChannel> {}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, SmallChannelOk> {
  io.token(m.token);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, SmallData> {
  io.u32(m.id);
  for (auto& b : m.tag) io.u8(b);
  io.blob(m.data, max_small_file);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, StreamOpen> {
  if constexpr (std::is_same_v<IO, Decode>) enum8(io, m.mode);
  else io.u8(static_cast<std::uint8_t>(m.mode));
  io.u32(m.flags);
  io.str(m.path, max_path_length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, StreamOpenOk> {
  io.u32(m.handle);
  io.u64(m.size);
  mtime(io, m.mtime_ns);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, StreamRead> {
  io.u32(m.handle);
  io.u64(m.offset);
  io.u32(m.length);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, StreamData> {
  io.u32(m.handle);
  io.u64(m.offset);
  io.u8(m.eof);
  io.blob(m.data, max_stream_chunk);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, StreamWrite> {
  io.u32(m.handle);
  io.u64(m.offset);
  io.blob(m.data, max_stream_chunk);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, StreamClose> {
  io.u32(m.handle);
}
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Ping> { io.u64(m.nonce); }
template <class IO, class H> void fields(IO& io, H& m) requires std::same_as<std::remove_const_t<H>, Pong> { io.u64(m.nonce); }

}  // namespace pxfer::wire::message_fields
