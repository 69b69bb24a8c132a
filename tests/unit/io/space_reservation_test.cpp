// The space of a received file reserved ahead of its writes (io/space_reservation.hpp): on tmpfs
// the first step at once and the rest in a thread of its own; elsewhere all of it at once. A write
// passes only into reserved space; one the reservation could not reach fails with "No space".
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pxfer/common/error.hpp"
#include "io/space_reservation.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using test::TempDir;
using test::TmpfsDir;
constexpr std::uint64_t MiB = 1 << 20;

std::uint64_t allocated(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_blocks) * 512 : 0;
}

int create(const std::string& path) { return ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600); }

// On tmpfs the constructor returns after the first step; the rest follows, and a write of the
// last byte waits until its range is reserved.
TEST(SpaceReservation, OnTmpfsTheRestIsReservedAheadOfTheWrites) {
  TmpfsDir tmp;
  if (tmp.path().empty()) GTEST_SKIP() << "no tmpfs: not root (to mount one) and /dev/shm is not tmpfs";
  const std::uint64_t size = 12 * MiB;  // fits the 16 MiB tmpfs mounted as root
  int fd = create(tmp.path() + "/f.bin");
  ASSERT_GE(fd, 0);
  {
    SpaceReservation space;
    space.start(fd, size, "f.bin", {.first = 1 * MiB, .step = 256 * 1024, .background = true});
    EXPECT_GE(space.reserved(), 1 * MiB);
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), size) << "sized at once, so every write is inside it";
    {
      auto gate = space.enter(size);
      const char last = 'z';
      ASSERT_EQ(::pwrite(fd, &last, 1, static_cast<off_t>(size - 1)), 1);
    }
    EXPECT_EQ(space.reserved(), size);
    EXPECT_GE(allocated(fd), size) << "the file's space is not reserved";
  }
  ::close(fd);
}

// Elsewhere (ext4 for /tmp here) fallocate marks extents and returns at once: no thread.
TEST(SpaceReservation, ElsewhereEverythingIsReservedAtOnce) {
  TempDir dir;
  int fd = create(dir / "f.bin");
  ASSERT_GE(fd, 0);
  SpaceReservation space;
  space.start(fd, 64 * MiB, "f.bin", {.first = 1 * MiB, .step = 1 * MiB, .background = false});
  EXPECT_EQ(space.reserved(), 64 * MiB);
  space.enter(64 * MiB);
  ::close(fd);
}

// Issue 34: the reservation never runs more than its window ahead of the furthest write, on
// tmpfs (the thread) and elsewhere (the writes extend it): a claim that sends nothing holds one
// window, not its size.
TEST(SpaceReservation, TheReservationStaysWithinAWindowOfTheFurthestWrite) {
  TempDir dir;
  for (bool background : {false, true}) {
    const std::string name = background ? "thread.bin" : "inline.bin";
    int fd = create(dir / name);
    ASSERT_GE(fd, 0);
    const std::uint64_t size = 256 * MiB, window = 4 * MiB;
    SpaceReservation space;
    space.start(fd, size, name, {.first = 1 * MiB, .step = 1 * MiB, .background = background, .window = window});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a thread running ahead would show here
    EXPECT_LE(space.reserved(), window) << name;
    EXPECT_LE(allocated(fd), window + 1 * MiB) << name;
    { auto gate = space.enter(100 * MiB); }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_GE(space.reserved(), 100 * MiB) << name;
    EXPECT_LE(space.reserved(), 100 * MiB + window) << name;
    space.stop();
    ::close(fd);
  }
}

// Writers at any offset, from several threads, while the steps run: each one lands, none
// deadlocks with the steps, and the file holds every writer's bytes.
TEST(SpaceReservation, ManyWritersAndTheStepsShareTheGate) {
  TmpfsDir tmp;
  if (tmp.path().empty()) GTEST_SKIP() << "no tmpfs: not root (to mount one) and /dev/shm is not tmpfs";
  const std::uint64_t size = 12 * MiB, piece = 256 * 1024;
  int fd = create(tmp.path() + "/f.bin");
  ASSERT_GE(fd, 0);
  std::vector<std::uint64_t> offsets;
  for (std::uint64_t o = 0; o < size; o += piece) offsets.push_back(o);
  std::shuffle(offsets.begin(), offsets.end(), std::mt19937(7));
  {
    SpaceReservation space;
    space.start(fd, size, "f.bin", {.first = piece, .step = 64 * 1024, .background = true});
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t)
      writers.emplace_back([&, t] {
        std::vector<std::uint8_t> bytes(piece);
        for (std::size_t i = static_cast<std::size_t>(t); i < offsets.size(); i += 4) {
          std::fill(bytes.begin(), bytes.end(), static_cast<std::uint8_t>(offsets[i] / piece));
          auto gate = space.enter(offsets[i] + piece);
          ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offsets[i])), static_cast<ssize_t>(piece));
        }
      });
    for (auto& w : writers) w.join();
  }
  for (std::uint64_t o = 0; o < size; o += piece) {
    std::uint8_t b[2] = {};
    ASSERT_EQ(::pread(fd, b, 1, static_cast<off_t>(o)), 1);
    ASSERT_EQ(::pread(fd, b + 1, 1, static_cast<off_t>(o + piece - 1)), 1);
    EXPECT_EQ(b[0], static_cast<std::uint8_t>(o / piece)) << "at " << o;
    EXPECT_EQ(b[1], static_cast<std::uint8_t>(o / piece)) << "at " << o + piece - 1;
  }
  ::close(fd);
}

// On a tmpfs that fills up: the first step fits, the thread stops where space ran out, a write
// below that point still lands and the first write beyond it fails with "No space left" (the
// transfer fails there; the sink removes its file).
TEST(SpaceReservation, AWriteTheReservationCouldNotReachFails) {
  TmpfsDir tmp;
  if (tmp.path().empty() || !tmp.mounted())
    GTEST_SKIP() << "needs a tmpfs of its own to fill: mounting one needs root (CI runs as root)";
  int fd = create(tmp.path() + "/f.bin");
  ASSERT_GE(fd, 0);
  const std::uint64_t size = 32 * MiB;  // twice the mount's 16 MiB
  SpaceReservation space;
  space.start(fd, size, "f.bin", {.first = 1 * MiB, .step = 1 * MiB, .background = true});
  space.enter(1 * MiB);
  try {
    space.enter(size);
    ADD_FAILURE() << "a write beyond the reserved space passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::local_io);
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f.bin"), std::string::npos) << e.what();
  }
  EXPECT_LT(space.reserved(), size);
  EXPECT_GE(space.reserved(), 1 * MiB);
  ::close(fd);
}

// Stopped while steps remain (the transfer failed, the sink goes): the thread ends promptly and
// leaves the descriptor alone afterwards.
TEST(SpaceReservation, StopEndsTheThread) {
  TmpfsDir tmp;
  if (tmp.path().empty()) GTEST_SKIP() << "no tmpfs: not root (to mount one) and /dev/shm is not tmpfs";
  int fd = create(tmp.path() + "/f.bin");
  ASSERT_GE(fd, 0);
  SpaceReservation space;
  space.start(fd, 12 * MiB, "f.bin", {.first = 64 * 1024, .step = 4096, .background = true});
  space.stop();
  const std::uint64_t at_stop = space.reserved();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(space.reserved(), at_stop);
  ::close(fd);
}

}  // namespace
}  // namespace pxfer
