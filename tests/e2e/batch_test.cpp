// Many files in one run against a real pxferd: put -r / get -r of a tree, files in flight at
// once, failures that do not stop the rest, --skip-existing, "into this directory" with a
// trailing '/', and LIST/MKDIR confinement.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {
namespace fs = std::filesystem;

constexpr int exit_not_found = 3, exit_permission = 4, exit_exists = 9;

// Relative path -> size (-1 for a directory) of everything below `dir`, symlinks not followed.
std::map<std::string, std::int64_t> tree_of(const std::string& dir) {
  std::map<std::string, std::int64_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    auto rel = fs::relative(e.path(), dir).generic_string();
    auto st = e.symlink_status();
    if (fs::is_directory(st)) out[rel] = -1;
    else if (fs::is_regular_file(st)) out[rel] = static_cast<std::int64_t>(fs::file_size(e.path()));
  }
  return out;
}

// Same names, same sizes, same bytes.
void expect_same_tree(const std::string& expected, const std::string& actual) {
  auto want = tree_of(expected);
  ASSERT_EQ(want, tree_of(actual)) << expected << " vs " << actual;
  for (const auto& [rel, size] : want) {
    if (size >= 0) {
      EXPECT_TRUE(files_equal(expected + "/" + rel, actual + "/" + rel)) << rel;
    }
  }
}

class Batch : public ServedTest {
 protected:
  Batch() : ServedTest({}, "127.0.0.1:0", big_file_base()) {}

  // Nested directories, an empty one, zero-byte files, one file over a block.
  std::string make_tree(const std::string& name) {
    std::string top = local + "/" + name;
    fs::create_directories(top + "/a/b/c");
    fs::create_directories(top + "/empty");
    make_file(top + "/top.dat", 100 * KiB + 7, 1);
    make_file(top + "/a/one.dat", 3 * MiB + 1, 2);
    make_file(top + "/a/b/zero.dat", 0, 3);
    make_file(top + "/a/b/c/deep.dat", 5, 4);
    make_file(top + "/zero2", 0, 5);
    return top;
  }
};

TEST_F(Batch, RecursivePutThenGetCopiesTheWholeTree) {
  std::string tree = make_tree("tree");
  auto put = run_pxfer("put", "-r", tree, server.url(""));  // url("") ends in '/': into the root
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  expect_same_tree(tree, root + "/tree");
  EXPECT_EQ(count_lines_containing(put.out, "done "), 5u) << put.out;
  EXPECT_NE(put.out.find("[5/5]"), std::string::npos);
  EXPECT_NE(put.out.find("5 files: 5 done, 0 skipped, 0 failed"), std::string::npos) << put.out;
  EXPECT_EQ(rate_line_bytes(put.out).size(), 1u) << "only the aggregate rate line: " << put.out;

  ::chmod((root + "/tree/a/one.dat").c_str(), 0640);
  auto get = run_pxfer("get", "-r", "--preserve", server.url("tree/"), local + "/back");
  ASSERT_EQ(get.exit_code, 0) << get.err << get.out;
  expect_same_tree(tree, local + "/back");
  struct stat st {};
  ASSERT_EQ(::stat((local + "/back/a/one.dat").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(Batch, TwentyFilesFourAtATime) {
  std::string many = local + "/many";
  fs::create_directories(many);
  // Over limits::max_small_file, so each file has its own OPEN and data streams (small files move
  // whole in one frame: BatchSmall below).
  for (int i = 0; i < 20; ++i) make_file(many + "/f" + std::to_string(i), 1 * MiB + (i + 1) * 37 * KiB, i);
  // Paced at 4 MiB/s per connection (about 2 s for the 27 MiB over 4 x 2 streams), so the server's
  // disk shows the files being written at once: four, never more.
  pxfer::testing::FaultProxy paced(server.port());
  paced.set_rate(4 * MiB);
  pin_server("127.0.0.1:" + std::to_string(paced.port()), server.fingerprint());
  TemporaryWatcher writing(root);
  auto put = run_pxfer("put", "-r", "-c", "4", "-p", "2", many, "pxfer://127.0.0.1:" + std::to_string(paced.port()) + "/many");
  writing.stop();
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  expect_same_tree(many, root + "/many");
  EXPECT_EQ(writing.seen().size(), 20u) << writing.samples() << " samples";
  EXPECT_LE(writing.most_at_once(), 4u) << "more than -c 4 files were being written at once";
  EXPECT_GE(writing.most_at_once(), 3u) << "-c 4 but at most " << writing.most_at_once() << " files at once ("
                                        << writing.samples() << " samples)";
  EXPECT_EQ(count_lines_containing(put.out, "done "), 20u) << put.out;
  EXPECT_NE(put.out.find("[20/20]"), std::string::npos);

  auto get = run_pxfer("get", "-r", "-c", "4", "--max-streams", "4", "-q", server.url("many"), local + "/many-back");
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "") << "-q prints only errors";
  expect_same_tree(many, local + "/many-back");
}

// pxferd remembers the directories its MKDIRs made, and a small file put into one of them is not
// looked for before it is written (docs/performance.md section 23); the client does the same for a
// get -r into a directory it made. A second run into the same tree must still replace nothing
// without --overwrite: the final rename refuses every name that is taken, at both ends.
TEST_F(Batch, ASecondRunIntoTheSameTreeReplacesNothingWithoutOverwrite) {
  std::string tree = local + "/again";
  fs::create_directories(tree + "/sub");
  for (int i = 0; i < 6; ++i) make_file(tree + "/sub/f" + std::to_string(i), 10 * KiB + i, 10 + i);
  auto first = run_pxfer("put", "-r", "-c", "2", tree, server.url(""));
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  auto got = run_pxfer("get", "-r", "-c", "2", server.url("again"), local + "/back");
  ASSERT_EQ(got.exit_code, 0) << got.err << got.out;
  const auto stored = tree_of(root + "/again");

  for (int i = 0; i < 6; ++i) make_file(tree + "/sub/f" + std::to_string(i), 10 * KiB + i, 50 + i);  // other bytes
  auto second = run_pxfer("put", "-r", "-c", "2", tree, server.url(""));
  EXPECT_EQ(second.exit_code, exit_exists) << second.err << second.out;
  EXPECT_NE(second.err.find("6 files: 0 done, 0 skipped, 6 failed"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("destination exists; use --overwrite to replace it"), std::string::npos) << second.err;
  EXPECT_EQ(tree_of(root + "/again"), stored) << "no file replaced, no temporary left behind";
  for (int i = 0; i < 6; ++i)
    EXPECT_TRUE(files_equal(root + "/again/sub/f" + std::to_string(i), local + "/back/sub/f" + std::to_string(i))) << i;

  make_file(root + "/again/sub/f0", 10 * KiB, 99);  // the server's copy changes; the client's must stay
  auto get_again = run_pxfer("get", "-r", "-c", "2", server.url("again"), local + "/back");
  EXPECT_EQ(get_again.exit_code, exit_exists) << get_again.err << get_again.out;
  EXPECT_FALSE(files_equal(root + "/again/sub/f0", local + "/back/sub/f0"));
  EXPECT_EQ(tree_of(local + "/back"), stored);

  auto forced = run_pxfer("put", "-r", "-c", "2", "--overwrite", tree, server.url(""));
  ASSERT_EQ(forced.exit_code, 0) << forced.err << forced.out;
  expect_same_tree(tree, root + "/again");
}

TEST_F(Batch, AFailingFileDoesNotStopTheOthers) {
  make_file(local + "/good1", 10 * KiB, 1);
  make_file(local + "/good2", 20 * KiB, 2);
  write_text(local + "/list",
             "# three good lines (two puts, a get) and a missing file\n" + local + "/good1 " + server.url("") + "\n" + local +
                 "/missing.dat " + server.url("missing.dat") + "\n" + local + "/good2 " + server.url("g2") + "\n" +
                 server.url("served") + " " + local + "/served-back\n");
  make_file(root + "/served", 30 * KiB, 3);  // not one of the puts: files run in any order
  auto r = run_pxfer("put", "--from-file", local + "/list", "-c", "2");
  EXPECT_EQ(r.exit_code, exit_not_found) << r.err << r.out;
  EXPECT_TRUE(files_equal(local + "/good1", root + "/good1"));
  EXPECT_TRUE(files_equal(local + "/good2", root + "/g2"));
  EXPECT_TRUE(files_equal(root + "/served", local + "/served-back"));
  EXPECT_FALSE(path_exists(root + "/missing.dat"));
  EXPECT_NE(r.err.find("FAILED " + local + "/missing.dat: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("failed: " + local + "/missing.dat: "), std::string::npos) << "final report: " << r.err;
  EXPECT_NE(r.err.find("4 files: 3 done, 0 skipped, 1 failed"), std::string::npos) << r.err;
}

TEST_F(Batch, NetworkFailuresAreRetriedWithBackoff) {
  make_file(local + "/f", 1 * KiB, 1);
  write_text(local + "/list", local + "/f pxfer://127.0.0.1:" + std::to_string(closed_port()) + "/f\n");
  auto start = std::chrono::steady_clock::now();
  auto r = run_pxfer("put", "--from-file", local + "/list", "--retries", "1");
  EXPECT_EQ(r.exit_code, 5) << r.err;  // network
  EXPECT_NE(r.err.find("(after 2 attempts)"), std::string::npos) << r.err;
  // The first pause is 1 s with ±50 % jitter (pxfer/core/retry.hpp): at least 0.5 s, never none.
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500)) << "no pause before the retry";
}

TEST_F(Batch, SkipExistingSkipsOnlySameSizeAndChecksum) {
  const std::string same = "(exists, same size and checksum)";
  std::string tree = make_tree("s");
  ASSERT_EQ(run_pxfer("put", "-r", tree, server.url("s")).exit_code, 0);
  make_file(root + "/s/top.dat", 10, 9);                  // a different size: moved again
  make_file(root + "/s/a/one.dat", 3 * MiB + 1, 77);      // same size, other bytes: moved again
  auto again = run_pxfer("put", "-r", "--skip-existing", "--overwrite", tree, server.url("s"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(count_lines_containing(again.out, same), 3u) << again.out;
  EXPECT_EQ(count_lines_containing(again.out, "done " + tree + "/top.dat"), 1u) << again.out;
  EXPECT_EQ(count_lines_containing(again.out, "done " + tree + "/a/one.dat"), 1u) << again.out;
  expect_same_tree(tree, root + "/s");

  ASSERT_EQ(run_pxfer("get", "-r", server.url("s"), local + "/s-back").exit_code, 0);
  make_file(local + "/s-back/a/b/c/deep.dat", 5, 78);  // same size, other bytes: fetched again
  auto get_again = run_pxfer("get", "-r", "--skip-existing", "--overwrite", server.url("s"), local + "/s-back");
  ASSERT_EQ(get_again.exit_code, 0) << get_again.err;
  EXPECT_EQ(count_lines_containing(get_again.out, same), 4u) << get_again.out;
  EXPECT_EQ(count_lines_containing(get_again.out, "/a/b/c/deep.dat"), 1u) << get_again.out;
  EXPECT_EQ(count_lines_containing(get_again.out, "done "), 1u) << get_again.out;
  expect_same_tree(tree, local + "/s-back");
}

// put --preserve sets each file's mode and mtime on the server's copy, never world-writable.
TEST_F(Batch, PutPreserveKeepsModeAndMtime) {
  std::string tree = local + "/p";
  fs::create_directories(tree + "/sub");
  make_file(tree + "/private.dat", 1000, 11);
  make_file(tree + "/sub/open.dat", 2000, 12);
  ASSERT_EQ(::chmod((tree + "/private.dat").c_str(), 0640), 0);
  ASSERT_EQ(::chmod((tree + "/sub/open.dat").c_str(), 0666), 0);
  struct timespec times[2] = {{0, UTIME_OMIT}, {1262304000, 123456789}};  // 2010-01-01
  ASSERT_EQ(::utimensat(AT_FDCWD, (tree + "/private.dat").c_str(), times, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, (tree + "/sub/open.dat").c_str(), times, 0), 0);
  auto r = run_pxfer("put", "-r", "--preserve", tree, server.url("p"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_tree(tree, root + "/p");
  struct stat st {};
  ASSERT_EQ(::stat((root + "/p/private.dat").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1262304000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 123456789);
  ASSERT_EQ(::stat((root + "/p/sub/open.dat").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0664u) << "world-writable on the client, never on the server";
  EXPECT_EQ(st.st_mtim.tv_sec, 1262304000);
}

TEST_F(Batch, TrailingSlashMeansIntoThatDirectoryBothWays) {
  std::string tree = make_tree("src");
  ASSERT_EQ(run_pxfer("put", "-r", tree, server.url("dest/")).exit_code, 0);
  expect_same_tree(tree, root + "/dest/src");
  ASSERT_EQ(run_pxfer("put", "-r", tree, server.url("copy")).exit_code, 0);
  expect_same_tree(tree, root + "/copy");

  ASSERT_EQ(run_pxfer("get", "-r", server.url("copy"), local + "/into/").exit_code, 0);
  expect_same_tree(tree, local + "/into/copy");
  ASSERT_EQ(run_pxfer("get", "-r", server.url("copy/"), local + "/exact").exit_code, 0);
  expect_same_tree(tree, local + "/exact");
}

TEST_F(Batch, ListAndMkdirStayInsideTheExportRoot) {
  auto get = run_pxfer("get", "-r", server.url("../"), local + "/out");
  EXPECT_EQ(get.exit_code, exit_permission) << get.err;
  EXPECT_TRUE(get.err.starts_with("pxfer: ")) << get.err;
  EXPECT_NE(get.err.find("refused"), std::string::npos) << get.err;

  std::string tree = make_tree("t");
  auto put = run_pxfer("put", "-r", tree, server.url("../escape"));
  EXPECT_EQ(put.exit_code, exit_permission) << put.err;
  EXPECT_FALSE(path_exists(dir.path() + "/escape"));

  // A symlink inside the root that points out is neither listed nor followed.
  std::string outside = dir.subdir("outside");
  make_file(outside + "/secret", 10, 1);
  fs::create_directories(root + "/linked");
  make_file(root + "/linked/real", 10, 2);
  fs::create_directory_symlink(outside, root + "/linked/out");
  auto listed = run_pxfer("get", "-r", server.url("linked"), local + "/linked");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_TRUE(path_exists(local + "/linked/real"));
  EXPECT_FALSE(path_exists(local + "/linked/out"));
  auto through = run_pxfer("get", "-r", server.url("linked/out/"), local + "/o");
  EXPECT_EQ(through.exit_code, exit_permission) << through.err;
}

}  // namespace
}  // namespace pxfer::e2e
