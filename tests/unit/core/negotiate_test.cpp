// Negotiation in one unit: options + HELLO_OK -> OPEN, OPEN -> the server's settings, OPEN_OK ->
// the client's plan, all under the one table of limits.
#include <gtest/gtest.h>

#include <utility>

#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/core/stream_controller.hpp"
#include "plan/negotiate.hpp"

namespace pxfer::transfer {
namespace {

TEST(Limits, BlockCountIsACeilingAndStreamsNeverExceedBlocks) {
  EXPECT_EQ(limits::block_count(0, 1 << 20), 0u);
  EXPECT_EQ(limits::block_count(1, 1 << 20), 1u);
  EXPECT_EQ(limits::block_count(1 << 20, 1 << 20), 1u);
  EXPECT_EQ(limits::block_count((1 << 20) + 1, 1 << 20), 2u);
  EXPECT_EQ(limits::streams_for(0, 1 << 20, 8), 1);
  EXPECT_EQ(limits::streams_for(3u << 20, 1 << 20, 8), 3);
  EXPECT_EQ(limits::streams_for(30u << 20, 1 << 20, 8), 8);
}

TEST(Limits, OneMessageForEveryCaller) {
  EXPECT_EQ(limits::streams_problem(0), "use 1 to 64");
  EXPECT_EQ(limits::streams_problem(65), "use 1 to 64");
  EXPECT_EQ(limits::streams_problem(64), "");
  EXPECT_EQ(limits::block_size_problem((1u << 20) - 1), "use 1M to 16M");
  EXPECT_EQ(limits::block_size_problem(16u << 20), "");
  EXPECT_EQ(wire::min_block_size, limits::min_block_size) << "the codec reads the same table";
  EXPECT_EQ(wire::max_streams, limits::max_streams);
}

TEST(Negotiate, CheckOptionsRefusesOutOfRangeValues) {
  ClientOptions o;
  EXPECT_NO_THROW(check_options(o));
  o.streams = 0;
  EXPECT_THROW(check_options(o), Error);
  o.streams = 4;
  o.block_size = 4096;
  try {
    check_options(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("use 1M to 16M"), std::string::npos) << e.what();
  }
}

TEST(Negotiate, APutOfASmallFileAsksForNoMoreStreamsThanBlocks) {
  ClientOptions o;
  o.streams = 8;
  o.overwrite = true;
  o.sync = true;
  o.resume = false;
  wire::HelloOk hello;
  auto open = make_open(Direction::put, o, hello, SourceFacts{3u << 20, 42}, "a/b");
  EXPECT_EQ(open.direction, wire::Direction::put);
  EXPECT_EQ(open.streams, 2);  // 3 MiB in 2 MiB blocks
  EXPECT_EQ(open.size, 3u << 20);
  EXPECT_EQ(open.mtime_ns, 42);
  EXPECT_EQ(open.path, "a/b");
  EXPECT_EQ(open.flags, wire::open_overwrite | wire::open_sync | wire::open_no_resume);
}

TEST(Negotiate, AGetAsksForTheServersFiguresAsOftenAsItsReaderLooks) {
  wire::HelloOk hello;
  ClientOptions o;  // fixed -p, no --stream-stats: no figures
  EXPECT_EQ(make_open(Direction::get, o, hello, std::nullopt, "f").flags & wire::open_want_stats, 0u);
  o.stream_stats = true;  // a line a second
  EXPECT_EQ(make_open(Direction::get, o, hello, std::nullopt, "f").stats_interval_ms, 1000u);
  o.auto_streams = true;  // -p auto looks every 200 ms, --stream-stats or not
  auto open = make_open(Direction::get, o, hello, std::nullopt, "f");
  EXPECT_NE(open.flags & wire::open_want_stats, 0u);
  EXPECT_EQ(open.stats_interval_ms, static_cast<std::uint32_t>(stream_sample_period.count()));
  o.stream_stats = false;
  EXPECT_EQ(make_open(Direction::get, o, hello, std::nullopt, "f").stats_interval_ms, 200u);
  EXPECT_EQ(make_open(Direction::put, o, hello, SourceFacts{3u << 20, 42}, "f").flags & wire::open_want_stats, 0u);
}

TEST(Negotiate, OnControlOnlyWhenTheServerCanAndTheFileIsOneBlock) {
  ClientOptions o;
  o.small_files_on_control = true;
  wire::HelloOk hello;
  EXPECT_TRUE(make_open(Direction::put, o, hello, SourceFacts{1000, 0}, "x").flags & wire::open_on_control);
  EXPECT_FALSE(make_open(Direction::put, o, hello, SourceFacts{3u << 20, 0}, "x").flags & wire::open_on_control);
  hello.capabilities = wire::cap_block_acks;
  EXPECT_FALSE(make_open(Direction::put, o, hello, SourceFacts{1000, 0}, "x").flags & wire::open_on_control);
}

// The connections made while OPEN crosses the path (client/early_streams.hpp) are the streams the
// transfer starts with: -p N's, auto's first few, a put's blocks; none for a put with nothing to
// move or one moving on the control connection. A get's size is not known before OPEN_OK.
TEST(Negotiate, EarlyConnectionsAreTheStreamsTheTransferStartsWith) {
  ClientOptions o;
  o.small_files_on_control = true;
  wire::HelloOk hello;
  hello.capabilities = wire::cap_on_control | wire::cap_admission;
  o.streams = 8;
  EXPECT_EQ(early_stream_count(o, make_open(Direction::get, o, hello, std::nullopt, "x")), 8);
  EXPECT_EQ(early_stream_count(o, make_open(Direction::put, o, hello, SourceFacts{100u << 20, 0}, "x")), 8);
  EXPECT_EQ(early_stream_count(o, make_open(Direction::put, o, hello, SourceFacts{3u << 20, 0}, "x")), 2);
  EXPECT_EQ(early_stream_count(o, make_open(Direction::put, o, hello, SourceFacts{1000, 0}, "x")), 0);
  EXPECT_EQ(early_stream_count(o, make_open(Direction::put, o, hello, SourceFacts{0, 0}, "x")), 0);
  o.auto_streams = true;
  EXPECT_EQ(early_stream_count(o, make_open(Direction::get, o, hello, std::nullopt, "x")), limits::auto_start_streams);
  o.max_streams = 2;
  EXPECT_EQ(early_stream_count(o, make_open(Direction::get, o, hello, std::nullopt, "x")), 2);
  EXPECT_EQ(client_tuning(o), (SocketTuning{o.window, o.congestion, o.window_clamp}));
}

TEST(Negotiate, ABlockSizeOverTheServersLimitIsAUsageError) {
  ClientOptions o;
  o.block_size = 8u << 20;
  wire::HelloOk hello;
  hello.max_block = 4u << 20;
  EXPECT_THROW(make_open(Direction::get, o, hello, std::nullopt, "x"), Error);
}

TEST(Negotiate, TheClientWarnsOnlyWhenTheServersLimitCutTheStreams) {
  ClientOptions o;
  wire::Open open;
  open.streams = 8;
  wire::OpenOk ok;
  ok.block_size = 1 << 20;
  ok.has_admission = true;
  ok.size = 100u << 20;
  ok.streams = 2;
  auto plan = client_plan(o, open, ok);
  EXPECT_EQ(plan.settings.streams, 2);
  EXPECT_NE(plan.warning.find("granted 2 of 8"), std::string::npos) << plan.warning;
  ok.size = 2u << 20;  // two blocks: two streams are all the file needs
  EXPECT_EQ(client_plan(o, open, ok).warning, "");
}

TEST(Negotiate, TheServerRefusesOpenFlagsItDoesNotKnow) {
  wire::Open open;
  open.block_size = 1 << 20;
  open.flags = wire::open_overwrite | (1u << 20);
  try {
    server_settings(open, ServerPolicy{});
    FAIL() << "unknown flag accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol);
    EXPECT_NE(std::string(e.what()).find("0x100000"), std::string::npos) << e.what();
  }
  open.flags = wire::known_open_flags;
  EXPECT_NO_THROW(server_settings(open, ServerPolicy{}));
}

// The settings both ends derive from the capabilities both confirmed, server's first: a setting
// that needs both peers must come out alike at each end.
std::pair<Settings, Settings> both_ends(std::uint64_t caps) {
  wire::Open open;
  open.block_size = 1 << 20;
  open.streams = 2;
  wire::OpenOk ok;
  ok.block_size = 1 << 20;
  ok.size = 4u << 20;
  return {server_settings(open, ServerPolicy{}, caps), client_plan(ClientOptions{}, open, ok, caps).settings};
}

TEST(Negotiate, BlocksRelyOnTlsOnlyWhenBothEndsOfferedTlsBoundStreams) {
  // An older peer keeps Poly1305.
  auto [server, client] = both_ends(wire::our_capabilities);
  EXPECT_TRUE(server.tls_bound_streams);
  EXPECT_TRUE(client.tls_bound_streams);
  auto [old_server, old_client] = both_ends(wire::our_capabilities & ~std::uint64_t{wire::cap_tls_bound_streams});
  EXPECT_FALSE(old_server.tls_bound_streams);
  EXPECT_FALSE(old_client.tls_bound_streams);
}

TEST(Negotiate, BlocksGoOutTwiceOnlyWhenBothEndsOfferedBlockCopies) {
  // An older receiver would acknowledge a copy before the first one is written, and take the
  // reset of a stream that carried one for a failure.
  auto [server, client] = both_ends(wire::our_capabilities);
  EXPECT_TRUE(server.block_copies);
  EXPECT_TRUE(client.block_copies);
  auto [old_server, old_client] = both_ends(wire::our_capabilities & ~std::uint64_t{wire::cap_block_copies});
  EXPECT_FALSE(old_server.block_copies);
  EXPECT_FALSE(old_client.block_copies);
}

TEST(Negotiate, TheServerKeepsTheClientsStallTimeoutWithinBounds) {
  wire::Open open;
  open.block_size = 1 << 20;
  open.stall_timeout_ms = 1;
  EXPECT_EQ(server_settings(open, ServerPolicy{}).stall_timeout.count(), 400);
  open.stall_timeout_ms = 5000;
  EXPECT_EQ(server_settings(open, ServerPolicy{}).stall_timeout.count(), 5000);
}

TEST(Negotiate, AGetIsGrantedNoMoreStreamsThanBlocksOnlyForClientsThatTakeTheCount) {
  wire::Open open;
  open.block_size = 1 << 20;
  open.streams = 8;
  EXPECT_EQ(server_get_streams(open, wire::cap_admission, 3u << 20), 3);
  EXPECT_EQ(server_get_streams(open, 0, 3u << 20), 8);
}

}  // namespace
}  // namespace pxfer::transfer
