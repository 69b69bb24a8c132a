// BlockPlanner: how a file is cut into blocks, the order they are handed out in, and the
// bookkeeping of acknowledgements, requeues and blocks already present.
#include <gtest/gtest.h>

#include <chrono>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "plan/block_planner.hpp"

namespace pxfer {
namespace {

constexpr std::uint32_t B = 4096;  // block size used throughout

// Everything next() hands out until it runs dry.
std::vector<Block> drain(BlockPlanner& p) {
  std::vector<Block> out;
  while (auto b = p.next()) out.push_back(*b);
  return out;
}

struct Geometry {
  std::uint64_t size;
  std::size_t count;
  std::uint32_t last_length;
};

class BlockGeometry : public ::testing::TestWithParam<Geometry> {};

TEST_P(BlockGeometry, CountsAndLengths) {
  const Geometry g = GetParam();
  BlockPlanner p(g.size, B);
  EXPECT_EQ(p.file_size(), g.size);
  EXPECT_EQ(p.block_size(), B);
  ASSERT_EQ(p.block_count(), g.count);

  std::uint64_t covered = 0;
  for (std::size_t i = 0; i < p.block_count(); ++i) {
    Block b = p.block_at(i);
    EXPECT_EQ(b.offset, i * std::uint64_t{B}) << i;
    EXPECT_EQ(b.length, i + 1 == g.count ? g.last_length : B) << i;
    EXPECT_GT(b.length, 0u);
    EXPECT_TRUE(p.is_block(b));
    covered += b.length;
  }
  EXPECT_EQ(covered, g.size);  // the blocks tile the file exactly

  // next() hands out the same blocks, in file order.
  std::vector<Block> handed = drain(p);
  ASSERT_EQ(handed.size(), g.count);
  for (std::size_t i = 0; i < handed.size(); ++i) EXPECT_EQ(handed[i], p.block_at(i));
  EXPECT_FALSE(p.next());
  // An empty file is complete from the start; any other is not until its blocks are acknowledged.
  EXPECT_EQ(p.all_acknowledged(), g.size == 0);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BlockGeometry,
                         ::testing::Values(Geometry{0, 0, 0}, Geometry{1, 1, 1}, Geometry{B - 1, 1, B - 1},
                                           Geometry{B, 1, B}, Geometry{B + 1, 2, 1},
                                           Geometry{10ull * B + 7, 11, 7}, Geometry{10ull * B, 10, B}),
                         [](const auto& p) { return "size_" + std::to_string(p.param.size); });

TEST(BlockPlanner, LargeFileGeometryDoesNotOverflow) {
  // 16 TiB in 16 MiB blocks: offsets beyond 32 bits.
  const std::uint64_t size = (std::uint64_t{16} << 40) + 5;
  const std::uint32_t block = 16u << 20;
  BlockPlanner p(size, block);
  ASSERT_EQ(p.block_count(), (std::uint64_t{1} << 20) + 1);
  Block last = p.block_at(p.block_count() - 1);
  EXPECT_EQ(last.offset, std::uint64_t{16} << 40);
  EXPECT_EQ(last.length, 5u);
  EXPECT_TRUE(p.is_block(last));
}

TEST(BlockPlanner, ZeroBlockSizeIsRefused) { EXPECT_THROW(BlockPlanner(100, 0), std::invalid_argument); }

TEST(BlockPlanner, IsBlockNeedsExactOffsetAndLength) {
  BlockPlanner p(10ull * B + 7, B);
  EXPECT_TRUE(p.is_block({0, B}));
  EXPECT_TRUE(p.is_block({10ull * B, 7}));
  EXPECT_FALSE(p.is_block({0, B - 1}));            // wrong length
  EXPECT_FALSE(p.is_block({0, B + 1}));
  EXPECT_FALSE(p.is_block({10ull * B, B}));        // last block is short
  EXPECT_FALSE(p.is_block({1, B}));                // not on a block boundary
  EXPECT_FALSE(p.is_block({B / 2, B}));
  EXPECT_FALSE(p.is_block({11ull * B, B}));        // past the end
  EXPECT_FALSE(p.is_block({std::numeric_limits<std::uint64_t>::max() - B + 1, B}));
  EXPECT_FALSE(p.is_block({0, 0}));
}

TEST(BlockPlanner, AcknowledgeOnlyOutstandingBlocks) {
  BlockPlanner p(4ull * B, B);
  EXPECT_FALSE(p.acknowledge(0)) << "not sent yet";
  auto b0 = p.next();
  auto b1 = p.next();
  ASSERT_TRUE(b0 && b1);
  EXPECT_FALSE(p.acknowledge(2ull * B)) << "pending, never handed out";
  EXPECT_FALSE(p.acknowledge(1)) << "not a block offset";
  EXPECT_FALSE(p.acknowledge(B + B / 2)) << "not a block offset";
  EXPECT_FALSE(p.acknowledge(4ull * B)) << "past the end";
  EXPECT_FALSE(p.acknowledge(std::numeric_limits<std::uint64_t>::max())) << "hostile offset";
  EXPECT_EQ(p.acknowledged_bytes(), 0u);

  EXPECT_TRUE(p.acknowledge(b1->offset));
  EXPECT_FALSE(p.acknowledge(b1->offset)) << "duplicate";
  EXPECT_TRUE(p.acknowledge(b0->offset));
  EXPECT_FALSE(p.acknowledge(b0->offset)) << "duplicate";
  EXPECT_EQ(p.acknowledged_bytes(), 2ull * B);
  EXPECT_FALSE(p.all_acknowledged());
}

TEST(BlockPlanner, AllAcknowledgedAndBytesTrackEveryBlock) {
  const std::uint64_t size = 3ull * B + 100;
  BlockPlanner p(size, B);
  std::vector<Block> blocks = drain(p);
  ASSERT_EQ(blocks.size(), 4u);
  std::uint64_t expected = 0;
  // Acknowledged out of order, as streams finish.
  for (std::size_t i : {3u, 1u, 0u, 2u}) {
    EXPECT_FALSE(p.all_acknowledged());
    ASSERT_TRUE(p.acknowledge(blocks[i].offset));
    expected += blocks[i].length;
    EXPECT_EQ(p.acknowledged_bytes(), expected);
  }
  EXPECT_TRUE(p.all_acknowledged());
  EXPECT_EQ(p.acknowledged_bytes(), size);
}

TEST(BlockPlanner, RequeuedBlocksComeBeforeFreshOnes) {
  BlockPlanner p(6ull * B, B);
  Block b0 = *p.next();
  Block b1 = *p.next();
  Block b2 = *p.next();
  EXPECT_EQ(b2.offset, 2ull * B);
  // The stream holding b1 and then b0 died: those go out again, in the order given back.
  p.requeue(b1);
  p.requeue(b0);
  EXPECT_EQ(p.next(), b1);
  EXPECT_EQ(p.next(), b0);
  EXPECT_EQ(p.next(), p.block_at(3));  // then fresh blocks resume where they were
  EXPECT_FALSE(p.acknowledge(6ull * B));
  // A requeued block is pending again: it can no longer be acknowledged by the dead stream...
  Block b3 = p.block_at(3);
  p.requeue(b3);
  EXPECT_FALSE(p.acknowledge(b3.offset));
  // ...until it is handed out again.
  EXPECT_EQ(p.next(), b3);
  EXPECT_TRUE(p.acknowledge(b3.offset));
}

TEST(BlockPlanner, RequeueIgnoresBlocksThatAreNotInFlight) {
  BlockPlanner p(3ull * B, B);
  Block b0 = *p.next();
  ASSERT_TRUE(p.acknowledge(b0.offset));
  p.requeue(b0);                      // already done: must not be sent twice
  p.requeue(p.block_at(2));           // never handed out
  p.requeue({5, B});                  // not a block
  p.requeue({30ull * B, B});          // past the end
  EXPECT_EQ(drain(p), (std::vector<Block>{p.block_at(1), p.block_at(2)}));
  EXPECT_EQ(p.acknowledged_bytes(), B);
}

TEST(BlockPlanner, RequeueTwiceHandsTheBlockOutOnce) {
  BlockPlanner p(2ull * B, B);
  Block b0 = *p.next();
  p.requeue(b0);
  p.requeue(b0);  // second one: b0 is pending by now, ignored
  EXPECT_EQ(drain(p), (std::vector<Block>{b0, p.block_at(1)}));
}

TEST(BlockPlanner, MarkDoneSkipsBlocks) {
  BlockPlanner p(5ull * B + 1, B);
  EXPECT_TRUE(p.mark_done(0));
  EXPECT_TRUE(p.mark_done(2ull * B));
  EXPECT_TRUE(p.mark_done(5ull * B));   // the 1-byte tail
  EXPECT_FALSE(p.mark_done(2ull * B)) << "already done";
  EXPECT_FALSE(p.mark_done(7)) << "not a block";
  EXPECT_FALSE(p.mark_done(6ull * B)) << "past the end";
  EXPECT_EQ(p.acknowledged_bytes(), 2ull * B + 1);

  EXPECT_EQ(drain(p), (std::vector<Block>{p.block_at(1), p.block_at(3), p.block_at(4)}));
  EXPECT_FALSE(p.acknowledge(0)) << "marked done, never in flight";
  EXPECT_TRUE(p.acknowledge(B));
  EXPECT_TRUE(p.acknowledge(3ull * B));
  EXPECT_FALSE(p.all_acknowledged());
  EXPECT_TRUE(p.acknowledge(4ull * B));
  EXPECT_TRUE(p.all_acknowledged());
  EXPECT_EQ(p.acknowledged_bytes(), p.file_size());
}

TEST(BlockPlanner, MarkDoneOfInFlightOrRequeuedBlock) {
  BlockPlanner p(3ull * B, B);
  Block b0 = *p.next();
  Block b1 = *p.next();
  // The receiver reports b0 as present while it is still in flight: counted once.
  EXPECT_TRUE(p.mark_done(b0.offset));
  EXPECT_FALSE(p.acknowledge(b0.offset));
  // b1 given back, then found present: the requeued entry is skipped.
  p.requeue(b1);
  EXPECT_TRUE(p.mark_done(b1.offset));
  EXPECT_EQ(drain(p), (std::vector<Block>{p.block_at(2)}));
  EXPECT_EQ(p.acknowledged_bytes(), 2ull * B);
}

TEST(BlockPlanner, EveryBlockMarkedDoneIsComplete) {
  BlockPlanner p(3ull * B, B);
  for (std::size_t i = 0; i < p.block_count(); ++i) ASSERT_TRUE(p.mark_done(p.block_at(i).offset));
  EXPECT_TRUE(p.all_acknowledged());
  EXPECT_FALSE(p.next());
}

// Four streams pull blocks, acknowledge them, and now and then give one back (a stream dying
// mid-block); at the end every block was acknowledged exactly once and never held by two
// streams at the same time.
TEST(BlockPlanner, FourThreadsGetEveryBlockExactlyOnce) {
  const std::uint64_t size = 5000ull * 512 + 123;
  BlockPlanner p(size, 512);
  const std::size_t n = p.block_count();

  std::mutex m;
  std::vector<int> holders(n, 0);   // streams holding each block right now
  std::vector<int> acked(n, 0);
  std::vector<int> handed(n, 0);
  bool overlap = false;

  auto stream = [&](unsigned id) {
    unsigned k = 0;
    while (auto b = p.next()) {
      const std::size_t i = static_cast<std::size_t>(b->offset / 512);
      {
        std::lock_guard lock(m);
        if (!p.is_block(*b)) overlap = true;
        if (++holders[i] != 1) overlap = true;
        ++handed[i];
      }
      bool give_back = (++k + id) % 17 == 0;  // deterministic, a few per thread
      {
        std::lock_guard lock(m);
        --holders[i];
      }
      if (give_back) {
        p.requeue(*b);
        continue;
      }
      bool ok = p.acknowledge(b->offset);
      std::lock_guard lock(m);
      if (ok) ++acked[i];
      else overlap = true;
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) threads.emplace_back(stream, t);
  for (auto& t : threads) t.join();

  EXPECT_FALSE(overlap);
  EXPECT_TRUE(p.all_acknowledged());
  EXPECT_EQ(p.acknowledged_bytes(), size);
  EXPECT_TRUE(std::all_of(acked.begin(), acked.end(), [](int a) { return a == 1; }));
  // Every block went out at least once; requeued ones more often, never more than needed.
  EXPECT_TRUE(std::all_of(handed.begin(), handed.end(), [](int h) { return h >= 1; }));
  EXPECT_FALSE(p.next());
}

TEST(BlockPlanner, FourThreadsWithoutRequeueHandOutEachBlockOnce) {
  BlockPlanner p(20000ull * 4096, 4096);
  std::vector<std::vector<Block>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      while (auto b = p.next()) {
        got[static_cast<std::size_t>(t)].push_back(*b);
        p.acknowledge(b->offset);
      }
    });
  for (auto& t : threads) t.join();

  std::vector<Block> all;
  for (const auto& g : got) {
    // Each stream sees its blocks in increasing file order (one shared queue, taken in order).
    EXPECT_TRUE(std::is_sorted(g.begin(), g.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; }));
    all.insert(all.end(), g.begin(), g.end());
  }
  std::sort(all.begin(), all.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
  ASSERT_EQ(all.size(), p.block_count());
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], p.block_at(i)) << i;
  EXPECT_TRUE(p.all_acknowledged());
}

TEST(BlockPlanner, CountsTheBytesNoStreamHolds) {
  BlockPlanner p(10 * 4096 + 100, 4096);  // ten whole blocks and a short last one
  EXPECT_EQ(p.queued_bytes(), 10u * 4096 + 100);
  auto a = p.next();
  auto b = p.next();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(p.queued_bytes(), 8u * 4096 + 100);
  p.requeue(*a);  // its stream died: the block is queued again
  EXPECT_EQ(p.queued_bytes(), 9u * 4096 + 100);
  p.requeue(*a);  // twice is once
  EXPECT_EQ(p.queued_bytes(), 9u * 4096 + 100);
  EXPECT_TRUE(p.mark_done(10 * 4096));  // the short last block, kept from an earlier attempt
  EXPECT_EQ(p.queued_bytes(), 9u * 4096);
  EXPECT_TRUE(p.acknowledge(b->offset));  // acknowledging a held block changes nothing queued
  EXPECT_EQ(p.queued_bytes(), 9u * 4096);
  while (auto n = p.next()) p.acknowledge(n->offset);
  EXPECT_EQ(p.queued_bytes(), 0u);
  EXPECT_TRUE(p.all_acknowledged());
}

// The end of a file (issue 39): a block overdue on a stuck stream goes out a second time.
TEST(BlockPlanner, SendsAnOverdueBlockAgainOnceNothingElseIsLeft) {
  using namespace std::chrono_literals;
  const Clock::time_point t0{};
  BlockPlanner p(4 * 4096, 4096);
  auto a = p.next(t0);  // the stuck stream's block
  auto b = p.next(t0 + 100ms);
  EXPECT_FALSE(p.next_copy(t0 + 10s)) << "blocks are still queued: those go first";
  auto c = p.next(t0 + 100ms);
  auto d = p.next(t0 + 100ms);
  ASSERT_TRUE(a && b && c && d);
  EXPECT_TRUE(p.acknowledge(b->offset, t0 + 300ms));  // blocks take 200 ms
  EXPECT_TRUE(p.acknowledge(c->offset, t0 + 300ms));
  EXPECT_EQ(p.copy_after(), BlockPlanner::min_copy_age) << "1.5 x 200 ms is under the floor";
  EXPECT_FALSE(p.next_copy(t0 + 900ms)) << "not overdue yet";
  auto copy = p.next_copy(t0 + 1100ms);
  ASSERT_TRUE(copy);
  EXPECT_EQ(*copy, (Block{a->offset, a->length, true})) << "the block out longest, marked as a copy";
  auto second = p.next_copy(t0 + 1200ms);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->offset, d->offset);
  EXPECT_FALSE(p.next_copy(t0 + 5s)) << "two copies at most";
  // The copy arrives first; the stuck stream's acknowledgement may still follow, once.
  EXPECT_TRUE(p.acknowledge(a->offset, t0 + 1300ms));
  EXPECT_TRUE(p.acknowledge(a->offset, t0 + 9s));
  EXPECT_FALSE(p.acknowledge(a->offset, t0 + 9s)) << "a third acknowledgement is a confused peer";
  EXPECT_FALSE(p.acknowledge(b->offset, t0 + 9s)) << "a block sent once is acknowledged once";
  EXPECT_TRUE(p.acknowledge(d->offset, t0 + 1300ms));
  EXPECT_TRUE(p.all_acknowledged());
}

TEST(BlockPlanner, ALostCopyLeavesTheOtherOut) {
  using namespace std::chrono_literals;
  const Clock::time_point t0{};
  BlockPlanner p(2 * 4096, 4096);
  auto a = p.next(t0);
  auto b = p.next(t0);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(p.acknowledge(b->offset, t0 + 100ms));
  auto copy = p.next_copy(t0 + 2s);
  ASSERT_TRUE(copy);
  p.requeue(*a);  // one copy's stream broke: the other is still out, nothing is queued again
  EXPECT_EQ(p.queued_bytes(), 0u);
  EXPECT_FALSE(p.next());
  EXPECT_TRUE(p.acknowledge(a->offset, t0 + 3s));
  EXPECT_FALSE(p.acknowledge(a->offset, t0 + 3s)) << "the broken copy is never acknowledged";
  // A block whose only copy is lost is queued again, as before.
  BlockPlanner q(4096, 4096);
  auto only = q.next(t0);
  ASSERT_TRUE(only);
  q.requeue(*only);
  EXPECT_EQ(q.queued_bytes(), 4096u);
  EXPECT_TRUE(q.next());
}

TEST(BlockPlanner, CopiesWaitOneAndAHalfTimesWhatBlocksTake) {
  using namespace std::chrono_literals;
  const Clock::time_point t0{};
  BlockPlanner p(3 * 4096, 4096);
  auto a = p.next(t0);
  auto b = p.next(t0);
  auto c = p.next(t0);
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(p.acknowledge(b->offset, t0 + 2s));  // 2 s a block: a long path
  EXPECT_EQ(p.copy_after(), 3s);
  EXPECT_FALSE(p.next_copy(t0 + 2900ms));
  EXPECT_TRUE(p.next_copy(t0 + 3s));
}

}  // namespace
}  // namespace pxfer
