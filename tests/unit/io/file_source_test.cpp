// FileSource::open_if_cached (issue 11.7 with issue 12's per-file cost): a get's source opens on the
// network thread only when the kernel resolves its path from its caches; what it opens there gets
// the same checks as on the blocking pool (a regular file, never a FIFO, never outside the root).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "io/file_io.hpp"
#include "pxfer/common/error.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using test::TempDir;

TEST(FileSource, AFileJustWrittenOpensFromTheCachesWithItsSize) {
  TempDir tmp;
  test::write_file(tmp.path() + "/a.bin", std::vector<std::uint8_t>(1000, 7));
  Directory dir = Directory::open_root(tmp.path(), true);
  std::optional<FileSource> source = FileSource::open_if_cached(dir, "a.bin");
  ASSERT_TRUE(source) << "a path created a moment ago is in the dentry cache";
  EXPECT_EQ(source->size(), 1000u);
  std::vector<std::uint8_t> head(10);
  source->read_at(0, head);
  EXPECT_EQ(head, std::vector<std::uint8_t>(10, 7));
}

TEST(FileSource, AFifoIsRefusedOnTheFastPathWithoutWaitingForAWriter) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp.path() + "/pipe").c_str(), 0600), 0);
  Directory dir = Directory::open_root(tmp.path(), true);
  try {
    auto source = FileSource::open_if_cached(dir, "pipe");
    // Not cached (never on a kernel without RESOLVE_CACHED): the pool's open refuses it instead.
    EXPECT_FALSE(source);
    EXPECT_THROW(FileSource(dir, "pipe"), Error);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

// Refused on the fast path, or not cached there and refused by the ordinary open.
bool refused(const Directory& dir, const std::string& path) {
  try {
    if (FileSource::open_if_cached(dir, path)) return false;
    FileSource source(dir, path);
    return false;
  } catch (const Error&) {
    return true;
  }
}

TEST(FileSource, TheFastPathRefusesWhatTheRootForbids) {
  TempDir tmp;
  test::write_file(tmp.path() + "/a.bin", std::vector<std::uint8_t>(10, 1));
  Directory dir = Directory::open_root(tmp.path(), true);
  EXPECT_TRUE(refused(dir, "../a.bin"));
  EXPECT_TRUE(refused(dir, "/etc/passwd"));
  ASSERT_EQ(::symlink("/etc/passwd", (tmp.path() + "/out").c_str()), 0);
  EXPECT_TRUE(refused(dir, "out"));
  EXPECT_FALSE(refused(dir, "a.bin"));
}

}  // namespace
}  // namespace pxfer
