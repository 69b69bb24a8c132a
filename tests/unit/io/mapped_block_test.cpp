// The sender's mapped reads (io/mapped_block.hpp): the bytes of a block as the file holds them,
// and a file truncated under the mapping reported as such instead of killing the process by
// SIGBUS; a SIGBUS that is not ours still kills.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <numeric>
#include <vector>

#include "io/mapped_block.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using test::random_bytes;
using test::TempDir;
using test::write_file;

constexpr std::size_t MiB = 1 << 20;

struct OpenFile {
  int fd;
  explicit OpenFile(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~OpenFile() { ::close(fd); }
};

std::uint64_t sum_of(std::span<const std::uint8_t> bytes) {
  return std::accumulate(bytes.begin(), bytes.end(), std::uint64_t{0});
}

TEST(MappedBlock, HoldsTheBytesOfTheBlock) {
  TempDir tmp;
  const auto data = random_bytes(3 * MiB + 100, 7);
  write_file(tmp / "f.bin", data);
  OpenFile file(tmp / "f.bin");
  // The last block: not a whole number of pages.
  auto block = io::MappedBlock::map(file.fd, 2 * MiB, MiB + 100);
  ASSERT_TRUE(block);
  std::vector<std::uint8_t> seen;
  EXPECT_TRUE(block->guarded([&] { seen.assign(block->bytes().begin(), block->bytes().end()); }));
  EXPECT_EQ(seen, std::vector<std::uint8_t>(data.begin() + 2 * MiB, data.end()));
}

TEST(MappedBlock, AnOffsetOffThePageGridIsNotMapped) {
  TempDir tmp;
  write_file(tmp / "f.bin", random_bytes(MiB, 8));
  OpenFile file(tmp / "f.bin");
  EXPECT_FALSE(io::MappedBlock::map(file.fd, 100, 4096));
  EXPECT_FALSE(io::MappedBlock::map(file.fd, 0, 0));
}

// The file shrinks while its block is mapped: the read inside guarded() finishes (zeros where the
// file is gone) and reports it; the process lives on, and the next block reads normally.
TEST(MappedBlock, AFileThatShrankIsReportedNotFatal) {
  TempDir tmp;
  const auto data = random_bytes(4 * MiB, 9);
  write_file(tmp / "f.bin", data);
  OpenFile file(tmp / "f.bin");
  auto block = io::MappedBlock::map(file.fd, 2 * MiB, 2 * MiB);
  ASSERT_TRUE(block);
  ASSERT_EQ(::truncate((tmp / "f.bin").c_str(), 2 * MiB + 4096 + 10), 0);
  std::uint64_t sum = 0;
  EXPECT_FALSE(block->guarded([&] { sum = sum_of(block->bytes()); }));
  // What was still in the file was read; the rest read as zeros.
  EXPECT_EQ(sum, sum_of(std::span(data).subspan(2 * MiB, 4096 + 10)));
  auto first = io::MappedBlock::map(file.fd, 0, 2 * MiB);
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->guarded([&] { sum = sum_of(first->bytes()); }));
  EXPECT_EQ(sum, sum_of(std::span(data).subspan(0, 2 * MiB)));
}

// The handler only takes the faults of the block being read: touching a truncated mapping
// anywhere else still ends the process with SIGBUS, as it would without pxfer's handler.
TEST(MappedBlockDeathTest, ASigbusElsewhereStillKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir tmp;
  write_file(tmp / "f.bin", random_bytes(2 * MiB, 10));
  EXPECT_EXIT(
      {
        OpenFile file(tmp / "f.bin");
        auto block = io::MappedBlock::map(file.fd, 0, MiB);  // installs the handler
        block->guarded([] {});
        void* other = ::mmap(nullptr, MiB, PROT_READ, MAP_SHARED, file.fd, MiB);
        if (::truncate((tmp / "f.bin").c_str(), 4096) != 0) std::_Exit(1);  // not truncated: no SIGBUS to test
        volatile std::uint8_t byte = static_cast<const std::uint8_t*>(other)[MiB / 2];
        (void)byte;
        std::_Exit(0);
      },
      // Killed by the SIGBUS; under AddressSanitizer its own handler takes the signal, reports
      // "BUS on unknown address" and aborts: dead either way, which is the point.
      [](int status) { return WIFSIGNALED(status) && (WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT); },
      "");
}

}  // namespace
}  // namespace pxfer
