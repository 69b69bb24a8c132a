// LIST, LISTING and MKDIR on the wire: round trips, limits, and the split of a long listing into
// frames that each fit a control frame.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "pxfer/client/batch.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/common/url.hpp"
#include "wire/wire.hpp"
#include "wire/byte_codec.hpp"
#include "test_support.hpp"

namespace pxfer::wire {
namespace {

using Bytes = std::vector<std::uint8_t>;

DecodeStatus decode_frame(const Bytes& bytes, Message& out) {
  FrameHeader h;
  DecodeStatus st = decode_header(bytes, h);
  if (st != DecodeStatus::ok) return st;
  return decode_message(h, std::span(bytes).subspan(header_size), out);
}

ListEntry entry(std::string path, EntryKind kind = EntryKind::file) {
  return ListEntry{kind, 0x0102030405060708ull, 0755, -1234567890123456789ll, std::move(path)};
}

Bytes listing_frame(std::uint8_t more, std::uint32_t count, std::uint8_t kind) {
  Bytes out(header_size);
  detail::Writer w(out);
  w.u8(more);
  w.u32(count);
  for (std::uint32_t i = 0; i < std::min<std::uint32_t>(count, 1); ++i) {
    w.u8(kind);
    w.u64(1);
    w.u32(0644);
    w.u64(2);
    w.str("a");
  }
  Bytes header;
  detail::Writer h(header);
  h.u32(static_cast<std::uint32_t>(out.size() - header_size));
  h.u16(static_cast<std::uint16_t>(FrameType::listing));
  h.u16(0);
  std::copy(header.begin(), header.end(), out.begin());
  return out;
}

TEST(BatchCodec, ListAndMkdirRoundTrip) {
  for (const Message& m : {Message(List{"data/run-17"}), Message(List{""}), Message(Mkdir{"a/b/c"}),
                           Message(List{std::string(max_path_length, 'p')})}) {
    SCOPED_TRACE(type_name(type_of(m)));
    Message out;
    ASSERT_EQ(decode_frame(encode(m), out), DecodeStatus::ok);
    EXPECT_EQ(encode(out), encode(m));
  }
  EXPECT_STREQ(type_name(FrameType::list), "LIST");
  EXPECT_STREQ(type_name(FrameType::listing), "LISTING");
  EXPECT_STREQ(type_name(FrameType::mkdir), "MKDIR");
}

TEST(BatchCodec, ListingRoundTripsEveryField) {
  Listing sent{1, {entry("a"), entry("dir", EntryKind::directory), entry(""), entry(std::string(max_path_length, 'x'))}};
  Message out;
  ASSERT_EQ(decode_frame(encode(Message(sent)), out), DecodeStatus::ok);
  const auto& got = std::get<Listing>(out);
  EXPECT_EQ(got.more, 1);
  EXPECT_EQ(got.entries, sent.entries);  // including a negative mtime
}

// The error an encode of `m` throws: it must be pxfer's Error (anything else fails the test).
std::optional<Error> encode_error(const Message& m) {
  try {
    encode(m);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// The refusal names the field's size and its limit, so it is this check that refused.
void expect_path_refused(const Message& m) {
  SCOPED_TRACE(type_name(type_of(m)));
  auto e = encode_error(m);
  ASSERT_TRUE(e.has_value()) << "an over-long path was encoded";
  EXPECT_EQ(e->code(), Errc::usage);
  EXPECT_NE(std::string(e->what()).find(std::to_string(max_path_length + 1) + " bytes is over its limit of " +
                                        std::to_string(max_path_length)),
            std::string::npos)
      << e->what();
}

// A frame of `type` whose payload is one path field of `length` bytes (LIST and MKDIR carry
// nothing else), written with the raw writer: what a peer that ignores the limit would send.
Bytes path_frame(FrameType type, std::size_t length) {
  Bytes out(header_size);
  detail::Writer w(out);
  w.str(std::string(length, 'p'));
  Bytes header;
  detail::Writer h(header);
  h.u32(static_cast<std::uint32_t>(out.size() - header_size));
  h.u16(static_cast<std::uint16_t>(type));
  h.u16(0);
  std::copy(header.begin(), header.end(), out.begin());
  return out;
}

TEST(BatchCodec, OverLongPathsAreRefusedBothWays) {
  // At the limit: encoded and decoded whole.
  for (const Message& m : {Message(List{std::string(max_path_length, 'p')}), Message(Mkdir{std::string(max_path_length, 'p')}),
                           Message(Listing{0, {entry(std::string(max_path_length, 'x'))}})}) {
    SCOPED_TRACE(type_name(type_of(m)));
    Message out;
    ASSERT_EQ(decode_frame(encode(m), out), DecodeStatus::ok);
    EXPECT_EQ(encode(out), encode(m));
  }
  // One byte over: the encoder refuses (never truncates)...
  expect_path_refused(Message(List{std::string(max_path_length + 1, 'p')}));
  expect_path_refused(Message(Mkdir{std::string(max_path_length + 1, 'p')}));
  expect_path_refused(Message(Listing{0, {entry(std::string(max_path_length + 1, 'x'))}}));
  // ... and so does the decoder, when a peer sends one anyway.
  Message out;
  EXPECT_EQ(decode_frame(path_frame(FrameType::list, max_path_length), out), DecodeStatus::ok);
  EXPECT_EQ(decode_frame(path_frame(FrameType::list, max_path_length + 1), out), DecodeStatus::too_long);
  EXPECT_EQ(decode_frame(path_frame(FrameType::mkdir, max_path_length + 1), out), DecodeStatus::too_long);
}

TEST(BatchCodec, MalformedListingsAreRefused) {
  Message out;
  EXPECT_EQ(decode_frame(listing_frame(0, 1, 1), out), DecodeStatus::ok);
  EXPECT_EQ(decode_frame(listing_frame(2, 1, 1), out), DecodeStatus::bad_field);  // more is 0 or 1
  EXPECT_EQ(decode_frame(listing_frame(0, 1, 3), out), DecodeStatus::bad_field);  // kind is 1 or 2
  EXPECT_EQ(decode_frame(listing_frame(0, 2, 1), out), DecodeStatus::truncated);
  // A count no payload could hold is refused before anything is allocated.
  EXPECT_EQ(decode_frame(listing_frame(0, 0xffffffffu, 1), out), DecodeStatus::too_long);
}

TEST(BatchCodec, SplitListingKeepsEveryFrameUnderTheControlLimit) {
  std::vector<ListEntry> entries;
  for (int i = 0; i < 3000; ++i) entries.push_back(entry("dir/" + std::string(100, 'a') + std::to_string(i)));
  auto frames = split_listing(entries);
  ASSERT_GT(frames.size(), 1u);
  std::vector<ListEntry> joined;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].more, i + 1 < frames.size() ? 1 : 0);
    Bytes bytes = encode(Message(frames[i]));
    EXPECT_LE(bytes.size() - header_size, max_control_payload);
    Message out;
    ASSERT_EQ(decode_frame(bytes, out), DecodeStatus::ok);
    for (auto& e : std::get<Listing>(out).entries) joined.push_back(e);
  }
  EXPECT_EQ(joined, entries);

  auto empty = split_listing({});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].more, 0);
  EXPECT_TRUE(empty[0].entries.empty());

  // Full-length paths: still under the limit, one frame each few entries.
  std::vector<ListEntry> longest(40, entry(std::string(max_path_length, 'z')));
  for (const auto& f : split_listing(longest)) EXPECT_LE(encode(Message(f)).size() - header_size, max_control_payload);
}

// put -r names each remote file by its path below the local directory, however the directory
// was written (with or without trailing slashes, through a "./"), nested directories too.
TEST(BatchPlanPut, RemoteNamesAreThePathsBelowTheLocalDirectory) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "tree/sub/deeper");
  for (const char* name : {"tree/a", "tree/sub/b", "tree/sub/deeper/c"}) std::ofstream(dir / name) << "x";
  auto url = parse_url("pxfer://127.0.0.1:1/dst/");
  ASSERT_TRUE(url);
  for (const std::string& local : {dir / "tree", dir / "tree/", dir / "tree//", dir / "./tree"}) {
    BatchPlan plan = plan_recursive_put(local, *url);
    std::vector<std::string> remote;
    for (const auto& f : plan.files) remote.push_back(f.remote.path);
    std::sort(remote.begin(), remote.end());
    EXPECT_EQ(remote, (std::vector<std::string>{"dst/tree/a", "dst/tree/sub/b", "dst/tree/sub/deeper/c"})) << local;
    std::vector<std::string> dirs;
    for (const auto& d : plan.remote_directories) dirs.push_back(d.path);
    std::sort(dirs.begin(), dirs.end());
    EXPECT_EQ(dirs, (std::vector<std::string>{"dst/tree", "dst/tree/sub", "dst/tree/sub/deeper"})) << local;
  }
}

}  // namespace
}  // namespace pxfer::wire

namespace pxfer {
namespace {

TEST(BatchPlan, ListFileLinesBecomeFiles) {
  auto plan = parse_transfer_list(
      "# comment\n\n"
      "  a.dat   pxfer://h:9/dir/  \n"
      "pxfer://h/x/y.dat /tmp/out/\n"
      "b.dat pxfer://h/exact.dat # trailing comment\n",
      "list.txt");
  ASSERT_EQ(plan.files.size(), 3u);
  EXPECT_EQ(plan.files[0].direction, Direction::put);
  EXPECT_EQ(plan.files[0].remote.path, "dir/a.dat");
  EXPECT_EQ(plan.files[0].remote.port, 9);
  EXPECT_EQ(plan.files[1].direction, Direction::get);
  EXPECT_EQ(plan.files[1].local, "/tmp/out/y.dat");
  EXPECT_EQ(plan.files[2].remote.path, "exact.dat");
}

TEST(BatchPlan, BadListLinesNameTheLine) {
  auto message_of = [](const std::string& text) {
    try {
      parse_transfer_list(text, "l");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of("a b\n").rfind("l:1: exactly one", 0), 0u) << message_of("a b\n");
  EXPECT_EQ(message_of("#x\npxfer://h/a pxfer://h/b\n").rfind("l:2: exactly one", 0), 0u);
  EXPECT_EQ(message_of("a\n").rfind("l:1: expected", 0), 0u);
  EXPECT_EQ(message_of("a pxfer://h/b c\n").rfind("l:1: expected", 0), 0u);
  EXPECT_NE(message_of("# only comments\n").find("nothing to transfer"), std::string::npos);
}

TEST(BatchPlan, StreamCapReducesStreamsPerFileFirst) {
  EXPECT_EQ(fit_streams(4, 4, 0).streams, 4);
  auto s = fit_streams(4, 4, 8);
  EXPECT_EQ(s.concurrency, 4u);
  EXPECT_EQ(s.streams, 2);
  s = fit_streams(10, 4, 3);
  EXPECT_EQ(s.concurrency, 3u);
  EXPECT_EQ(s.streams, 1);
  s = fit_streams(2, 8, 16);
  EXPECT_EQ(s.streams, 8);
}

}  // namespace
}  // namespace pxfer
