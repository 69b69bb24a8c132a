// pxferd's memory of the directories it made for MKDIR (server/made_directories.hpp): a small file
// put into one of them skips the lookups of its name; which files count must not depend on how a
// request spells the path.
#include "server/made_directories.hpp"

#include <gtest/gtest.h>

#include <string>

namespace pxfer::server {
namespace {

TEST(MadeDirectories, KeysIgnoreEmptyAndDotComponents) {
  EXPECT_EQ(MadeDirectories::key("a//b/./c/"), "a/b/c");
  EXPECT_EQ(MadeDirectories::key("/a/b"), "a/b");
  EXPECT_EQ(MadeDirectories::key("."), "");
  EXPECT_EQ(MadeDirectories::key(""), "");
}

TEST(MadeDirectories, OnlyFilesDirectlyInAMadeDirectoryCount) {
  MadeDirectories made(10);
  made.made("tree/sub/");
  EXPECT_TRUE(made.holds_parent_of("tree/sub/f1"));
  EXPECT_TRUE(made.holds_parent_of("/tree//sub/./f2"));
  EXPECT_FALSE(made.holds_parent_of("tree/f"));            // its parent was not made here
  EXPECT_FALSE(made.holds_parent_of("tree/sub/deeper/f"));  // nor this one
  EXPECT_FALSE(made.holds_parent_of("f"));                  // the export root never is
  EXPECT_FALSE(made.holds_parent_of("tree/subx/f"));
}

TEST(MadeDirectories, PastItsCapacityItStartsAgain) {
  MadeDirectories made(3);
  for (int i = 0; i < 3; ++i) made.made("d" + std::to_string(i));
  EXPECT_TRUE(made.holds_parent_of("d0/f"));
  made.made("d3");  // the fourth: the set starts again with it
  EXPECT_FALSE(made.holds_parent_of("d0/f"));
  EXPECT_TRUE(made.holds_parent_of("d3/f"));
}

}  // namespace
}  // namespace pxfer::server
