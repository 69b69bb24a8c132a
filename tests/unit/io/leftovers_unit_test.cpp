// Issue 16 points 2, 3 and 6 on the file layer alone: the journal's space reserved up front, a
// claimed size refused before anything exists, nothing kept for a resume that holds nothing, every
// stale temporary name swept (locked ones left), and a destination directory removed or renamed
// under a running sink noticed at the next block.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "io/resume_journal.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

namespace fs = std::filesystem;
using test::random_bytes;
using test::TempDir;

void make_old(const fs::path& p) {
  struct timespec times[2] = {{0, UTIME_OMIT}, {1000, 0}};  // mtime in 1970
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0) << p;
}

SinkOptions resume_options(std::uint32_t block) {
  SinkOptions o;
  o.resume = true;
  o.block_size = block;
  o.source_mtime_ns = 42;
  return o;
}

TEST(Leftovers, JournalSpaceIsReservedWhenItStarts) {
  TempDir tmp;
  int fd = ::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const ResumeIdentity id{std::uint64_t{3000} << 20, 1u << 20, 7};  // 3000 blocks: 24 KB of records
  {
    ResumeJournal j(fd, ".f.pxfer-journal", id, "f");
    struct stat st {};
    ASSERT_EQ(::stat((tmp / ".f.pxfer-journal").c_str(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), ResumeJournal::bytes_for(id));
    EXPECT_GE(static_cast<std::uint64_t>(st.st_blocks) * 512, ResumeJournal::bytes_for(id)) << "not allocated";
    j.record(2999, 0x1234);
    j.record(5, 0x55);
    EXPECT_EQ(j.recorded_count(), 2u);
  }
  ResumeJournal again(fd, ".f.pxfer-journal", id, "f");
  ASSERT_TRUE(again.matched());
  EXPECT_EQ(again.recorded_count(), 2u);
  EXPECT_EQ(again.recorded(2999), 0x1234u);
  EXPECT_EQ(again.recorded(5), 0x55u);
  EXPECT_FALSE(again.recorded(6).has_value());
  ::close(fd);
}

// 1 PiB claimed: refused before the journal, the temporary file or the block plan exist, at once.
TEST(Leftovers, AClaimBeyondTheFreeSpaceIsRefusedBeforeAnythingExists) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  const auto start = std::chrono::steady_clock::now();
  try {
    FileSink sink(dir, "huge", std::uint64_t{1} << 50, resume_options(1u << 20));
    FAIL() << "a 1 PiB claim was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::local_io);
    EXPECT_NE(std::string(e.what()).find("free some space"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_TRUE(tmp.entries().empty());
  SinkOptions limited;
  limited.max_file_size = 1000;
  try {
    FileSink sink(dir, "big", 1001, limited);
    FAIL() << "--max-file-size was not applied";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
  }
  EXPECT_TRUE(tmp.entries().empty());
}

TEST(Leftovers, AResumablePartialThatHoldsNothingIsNotKept) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  {
    FileSink sink(dir, "out.bin", 4 * 4096, resume_options(4096));
    sink.abandon(true);
  }
  EXPECT_TRUE(tmp.entries().empty()) << "a put that delivered nothing kept its preallocated file";
  {
    FileSink sink(dir, "out.bin", 4 * 4096, resume_options(4096));
    sink.write_at(0, random_bytes(4096, 1));
    sink.block_written(0, 1);
    sink.abandon(true);
  }
  EXPECT_EQ(tmp.entries(), (std::vector<std::string>{".out.bin.pxfer-journal", ".out.bin.pxfer-part"}));
}

TEST(Leftovers, EveryStaleTemporaryNameIsSweptLockedOnesStay) {
  TempDir tmp;
  for (const char* n : {".a.pxfer-0123456789abcdef", ".b.pxfer-part", ".c.pxfer-ABCDEF0123456789", ".keep",
                        "x.pxfer-0123456789abcdef", ".d.pxfer-12345", ".young.pxfer-fedcba9876543210",
                        ".locked.pxfer-1111111111111111"})
    std::ofstream(tmp / n) << "x";
  for (const char* n : {".a.pxfer-0123456789abcdef", ".b.pxfer-part", ".c.pxfer-ABCDEF0123456789", ".keep",
                        "x.pxfer-0123456789abcdef", ".d.pxfer-12345", ".locked.pxfer-1111111111111111"})
    make_old(fs::path(tmp / n));
  int locked = ::open((tmp / ".locked.pxfer-1111111111111111").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_EQ(::flock(locked, LOCK_EX), 0);
  int fd = ::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_EQ(remove_stale_partials(fd, 3600), 3u);
  EXPECT_EQ(tmp.entries(), (std::vector<std::string>{".d.pxfer-12345", ".keep", ".locked.pxfer-1111111111111111",
                                                     ".young.pxfer-fedcba9876543210", "x.pxfer-0123456789abcdef"}));
  ::close(locked);
  fs::create_directories(tmp / "a/b");
  std::ofstream(fs::path(tmp / "a/b/.deep.pxfer-0123456789abcdef")) << "x";
  make_old(fs::path(tmp / "a/b/.deep.pxfer-0123456789abcdef"));
  std::atomic<bool> stop{false};
  EXPECT_EQ(sweep_tree(fd, 3600, stop), 2u);  // the unlocked one and the deep one
  EXPECT_FALSE(fs::exists(fs::path(tmp / "a/b/.deep.pxfer-0123456789abcdef")));
  ::close(fd);
}

// A running sink holds a lock on its temporary file: the sweep never takes it, however old.
TEST(Leftovers, ARunningSinksTemporaryIsNeverSwept) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSink sink(dir, "out.bin", 4096, false);
  make_old(fs::path(tmp / sink.temp_name()));
  int fd = ::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_EQ(remove_stale_partials(fd, 0), 0u);
  EXPECT_TRUE(fs::exists(tmp / sink.temp_name()));
  ::close(fd);
}

TEST(Leftovers, ADestinationDirectoryRemovedOrRenamedIsNoticedAtTheNextBlock) {
  for (bool rename_it : {false, true}) {
    TempDir tmp;
    fs::create_directory(tmp / "sub");
    Directory dir = Directory::open_root(tmp.path(), true);
    FileSink sink(dir, "sub/out.bin", 2 * 4096, resume_options(4096));
    sink.write_at(0, random_bytes(4096, 2));
    sink.block_written(0, 1);
    if (rename_it) {
      fs::rename(tmp / "sub", tmp / "moved");
    } else {
      for (auto& e : fs::directory_iterator(tmp / "sub")) fs::remove(e.path());
      fs::remove(tmp / "sub");
    }
    try {
      sink.block_written(1, 1);
      FAIL() << (rename_it ? "renamed" : "removed") << " directory not noticed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::not_found);
    }
  }
}

}  // namespace
}  // namespace pxfer
