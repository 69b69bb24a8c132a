// Small files committed as a group (io/commit_group.hpp): nothing takes its final name before the
// group commits, one file's failure stays its own, and a group dropped uncommitted leaves nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "io/commit_group.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::random_bytes;
using test::read_file;
using test::TempDir;
using test::write_file;
namespace fs = std::filesystem;

SinkOptions small_sink(bool overwrite = false) {
  SinkOptions o{overwrite};
  o.reserve = false;
  o.watch_directory = false;
  return o;
}

std::unique_ptr<FileSink> written(const Directory& dir, const std::string& path, const Bytes& data, bool overwrite = false) {
  auto sink = std::make_unique<FileSink>(dir, path, data.size(), small_sink(overwrite));
  if (!data.empty()) sink->write_at(0, data);
  return sink;
}

TEST(CommitGroup, NothingTakesItsFinalNameBeforeTheGroupCommitsAndEverythingDoesAfter) {
  TempDir tmp;
  fs::create_directory(tmp / "a");
  fs::create_directory(tmp / "b");
  Directory dir = Directory::open_root(tmp.path(), true);
  std::vector<std::pair<std::string, Bytes>> files;
  for (int i = 0; i < 6; ++i)
    files.emplace_back((i % 2 ? "a/f" : "b/f") + std::to_string(i), random_bytes(static_cast<std::size_t>(i) * 5000, i + 1));
  CommitGroup group;
  for (const auto& [path, data] : files) group.add(written(dir, path, data));
  EXPECT_EQ(group.size(), files.size());
  for (const auto& [path, data] : files) EXPECT_FALSE(fs::exists(tmp / path)) << path << " named before the commit";
  EXPECT_EQ(tmp.entries().size(), 2u);
  auto outcomes = group.commit();
  EXPECT_TRUE(group.empty());
  ASSERT_EQ(outcomes.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_FALSE(outcomes[i].error) << outcomes[i].error->what();
    EXPECT_EQ(outcomes[i].sink->path(), files[i].first);
    EXPECT_NE(outcomes[i].sink->placed().inode, 0u);
    EXPECT_EQ(read_file(tmp / files[i].first), files[i].second);
  }
  outcomes.clear();  // committed sinks leave their files alone
  for (const char* d : {"a", "b"})
    for (const auto& e : fs::directory_iterator(tmp / d))
      EXPECT_NE(e.path().filename().string()[0], '.') << "a temporary stayed: " << e.path();
}

TEST(CommitGroup, AFinalNameTakenMeanwhileFailsThatFileAloneAndIsNotClobbered) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  const Bytes one = random_bytes(1000, 1), two = random_bytes(2000, 2), three = random_bytes(3000, 3);
  CommitGroup group;
  group.add(written(dir, "one", one));
  group.add(written(dir, "two", two));
  group.add(written(dir, "three", three, true));
  write_file(tmp / "two", Bytes{'x'});    // appeared meanwhile, no overwrite: kept
  write_file(tmp / "three", Bytes{'y'});  // appeared meanwhile, overwrite asked: replaced
  auto outcomes = group.commit();
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_FALSE(outcomes[0].error);
  ASSERT_TRUE(outcomes[1].error);
  EXPECT_EQ(outcomes[1].error->code(), Errc::exists) << outcomes[1].error->what();
  EXPECT_FALSE(outcomes[2].error);
  outcomes.clear();
  EXPECT_EQ(read_file(tmp / "one"), one);
  EXPECT_EQ(read_file(tmp / "two"), Bytes{'x'});
  EXPECT_EQ(read_file(tmp / "three"), three);
  EXPECT_EQ(tmp.entries(), (std::vector<std::string>{"one", "three", "two"})) << "the failed file's temporary stayed";
}

TEST(CommitGroup, AGroupDroppedWithoutItsCommitLeavesNothingBehind) {
  TempDir tmp;
  Directory dir = Directory::open_root(tmp.path(), true);
  {
    CommitGroup group;
    group.add(written(dir, "a", random_bytes(100, 1)));
    group.add(written(dir, "b", random_bytes(100, 2)));
    EXPECT_EQ(tmp.entries().size(), 2u);
  }
  EXPECT_TRUE(tmp.entries().empty());
}

// A run of small files opens each directory once (ParentDirectories), still checked as every
// path is: a file in the same directory as the one before shares its descriptor, another directory
// gets its own, a path that climbs or a parent that is a symlink is refused beneath a get -r's
// target, and the descriptors go with the last sink that holds them.
TEST(ParentDirectories, EachDirectoryOpenedOnceStillConfinedAndClosedWithItsLastSink) {
  TempDir tmp;
  fs::create_directory(tmp / "a");
  fs::create_directory(tmp / "b");
  fs::create_directory(tmp / "outside");
  fs::create_directory_symlink(tmp / "outside", tmp / "a/link");
  auto open_fds = [] { return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{}); };
  const auto before = open_fds();
  {
    Directory dir = Directory::open_beneath(tmp.path());
    ParentDirectories parents(dir);
    SinkTarget a1 = parents.target("a/f1"), a2 = parents.target("a/f2"), b1 = parents.target("b/f1");
    SinkTarget a3 = parents.target("a/f3"), top = parents.target("top");
    EXPECT_EQ(a1.parent, a2.parent) << "the same directory opened twice in a row";
    EXPECT_NE(a2.parent, b1.parent);
    EXPECT_NE(a1.parent->id, b1.parent->id);
    EXPECT_EQ(a1.parent->id, a3.parent->id);
    EXPECT_EQ(a1.leaf, "f1");
    EXPECT_EQ(top.leaf, "top");
    for (const char* bad : {"../escape", "a/../../escape", "/etc/x", "a/link/x", ""}) {
      EXPECT_THROW(parents.target(bad), Error) << bad;
    }
    const Bytes one = random_bytes(3000, 1), two = random_bytes(5000, 2), three = random_bytes(7000, 3);
    CommitGroup group;
    for (auto [target, path, data] : {std::tuple{a1, "a/f1", &one}, std::tuple{b1, "b/f1", &two}, std::tuple{top, "top", &three}}) {
      auto sink = std::make_unique<FileSink>(target, path, data->size(), small_sink());
      sink->write_at(0, *data);
      group.add(std::move(sink));
    }
    for (const auto& o : group.commit()) EXPECT_FALSE(o.error) << o.error->what();
    EXPECT_EQ(read_file(tmp / "a/f1"), one);
    EXPECT_EQ(read_file(tmp / "b/f1"), two);
    EXPECT_EQ(read_file(tmp / "top"), three);
    EXPECT_TRUE(fs::is_empty(tmp / "outside"));
  }
  EXPECT_EQ(open_fds(), before) << "a directory's descriptor outlived its sinks";
}

}  // namespace
}  // namespace pxfer
