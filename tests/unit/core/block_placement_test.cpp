// The tail of a file (core/block_placement.hpp): the last blocks go to the streams that get them
// onto the wire first; figures are those of a 150 ms, 0.01 % path with 50 reno streams
// (bench/results/wan-matrix.md, "The tail").
#include "pxfer/core/block_placement.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace pxfer {
namespace {

constexpr std::uint32_t block = 2u << 20;
constexpr double mb = 1e6;

// cwnd 57 at 150 ms: 0.55 MB/s, and a MiB still in its socket.
const StreamLoad slow{0.55 * mb, (1 << 20) / (0.55 * mb)};
// cwnd 600: 5.8 MB/s, with a block of its own half out.
const StreamLoad fast{5.8 * mb, (1 << 20) / (5.8 * mb)};

std::vector<StreamLoad> many(StreamLoad s, int n) { return std::vector<StreamLoad>(static_cast<std::size_t>(n), s); }

TEST(BlockPlacement, EveryStreamTakesBlocksWhileMuchOfTheFileIsLeft) {
  // 600 MB left at ~117 MB/s: five seconds, and the slow stream is done with a block in six...
  auto others = many(fast, 20);
  EXPECT_TRUE(takes_block(fast, others, 600'000'000, block));
  EXPECT_FALSE(takes_block(slow, others, 600'000'000, block));
  // ...so it takes one while the streams have 900 MB before them.
  EXPECT_TRUE(takes_block(slow, others, 900'000'000, block));
}

TEST(BlockPlacement, ASlowStreamLeavesTheLastBlocksToFasterOnes) {
  auto others = many(fast, 20);
  EXPECT_FALSE(takes_block(slow, others, 40'000'000, block));
  EXPECT_TRUE(takes_block(fast, others, 40'000'000, block));
  // The very last block too: a fast stream that just wrote its own has it out in 0.5 s, the slow
  // one in 5.7.
  EXPECT_FALSE(takes_block(slow, others, block, block));
}

TEST(BlockPlacement, TheBestStreamAlwaysTakesTheBlock) {
  // Nobody can beat it, so the block never waits in the queue for no one.
  EXPECT_TRUE(takes_block(slow, many(slow, 5), block, block));
  EXPECT_TRUE(takes_block(fast, many(slow, 5), block, block));
  // A faster stream that is busy for longer than this one needs is no reason to wait.
  const StreamLoad busy{5.8 * mb, 20.0};
  EXPECT_TRUE(takes_block(slow, many(busy, 5), block, block));
}

TEST(BlockPlacement, AStreamNotMuchSlowerTakesItsShare) {
  // Rates from cwnd jitter: 20 % is not worth an idle wait.
  const StreamLoad a{5.0 * mb, 0};
  const StreamLoad b{6.0 * mb, 0};
  EXPECT_TRUE(takes_block(a, many(b, 10), block, block));
}

TEST(BlockPlacement, AStreamWithoutFiguresTakesAsBefore) {
  // No TCP_INFO yet (or no stream measured at all): the first free stream takes the block.
  EXPECT_TRUE(takes_block(StreamLoad{}, many(fast, 10), block, block));
  EXPECT_TRUE(takes_block(slow, many(StreamLoad{}, 10), block, block));
  EXPECT_TRUE(takes_block(slow, {}, block, block));
}

TEST(BlockPlacement, SecondsToFinishCountsWhatTheStreamsHold) {
  const StreamLoad a{1 * mb, 2.0};  // holds 2 MB
  const StreamLoad b{3 * mb, 1.0};  // holds 3 MB
  std::vector<StreamLoad> others{b, StreamLoad{}};  // a stream not measured adds nothing
  EXPECT_DOUBLE_EQ(seconds_to_finish(a, others, 11'000'000), 4.0);  // (11 + 2 + 3) MB at 4 MB/s
}

TEST(BlockPlacement, ALoadIsReadFromTcpInfo) {
  TcpSnapshot tcp;
  tcp.cwnd_segments = 100;
  tcp.mss = 1448;
  tcp.rtt_us = 150'000;
  tcp.ssthresh = 70;  // past a loss: cwnd is what it moves per RTT
  tcp.unsent_bytes = 965'333;
  StreamLoad load = load_of(tcp, block);
  EXPECT_NEAR(load.rate, 965'333, 1);
  EXPECT_NEAR(load.backlog, 1.0, 1e-6);
  EXPECT_EQ(load_of(TcpSnapshot{}, block).rate, 0);  // no figures: not measured
}

TEST(BlockPlacement, ANewStreamInSlowStartTakesBlocksButNotTheLastOnes) {
  TcpSnapshot tcp;  // just opened by -p auto: cwnd 10, no loss yet
  tcp.cwnd_segments = 10;
  tcp.mss = 1448;
  tcp.rtt_us = 150'000;
  tcp.ssthresh = TcpSnapshot::first_slow_start;
  const StreamLoad fresh = load_of(tcp, block);
  // cwnd doubling from 10 x 1448 needs 8 RTTs for 2 MiB: 1.2 s, not the 14 s of cwnd 10 held.
  EXPECT_NEAR(block / fresh.rate, 8 * 0.15, 1e-6);
  auto others = many(fast, 20);
  EXPECT_TRUE(takes_block(fresh, others, 300'000'000, block));
  EXPECT_FALSE(takes_block(fresh, others, 20'000'000, block));
}

}  // namespace
}  // namespace pxfer
