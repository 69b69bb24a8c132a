// Files at both ends of a transfer, in a scratch directory: the sink's temporary file and atomic
// commit, the source's change detection, and the confinement of paths below an export root.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::random_bytes;
using test::read_file;
using test::TempDir;
using test::TmpfsDir;
using test::write_file;
namespace fs = std::filesystem;

// The Errc an operation throws, or nullopt when it does not throw a pxfer::Error.
std::optional<Errc> error_of(const std::function<void()>& op) {
  try {
    op();
  } catch (const Error& e) {
    return e.code();
  } catch (...) {
    return Errc::internal;  // any other exception is wrong too; show it as internal
  }
  return std::nullopt;
}

std::span<const std::uint8_t> part(const Bytes& data, std::size_t offset, std::size_t length) {
  return std::span(data).subspan(offset, length);
}

// ---------------------------------------------------------------------------------------------
// FileSink

TEST(FileSink, WritesOutOfOrderAndCommitsOntoTheFinalName) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  const Bytes data = random_bytes(3 * 4096 + 100, 1);
  {
    FileSink sink(dir, "out.bin", data.size(), false);
    EXPECT_EQ(sink.size(), data.size());
    EXPECT_EQ(sink.path(), "out.bin");
    // Before the commit only the hidden temporary exists, already at full size.
    EXPECT_TRUE(sink.temp_name().starts_with(".out.bin.pxfer-")) << sink.temp_name();
    EXPECT_EQ(tmp.entries(), std::vector<std::string>{sink.temp_name()});
    EXPECT_FALSE(fs::exists(tmp / "out.bin"));
    EXPECT_EQ(fs::file_size(tmp / sink.temp_name()), data.size());

    sink.write_at(3 * 4096, part(data, 3 * 4096, 100));
    sink.write_at(4096, part(data, 4096, 4096));
    sink.write_at(2 * 4096, part(data, 2 * 4096, 4096));
    sink.write_at(0, part(data, 0, 4096));
    Bytes back(4096);
    sink.read_at(4096, back);
    EXPECT_EQ(back, Bytes(data.begin() + 4096, data.begin() + 2 * 4096));
    EXPECT_FALSE(fs::exists(tmp / "out.bin"));

    sink.commit();
    EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});
  }
  // Destroying a committed sink leaves the file alone.
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});
  EXPECT_EQ(read_file(tmp / "out.bin"), data);
}

TEST(FileSink, EmptyFileCommits) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSink sink(dir, "empty", 0, false);
  sink.commit();
  EXPECT_EQ(fs::file_size(tmp / "empty"), 0u);
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"empty"});
}

TEST(FileSink, InASubdirectory) {
  TempDir tmp;
  fs::create_directory(tmp / "sub");
  Directory dir = Directory::open_root(tmp.path(), true);
  const Bytes data = random_bytes(1000, 2);
  FileSink sink(dir, "sub/f", data.size(), false);
  EXPECT_TRUE(fs::exists(tmp / ("sub/" + sink.temp_name())));
  sink.write_at(0, data);
  sink.commit();
  EXPECT_EQ(read_file(tmp / "sub/f"), data);
}

TEST(FileSink, DestroyingAnUncommittedSinkRemovesTheTemporary) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  {
    FileSink sink(dir, "out.bin", 8192, false);
    sink.write_at(0, random_bytes(4096, 3));
    EXPECT_EQ(tmp.entries().size(), 1u);
  }
  EXPECT_TRUE(tmp.entries().empty());
}

TEST(FileSink, AbortRemovesTheTemporaryAtOnce) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSink sink(dir, "out.bin", 4096, false);
  sink.write_at(0, random_bytes(4096, 7));
  ASSERT_EQ(tmp.entries(), std::vector<std::string>{sink.temp_name()}) << "the sink made no temporary to remove";
  sink.abort();
  EXPECT_TRUE(tmp.entries().empty()) << "the temporary is still there before the sink is destroyed";
  EXPECT_THROW(sink.commit(), Error) << "an aborted sink must not commit";
  EXPECT_TRUE(tmp.entries().empty()) << "a commit after abort put something in place";
}

// Twice is harmless: a resumable partial file has a fixed name, so a second abort of a stale sink
// must not remove what a newer attempt made under the same names since.
TEST(FileSink, ASecondAbortLeavesANewerAttemptAlone) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  SinkOptions resume;
  resume.resume = true;
  resume.block_size = 4096;
  resume.source_mtime_ns = 1;
  FileSink first(dir, "out.bin", 4 * 4096, resume);
  ASSERT_TRUE(first.resuming());
  first.abort();
  ASSERT_TRUE(tmp.entries().empty());
  FileSink second(dir, "out.bin", 4 * 4096, resume);
  const auto names = tmp.entries();
  ASSERT_EQ(names, (std::vector<std::string>{".out.bin.pxfer-journal", ".out.bin.pxfer-part"}));
  first.abort();
  EXPECT_EQ(tmp.entries(), names) << "the second abort removed the newer attempt's files";
  second.write_at(0, random_bytes(4 * 4096, 8));
  EXPECT_NO_THROW(second.commit());
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});
}

TEST(FileSink, ExistingDestinationWithoutOverwriteIsRefusedAndUntouched) {
  TempDir tmp;
  const Bytes old = random_bytes(500, 4);
  write_file(tmp / "out.bin", old);
  Directory dir = Directory::open_root(tmp.path(), true);
  EXPECT_EQ(error_of([&] { FileSink sink(dir, "out.bin", 1000, false); }), Errc::exists);
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});  // no temporary left behind
  EXPECT_EQ(read_file(tmp / "out.bin"), old);
}

TEST(FileSink, ExistingDestinationWithOverwriteIsReplacedOnCommit) {
  TempDir tmp;
  const Bytes old = random_bytes(5000, 5);
  write_file(tmp / "out.bin", old);
  Directory dir = Directory::open_root(tmp.path(), true);
  const Bytes data = random_bytes(300, 6);
  FileSink sink(dir, "out.bin", data.size(), true);
  sink.write_at(0, data);
  EXPECT_EQ(read_file(tmp / "out.bin"), old);  // untouched until the commit
  sink.commit();
  EXPECT_EQ(read_file(tmp / "out.bin"), data);
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});
}

TEST(FileSink, DestinationThatAppearsDuringTheTransferIsNotReplaced) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSink sink(dir, "out.bin", 10, false);
  sink.write_at(0, random_bytes(10, 7));
  const Bytes other = random_bytes(20, 8);
  write_file(tmp / "out.bin", other);  // someone else created it meanwhile
  EXPECT_EQ(error_of([&] { sink.commit(); }), Errc::exists);
  EXPECT_EQ(read_file(tmp / "out.bin"), other);
}

// A file of a get -r into a directory the run made skips the look for an existing file before it
// is created (SinkOptions::new_directory); one that is there all the same (another process put it
// there) is still never replaced: the commit refuses it and leaves no temporary behind.
TEST(FileSink, InANewDirectoryAFileThatIsThereAnywayIsNotReplaced) {
  TempDir tmp;
  const Bytes other = random_bytes(20, 9);
  write_file(tmp / "out.bin", other);
  Directory dir = Directory::open_root(tmp.path(), true);
  SinkOptions options;
  options.reserve = false;
  options.watch_directory = false;
  options.new_directory = true;
  FileSink sink(dir, "out.bin", 10, options);  // no lookup of the name: created fine
  sink.write_at(0, random_bytes(10, 10));
  EXPECT_EQ(error_of([&] { sink.commit(); }), Errc::exists);
  EXPECT_EQ(read_file(tmp / "out.bin"), other);
  sink.abort();
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});
}

TEST(FileSink, DirectoryAsDestinationIsRefused) {
  TempDir tmp;
  fs::create_directory(tmp / "d");
  Directory dir = Directory::open_root(tmp.path(), true);
  EXPECT_EQ(error_of([&] { FileSink sink(dir, "d", 10, false); }), Errc::exists);
  EXPECT_EQ(error_of([&] { FileSink sink(dir, "d", 10, true); }), Errc::exists);
  EXPECT_TRUE(fs::is_directory(tmp / "d"));
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"d"});
}

TEST(FileSink, WriteBeyondTheSizeIsAProtocolError) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSink sink(dir, "out.bin", 100, false);
  const Bytes ten(10, 1);
  EXPECT_EQ(error_of([&] { sink.write_at(91, ten); }), Errc::protocol);
  EXPECT_EQ(error_of([&] { sink.write_at(101, {}); }), Errc::protocol);
  EXPECT_EQ(error_of([&] { sink.write_at(UINT64_MAX - 5, ten); }), Errc::protocol);  // offset + size wraps
  EXPECT_EQ(error_of([&] { sink.write_at(90, ten); }), std::nullopt);                 // exactly up to the end
  EXPECT_EQ(fs::file_size(tmp / sink.temp_name()), 100u);
}

TEST(FileSink, NamesThatAreNotFilesAreRefused) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  for (const char* name : {"", ".", "..", "sub/..", "/"}) {
    auto code = error_of([&] { FileSink sink(dir, name, 10, false); });
    EXPECT_TRUE(code == Errc::usage || code == Errc::permission) << '"' << name << '"';
  }
  EXPECT_TRUE(tmp.entries().empty());
}

TEST(FileSink, FailedPreallocationLeavesNothingBehind) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  const int fds_before = test::open_fd_count();
  // 4 EiB cannot be preallocated on any file system this runs on (EFBIG / ENOSPC).
  auto code = error_of([&] { FileSink sink(dir, "huge", std::uint64_t{1} << 62, false); });
  EXPECT_EQ(code, Errc::local_io);
  EXPECT_TRUE(tmp.entries().empty()) << "temporary file left behind";
  // A constructor that throws never runs the destructor: the temporary file's descriptor and
  // its directory's must be closed on this path too, or every refused OPEN with a huge size
  // leaks two descriptors in pxferd (fixed in 7327314; this guards the regression).
  EXPECT_EQ(test::open_fd_count(), fds_before) << "descriptors leaked by a failed FileSink";
}

TEST(FileSink, OtherRefusalsCloseTheirDescriptors) {
  TempDir tmp;
  write_file(tmp / "exists", {1});
  fs::create_directory(tmp / "d");
  Directory dir = Directory::open_root(tmp.path(), true);
  const int fds_before = test::open_fd_count();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(error_of([&] { FileSink sink(dir, "exists", 1, false); }), Errc::exists);
    EXPECT_EQ(error_of([&] { FileSink sink(dir, "d", 1, true); }), Errc::exists);
    EXPECT_EQ(error_of([&] { FileSink sink(dir, "nodir/x", 1, false); }), Errc::not_found);
  }
  EXPECT_EQ(test::open_fd_count(), fds_before);
}

// ---------------------------------------------------------------------------------------------
// FileSource

TEST(FileSource, ReadsAtOffsets) {
  TempDir tmp;
  const Bytes data = random_bytes(10000, 9);
  write_file(tmp / "src.bin", data);
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSource src(dir, "src.bin");
  EXPECT_EQ(src.size(), data.size());
  EXPECT_EQ(src.path(), "src.bin");
  Bytes out(1234);
  src.read_at(5000, out);
  EXPECT_EQ(out, Bytes(data.begin() + 5000, data.begin() + 6234));
  Bytes tail(16);
  src.read_at(data.size() - 16, tail);
  EXPECT_EQ(tail, Bytes(data.end() - 16, data.end()));
  src.check_unchanged();
}

TEST(FileSource, ReadBeyondAFileThatShrankIsAnIntegrityError) {
  TempDir tmp;
  write_file(tmp / "src.bin", random_bytes(8192, 10));
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSource src(dir, "src.bin");
  ASSERT_EQ(::truncate((tmp / "src.bin").c_str(), 5000), 0);
  Bytes out(4096);
  EXPECT_EQ(error_of([&] { src.read_at(0, out); }), std::nullopt);  // still there
  EXPECT_EQ(error_of([&] { src.read_at(4096, out); }), Errc::integrity);  // short read
  EXPECT_EQ(error_of([&] { src.read_at(8192 - 10, std::span(out).first(10)); }), Errc::integrity);
  EXPECT_EQ(error_of([&] { src.check_unchanged(); }), Errc::integrity);
}

TEST(FileSource, CheckUnchangedDetectsAnAppend) {
  TempDir tmp;
  write_file(tmp / "src.bin", random_bytes(100, 11));
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSource src(dir, "src.bin");
  EXPECT_EQ(error_of([&] { src.check_unchanged(); }), std::nullopt);
  {
    std::FILE* f = std::fopen((tmp / "src.bin").c_str(), "ab");
    ASSERT_NE(f, nullptr);
    std::fputc('x', f);
    std::fclose(f);
  }
  EXPECT_EQ(error_of([&] { src.check_unchanged(); }), Errc::integrity);
}

TEST(FileSource, CheckUnchangedDetectsAModificationOfTheSameSize) {
  TempDir tmp;
  write_file(tmp / "src.bin", random_bytes(100, 12));
  Directory dir = Directory::open_root(tmp.path(), true);
  FileSource src(dir, "src.bin");
  // Rewritten in place: same size, a different modification time (set explicitly, so the test
  // does not depend on the clock's granularity).
  int fd = ::open((tmp / "src.bin").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "y", 1, 50), 1);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;
  ASSERT_EQ(::futimens(fd, times), 0);
  ::close(fd);
  EXPECT_EQ(fs::file_size(tmp / "src.bin"), 100u);
  EXPECT_EQ(error_of([&] { src.check_unchanged(); }), Errc::integrity);
}

TEST(FileSource, MissingFileDirectoryAndMove) {
  TempDir tmp;
  fs::create_directory(tmp / "d");
  write_file(tmp / "f", {1, 2, 3});
  Directory dir = Directory::open_root(tmp.path(), true);
  EXPECT_EQ(error_of([&] { FileSource s(dir, "missing"); }), Errc::not_found);
  EXPECT_EQ(error_of([&] { FileSource s(dir, "d"); }), Errc::usage);
  FileSource a(dir, "f");
  FileSource b(std::move(a));
  Bytes out(3);
  b.read_at(0, out);
  EXPECT_EQ(out, (Bytes{1, 2, 3}));
}

// ---------------------------------------------------------------------------------------------
// Confinement below an export root

class Confinement : public ::testing::Test {
 protected:
  // tmp/
  //   outside.txt
  //   root/            <- the export root
  //     data.bin
  //     sub/f
  //     etc       -> /etc            (absolute, leaves the root)
  //     passwd    -> /etc/passwd
  //     up        -> ..              (relative, leaves the root)
  //     sneaky    -> sub/../../outside.txt
  //     alias     -> data.bin        (stays inside)
  //     subalias  -> sub
  //     absinside -> <tmp>/root/data.bin (absolute, even though it points inside)
  void SetUp() override {
    write_file(tmp / "outside.txt", {'o'});
    fs::create_directories(tmp / "root/sub");
    write_file(tmp / "root/data.bin", data);
    write_file(tmp / "root/sub/f", {'f'});
    fs::create_symlink("/etc", tmp / "root/etc");
    fs::create_symlink("/etc/passwd", tmp / "root/passwd");
    fs::create_symlink("..", tmp / "root/up");
    fs::create_symlink("sub/../../outside.txt", tmp / "root/sneaky");
    fs::create_symlink("data.bin", tmp / "root/alias");
    fs::create_symlink("sub", tmp / "root/subalias");
    fs::create_symlink(tmp / "root/data.bin", tmp / "root/absinside");
  }

  std::optional<Errc> open_error(const Directory& dir, const std::string& path) {
    return error_of([&] { FileSource s(dir, path); });
  }

  TempDir tmp;
  const Bytes data = random_bytes(64, 13);
};

// Opening a FIFO for reading waits for a writer: sources and SUMs open O_NONBLOCK and refuse
// anything but a regular file, so this returns at once (before, it hung until someone wrote).
TEST_F(Confinement, FifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo((tmp / "root/fifo").c_str(), 0600), 0);
  auto dir = Directory::open_root(tmp / "root", true);
  try {
    FileSource s(dir, "fifo");
    ADD_FAILURE() << "a FIFO was opened as a source";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file (a FIFO)"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(error_of([&] { sum_file(dir, "fifo", ChecksumAlgo::sha256, 0); }).has_value());
}

TEST_F(Confinement, SumStopsWhenCancelled) {
  auto dir = Directory::open_root(tmp / "root", true);
  std::atomic<bool> cancelled{false};
  EXPECT_EQ(sum_file(dir, "data.bin", ChecksumAlgo::sha256, data.size(), &cancelled).value,
            sum_file(dir, "data.bin", ChecksumAlgo::sha256, data.size()).value);
  cancelled = true;
  EXPECT_EQ(error_of([&] { sum_file(dir, "data.bin", ChecksumAlgo::sha256, data.size(), &cancelled); }),
            Errc::interrupted);
}

TEST_F(Confinement, DotDotAndAbsolutePathsAreRefused) {
  Directory dir = Directory::open_root(tmp / "root", true);
  EXPECT_TRUE(dir.confined());
  EXPECT_EQ(dir.display(), tmp / "root");
  for (const char* path : {"../outside.txt", "/etc/passwd", "a/../../x", "sub/../../outside.txt", "..", "sub/..",
                           "sub/../data.bin"}) {
    EXPECT_EQ(open_error(dir, path), Errc::permission) << path;
  }
}

TEST_F(Confinement, SymlinksLeavingTheRootAreRefused) {
  Directory dir = Directory::open_root(tmp / "root", true);
  for (const char* path : {"etc/passwd", "passwd", "up/outside.txt", "sneaky", "absinside"}) {
    EXPECT_EQ(open_error(dir, path), Errc::permission) << path;
  }
  // Writing through them is refused the same way, and nothing is created outside.
  EXPECT_EQ(error_of([&] { FileSink s(dir, "up/new.txt", 1, false); }), Errc::permission);
  EXPECT_EQ(error_of([&] { FileSink s(dir, "etc/pxfer-unit-test", 1, false); }), Errc::permission);
  EXPECT_FALSE(fs::exists(tmp / "new.txt"));
}

TEST_F(Confinement, SymlinksStayingInsideWork) {
  Directory dir = Directory::open_root(tmp / "root", true);
  FileSource a(dir, "alias");
  Bytes out(data.size());
  a.read_at(0, out);
  EXPECT_EQ(out, data);
  FileSource f(dir, "subalias/f");
  EXPECT_EQ(f.size(), 1u);
  FileSource plain(dir, "sub/f");
  EXPECT_EQ(plain.size(), 1u);
  FileSink sink(dir, "subalias/new", 1, false);
  sink.write_at(0, Bytes{'n'});
  sink.commit();
  EXPECT_TRUE(fs::exists(tmp / "root/sub/new"));
}

TEST_F(Confinement, UnconfinedDirectoryFollowsPathsAsTyped) {
  Directory dir = Directory::open_root(tmp / "root", false);
  EXPECT_FALSE(dir.confined());
  EXPECT_EQ(open_error(dir, "../outside.txt"), std::nullopt);
  EXPECT_EQ(open_error(dir, "up/outside.txt"), std::nullopt);
  EXPECT_EQ(open_error(dir, tmp / "outside.txt"), std::nullopt);
}

TEST(Directory, OpenRootErrors) {
  TempDir tmp;
  write_file(tmp / "file", {1});
  EXPECT_EQ(error_of([&] { Directory::open_root(tmp / "missing", true); }), Errc::not_found);
  EXPECT_EQ(error_of([&] { Directory::open_root(tmp / "file", true); }), Errc::not_found);  // ENOTDIR
  Directory cur = Directory::current();
  EXPECT_FALSE(cur.confined());
  EXPECT_GE(cur.fd(), 0);
  Directory moved = std::move(cur);
  EXPECT_GE(moved.fd(), 0);
  EXPECT_EQ(cur.fd(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
}

// ---------------------------------------------------------------------------------------------
// check_relative_path

TEST(CheckRelativePath, AcceptsPathsBelowTheRoot) {
  for (const char* path : {"a", "a/b", "a/b/", "./a", "a/./b", "..a", "a..", "a/...", "...", ".hidden", "a/..b/c",
                           "a//b"}) {
    EXPECT_EQ(error_of([&] { check_relative_path(path); }), std::nullopt) << path;
  }
}

TEST(CheckRelativePath, RefusesEscapes) {
  for (const char* path : {"/etc/passwd", "/", "..", "../x", "a/..", "a/../b", "a/../../x", "a/b/../../..", "../",
                           "x/../"}) {
    EXPECT_EQ(error_of([&] { check_relative_path(path); }), Errc::permission) << path;
  }
}

TEST(CheckRelativePath, RefusesEmptyAndNul) {
  EXPECT_EQ(error_of([] { check_relative_path(""); }), Errc::usage);
  EXPECT_EQ(error_of([] { check_relative_path(std::string("a\0b", 3)); }), Errc::usage);
}

TEST(CheckRelativePath, MessageNamesThePath) {
  try {
    check_relative_path("a/../../secret");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a/../../secret"), std::string::npos) << e.what();
  }
}


// The space of the file is reserved on tmpfs too (a small file at once, a large one in steps ahead
// of the writes: SpaceReservation.*): what others write meanwhile cannot make the transfer fail
// halfway; a file that cannot fit is refused at once.
TEST(FileSink, OnTmpfsTheWholeFileIsReservedAndWhatCannotFitIsRefused) {
  TmpfsDir tmp;
  if (tmp.path().empty()) GTEST_SKIP() << "no tmpfs: not root (to mount one) and /dev/shm is not tmpfs";
  Directory dir = Directory::open_root(tmp.path(), true);
  {
    FileSink sink(dir, "f.bin", 4 << 20, false);
    std::vector<fs::directory_entry> entries(fs::directory_iterator(tmp.path()), fs::directory_iterator{});
    ASSERT_EQ(entries.size(), 1u);
    struct stat st {};
    ASSERT_EQ(::stat(entries[0].path().c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 4 << 20);
    EXPECT_GE(static_cast<std::uint64_t>(st.st_blocks) * 512, std::uint64_t{4} << 20) << "the file's space is not reserved";
  }
  struct statfs fs {};
  ASSERT_EQ(::statfs(tmp.path().c_str(), &fs), 0);
  const std::uint64_t too_big = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_bsize + (1 << 20);
  if (fs.f_blocks != 0) {
    auto code = error_of([&] { FileSink sink(dir, "big.bin", too_big, false); });
    EXPECT_EQ(code, Errc::local_io);
  }
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "partial file left behind";
}

}  // namespace
}  // namespace pxfer

namespace pxfer {
namespace {
// A small file (a sink that reserves nothing: PUT_SMALL, GET_SMALL) into a full file system: no
// free-space probe before it (one fstatfs per file less), and its one write fails with the same
// "No space left on device (free some space ...)" line; nothing is left behind.
TEST(FileSink, ASmallFileIntoAFullFileSystemFailsAtItsWrite) {
  test::TmpfsDir tmp;
  if (tmp.path().empty() || !tmp.mounted())
    GTEST_SKIP() << "needs a tmpfs of its own to fill: mounting one needs root (CI runs as root)";
  {
    std::ofstream filler(tmp.path() + "/filler");
    std::string chunk(1 << 16, 'x');
    while (filler.write(chunk.data(), static_cast<std::streamsize>(chunk.size()))) {
    }
  }
  Directory dir = Directory::open_root(tmp.path(), true);
  SinkOptions options;
  options.reserve = false;
  options.watch_directory = false;
  std::vector<std::uint8_t> data(64 * 1024, 7);
  try {
    FileSink sink(dir, "small.bin", data.size(), options);
    sink.write_at(0, data);
    ADD_FAILURE() << "a write into a full file system passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::local_io);
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("free some space"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("small.bin"), std::string::npos) << e.what();
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path())) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"filler"});
}
}  // namespace
}  // namespace pxfer
