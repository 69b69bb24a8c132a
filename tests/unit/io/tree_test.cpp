// LIST and MKDIR on the server's side: the walk below an export root and mkdir -p, both through
// descriptors that never follow a symlink out of the root.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "io/tree.hpp"
#include "pxfer/common/error.hpp"
#include "wire/wire.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {
namespace fs = std::filesystem;

using test::code_of;

class Tree : public ::testing::Test {
 protected:
  test::TempDir scratch;
  std::string root_path = scratch / "root";
  std::string outside = scratch / "outside";
  Tree() {
    fs::create_directories(root_path + "/d/e");
    fs::create_directories(outside);
    test::write_file(root_path + "/d/f", test::random_bytes(10, 1));
    test::write_file(root_path + "/top", {});
    test::write_file(outside + "/secret", test::random_bytes(3, 2));
    fs::create_directory_symlink(outside, root_path + "/d/out");
    fs::create_symlink(outside + "/secret", root_path + "/link");
    ::mkfifo((root_path + "/fifo").c_str(), 0600);
  }
  Directory root() const { return Directory::open_root(root_path, true); }
};

TEST_F(Tree, ListsDirectoriesAndFilesParentsFirstSkippingSymlinksAndSpecials) {
  auto entries = list_tree(root(), "");
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back(e.relative_path);
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"d", "d/e", "d/f", "top"}));
  EXPECT_LT(std::find(names.begin(), names.end(), "d") - names.begin(),
            std::find(names.begin(), names.end(), "d/f") - names.begin());
  for (const auto& e : entries) {
    if (e.relative_path == "d/f") {
      EXPECT_EQ(e.kind, wire::EntryKind::file);
      EXPECT_EQ(e.size, 10u);
    }
    if (e.relative_path == "d") {  // braces: EXPECT_EQ is an if/else inside (-Wdangling-else)
      EXPECT_EQ(e.kind, wire::EntryKind::directory);
    }
  }
}

TEST_F(Tree, AFileIsAListingOfOne) {
  auto entries = list_tree(root(), "d/f");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].relative_path, "");
  EXPECT_EQ(entries[0].size, 10u);
}

TEST_F(Tree, RefusesPathsOutOfTheRootAndTooManyEntries) {
  EXPECT_EQ(code_of([&] { list_tree(root(), "../"); }), Errc::permission);
  EXPECT_EQ(code_of([&] { list_tree(root(), "/etc"); }), Errc::permission);
  EXPECT_EQ(code_of([&] { list_tree(root(), "d/out"); }), Errc::permission);  // a symlink out
  EXPECT_EQ(code_of([&] { list_tree(root(), "missing"); }), Errc::not_found);
  EXPECT_EQ(code_of([&] { list_tree(root(), "", 3); }), Errc::usage);
  EXPECT_EQ(list_tree(root(), "", 4).size(), 4u);
}

TEST_F(Tree, MakeDirectoriesCreatesParentsAndNeverFollowsSymlinks) {
  EXPECT_TRUE(make_directories(root(), "new/a/b"));  // made here
  EXPECT_TRUE(fs::is_directory(root_path + "/new/a/b"));
  EXPECT_FALSE(make_directories(root(), "new/a/b"));  // existing: fine, and not made here
  EXPECT_TRUE(make_directories(root(), "new/a/c"));   // a new last directory under existing parents
  EXPECT_EQ(code_of([&] { make_directories(root(), "d/out/x"); }), Errc::permission);
  EXPECT_FALSE(fs::exists(outside + "/x"));
  EXPECT_EQ(code_of([&] { make_directories(root(), "../x"); }), Errc::permission);
  EXPECT_NE(code_of([&] { make_directories(root(), "top/x"); }), Errc::ok);  // a file in the way
}

// pxferd streams a LIST: frames of at most one control payload, `more` on all but the last, and
// together the same entries, in the same order, as the whole listing.
TEST_F(Tree, WalkYieldsFramesThatFitAndAddUpToTheWholeListing) {
  fs::create_directories(root_path + "/big");
  for (int i = 0; i < 3000; ++i)
    test::write_file(root_path + "/big/a-name-long-enough-to-need-several-frames-" + std::to_string(i), {});
  const auto whole = list_tree(root(), "");
  ASSERT_EQ(whole.size(), 3005u);
  TreeWalk walk(root(), "");
  std::vector<wire::ListEntry> streamed;
  std::size_t frames = 0;
  for (;;) {
    wire::Listing frame = walk.next();
    ++frames;
    EXPECT_LE(wire::encode(frame).size(), wire::header_size + wire::max_control_payload);
    for (auto& e : frame.entries) streamed.push_back(std::move(e));
    if (!frame.more) break;
    EXPECT_FALSE(frame.entries.empty());
  }
  EXPECT_GT(frames, 2u);
  EXPECT_EQ(streamed, whole);
}

TEST_F(Tree, WalkOfAnEmptyDirectoryIsOneEmptyFrameAndTooManyEntriesThrowMidway) {
  fs::create_directories(root_path + "/empty");
  TreeWalk empty(root(), "empty");
  auto frame = empty.next();
  EXPECT_TRUE(frame.entries.empty());
  EXPECT_EQ(frame.more, 0);
  TreeWalk limited(root(), "", 3);
  EXPECT_EQ(code_of([&] { limited.next(); }), Errc::usage);
}

}  // namespace
}  // namespace pxfer
