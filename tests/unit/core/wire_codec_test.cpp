// The wire codec: every message survives encode -> decode unchanged, and every malformed input is
// refused with the right status (never a crash, never an allocation sized by the peer).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>
#include <utility>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "pxfer/common/error.hpp"
#include "wire/wire.hpp"
#include "wire/byte_codec.hpp"

namespace pxfer::wire {

// Statuses print by name in failure messages.
void PrintTo(DecodeStatus status, std::ostream* os) { *os << to_string(status); }

namespace {

using Bytes = std::vector<std::uint8_t>;

// ---------------------------------------------------------------------------------------------
// Helpers

// Every field of each alternative, as a tuple: a round trip is compared field by field, so a
// field the encoder leaves out (and the decoder then leaves at its default) is caught too, which
// comparing the two encodings alone would miss.
auto fields_of(const Hello& m) { return std::tie(m.version, m.min_version, m.capabilities, m.agent); }
auto fields_of(const HelloOk& m) { return std::tie(m.version, m.capabilities, m.agent, m.max_block); }
auto fields_of(const Open& m) {
  return std::tie(m.direction, m.checksum, m.flags, m.streams, m.block_size, m.window, m.size, m.path, m.congestion,
                  m.window_clamp, m.stats_interval_ms, m.compress_mode, m.compress_level, m.mtime_ns, m.stall_timeout_ms);
}
auto fields_of(const OpenOk& m) {
  return std::tie(m.token, m.size, m.block_size, m.mtime_ns, m.has_admission, m.streams, m.active, m.queued, m.max_active,
                  m.has_congestion, m.congestion);
}
auto fields_of(const Attach& m) { return std::tie(m.token, m.stream); }
auto fields_of(const AttachOk& m) { return std::tie(m.sndbuf, m.rcvbuf); }
auto fields_of(const AttachChallenge& m) { return std::tie(m.nonce); }
auto fields_of(const AttachProof& m) { return std::tie(m.mac); }
auto fields_of(const Ack& m) { return std::tie(m.offset, m.length); }
auto fields_of(const End&) { return std::tuple<>(); }
auto fields_of(const Retire&) { return std::tuple<>(); }
auto fields_of(const Commit& m) { return std::tie(m.bytes, m.checksum, m.value); }
auto fields_of(const Result& m) { return std::tie(m.code, m.value, m.message); }
auto fields_of(const ErrorMsg& m) { return std::tie(m.code, m.message); }
auto fields_of(const Ping& m) { return std::tie(m.nonce); }
auto fields_of(const Pong& m) { return std::tie(m.nonce); }
auto fields_of(const Stats& m) { return std::tie(m.streams); }
auto fields_of(const InfoRequest&) { return std::tuple<>(); }
auto fields_of(const Info& m) { return std::tie(m.entries); }
auto fields_of(const Remove& m) { return std::tie(m.path); }
auto fields_of(const Done&) { return std::tuple<>(); }
auto fields_of(const List& m) { return std::tie(m.path); }
auto fields_of(const Listing& m) { return std::tie(m.more, m.entries); }
auto fields_of(const Mkdir& m) { return std::tie(m.path); }
auto fields_of(const Queued& m) { return std::tie(m.position, m.active, m.queued); }
auto fields_of(const Auth& m) { return std::tie(m.token); }
auto fields_of(const AuthOk& m) { return std::tie(m.identity, m.rights); }
auto fields_of(const Have& m) { return std::tie(m.more, m.first_block, m.bitmap); }
auto fields_of(const Sum& m) { return std::tie(m.path, m.checksum, m.size); }
auto fields_of(const SumOk& m) { return std::tie(m.size, m.value); }
auto fields_of(const SetAttributes& m) { return std::tie(m.path, m.mode, m.mtime_ns); }
auto fields_of(const Stat& m) { return std::tie(m.path); }
auto fields_of(const StatOk& m) { return std::tie(m.entry); }
auto fields_of(const Rename& m) { return std::tie(m.from, m.to, m.overwrite); }
auto fields_of(const RemoveTree& m) { return std::tie(m.path, m.recursive); }
auto fields_of(const ListChildren& m) { return std::tie(m.path); }
auto fields_of(const TpcGrantRequest& m) { return std::tie(m.direction, m.flags, m.size, m.path); }
auto fields_of(const TpcGrant& m) { return std::tie(m.secret, m.lifetime_ms); }
auto fields_of(const TpcStart& m) {
  return std::tie(m.mode, m.checksum, m.flags, m.streams, m.block_size, m.interval_ms, m.stall_timeout_ms, m.local_path,
                  m.peer_url, m.grant, m.peer_fingerprint);
}
auto fields_of(const TpcProgress& m) { return std::tie(m.bytes, m.total, m.streams); }
auto fields_of(const TpcDone& m) {
  return std::tie(m.bytes, m.resumed_bytes, m.elapsed_ms, m.streams, m.block_size, m.checksum, m.value, m.stream_recoveries);
}
auto fields_of(const PutSmall& m) { return std::tie(m.id, m.flags, m.checksum, m.path, m.value, m.mtime_ns, m.transfer_id, m.data); }
auto fields_of(const PutSmallOk& m) { return std::tie(m.id, m.code, m.value, m.message); }
auto fields_of(const GetSmall& m) { return std::tie(m.id, m.checksum, m.path); }
auto fields_of(const GetSmallOk& m) {
  return std::tie(m.id, m.code, m.too_large, m.size, m.mtime_ns, m.value, m.message, m.data);
}
auto fields_of(const SmallChannel&) { return std::tuple<>(); }
auto fields_of(const SmallChannelOk& m) { return std::tie(m.token); }
auto fields_of(const SmallData& m) { return std::tie(m.id, m.tag, m.data); }
auto fields_of(const StreamOpen& m) { return std::tie(m.mode, m.flags, m.path); }
auto fields_of(const StreamOpenOk& m) { return std::tie(m.handle, m.size, m.mtime_ns); }
auto fields_of(const StreamRead& m) { return std::tie(m.handle, m.offset, m.length); }
auto fields_of(const StreamData& m) { return std::tie(m.handle, m.offset, m.eof, m.data); }
auto fields_of(const StreamWrite& m) { return std::tie(m.handle, m.offset, m.data); }
auto fields_of(const StreamClose& m) { return std::tie(m.handle); }

// Same alternative, every field equal, and the same bytes (the encoding is canonical:
// fixed-width fields, length-prefixed strings).
bool same_message(const Message& a, const Message& b) {
  if (a.index() != b.index()) return false;
  bool fields_equal = std::visit(
      [&](const auto& x) {
        using M = std::decay_t<decltype(x)>;
        return fields_of(x) == fields_of(std::get<M>(b));
      },
      a);
  return fields_equal && encode(a) == encode(b);
}

// How many fields of `m` still hold the value a default-constructed message has (0 for a sample
// that exercises every field).
template <class M>
std::size_t fields_at_default(const M& m) {
  const M d{};
  return std::apply(
      [&](const auto&... got) {
        return std::apply([&](const auto&... def) { return (std::size_t{0} + ... + static_cast<std::size_t>(got == def)); },
                          fields_of(d));
      },
      fields_of(m));
}

Token make_token(std::uint8_t first) {
  Token t{};
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::uint8_t>(first + i * 17);
  return t;
}

StreamFigures figures(std::uint16_t stream) {
  return StreamFigures{stream, 0x0102030405060708ull + stream, 345, 1448, 50210, 2, 1 << 20, 4 << 20, 123456789012ull};
}

Open valid_open() {
  Open o;
  o.direction = Direction::put;
  o.checksum = 2;
  o.flags = open_overwrite | open_want_stats;
  o.streams = 8;
  o.block_size = 4u << 20;
  o.window = 16u << 20;
  o.size = 0x0000123456789abcull;
  o.path = "data/run-17/file.bin";
  o.congestion = "bbr";
  o.window_clamp = 8u << 20;
  o.stats_interval_ms = 1000;
  o.compress_mode = 1;  // zstd
  o.compress_level = 9;
  o.mtime_ns = -987654321012345678ll;
  o.stall_timeout_ms = 4000;
  return o;
}

template <class>
inline constexpr bool always_false = false;

// A sample of one alternative of Message, every field away from its default (checked by
// EverySampleSetsEveryField). A new alternative does not compile until it has one here.
template <class M>
Message sample_of() {
  if constexpr (std::is_same_v<M, Hello>) return Hello{4, 1, 0xfedcba9876543210ull, "pxfer/0.1.0 (test)"};
  else if constexpr (std::is_same_v<M, HelloOk>) return HelloOk{4, cap_block_acks, "pxferd/0.1.0", 8u << 20};
  else if constexpr (std::is_same_v<M, Open>) return valid_open();
  else if constexpr (std::is_same_v<M, OpenOk>) return OpenOk{make_token(3), 0xffffffffffffull, 1u << 20, 1700000000123456789ll};
  else if constexpr (std::is_same_v<M, Attach>) return Attach{make_token(200), 63};
  else if constexpr (std::is_same_v<M, AttachOk>) return AttachOk{212992, 131072};
  else if constexpr (std::is_same_v<M, AttachChallenge>) {
    AttachChallenge c;
    for (std::size_t i = 0; i < c.nonce.size(); ++i) c.nonce[i] = static_cast<std::uint8_t>(0xa0 + i);
    return c;
  } else if constexpr (std::is_same_v<M, AttachProof>) {
    AttachProof p;
    for (std::size_t i = 0; i < p.mac.size(); ++i) p.mac[i] = static_cast<std::uint8_t>(0x11 * (i + 1));
    return p;
  }
  else if constexpr (std::is_same_v<M, Ack>) return Ack{0xfffffffffff00000ull, 4u << 20};
  else if constexpr (std::is_same_v<M, Commit>) return Commit{1073741824ull, 1, "0a3c1f2e"};
  else if constexpr (std::is_same_v<M, Result>)
    return Result{7, "0a3c1f2f", "checksum mismatch: sender 0a3c1f2e, receiver 0a3c1f2f"};
  else if constexpr (std::is_same_v<M, ErrorMsg>) return ErrorMsg{4, "data/x: refused: '..' would leave the export root"};
  else if constexpr (std::is_same_v<M, Ping>) return Ping{0x1122334455667788ull};
  else if constexpr (std::is_same_v<M, Pong>) return Pong{0x8877665544332211ull};
  else if constexpr (std::is_same_v<M, Stats>) return Stats{{figures(0), figures(1), figures(63)}};
  else if constexpr (std::is_same_v<M, Sum>) return Sum{"data/run 7/f.root", 2, 0xfedcba98765ull};
  else if constexpr (std::is_same_v<M, SumOk>) return SumOk{0x123456789abcull, "0a3c1f2e"};
  else if constexpr (std::is_same_v<M, SetAttributes>) return SetAttributes{"data/f.root", 0640, -1234567890123456789ll};
  else if constexpr (std::is_same_v<M, Stat>) return Stat{"atlas/run42.root"};
  else if constexpr (std::is_same_v<M, StatOk>)
    return StatOk{ListEntry{EntryKind::directory, 0x0102030405060708ull, 0750, -1234567890123456789ll, "x"}};
  else if constexpr (std::is_same_v<M, Rename>) return Rename{"atlas/a.root", "atlas/b.root", 1};
  else if constexpr (std::is_same_v<M, RemoveTree>) return RemoveTree{"atlas/old", 1};
  else if constexpr (std::is_same_v<M, ListChildren>) return ListChildren{"atlas/2026"};
  else if constexpr (std::is_same_v<M, Queued>) return Queued{3, 7, 12};
  else if constexpr (std::is_same_v<M, Have>) return Have{1, 0x01020304u, {0xff, 0x00, 0xa5, 0x5a, 0x01}};
  else if constexpr (std::is_same_v<M, Info>)
    return Info{{{"tcp_congestion_control", "bbr"}, {"net.core.rmem_max", "4194304"}, {"active", ""}}};
  else if constexpr (std::is_same_v<M, Remove>) return Remove{"data/old run/f.root"};
  else if constexpr (std::is_same_v<M, List>) return List{"data/run-17"};
  else if constexpr (std::is_same_v<M, Mkdir>) return Mkdir{"data/new dir"};
  else if constexpr (std::is_same_v<M, Listing>)
    return Listing{1,
                   {ListEntry{EntryKind::directory, 0x0102030405060708ull, 0755, -1234567890123456789ll, "sub/dir"},
                    ListEntry{EntryKind::file, 42, 0640, 1700000000123456789ll, "sub/f.root"}}};
  else if constexpr (std::is_same_v<M, Auth>) return Auth{"0123456789abcdef0123456789abcdef"};
  else if constexpr (std::is_same_v<M, AuthOk>) return AuthOk{"alice", right_read | right_write};
  else if constexpr (std::is_same_v<M, TpcGrantRequest>)
    return TpcGrantRequest{Direction::get, open_overwrite, 0x123456789ull, "atlas/run42.root"};
  else if constexpr (std::is_same_v<M, TpcGrant>) return TpcGrant{std::string(64, 'a'), 60000};
  else if constexpr (std::is_same_v<M, TpcStart>)
    return TpcStart{CopyMode::push, 2, open_overwrite | open_sync, 8, 4u << 20, 500, 9000, "atlas/x.root",
                    "pxfer://se02:7777/atlas/y.root", std::string(64, 'b'), "sha256:" + std::string(64, 'f')};
  else if constexpr (std::is_same_v<M, TpcProgress>) return TpcProgress{0x0102030405ull, 0x0203040506ull, {figures(0), figures(5)}};
  else if constexpr (std::is_same_v<M, TpcDone>)
    return TpcDone{0x0102030405ull, 77, 1500, 8, 4u << 20, 1, "0a3c1f2e", 3, false, "", false, 0, 0};
  else if constexpr (std::is_same_v<M, PutSmall>)
    return PutSmall{0x01020304u, open_overwrite | open_sync, 2, "atlas/small/f 1.root", "0a3c1f2e", -1234567890123456789ll,
                    make_token(9), {0x00, 0xff, 0x5a}};
  else if constexpr (std::is_same_v<M, PutSmallOk>) return PutSmallOk{0x05060708u, 9, "0a3c1f2f", "exists"};
  else if constexpr (std::is_same_v<M, GetSmall>) return GetSmall{0x0a0b0c0du, 1, "atlas/small/f 2.root"};
  else if constexpr (std::is_same_v<M, GetSmallOk>)
    return GetSmallOk{0x11223344u, 3, 1, 0x0102030405ull, -1234567890123456789ll, "0a3c1f2e", "gone", {0x01, 0x02}};
  else if constexpr (std::is_same_v<M, SmallChannelOk>) return SmallChannelOk{make_token(4)};
  else if constexpr (std::is_same_v<M, SmallData>) {
    SmallData d{0x0a0b0c0du, {}, {0x10, 0x20, 0x30}};
    for (std::size_t i = 0; i < d.tag.size(); ++i) d.tag[i] = static_cast<std::uint8_t>(0xa0 + i);
    return d;
  } else if constexpr (std::is_same_v<M, StreamOpen>) return StreamOpen{StreamMode::write, open_overwrite | open_sync, "atlas/f 3.root"};
  else if constexpr (std::is_same_v<M, StreamOpenOk>) return StreamOpenOk{0x01020304u, 0x0102030405ull, -1234567890123456789ll};
  else if constexpr (std::is_same_v<M, StreamRead>) return StreamRead{7, 0x0102030405ull, max_stream_chunk};
  else if constexpr (std::is_same_v<M, StreamData>) return StreamData{7, 0x0102030405ull, 1, {0x01, 0x02, 0x03}};
  else if constexpr (std::is_same_v<M, StreamWrite>) return StreamWrite{9, 0x0a0b0c0dull, {0xff, 0x00}};
  else if constexpr (std::is_same_v<M, StreamClose>) return StreamClose{9};
  else if constexpr (std::is_same_v<M, End> || std::is_same_v<M, Done> || std::is_same_v<M, InfoRequest> ||
                       std::is_same_v<M, SmallChannel> || std::is_same_v<M, Retire>)
    return M{};  // no fields
  else static_assert(always_false<M>, "give the new message a sample with every field set");
}

// One message of every alternative of Message, in variant order.
std::vector<Message> sample_messages() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    return std::vector<Message>{sample_of<std::variant_alternative_t<I, Message>>()...};
  }(std::make_index_sequence<std::variant_size_v<Message>>());
}

// Messages whose string and count fields sit exactly on their limits (must still decode).
std::vector<Message> boundary_messages() {
  Open o = valid_open();
  o.path = std::string(max_path_length, 'p');
  o.congestion = std::string(max_congestion_name, 'c');
  Stats full;
  for (std::uint16_t i = 0; i < max_streams; ++i) full.streams.push_back(figures(i));
  Open smallest;  // every field at its lowest valid value
  smallest.streams = 1;
  smallest.block_size = min_block_size;
  Open largest = valid_open();
  largest.streams = max_streams;
  largest.block_size = max_block_size;
  largest.size = std::numeric_limits<std::uint64_t>::max();
  return {
      Hello{1, 1, 0, std::string(256, 'a')},
      HelloOk{1, 0, std::string(256, 'b'), min_block_size},
      o,
      Commit{0, 2, std::string(128, 'f')},
      Result{0, std::string(128, 'e'), std::string(max_text_length, 'm')},
      ErrorMsg{1, std::string(max_text_length, 'x')},
      Stats{},
      full,
      Hello{0, 0, 0, ""},
      smallest,
      largest,
  };
}

// Header + payload as it would come off the wire.
Bytes frame_of(std::uint16_t type, const Bytes& payload, std::uint16_t flags = 0) {
  Bytes out;
  detail::Writer w(out);
  w.u32(static_cast<std::uint32_t>(payload.size()));
  w.u16(type);
  w.u16(flags);
  w.bytes(payload);
  return out;
}
Bytes frame_of(FrameType type, const Bytes& payload) { return frame_of(static_cast<std::uint16_t>(type), payload); }

template <class Fill>
Bytes payload_of(Fill fill) {
  Bytes out;
  detail::Writer w(out);
  fill(w);
  return out;
}

Bytes payload_of(const Message& m) {
  Bytes frame = encode(m);
  return Bytes(frame.begin() + header_size, frame.end());
}

// The receiver's path for a non-block frame: header first, then the payload.
DecodeStatus decode_frame(std::span<const std::uint8_t> bytes, Message& out) {
  FrameHeader h;
  DecodeStatus st = decode_header(bytes, h);
  if (st != DecodeStatus::ok) return st;
  return decode_message(h, bytes.subspan(header_size), out);
}
DecodeStatus decode_frame(const Bytes& bytes) {
  Message out;
  return decode_frame(bytes, out);
}

std::uint16_t type_number(FrameType t) { return static_cast<std::uint16_t>(t); }

// Every frame type the codec knows: one per message alternative, plus BLOCK.
const std::vector<FrameType>& all_types() {
  static const std::vector<FrameType> types = [] {
    std::vector<FrameType> out{FrameType::block};
    for (const auto& m : sample_messages()) out.push_back(type_of(m));
    std::sort(out.begin(), out.end());
    return out;
  }();
  return types;
}

bool is_known_type(FrameType t) {
  const auto& types = all_types();
  return std::find(types.begin(), types.end(), t) != types.end();
}

// ---------------------------------------------------------------------------------------------
// Round trips

TEST(WireCodec, EveryAlternativeHasItsOwnFrameType) {
  std::set<FrameType> types;
  for (const auto& m : sample_messages()) types.insert(type_of(m));
  EXPECT_EQ(types.size(), std::variant_size_v<Message>);
  EXPECT_EQ(types.count(FrameType::block), 0u);  // blocks are not messages
}

OpenOk open_ok_with_admission();

// The samples really exercise every field: a codec that dropped or swapped one could otherwise
// round-trip a default value and pass. OPEN_OK's sample is its short form (no admission
// extension); its long form is checked here and round-tripped below.
TEST(WireCodec, EverySampleSetsEveryField) {
  for (const auto& m : sample_messages()) {
    SCOPED_TRACE(type_name(type_of(m)));
    std::visit(
        [](const auto& x) {
          using M = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<M, OpenOk>) {
            EXPECT_EQ(fields_at_default(open_ok_with_admission()), 0u);
          } else {
            EXPECT_EQ(fields_at_default(x), 0u);
          }
        },
        m);
  }
}

TEST(WireCodec, EveryMessageRoundTrips) {
  auto messages = sample_messages();
  auto boundary = boundary_messages();
  messages.insert(messages.end(), boundary.begin(), boundary.end());
  messages.push_back(open_ok_with_admission());
  for (const auto& m : messages) {
    SCOPED_TRACE(type_name(type_of(m)));
    Bytes bytes = encode(m);
    ASSERT_GE(bytes.size(), header_size);

    FrameHeader h;
    ASSERT_EQ(decode_header(bytes, h), DecodeStatus::ok);
    EXPECT_EQ(h.type, type_of(m));
    EXPECT_EQ(h.flags, 0);
    EXPECT_EQ(h.length, bytes.size() - header_size);
    EXPECT_LE(h.length, max_payload(h.type));

    Message out;
    ASSERT_EQ(decode_message(h, std::span(bytes).subspan(header_size), out), DecodeStatus::ok);
    EXPECT_TRUE(same_message(m, out));
    EXPECT_EQ(type_of(out), type_of(m));
    EXPECT_EQ(encode(out), bytes);  // the encoding is canonical
  }
}

// A gathering write sends the head encode_append_head wrote and then the bytes it left out: for
// every message that is byte for byte the frame encode() makes, and only a small file's data
// (the byte string that ends PUT_SMALL, GET_SMALL_OK and SMALL_DATA) is ever left out.
TEST(WireCodec, HeadAndLeftOutBytesAreTheWholeFrame) {
  auto messages = sample_messages();
  auto boundary = boundary_messages();
  messages.insert(messages.end(), boundary.begin(), boundary.end());
  std::size_t left_out = 0;
  for (const auto& m : messages) {
    SCOPED_TRACE(type_name(type_of(m)));
    Bytes head{0xAA, 0xBB};  // appended after what is there
    const std::span<const std::uint8_t> tail = encode_append_head(m, head);
    Bytes whole(head.begin() + 2, head.end());
    whole.insert(whole.end(), tail.begin(), tail.end());
    EXPECT_EQ(whole, encode(m));
    if (!tail.empty()) {
      ++left_out;
      const FrameType t = type_of(m);
      EXPECT_TRUE(t == FrameType::put_small || t == FrameType::get_small_ok || t == FrameType::small_data ||
                  t == FrameType::stream_data || t == FrameType::stream_write);
    }
  }
  EXPECT_GE(left_out, 3u);
}

TEST(WireCodec, FieldsAreBigEndianAtTheDocumentedOffsets) {
  Bytes ack = encode(Ack{0x0102030405060708ull, 0x0a0b0c0d});
  EXPECT_EQ(ack, (Bytes{0, 0, 0, 12, 0, 8, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d}));
  Bytes hello = encode(Hello{1, 1, 1, "ab"});
  EXPECT_EQ(hello, (Bytes{0, 0, 0, 20, 0, 1, 0, 0, 'P', 'X', 'F', 'R', 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 'a', 'b'}));
  EXPECT_EQ(encode(End{}), (Bytes{0, 0, 0, 0, 0, 9, 0, 0}));
}

TEST(WireCodec, StatsRoundTripsEveryFigure) {
  Stats s{{figures(5), figures(9)}};
  Message out;
  ASSERT_EQ(decode_frame(encode(s), out), DecodeStatus::ok);
  ASSERT_TRUE(std::holds_alternative<Stats>(out));
  EXPECT_EQ(std::get<Stats>(out).streams, s.streams);
}

TEST(WireCodec, OpenRoundTripsEveryField) {
  Open o = valid_open();
  Message out;
  ASSERT_EQ(decode_frame(encode(o), out), DecodeStatus::ok);
  const auto& d = std::get<Open>(out);
  EXPECT_EQ(d.direction, Direction::put);
  EXPECT_EQ(d.checksum, 2);
  EXPECT_EQ(d.flags, open_overwrite | open_want_stats);
  EXPECT_EQ(d.streams, 8);
  EXPECT_EQ(d.block_size, 4u << 20);
  EXPECT_EQ(d.window, 16u << 20);
  EXPECT_EQ(d.size, 0x0000123456789abcull);
  EXPECT_EQ(d.path, "data/run-17/file.bin");
  EXPECT_EQ(d.congestion, "bbr");
  EXPECT_EQ(d.window_clamp, 8u << 20);
  EXPECT_EQ(d.stats_interval_ms, 1000u);
}

TEST(WireCodec, BlockHeaderRoundTrips) {
  const std::vector<BlockHeader> blocks = {
      {0, 1, 0, 1},
      {4096, 4096, 0, 4096},
      {std::uint64_t{1} << 40, max_block_size, 0, max_block_size},
      {12345 * std::uint64_t{min_block_size}, 4096, block_compressed_zstd, 100},
      {0, max_block_size, block_compressed_zstd, 1},
      {8192, 4096, block_copy, 4096},                       // a second copy (cap_block_copies)
      {8192, 4096, block_copy | block_compressed_zstd, 99},
      {std::numeric_limits<std::uint64_t>::max() - 4096, 4096, 0, 4096},  // last byte at 2^64-1
  };
  for (const auto& b : blocks) {
    SCOPED_TRACE(b.offset);
    auto bytes = encode_block_header(b);
    FrameHeader h;
    ASSERT_EQ(decode_header(bytes, h), DecodeStatus::ok);
    EXPECT_EQ(h.type, FrameType::block);
    EXPECT_EQ(h.length, block_header_size + block_tag_size + b.wire_length);
    BlockHeader out;
    ASSERT_EQ(decode_block_header(h, std::span(bytes).subspan(header_size), out), DecodeStatus::ok);
    EXPECT_EQ(out.offset, b.offset);
    EXPECT_EQ(out.raw_length, b.raw_length);
    EXPECT_EQ(out.flags, b.flags);
    EXPECT_EQ(out.wire_length, b.wire_length);
  }
}

// ---------------------------------------------------------------------------------------------
// Truncation

TEST(WireCodec, EveryCutOfEveryMessageIsTruncated) {
  auto messages = sample_messages();
  auto boundary = boundary_messages();
  messages.insert(messages.end(), boundary.begin(), boundary.end());
  for (const auto& m : messages) {
    SCOPED_TRACE(type_name(type_of(m)));
    const Bytes bytes = encode(m);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      SCOPED_TRACE(cut);
      // The first `cut` bytes of the frame as they arrived (the header still claims the full
      // length): a copy, so reading past it is caught by sanitizers.
      Bytes prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
      Message out;
      EXPECT_EQ(decode_frame(prefix, out), DecodeStatus::truncated);
      if (cut < header_size) continue;
      // The same prefix framed as a whole, shorter message: the fields run out.
      Bytes shorter = frame_of(type_number(type_of(m)), Bytes(prefix.begin() + header_size, prefix.end()));
      EXPECT_EQ(decode_frame(shorter, out), DecodeStatus::truncated);
    }
  }
}

TEST(WireCodec, EveryCutOfABlockHeaderIsTruncated) {
  auto bytes = encode_block_header(BlockHeader{8192, 4096, 0, 4096});
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    SCOPED_TRACE(cut);
    Bytes prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    FrameHeader h;
    DecodeStatus st = decode_header(prefix, h);
    if (cut < header_size) {
      EXPECT_EQ(st, DecodeStatus::truncated);
      continue;
    }
    ASSERT_EQ(st, DecodeStatus::ok);
    BlockHeader out;
    EXPECT_EQ(decode_block_header(h, std::span(prefix).subspan(header_size), out), DecodeStatus::truncated);
  }
}

TEST(WireCodec, BlockFrameShorterThanItsHeaderAndTagIsTruncated) {
  for (std::uint32_t length = 0; length < block_header_size + block_tag_size; ++length) {
    FrameHeader h{FrameType::block, 0, length};
    Bytes payload(32, 0);
    BlockHeader out;
    EXPECT_EQ(decode_block_header(h, payload, out), DecodeStatus::truncated) << length;
  }
}

// ---------------------------------------------------------------------------------------------
// Header checks: type and per-type length limit, from the 8 header bytes alone

TEST(WireCodec, UnknownFrameTypes) {
  const auto highest = type_number(all_types().back());
  for (std::uint16_t t : {std::uint16_t{0}, static_cast<std::uint16_t>(highest + 1),
                          static_cast<std::uint16_t>(highest + 2), std::uint16_t{255}, std::uint16_t{256},
                          std::uint16_t{0x7fff}, std::uint16_t{0xffff}}) {
    FrameHeader h;
    EXPECT_EQ(decode_header(frame_of(t, {}), h), DecodeStatus::unknown_type) << t;
    EXPECT_EQ(max_payload(static_cast<FrameType>(t)), 0u);
    EXPECT_STREQ(type_name(static_cast<FrameType>(t)), "UNKNOWN");
  }
  // A hand-made header of an unknown type is refused by decode_message too.
  Message out;
  Bytes empty;
  EXPECT_EQ(decode_message(FrameHeader{static_cast<FrameType>(99), 0, 0}, empty, out), DecodeStatus::unknown_type);
}

TEST(WireCodec, PayloadLimitsPerType) {
  EXPECT_EQ(max_payload(FrameType::block), block_header_size + block_tag_size + max_block_size);
  EXPECT_EQ(max_payload(FrameType::attach_challenge), attach_nonce_size);
  EXPECT_EQ(max_payload(FrameType::attach_proof), attach_proof_size);
  EXPECT_EQ(max_payload(FrameType::ack), 12u);
  EXPECT_EQ(max_payload(FrameType::end), 0u);
  EXPECT_EQ(max_payload(FrameType::ping), 8u);
  EXPECT_EQ(max_payload(FrameType::pong), 8u);
  EXPECT_EQ(max_payload(FrameType::attach), token_size + 2 + attach_nonce_size + attach_proof_size);  // with its proof
  EXPECT_EQ(max_payload(FrameType::attach_ok), 8u);
  for (FrameType t : {FrameType::hello, FrameType::hello_ok, FrameType::open, FrameType::open_ok, FrameType::commit,
                      FrameType::result, FrameType::error, FrameType::stats})
    EXPECT_EQ(max_payload(t), max_control_payload) << type_name(t);
  // A small file's frames hold a whole file beside their control fields.
  for (FrameType t : {FrameType::put_small, FrameType::get_small_ok})
    EXPECT_EQ(max_payload(t), max_control_payload + max_small_file) << type_name(t);
  // SMALL_DATA on the small-file channel: id, tag, and a whole small file with its length.
  EXPECT_EQ(max_payload(FrameType::small_data), 4 + block_tag_size + 4 + max_small_file);
  // Fixed-size messages fill their limit exactly (ATTACH with its tail, cap_attach_proven).
  for (auto m : sample_messages()) {
    if (auto* attach = std::get_if<Attach>(&m)) attach->has_proof = true;
    FrameType t = type_of(m);
    const bool carries_bytes = t == FrameType::small_data || t == FrameType::stream_data || t == FrameType::stream_write;
    if (max_payload(t) != max_control_payload && max_payload(t) != max_small_payload && !carries_bytes) {
      EXPECT_EQ(encode(m).size() - header_size, max_payload(t)) << type_name(t);
    }
  }
}

Bytes header_bytes(FrameType type, std::uint32_t length, std::uint16_t flags = 0) {
  Bytes out;
  detail::Writer w(out);
  w.u32(length);
  w.u16(type_number(type));
  w.u16(flags);
  return out;
}

TEST(WireCodec, LengthOverTheTypesLimitIsTooLong) {
  for (FrameType t : all_types()) {
    SCOPED_TRACE(type_name(t));
    const std::uint32_t limit = max_payload(t);
    FrameHeader h;
    // Exactly 8 bytes: the verdict needs nothing past the header.
    ASSERT_EQ(decode_header(header_bytes(t, limit, 0xabcd), h), DecodeStatus::ok);
    EXPECT_EQ(h.type, t);
    EXPECT_EQ(h.length, limit);
    EXPECT_EQ(h.flags, 0xabcd);
    EXPECT_EQ(decode_header(header_bytes(t, limit + 1), h), DecodeStatus::too_long);
    EXPECT_EQ(decode_header(header_bytes(t, 0x80000000u), h), DecodeStatus::too_long);
    EXPECT_EQ(decode_header(header_bytes(t, 0xffffffffu), h), DecodeStatus::too_long);  // "4 GiB"
  }
}

TEST(WireCodec, ControlFrameClaimingFourGibIsRefusedFromTheHeaderAlone) {
  const Bytes header = {0xff, 0xff, 0xff, 0xff, 0x00, 0x03, 0x00, 0x00};  // OPEN, 4 GiB - 1
  FrameHeader h{FrameType::ping, 7, 7};
  EXPECT_EQ(decode_header(header, h), DecodeStatus::too_long);
  // The output is left alone on failure, so a caller can never allocate from it.
  EXPECT_EQ(h.type, FrameType::ping);
  EXPECT_EQ(h.length, 7u);
}

TEST(WireCodec, ShortHeaderIsTruncated) {
  Bytes header = header_bytes(FrameType::ping, 8);
  for (std::size_t n = 0; n < header_size; ++n) {
    FrameHeader h;
    EXPECT_EQ(decode_header(std::span(header).first(n), h), DecodeStatus::truncated) << n;
  }
}

// ---------------------------------------------------------------------------------------------
// Per-field limits, trailing bytes, out-of-range values

Bytes long_string(std::size_t n) { return Bytes(n, 'z'); }

TEST(WireCodec, StringOverItsFieldLimitIsTooLong) {
  auto str = [](detail::Writer& w, std::size_t n) {
    w.u16(static_cast<std::uint16_t>(n));
    w.bytes(long_string(n));
  };
  struct Case {
    const char* name;
    FrameType type;
    Bytes payload;
  };
  const std::vector<Case> cases = {
      {"hello agent", FrameType::hello, payload_of([&](detail::Writer& w) {
         w.u32(magic); w.u16(1); w.u16(1); w.u64(0); str(w, 257);
       })},
      {"hello_ok agent", FrameType::hello_ok, payload_of([&](detail::Writer& w) {
         w.u16(1); w.u64(0); str(w, 257); w.u32(max_block_size);
       })},
      {"open path", FrameType::open, payload_of([&](detail::Writer& w) {
         w.u8(1); w.u8(0); w.u32(0); w.u16(1); w.u32(min_block_size); w.u32(0); w.u64(0);
         str(w, max_path_length + 1); str(w, 0); w.u32(0); w.u32(0);
       })},
      {"open congestion", FrameType::open, payload_of([&](detail::Writer& w) {
         w.u8(1); w.u8(0); w.u32(0); w.u16(1); w.u32(min_block_size); w.u32(0); w.u64(0);
         str(w, 1); str(w, max_congestion_name + 1); w.u32(0); w.u32(0);
       })},
      {"commit value", FrameType::commit, payload_of([&](detail::Writer& w) {
         w.u64(0); w.u8(1); str(w, 129);
       })},
      {"result value", FrameType::result, payload_of([&](detail::Writer& w) {
         w.u16(0); str(w, 129); str(w, 0);
       })},
      {"result message", FrameType::result, payload_of([&](detail::Writer& w) {
         w.u16(0); str(w, 8); str(w, max_text_length + 1);
       })},
      {"error message", FrameType::error, payload_of([&](detail::Writer& w) {
         w.u16(1); str(w, max_text_length + 1);
       })},
      // The length alone decides: 65535 bytes announced and none sent is too long, not truncated.
      {"error message, length only", FrameType::error, payload_of([&](detail::Writer& w) {
         w.u16(1); w.u16(0xffff);
       })},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(decode_frame(frame_of(c.type, c.payload)), DecodeStatus::too_long) << c.name;
  }
}

TEST(WireCodec, PathOverItsLimitIsNeverSentAsADifferentPath) {
  // Regression guard: the encoder once cut over-long strings to their limit, so a long path
  // arrived as a valid frame naming a different file. encode() now refuses it (Error usage).
  Open o = valid_open();
  o.path = std::string(max_path_length - 8, 'd') + "/file.bin-long-name";
  ASSERT_GT(o.path.size(), max_path_length);
  Bytes bytes;
  try {
    bytes = encode(o);
  } catch (const std::exception&) {
    return;  // refusing to encode it is a correct answer
  }
  Message out;
  if (decode_frame(bytes, out) != DecodeStatus::ok) return;  // so is a frame the peer refuses
  const std::string& got = std::get<Open>(out).path;
  const auto tail = [](const std::string& p) { return "..." + p.substr(p.size() > 24 ? p.size() - 24 : 0); };
  EXPECT_TRUE(got == o.path) << "a " << o.path.size() << "-byte path arrived as " << got.size() << " bytes: "
                             << tail(got) << " instead of " << tail(o.path);
}

TEST(WireCodec, StatsWithMoreThanMaxStreamsIsTooLong) {
  Stats s;
  for (std::uint16_t i = 0; i <= max_streams; ++i) s.streams.push_back(figures(i));
  // The encoder refuses to build it (as it refuses an over-long string)...
  EXPECT_THROW(encode(s), pxfer::Error);
  // ...and a peer's hand-made frame with 65 complete entries is refused by the decoder.
  auto over = payload_of([](detail::Writer& w) {
    w.u16(max_streams + 1);
    for (unsigned i = 0; i <= max_streams; ++i) {
      w.u16(static_cast<std::uint16_t>(i));
      w.u64(1);
      for (int f = 0; f < 6; ++f) w.u32(1);
      w.u64(1);
    }
  });
  EXPECT_EQ(decode_frame(frame_of(FrameType::stats, over)), DecodeStatus::too_long);
  // Only the count: refused before it is used to size anything.
  EXPECT_EQ(decode_frame(frame_of(FrameType::stats, payload_of([](detail::Writer& w) { w.u16(0xffff); }))),
            DecodeStatus::too_long);
}

// OPEN_OK with its cap_admission extension (granted streams and the server's load) and its
// cap_sender_congestion one (the server's data sockets' congestion control).
OpenOk open_ok_with_admission() {
  OpenOk ok{make_token(3), 0xffffffffffffull, 1u << 20, 1700000000123456789ll};
  ok.has_admission = true;
  ok.streams = 4;
  ok.active = 7;
  ok.queued = 0x01020304;
  ok.max_active = 8;
  ok.has_congestion = true;
  ok.congestion = "bbr";
  return ok;
}

TEST(WireCodec, TrailingBytesAfterEveryMessage) {
  for (Message m : sample_messages()) {
    // A byte after OPEN_OK's short form starts its cap_admission extension: the trailing-bytes
    // rule applies after the extension.
    if (std::holds_alternative<OpenOk>(m)) m = open_ok_with_admission();
    // Likewise OPEN's transfer id (cap_heartbeat).
    if (auto* open = std::get_if<Open>(&m)) {
      open->has_transfer_id = true;
      open->transfer_id[15] = 0x5a;
    }
    // And TPC_START's -p auto tail (cap_tpc_auto_streams), TPC_DONE's two (cap_tpc_end_counts).
    if (auto* start = std::get_if<TpcStart>(&m)) start->has_auto = true;
    if (auto* done = std::get_if<TpcDone>(&m)) done->has_choice = done->has_end_counts = true;
    if (auto* attach = std::get_if<Attach>(&m)) attach->has_proof = true;  // cap_attach_proven
    SCOPED_TRACE(type_name(type_of(m)));
    Bytes payload = payload_of(m);
    payload.push_back(0);
    FrameHeader h{type_of(m), 0, static_cast<std::uint32_t>(payload.size())};
    Message out;
    EXPECT_EQ(decode_message(h, payload, out), DecodeStatus::trailing_bytes);
    // Where the type's limit leaves room, the same holds for the whole frame off the wire.
    if (payload.size() <= max_payload(type_of(m)))
      EXPECT_EQ(decode_frame(frame_of(type_of(m), payload)), DecodeStatus::trailing_bytes);
    else
      EXPECT_EQ(decode_frame(frame_of(type_of(m), payload)), DecodeStatus::too_long);
  }
}

// OPEN's transfer id (cap_heartbeat) is an optional trailing field: absent for an older client,
// whole when present, truncated when cut short.
TEST(WireCodec, OpenTransferIdRoundTripsAndIsOptional) {
  Open with;
  with.path = "f.bin";
  with.block_size = 1u << 20;
  with.has_transfer_id = true;
  for (std::size_t i = 0; i < with.transfer_id.size(); ++i) with.transfer_id[i] = static_cast<std::uint8_t>(i * 7 + 1);
  Message out;
  Bytes bytes = encode(with);
  ASSERT_EQ(decode_frame(bytes, out), DecodeStatus::ok);
  EXPECT_TRUE(std::get<Open>(out).has_transfer_id);
  EXPECT_EQ(std::get<Open>(out).transfer_id, with.transfer_id);
  Open without = with;
  without.has_transfer_id = false;
  ASSERT_EQ(decode_frame(encode(without), out), DecodeStatus::ok);
  EXPECT_FALSE(std::get<Open>(out).has_transfer_id);
  Bytes payload = payload_of(Message(with));
  payload.pop_back();
  FrameHeader h{FrameType::open, 0, static_cast<std::uint32_t>(payload.size())};
  EXPECT_EQ(decode_message(h, payload, out), DecodeStatus::truncated);
}

TEST(WireCodec, PayloadBeyondHeaderLengthIsIgnored) {
  // The next frame's bytes may follow in the same buffer: decode_message reads only `length`.
  Bytes bytes = encode(Ping{42});
  Bytes next = encode(Pong{43});
  bytes.insert(bytes.end(), next.begin(), next.end());
  Message out;
  ASSERT_EQ(decode_frame(bytes, out), DecodeStatus::ok);
  EXPECT_EQ(std::get<Ping>(out).nonce, 42u);
}

TEST(WireCodec, HelloWithWrongMagicIsBadField) {
  Bytes bytes = encode(Hello{});
  for (std::size_t i = header_size; i < header_size + 4; ++i) {
    Bytes bad = bytes;
    bad[i] ^= 0x20;
    EXPECT_EQ(decode_frame(bad), DecodeStatus::bad_field) << i;
  }
  Bytes zero = bytes;
  std::fill(zero.begin() + header_size, zero.begin() + header_size + 4, 0);
  EXPECT_EQ(decode_frame(zero), DecodeStatus::bad_field);
}

TEST(WireCodec, OpenWithOutOfRangeValuesIsBadField) {
  struct Case {
    const char* name;
    void (*change)(Open&);
  };
  const Case bad[] = {
      {"streams 0", [](Open& o) { o.streams = 0; }},
      {"streams 65", [](Open& o) { o.streams = max_streams + 1; }},
      {"streams 65535", [](Open& o) { o.streams = 0xffff; }},
      {"block 0", [](Open& o) { o.block_size = 0; }},
      {"block min-1", [](Open& o) { o.block_size = min_block_size - 1; }},
      {"block max+1", [](Open& o) { o.block_size = max_block_size + 1; }},
      {"block 4 GiB-1", [](Open& o) { o.block_size = 0xffffffffu; }},
      {"direction 0", [](Open& o) { o.direction = static_cast<Direction>(0); }},
      {"direction 3", [](Open& o) { o.direction = static_cast<Direction>(3); }},
      {"direction 255", [](Open& o) { o.direction = static_cast<Direction>(255); }},
  };
  for (const auto& c : bad) {
    Open o = valid_open();
    c.change(o);
    EXPECT_EQ(decode_frame(encode(o)), DecodeStatus::bad_field) << c.name;
  }
  const Case good[] = {
      {"streams 1", [](Open& o) { o.streams = 1; }},
      {"streams 64", [](Open& o) { o.streams = max_streams; }},
      {"block min", [](Open& o) { o.block_size = min_block_size; }},
      {"block max", [](Open& o) { o.block_size = max_block_size; }},
      {"direction get", [](Open& o) { o.direction = Direction::get; }},
  };
  for (const auto& c : good) {
    Open o = valid_open();
    c.change(o);
    EXPECT_EQ(decode_frame(encode(o)), DecodeStatus::ok) << c.name;
  }
}

DecodeStatus decode_block(const BlockHeader& b, BlockHeader& out) {
  auto bytes = encode_block_header(b);
  FrameHeader h;
  DecodeStatus st = decode_header(bytes, h);
  if (st != DecodeStatus::ok) return st;
  return decode_block_header(h, std::span(bytes).subspan(header_size), out);
}
DecodeStatus decode_block(const BlockHeader& b) {
  BlockHeader out;
  return decode_block(b, out);
}

TEST(WireCodec, BlockWithBadFieldsIsBadField) {
  EXPECT_EQ(decode_block({0, 0, 0, 0}), DecodeStatus::bad_field) << "raw_length 0";
  EXPECT_EQ(decode_block({0, 0, block_compressed_zstd, 10}), DecodeStatus::bad_field) << "raw_length 0, compressed";
  EXPECT_EQ(decode_block({0, max_block_size + 1, block_compressed_zstd, 10}), DecodeStatus::bad_field)
      << "raw_length over max_block_size";
  EXPECT_EQ(decode_block({0, 4096, 1u << 2, 4096}), DecodeStatus::bad_field) << "unknown flag bit 2";
  EXPECT_EQ(decode_block({0, 4096, 1u << 31, 4096}), DecodeStatus::bad_field) << "unknown flag bit 31";
  EXPECT_EQ(decode_block({0, 4096, block_compressed_zstd | (1u << 5), 100}), DecodeStatus::bad_field)
      << "known and unknown flags";
  EXPECT_EQ(decode_block({0, 4096, 0, 4095}), DecodeStatus::bad_field) << "wire shorter, not compressed";
  EXPECT_EQ(decode_block({0, 4096, 0, 4097}), DecodeStatus::bad_field) << "wire longer, not compressed";
  EXPECT_EQ(decode_block({0, 4096, 0, 0}), DecodeStatus::bad_field) << "no data, not compressed";
  EXPECT_EQ(decode_block({std::numeric_limits<std::uint64_t>::max(), 1, 0, 1}), DecodeStatus::bad_field)
      << "offset + length overflows";
  EXPECT_EQ(decode_block({std::numeric_limits<std::uint64_t>::max() - 4095, 4097, 0, 4097}), DecodeStatus::bad_field)
      << "offset + length overflows by one";

  BlockHeader out;
  ASSERT_EQ(decode_block({0, 4096, block_compressed_zstd, 1000}, out), DecodeStatus::ok) << "compressed";
  EXPECT_EQ(out.wire_length, 1000u);
  EXPECT_EQ(out.raw_length, 4096u);
}

TEST(WireCodec, BlockAndMessageDecodersRefuseEachOthersFrames) {
  auto header_bytes = encode_block_header({0, 4096, block_compressed_zstd, 0});
  Bytes bytes(header_bytes.begin(), header_bytes.end());
  bytes.resize(bytes.size() + block_tag_size);  // the whole frame: 16 + 16 (the tag) bytes
  FrameHeader h;
  ASSERT_EQ(decode_header(bytes, h), DecodeStatus::ok);
  Message out;
  EXPECT_EQ(decode_message(h, std::span(bytes).subspan(header_size), out), DecodeStatus::bad_field);

  Bytes ack = encode(Ack{0, 4096});
  ASSERT_EQ(decode_header(ack, h), DecodeStatus::ok);
  Bytes padded(block_header_size, 0);
  BlockHeader b;
  EXPECT_EQ(decode_block_header(h, padded, b), DecodeStatus::bad_field);
}

TEST(WireCodec, NamesOfStatusesAndTypes) {
  EXPECT_STREQ(to_string(DecodeStatus::ok), "ok");
  for (auto st : {DecodeStatus::truncated, DecodeStatus::unknown_type, DecodeStatus::too_long, DecodeStatus::bad_field,
                  DecodeStatus::trailing_bytes})
    EXPECT_STRNE(to_string(st), "?");
  std::set<std::string> names;
  for (FrameType t : all_types()) names.insert(type_name(t));
  EXPECT_EQ(names.size(), all_types().size());
  EXPECT_EQ(names.count("UNKNOWN"), 0u);
  EXPECT_STREQ(type_name(FrameType::hello), "HELLO");
  EXPECT_STREQ(type_name(FrameType::block), "BLOCK");
}

// ---------------------------------------------------------------------------------------------
// Randomised: decode never crashes, and its verdicts agree with each other and with encode()

bool is_status(DecodeStatus st) {
  switch (st) {
    case DecodeStatus::ok:
    case DecodeStatus::truncated:
    case DecodeStatus::unknown_type:
    case DecodeStatus::too_long:
    case DecodeStatus::bad_field:
    case DecodeStatus::trailing_bytes: return true;
  }
  return false;
}

// Decodes `bytes` as a receiver would and checks every verdict for consistency.
void check_consistent(const Bytes& bytes) {
  FrameHeader h{};
  DecodeStatus hs = decode_header(bytes, h);
  ASSERT_TRUE(is_status(hs));
  if (bytes.size() < header_size) {
    ASSERT_EQ(hs, DecodeStatus::truncated);
    return;
  }
  if (hs != DecodeStatus::ok) {
    ASSERT_TRUE(hs == DecodeStatus::unknown_type || hs == DecodeStatus::too_long) << to_string(hs);
    return;
  }
  ASSERT_TRUE(is_known_type(h.type)) << type_number(h.type);
  ASSERT_LE(h.length, max_payload(h.type));
  std::span<const std::uint8_t> payload = std::span(bytes).subspan(header_size);

  if (h.type == FrameType::block) {
    BlockHeader b{};
    DecodeStatus st = decode_block_header(h, payload, b);
    ASSERT_TRUE(is_status(st));
    BlockHeader again{};
    ASSERT_EQ(decode_block_header(h, payload, again), st);
    if (h.length < block_header_size + block_tag_size || payload.size() < block_header_size) {
      ASSERT_EQ(st, DecodeStatus::truncated);
      return;
    }
    if (st != DecodeStatus::ok) {
      ASSERT_EQ(st, DecodeStatus::bad_field);
      return;
    }
    ASSERT_GT(b.raw_length, 0u);
    ASSERT_LE(b.raw_length, max_block_size);
    ASSERT_EQ(b.flags & ~std::uint32_t{block_compressed_zstd}, 0u);
    ASSERT_EQ(b.wire_length, h.length - block_header_size - block_tag_size);
    if (!(b.flags & block_compressed_zstd)) {
      ASSERT_EQ(b.wire_length, b.raw_length);
    }
    ASSERT_LE(b.offset, std::numeric_limits<std::uint64_t>::max() - b.raw_length);
    auto re = encode_block_header(b);  // identical but for the frame flags
    ASSERT_TRUE(std::equal(re.begin(), re.begin() + 6, bytes.begin()));
    ASSERT_TRUE(std::equal(re.begin() + header_size, re.end(), bytes.begin() + header_size));
    return;
  }

  Message out;
  DecodeStatus st = decode_message(h, payload, out);
  ASSERT_TRUE(is_status(st));
  Message again;
  ASSERT_EQ(decode_message(h, payload, again), st);
  if (payload.size() < h.length) {
    ASSERT_EQ(st, DecodeStatus::truncated);
    return;
  }
  ASSERT_NE(st, DecodeStatus::unknown_type);
  if (st != DecodeStatus::ok) return;
  ASSERT_EQ(type_of(out), h.type);
  ASSERT_TRUE(same_message(out, again));
  // A message that decodes re-encodes to exactly the bytes it came from.
  Bytes re = encode(out);
  ASSERT_EQ(re.size(), header_size + h.length);
  ASSERT_TRUE(std::equal(re.begin() + header_size, re.end(), payload.begin()));
}

TEST(WireCodecRandom, RandomBytesNeverCrashAndVerdictsAgree) {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> size(0, 160);
  const auto& types = all_types();
  for (int i = 0; i < 20000; ++i) {
    Bytes bytes(size(rng));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(byte(rng));
    // Half of them get a plausible header (known type, length = what follows), so the payload
    // decoders are reached rather than only the header check.
    if (i % 2 == 0 && bytes.size() >= header_size) {
      FrameType t = types[static_cast<std::size_t>(i / 2) % types.size()];
      Bytes h = header_bytes(t, static_cast<std::uint32_t>(bytes.size() - header_size), 0);
      std::copy(h.begin(), h.end(), bytes.begin());
    }
    SCOPED_TRACE(i);
    check_consistent(bytes);
    if (HasFatalFailure()) return;
  }
}

TEST(WireCodecRandom, SingleByteMutationsOfValidFramesNeverCrashAndVerdictsAgree) {
  std::vector<Bytes> corpus;
  for (const auto& m : sample_messages()) corpus.push_back(encode(m));
  for (const auto& m : boundary_messages()) corpus.push_back(encode(m));
  for (BlockHeader b : {BlockHeader{0, 64, 0, 64}, BlockHeader{4096, 4096, block_compressed_zstd, 16}}) {
    auto head = encode_block_header(b);
    Bytes frame(head.begin(), head.end());
    frame.resize(frame.size() + b.wire_length, 0x5a);
    corpus.push_back(frame);
  }
  for (const auto& f : corpus) check_consistent(f);

  std::mt19937 rng(20000);
  std::uniform_int_distribution<std::size_t> pick(0, corpus.size() - 1);
  std::uniform_int_distribution<int> delta(1, 255);
  int decoded_ok = 0;
  for (int i = 0; i < 20000; ++i) {
    Bytes bytes = corpus[pick(rng)];
    // Mutations land in the first 64 bytes most of the time, where the header and fixed
    // fields are; the rest anywhere.
    std::size_t span = i % 4 == 0 ? bytes.size() : std::min<std::size_t>(bytes.size(), 64);
    std::size_t pos = std::uniform_int_distribution<std::size_t>(0, span - 1)(rng);
    bytes[pos] = static_cast<std::uint8_t>(bytes[pos] + delta(rng));  // always a different value
    SCOPED_TRACE(i);
    check_consistent(bytes);
    if (HasFatalFailure()) return;
    Message out;
    FrameHeader h;
    if (decode_header(bytes, h) == DecodeStatus::ok && h.type != FrameType::block &&
        decode_message(h, std::span(bytes).subspan(header_size), out) == DecodeStatus::ok)
      ++decoded_ok;
  }
  // Mutated values in free fields (nonces, sizes, text) still decode; the test is not vacuous.
  EXPECT_GT(decoded_ok, 1000);
}

// The decoder that takes its payload leaves a small file's data where it was read (no copy, no move):
// the same message as the copying decoder, every field in place, for both small-file frames,
// and the same verdict on a bad one.
TEST(WireCodecSmallFiles, TheTakingDecoderMovesTheDataAndAgreesWithTheCopyingOne) {
  std::vector<std::uint8_t> bytes(70000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7);
  PutSmall put{9, open_sync, 2, "cms/store/f.root", std::string(64, 'e'), 123456789, make_token(3), Blob(bytes)};
  GetSmallOk get{11, 0, 0, bytes.size(), 42, "0a3c1f2e", "", Blob(bytes)};
  for (const Message& m : {Message(put), Message(get), Message(GetSmallOk{12, 0, 0, 3, 0, "x", "", {1, 2}})}) {
    Bytes frame = encode(m);
    FrameHeader header;
    ASSERT_EQ(decode_header(frame, header), DecodeStatus::ok);
    Message copied, taken;
    const auto copied_status = decode_message(header, std::span<const std::uint8_t>(frame).subspan(header_size), copied);
    Blob payload(std::span<const std::uint8_t>(frame).subspan(header_size));
    const std::uint8_t* storage = payload.data();
    const auto taken_status = decode_message(header, std::move(payload), taken);
    ASSERT_EQ(taken_status, copied_status);
    if (taken_status != DecodeStatus::ok) continue;  // the third: data shorter than its size
    EXPECT_EQ(encode(taken), encode(copied));
    const auto& data = std::holds_alternative<PutSmall>(taken) ? std::get<PutSmall>(taken).data : std::get<GetSmallOk>(taken).data;
    EXPECT_EQ(data, Blob(bytes));
    // In place: the fields in front of it are dropped, the bytes neither copied nor moved.
    EXPECT_EQ(data.data(), storage + header.length - data.size()) << "the data was copied or moved, not taken in place";
  }
}

}  // namespace
}  // namespace pxfer::wire

namespace pxfer::wire {
namespace {

TEST(WireCodec, OpenOkAdmissionExtensionRoundTripsAndIsOptional) {
  OpenOk ok = open_ok_with_admission();
  Message out;
  ASSERT_EQ(decode_frame(encode(ok), out), DecodeStatus::ok);
  const auto& back = std::get<OpenOk>(out);
  EXPECT_TRUE(back.has_admission);
  EXPECT_EQ(back.streams, 4u);
  EXPECT_EQ(back.active, 7u);
  EXPECT_EQ(back.queued, 0x01020304u);
  EXPECT_EQ(back.max_active, 8u);
  EXPECT_TRUE(back.has_congestion);
  EXPECT_EQ(back.congestion, "bbr");
  // Without the capability: token, size, block size, mtime (36 bytes), as an older client expects it.
  OpenOk plain{make_token(3), 42, 1u << 20};
  EXPECT_EQ(payload_of(Message(plain)).size(), token_size + 8 + 4 + 8);
  EXPECT_EQ(payload_of(Message(ok)).size(), token_size + 8 + 4 + 8 + 2 + 4 + 4 + 4 + 2 + 3);
  ASSERT_EQ(decode_frame(encode(plain), out), DecodeStatus::ok);
  EXPECT_FALSE(std::get<OpenOk>(out).has_admission);
  // Admission without cap_sender_congestion: what a server before it sends.
  OpenOk admitted = ok;
  admitted.has_congestion = false;
  EXPECT_EQ(payload_of(Message(admitted)).size(), token_size + 8 + 4 + 8 + 2 + 4 + 4 + 4);
  ASSERT_EQ(decode_frame(encode(admitted), out), DecodeStatus::ok);
  EXPECT_TRUE(std::get<OpenOk>(out).has_admission);
  EXPECT_FALSE(std::get<OpenOk>(out).has_congestion);
}

// -p auto in a third-party copy (cap_tpc_auto_streams): TPC_START's and TPC_DONE's tails are
// optional, so an older peer's frames still decode, and an auto flag other than 0 or 1 is refused.
TEST(WireCodec, TpcAutoStreamsTailsAreOptionalAndChecked) {
  TpcStart start{CopyMode::pull, 0, 0, 64, 4u << 20, 1000, 0, "a/x", "pxfer://h:7521/x", "g", "sha256:" + std::string(64, 'f')};
  Message out;
  ASSERT_EQ(decode_frame(encode(start), out), DecodeStatus::ok);
  EXPECT_FALSE(std::get<TpcStart>(out).has_auto);
  start.has_auto = true;
  start.auto_streams = 1;
  ASSERT_EQ(decode_frame(encode(start), out), DecodeStatus::ok);
  EXPECT_TRUE(std::get<TpcStart>(out).has_auto);
  EXPECT_EQ(std::get<TpcStart>(out).auto_streams, 1u);
  start.auto_streams = 2;
  EXPECT_EQ(decode_frame(encode(start), out), DecodeStatus::bad_field);
  TpcDone done{42, 0, 10, 4, 4u << 20, 1, "0a3c1f2e", 0, false, "", false, 0, 0};
  ASSERT_EQ(decode_frame(encode(done), out), DecodeStatus::ok);
  EXPECT_FALSE(std::get<TpcDone>(out).has_choice);
  done.has_choice = true;
  done.stream_choice = "auto 4 (the transfer ended before a measurement)";
  ASSERT_EQ(decode_frame(encode(done), out), DecodeStatus::ok);
  EXPECT_EQ(std::get<TpcDone>(out).stream_choice, done.stream_choice);
  // A cut inside a tail is truncated, never a shorter message read as whole.
  const Bytes full = payload_of(Message(done));
  const std::size_t base = payload_of(Message(TpcDone{42, 0, 10, 4, 4u << 20, 1, "0a3c1f2e", 0, false, "", false, 0, 0})).size();
  for (std::size_t cut = base + 1; cut < full.size(); ++cut)
    EXPECT_EQ(decode_frame(frame_of(FrameType::tpc_done, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut)))),
              DecodeStatus::truncated)
        << cut;
}

// ATTACH's proof in its tail (cap_attach_proven): an ATTACH without it, an older client's, still
// decodes as one that waits for ATTACH_CHALLENGE; the tail's nonce and MAC come back as sent; a cut
// inside the tail is truncated, never an ATTACH without a proof.
TEST(WireCodec, AttachCarriesItsProofInItsTail) {
  Attach attach{make_token(9), 5};
  Message out;
  ASSERT_EQ(decode_frame(encode(attach), out), DecodeStatus::ok);
  EXPECT_FALSE(std::get<Attach>(out).has_proof);
  const std::size_t base = payload_of(Message(attach)).size();
  attach.has_proof = true;
  for (std::size_t i = 0; i < attach.nonce.size(); ++i) attach.nonce[i] = static_cast<std::uint8_t>(0x40 + i);
  for (std::size_t i = 0; i < attach.mac.size(); ++i) attach.mac[i] = static_cast<std::uint8_t>(0x90 + i);
  ASSERT_EQ(decode_frame(encode(attach), out), DecodeStatus::ok);
  const auto& got = std::get<Attach>(out);
  EXPECT_TRUE(got.has_proof);
  EXPECT_EQ(got.token, attach.token);
  EXPECT_EQ(got.stream, 5);
  EXPECT_EQ(got.nonce, attach.nonce);
  EXPECT_EQ(got.mac, attach.mac);
  const Bytes full = payload_of(Message(attach));
  EXPECT_EQ(full.size(), max_payload(FrameType::attach));
  for (std::size_t cut = base + 1; cut < full.size(); ++cut)
    EXPECT_EQ(decode_frame(frame_of(FrameType::attach, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut)))),
              DecodeStatus::truncated)
        << cut;
}

// A copy's end of the file (cap_tpc_end_counts): TPC_DONE's second tail follows the first (an empty
// choice under a fixed count); a frame with the first tail only, an older server's, still decodes
// with no counts, and a cut inside the second is truncated.
TEST(WireCodec, TpcDoneEndCountsTailFollowsTheChoice) {
  TpcDone done{42, 0, 10, 4, 4u << 20, 1, "0a3c1f2e", 0, true, "auto 6 (RTT 50 ms)", false, 0, 0};
  Message out;
  ASSERT_EQ(decode_frame(encode(done), out), DecodeStatus::ok);
  EXPECT_FALSE(std::get<TpcDone>(out).has_end_counts);
  EXPECT_EQ(std::get<TpcDone>(out).block_copies, 0u);
  const std::size_t first_tail = payload_of(Message(done)).size();
  done.stream_choice = "";
  done.has_end_counts = true;
  done.block_copies = 3;
  done.streams_let_go = 1;
  ASSERT_EQ(decode_frame(encode(done), out), DecodeStatus::ok);
  const auto& got = std::get<TpcDone>(out);
  EXPECT_TRUE(got.has_choice);
  EXPECT_EQ(got.stream_choice, "");
  EXPECT_TRUE(got.has_end_counts);
  EXPECT_EQ(got.block_copies, 3u);
  EXPECT_EQ(got.streams_let_go, 1u);
  const Bytes full = payload_of(Message(done));
  const std::size_t base = first_tail - std::string("auto 6 (RTT 50 ms)").size();
  ASSERT_EQ(full.size(), base + 8);
  for (std::size_t cut = base + 1; cut < full.size(); ++cut)
    EXPECT_EQ(decode_frame(frame_of(FrameType::tpc_done, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut)))),
              DecodeStatus::truncated)
        << cut;
}

TEST(WireCodec, OpenOkAdmissionExtensionIsCheckedAndBounded) {
  Bytes full = payload_of(Message(open_ok_with_admission()));
  const std::size_t base = token_size + 8 + 4 + 8, admitted = base + 2 + 4 + 4 + 4;
  // Every cut inside an extension is truncated (only the exact short forms are whole).
  for (std::size_t cut = base + 1; cut < full.size(); ++cut)
    EXPECT_EQ(decode_frame(frame_of(FrameType::open_ok, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut)))),
              cut == admitted ? DecodeStatus::ok : DecodeStatus::truncated)
        << cut;
  // A congestion control's name is at most TCP_CA_NAME_MAX bytes.
  Bytes long_name(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(admitted));
  long_name.push_back(0);
  long_name.push_back(static_cast<std::uint8_t>(max_congestion_name + 1));
  long_name.insert(long_name.end(), max_congestion_name + 1, 'x');
  EXPECT_EQ(decode_frame(frame_of(FrameType::open_ok, long_name)), DecodeStatus::too_long);
  for (std::uint16_t streams : {std::uint16_t{0}, std::uint16_t(max_streams + 1)}) {
    OpenOk bad = open_ok_with_admission();
    bad.streams = streams;
    EXPECT_EQ(decode_frame(encode(bad)), DecodeStatus::bad_field) << streams;
  }
}

}  // namespace
}  // namespace pxfer::wire

namespace pxfer::wire {
namespace {

// SUM names a real checksum: "none" (0) and unknown algorithms are refused, not answered empty;
// adler32, sha256, md5, crc32 and sha1 (1-5) are asked for.
TEST(WireCodec, SumWithoutARealChecksumIsBadField) {
  for (std::uint8_t algo : {std::uint8_t{0}, std::uint8_t{6}, std::uint8_t{255}})
    EXPECT_EQ(decode_frame(encode(Sum{"f", algo, 1})), DecodeStatus::bad_field) << int(algo);
  for (std::uint8_t algo = 1; algo <= 5; ++algo)
    EXPECT_EQ(decode_frame(encode(Sum{"f", algo, 1})), DecodeStatus::ok) << int(algo);
}

}  // namespace
}  // namespace pxfer::wire

namespace pxfer::wire {
namespace {

// The namespace requests' flags are 0 or 1 and STAT_OK names a file or a directory: anything
// else is refused rather than read as "true" or as an unknown kind.
TEST(WireCodec, ThirdPartyCopyValuesOutOfRangeAreBadField) {
  auto verdict = [](const Message& m) { return decode_frame(encode(m)); };
  auto start = std::get<TpcStart>(sample_of<TpcStart>());
  EXPECT_EQ(verdict(start), DecodeStatus::ok);
  auto bad = start;
  bad.mode = static_cast<CopyMode>(3);
  EXPECT_EQ(verdict(bad), DecodeStatus::bad_field);
  bad = start;
  bad.streams = 0;
  EXPECT_EQ(verdict(bad), DecodeStatus::bad_field);
  bad = start;
  bad.block_size = 1;
  EXPECT_EQ(verdict(bad), DecodeStatus::bad_field);
  auto grant = std::get<TpcGrantRequest>(sample_of<TpcGrantRequest>());
  grant.direction = static_cast<Direction>(0);
  EXPECT_EQ(verdict(grant), DecodeStatus::bad_field);
  auto done = std::get<TpcDone>(sample_of<TpcDone>());
  done.checksum = 9;
  EXPECT_EQ(verdict(done), DecodeStatus::bad_field);
}

TEST(WireCodec, NamespaceFlagsAndKindsOutOfRangeAreBadField) {
  EXPECT_EQ(decode_frame(encode(Rename{"a", "b", 2})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(RemoveTree{"a", 2})), DecodeStatus::bad_field);
  StatOk odd{ListEntry{static_cast<EntryKind>(3), 0, 0, 0, ""}};
  EXPECT_EQ(decode_frame(encode(odd)), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(Rename{"a", "b", 1})), DecodeStatus::ok);
  EXPECT_EQ(decode_frame(encode(RemoveTree{"a", 0})), DecodeStatus::ok);
}

// Small-file frames (cap_small_files): a whole file of up to max_small_file bytes fits, one byte
// more is refused before anything is allocated, and an answer's data must match its size.
TEST(WireCodecSmallFiles, AWholeSmallFileRoundTripsAndOneByteMoreIsRefused) {
  PutSmall put{7, open_overwrite, 1, "atlas/f.root", "0a3c1f2e", 0, make_token(1), Blob(std::vector<std::uint8_t>(max_small_file, 0x5a))};
  Message out;
  ASSERT_EQ(decode_frame(encode(put), out), DecodeStatus::ok);
  EXPECT_EQ(std::get<PutSmall>(out).data.size(), max_small_file);
  put.data.resize(max_small_file + 1);
  EXPECT_THROW(encode(put), Error) << "the encoder never sends an over-long file";
  // The same frame made by hand: its header is within max_small_payload, its data length is not.
  put.data.resize(max_small_file);
  Bytes frame = encode(put);
  const std::size_t data_length_at = frame.size() - max_small_file - 4;
  frame[data_length_at + 3] = 0x01;  // max_small_file + 1
  frame.push_back(0);
  frame[3] = static_cast<std::uint8_t>(frame[3] + 1);  // the header's length by one more
  EXPECT_EQ(decode_frame(frame), DecodeStatus::too_long);
}

TEST(WireCodecSmallFiles, AHeaderOverTheSmallPayloadLimitIsTooLong) {
  Bytes header = {0, 0, 0, 0, 0, static_cast<std::uint8_t>(FrameType::put_small), 0, 0};
  const std::uint32_t length = max_small_payload + 1;
  for (int i = 0; i < 4; ++i) header[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(length >> (24 - 8 * i));
  FrameHeader h;
  EXPECT_EQ(decode_header(header, h), DecodeStatus::too_long);
}

TEST(WireCodecSmallFiles, AGetAnswerWhoseDataDiffersFromItsSizeIsBadField) {
  GetSmallOk ok{1, 0, 0, 3, 0, "0a3c1f2e", "", {1, 2}};
  EXPECT_EQ(decode_frame(encode(ok)), DecodeStatus::bad_field);
  ok.data = Blob{1, 2, 3};
  EXPECT_EQ(decode_frame(encode(ok)), DecodeStatus::ok);
  ok.data = Blob{};  // the bytes follow on the small-file channel; the client checks their size there
  EXPECT_EQ(decode_frame(encode(ok)), DecodeStatus::ok);
  ok.too_large = 2;
  EXPECT_EQ(decode_frame(encode(ok)), DecodeStatus::bad_field);
}

// Streamed I/O (cap_stream_io): a whole chunk of max_stream_chunk bytes decodes in both directions,
// one byte more is refused, and values out of range (a mode, flags on a read, handle 0, a read
// longer than a chunk, eof not 0 or 1) are bad fields.
TEST(WireCodecStreamIo, AWholeChunkRoundTripsAndOneByteMoreIsRefused) {
  const Blob chunk(std::vector<std::uint8_t>(max_stream_chunk, 0xa5));
  for (const Message& m : {Message(StreamWrite{3, 1ull << 40, chunk}), Message(StreamData{3, 5, 1, chunk})}) {
    SCOPED_TRACE(type_name(type_of(m)));
    Message out;
    ASSERT_EQ(decode_frame(encode(m), out), DecodeStatus::ok);
    EXPECT_TRUE(same_message(m, out));
  }
  StreamWrite over{3, 0, chunk};
  over.data.resize(max_stream_chunk + 1);
  EXPECT_THROW(encode(over), Error) << "the encoder never sends an over-long chunk";
  Bytes header = header_bytes(FrameType::stream_write, max_payload(FrameType::stream_write) + 1);
  FrameHeader h;
  EXPECT_EQ(decode_header(header, h), DecodeStatus::too_long);
}

TEST(WireCodecStreamIo, ValuesOutOfRangeAreBadField) {
  EXPECT_EQ(decode_frame(encode(StreamOpen{StreamMode::read, 0, "a"})), DecodeStatus::ok);
  EXPECT_EQ(decode_frame(encode(StreamOpen{StreamMode::read, open_overwrite, "a"})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamOpen{StreamMode::write, open_overwrite | open_sync, "a"})), DecodeStatus::ok);
  EXPECT_EQ(decode_frame(encode(StreamOpen{StreamMode::write, open_encrypt, "a"})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamOpen{static_cast<StreamMode>(3), 0, "a"})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamOpenOk{0, 1, 2})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamRead{1, 0, max_stream_chunk + 1})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamRead{0, 0, 1})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamData{1, 0, 2, {}})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamWrite{0, 0, {1}})), DecodeStatus::bad_field);
  EXPECT_EQ(decode_frame(encode(StreamClose{0})), DecodeStatus::bad_field);
}

}  // namespace
}  // namespace pxfer::wire
