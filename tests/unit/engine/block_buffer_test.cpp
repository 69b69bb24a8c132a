// Block buffers kept between transfers (transfer/block_buffer.hpp): a stream's buffer is taken
// only when used, a later stream gets a kept one back instead of new memory, the smallest that
// fits, and no more than limits::kept_block_buffer_bytes stay kept.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "pxfer/core/limits.hpp"
#include "engine/block_buffer.hpp"

namespace pxfer::transfer {
namespace {

constexpr std::size_t MiB = 1u << 20;

TEST(BlockBuffer, NothingIsTakenUntilTheBufferIsUsed) {
  const std::size_t before = BlockBuffer::kept_bytes();
  { BlockBuffer unused(2 * MiB); }
  EXPECT_EQ(BlockBuffer::kept_bytes(), before);
}

TEST(BlockBuffer, AUsedBufferIsKeptAndGivenToTheNextStream) {
  std::uint8_t* first = nullptr;
  {
    BlockBuffer a(3 * MiB + 1);
    first = a.data();
    a.first(3 * MiB + 1)[3 * MiB] = 0x5a;  // the whole size is usable
  }
  EXPECT_GE(BlockBuffer::kept_bytes(), 3 * MiB + 1);
  BlockBuffer b(3 * MiB);  // fits in the kept one: no new memory
  EXPECT_EQ(b.data(), first);
}

TEST(BlockBuffer, TheSmallestKeptBufferThatFitsIsTaken) {
  std::uint8_t *small = nullptr, *large = nullptr;
  {
    BlockBuffer s(5 * MiB + 3), l(9 * MiB + 3);
    small = s.data();
    large = l.data();
  }
  BlockBuffer want(5 * MiB);
  EXPECT_EQ(want.data(), small);
  BlockBuffer big(6 * MiB);
  EXPECT_EQ(big.data(), large);
}

TEST(BlockBuffer, NoMoreThanTheLimitIsKept) {
  {
    std::vector<std::unique_ptr<BlockBuffer>> many;
    for (std::size_t i = 0; i < limits::kept_block_buffer_bytes / (4 * MiB) + 4; ++i) {
      many.push_back(std::make_unique<BlockBuffer>(4 * MiB));
      many.back()->data();
    }
  }
  EXPECT_LE(BlockBuffer::kept_bytes(), limits::kept_block_buffer_bytes);
  EXPECT_GE(BlockBuffer::kept_bytes(), limits::kept_block_buffer_bytes - 4 * MiB);
}

}  // namespace
}  // namespace pxfer::transfer
