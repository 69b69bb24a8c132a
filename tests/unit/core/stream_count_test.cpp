// The one home for the stream count (pxfer/core/stream_count.hpp), pinned as a table: each row is one
// caller's question (the CLI, a batch under --max-streams, a small file, the server's grant, auto).
#include <gtest/gtest.h>

#include "pxfer/core/stream_count.hpp"

namespace pxfer {
namespace {

constexpr std::uint64_t MiB = 1ull << 20;

struct Row {
  const char* name;
  StreamInputs in;
  StreamCount want;
};

StreamInputs fixed(std::uint16_t n) { return asking(StreamRequest{false, n}); }
StreamInputs automatic() { return asking(StreamRequest{true, limits::default_streams}); }
template <typename F>
StreamInputs with(StreamInputs in, F change) {
  change(in);
  return in;
}

TEST(StreamCount, TableOfCallers) {
  const Row rows[] = {
      {"fixed -p 8", fixed(8), {8, 8, false, ""}},
      {"fixed clamps 0 to 1", fixed(0), {1, 1, false, ""}},
      {"fixed clamps 200 to the limit", fixed(200), {64, 64, false, ""}},
      {"a file of 3 blocks gets 3", with(fixed(8), [](auto& i) { i.file_size = 5 * MiB; i.block_size = 2 * MiB; }),
       {3, 3, false, "file size"}},
      {"an empty file gets one", with(fixed(8), [](auto& i) { i.file_size = 0; }), {1, 1, false, "file size"}},
      {"budget 8 over 4 files", with(fixed(4), [](auto& i) { i.budget = 8; i.files_in_flight = 4; }),
       {2, 2, false, "--max-streams"}},
      {"budget below files in flight still one", with(fixed(4), [](auto& i) { i.budget = 3; i.files_in_flight = 10; }),
       {1, 1, false, "--max-streams"}},
      {"budget that fits changes nothing", with(fixed(4), [](auto& i) { i.budget = 64; i.files_in_flight = 2; }),
       {4, 4, false, ""}},
      {"server grants fewer", with(fixed(16), [](auto& i) { i.granted = 6; }), {6, 6, false, "server"}},
      {"server grants more than asked", with(fixed(4), [](auto& i) { i.granted = 16; }), {4, 4, false, ""}},
      {"auto: ceiling 64, starts with 4", automatic(), {64, 4, true, ""}},
      {"auto under its own ceiling", with(automatic(), [](auto& i) { i.ceiling = 24; }), {24, 4, true, ""}},
      {"auto ceiling 2 starts with 2", with(automatic(), [](auto& i) { i.ceiling = 2; }), {2, 2, true, ""}},
      {"auto of a small file", with(automatic(), [](auto& i) { i.file_size = 6 * MiB; }), {3, 3, true, "file size"}},
      {"auto granted 10 by the server", with(automatic(), [](auto& i) { i.granted = 10; }), {10, 4, true, "server"}},
      {"auto within --max-streams 32 over 4 files",
       with(automatic(), [](auto& i) { i.budget = 32; i.files_in_flight = 4; }), {8, 4, true, "--max-streams"}},
  };
  for (const Row& r : rows) EXPECT_EQ(stream_count(r.in), r.want) << r.name;
}

TEST(StreamCount, FixedCountsAreClamped) {
  EXPECT_EQ(fixed_streams(0), 1);
  EXPECT_EQ(fixed_streams(8), 8);
  EXPECT_EQ(fixed_streams(100000), 64);
}

TEST(StreamCount, ParsesAutoOrACount) {
  EXPECT_EQ(parse_stream_request("auto"), (StreamRequest{true, limits::default_streams}));
  EXPECT_EQ(parse_stream_request("8"), (StreamRequest{false, 8}));
  EXPECT_EQ(parse_stream_request("64"), (StreamRequest{false, 64}));
  for (const char* bad : {"0", "65", "", "8x", "-1", "Auto", " 8"}) EXPECT_FALSE(parse_stream_request(bad)) << bad;
  EXPECT_EQ(to_string(StreamRequest{true, 4}), "auto");
  EXPECT_EQ(to_string(StreamRequest{false, 12}), "12");
}

TEST(StreamCount, AdmissionGrantsFromTheClientsAllowance) {
  struct Case {
    unsigned asked;
    bool can_lower;
    unsigned limit, in_use, want;
  };
  const Case cases[] = {
      {8, true, 0, 100, 8},   // no limit
      {8, true, 16, 4, 8},    // fits
      {8, true, 16, 12, 4},   // lowered to what is left
      {8, true, 16, 16, 0},   // nothing left: waits
      {8, false, 16, 12, 0},  // cannot lower: waits
      {8, false, 4, 0, 8},    // cannot lower, runs alone: gets them all
      {0, true, 16, 0, 1},    // at least one
  };
  for (const Case& c : cases)
    EXPECT_EQ(admitted_streams(c.asked, c.can_lower, c.limit, c.in_use), c.want)
        << c.asked << " asked, limit " << c.limit << ", in use " << c.in_use;
}

}  // namespace
}  // namespace pxfer
