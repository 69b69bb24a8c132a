// STAT, RENAME and REMOVE_TREE on the server's side (io/namespace_ops.hpp): confined to the export
// root, never following a symlink, never touching the root itself, never replacing unasked.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "io/namespace_ops.hpp"
#include "pxfer/common/error.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {
namespace fs = std::filesystem;

using test::code_of;

class NamespaceOps : public ::testing::Test {
 protected:
  test::TempDir scratch;
  std::string root_path = scratch / "root";
  std::string outside = scratch / "outside";
  // Before `root` opens it (members are made in order).
  bool make_tree() {
    fs::create_directories(root_path + "/d/e");
    fs::create_directories(outside);
    test::write_file(root_path + "/d/f", test::random_bytes(10, 1));
    test::write_file(root_path + "/top", test::random_bytes(3, 3));
    test::write_file(outside + "/secret", test::random_bytes(3, 2));
    fs::create_directory_symlink(outside, root_path + "/d/e/out");
    fs::create_symlink(outside + "/secret", root_path + "/link");
    return true;
  }
  bool made = make_tree();
  Directory root = Directory::open_root(root_path, true);
};

TEST_F(NamespaceOps, StatNamesFilesDirectoriesAndTheRoot) {
  auto f = stat_entry(root, "d/f");
  EXPECT_EQ(f.kind, wire::EntryKind::file);
  EXPECT_EQ(f.size, 10u);
  EXPECT_EQ(stat_entry(root, "d").kind, wire::EntryKind::directory);
  EXPECT_EQ(stat_entry(root, "d/").kind, wire::EntryKind::directory);
  EXPECT_EQ(stat_entry(root, "").kind, wire::EntryKind::directory);
  EXPECT_EQ(code_of([&] { stat_entry(root, "none"); }), Errc::not_found);
  EXPECT_EQ(code_of([&] { stat_entry(root, "link"); }), Errc::permission) << "a symlink is refused, not followed";
  EXPECT_EQ(code_of([&] { stat_entry(root, "../outside/secret"); }), Errc::permission);
}

TEST_F(NamespaceOps, RenameRefusesAnExistingTargetUnlessAskedAndNeverTheRoot) {
  EXPECT_EQ(code_of([&] { rename_entry(root, "top", "d/f", false); }), Errc::exists);
  EXPECT_EQ(fs::file_size(root_path + "/d/f"), 10u);
  EXPECT_EQ(code_of([&] { rename_entry(root, "top", "d/f", true); }), Errc::ok);
  EXPECT_EQ(fs::file_size(root_path + "/d/f"), 3u);
  EXPECT_FALSE(fs::exists(root_path + "/top"));
  EXPECT_EQ(code_of([&] { rename_entry(root, "", "x", false); }), Errc::permission);
  EXPECT_EQ(code_of([&] { rename_entry(root, "d/f", "../outside/f", false); }), Errc::permission);
  EXPECT_FALSE(fs::exists(outside + "/f"));
}

TEST_F(NamespaceOps, RemoveEmptiesADirectoryOnlyWhenRecursiveAndNeverFollowsASymlink) {
  EXPECT_EQ(code_of([&] { remove_entry(root, "d", false); }), Errc::exists);
  EXPECT_TRUE(fs::exists(root_path + "/d/f"));
  EXPECT_EQ(code_of([&] { remove_entry(root, "d", true); }), Errc::ok);
  EXPECT_FALSE(fs::exists(root_path + "/d"));
  EXPECT_TRUE(fs::exists(outside + "/secret")) << "the symlink inside went, its target stayed";
  EXPECT_EQ(code_of([&] { remove_entry(root, "link", false); }), Errc::ok);
  EXPECT_TRUE(fs::exists(outside + "/secret"));
  EXPECT_EQ(code_of([&] { remove_entry(root, "", true); }), Errc::permission);
  EXPECT_EQ(code_of([&] { remove_entry(root, ".", true); }), Errc::permission);
  EXPECT_EQ(code_of([&] { remove_entry(root, "none", false); }), Errc::not_found);
  EXPECT_TRUE(fs::exists(root_path));
}

TEST_F(NamespaceOps, ListChildrenGivesOneLevelWithoutSymlinks) {
  auto names = [](const std::vector<wire::ListEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.relative_path);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(names(list_children(root, "")), (std::vector<std::string>{"d", "top"})) << "link is a symlink: left out";
  EXPECT_EQ(names(list_children(root, "d")), (std::vector<std::string>{"e", "f"})) << "not d/e/out: one level only";
  EXPECT_EQ(names(list_children(root, "d/e")), std::vector<std::string>{}) << "out is a symlink";
  auto file = list_children(root, "top");
  ASSERT_EQ(file.size(), 1u);
  EXPECT_EQ(file[0].relative_path, "");
  EXPECT_EQ(file[0].size, 3u);
  EXPECT_EQ(code_of([&] { list_children(root, "none"); }), Errc::not_found);
  EXPECT_EQ(code_of([&] { list_children(root, "d/e/out"); }), Errc::permission);
}

}  // namespace
}  // namespace pxfer
