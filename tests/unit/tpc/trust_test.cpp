// Issue 11's helpers on their own: the paths a client accepts from a server, writes confined
// beneath a get -r target, escaping for logs, the modes credentials files may have, and the
// reserved identity name.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <functional>

#include "client/local_tree.hpp"
#include "client/path_names.hpp"
#include "io/tree.hpp"
#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "pxfer/common/log_safe.hpp"
#include "client/listing_check.hpp"
#include "common/safe_path.hpp"
#include "pxfer/io/secret_file.hpp"
#include "server/auth.hpp"
#include "server/token_admin.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {
namespace fs = std::filesystem;

using test::code_of;

TEST(ServerPaths, OnlyPlainRelativePathsAreAccepted) {
  for (const char* ok : {"a", "a/b", "a/b.c/d", "..a", "a..", ".hidden", "a/...", "ü/é"})
    EXPECT_EQ(unsafe_path_reason(ok), std::nullopt) << ok;
  for (const char* bad : {"", "/", "/etc/passwd", "..", "../x", "a/..", "a/../../b", "a//b", "a/", "./a", "a/./b",
                          "a\nb", "a\rb", "\x1b[2J", "a\x7f"})
    EXPECT_NE(unsafe_path_reason(bad), std::nullopt) << bad;
  EXPECT_NE(unsafe_path_reason(std::string("a\0b", 3)), std::nullopt);
}

TEST(ServerPaths, AListingIsRefusedAsPermissionNamingTheEscapedPath) {
  std::vector<wire::ListEntry> entries(2);
  entries[0].kind = wire::EntryKind::directory;
  entries[0].relative_path = "ok";
  entries[1].relative_path = "../x\ny";
  try {
    check_listing(entries, "h:1");
    FAIL() << "accepted ../x";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::permission);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("h:1 sent an unsafe path in its listing ('../x\\ny'"), std::string::npos) << e.what();
  }
  std::vector<wire::ListEntry> one_file(1);  // a LIST of a file: one entry, empty path
  EXPECT_NO_THROW(check_listing(one_file, "h:1"));
  one_file.front().kind = wire::EntryKind::directory;
  EXPECT_EQ(code_of([&] { check_listing(one_file, "h:1"); }), Errc::permission);
}

TEST(LogSafe, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(log_safe("plain/path ü"), "plain/path ü");
  EXPECT_EQ(log_safe("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(log_safe(std::string("\x1b[2J\x7f\0", 6)), "\\x1b[2J\\x7f\\x00");
  EXPECT_FALSE(has_control_characters("abc"));
  EXPECT_TRUE(has_control_characters("a\nb"));
}

TEST(SecretFiles, OnlyRootOrTheUserItselfMayOwnThem) {
  EXPECT_EQ(owner_problem(0, 998), "");
  EXPECT_EQ(owner_problem(998, 998), "");
  EXPECT_NE(owner_problem(1001, 998).find("owned by uid 1001"), std::string::npos);
  EXPECT_EQ(owner_problem(0, 0), "");
}

// Issue 34: every class a terminal or a log reader acts on, one row each; what stays plain too.
TEST(LogSafe, EveryControlAndBidiClassIsEscaped) {
  struct Row {
    std::string in, out;
  };
  const std::vector<Row> rows = {
      {"a\rb", "a\\rb"},                                    // raw CR: rewrites the line
      {"\x1b]0;title\x07", "\\x1b]0;title\\x07"},             // ESC / OSC / BEL
      {"\x01\x1f", "\\x01\\x1f"},                               // other C0
      {"\x7f", "\\x7f"},                                      // DEL
      {"a\xc2\x85" "b", "a\\u0085b"},                          // NEL as UTF-8
      {"\xc2\x9b" "2J", "\\u009b2J"},                          // CSI as UTF-8
      {"\xc2\x80\xc2\x9f", "\\u0080\\u009f"},                  // C1 bounds
      {"\x9b" "2J", "\\x9b2J"},                                // raw CSI byte (invalid UTF-8)
      {"\x85", "\\x85"},                                      // raw NEL byte
      {"a\xe2\x80\xa8" "b\xe2\x80\xa9", "a\\u2028b\\u2029"},      // line / paragraph separators
      {"\xe2\x80\xae" "gpj.exe", "\\u202egpj.exe"},              // RLO
      {"\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", "\\u202a\\u202b\\u202c\\u202d"},
      {"\xe2\x81\xa6\xe2\x81\xa9", "\\u2066\\u2069"},             // isolates
      {"\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u200e\\u200f\\u061c"},  // LRM RLM ALM
      {"\xc0\xaf", "\\xc0\\xaf"},                                // overlong '/'
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                        // surrogate
      {"\xe2\x80", "\\xe2\\x80"},                                // cut short
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},                // past U+10FFFF
      {"plain/path \xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80", "plain/path \xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(log_safe(r.in), r.out) << r.out;
    EXPECT_EQ(has_control_characters(r.in), r.in != r.out) << r.out;
    // Nothing escaped holds a byte a terminal acts on: only printable ASCII and valid UTF-8.
    EXPECT_FALSE(has_control_characters(log_safe(r.in))) << r.out;
  }
}

TEST(SecretFiles, ModesAreCheckedLikeSshKeys) {
  EXPECT_EQ(mode_problem(0600, FileSecrecy::private_secret), "");
  EXPECT_EQ(mode_problem(0400, FileSecrecy::private_secret), "");
  EXPECT_NE(mode_problem(0640, FileSecrecy::private_secret), "");
  EXPECT_NE(mode_problem(0644, FileSecrecy::private_secret), "");
  EXPECT_EQ(mode_problem(0600, FileSecrecy::server_config), "");
  EXPECT_EQ(mode_problem(0640, FileSecrecy::server_config), "");  // root:pxferd, read through the group
  EXPECT_NE(mode_problem(0644, FileSecrecy::server_config), "");
  EXPECT_NE(mode_problem(0660, FileSecrecy::server_config), "");
  EXPECT_NE(mode_problem(0602, FileSecrecy::server_config), "");
  test::TempDir dir;
  std::string file = dir / "token";
  test::write_file(file, {'x'});
  ::chmod(file.c_str(), 0644);
  try {
    read_protected_file(file, "--token-file", FileSecrecy::private_secret);
    FAIL() << "read a 0644 token file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::permission);
    EXPECT_NE(std::string(e.what()).find("run `chmod 600 " + file + "`"), std::string::npos) << e.what();
  }
  ::chmod(file.c_str(), 0600);
  EXPECT_EQ(read_protected_file(file, "--token-file", FileSecrecy::private_secret), "x");
  EXPECT_EQ(code_of([&] { read_protected_file(dir / "missing", "x", FileSecrecy::private_secret); }), Errc::not_found);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::write(pipe_fds[1], "tok\n", 4), 4);
  ::close(pipe_fds[1]);
  EXPECT_EQ(read_protected_file("/dev/fd/" + std::to_string(pipe_fds[0]), "--token-file", FileSecrecy::private_secret), "tok\n");
  ::close(pipe_fds[0]);
}

TEST(ReservedNames, AnonymousCannotBeATokenName) {
  EXPECT_TRUE(server::reserved_identity_name("anonymous"));
  EXPECT_TRUE(server::reserved_identity_name("Anonymous"));
  EXPECT_FALSE(server::reserved_identity_name("anonymous2"));
  const std::string line = server::token_line("anonymous", server::generate_token());
  EXPECT_EQ(code_of([&] { server::TokenStore::parse(line + "\n", "tokens"); }), Errc::usage);
  test::TempDir dir;
  EXPECT_EQ(code_of([&] { server::create_token(dir / "tokens", "ANONYMOUS"); }), Errc::usage);
  EXPECT_FALSE(fs::exists(dir / "tokens"));
  // The access file still names it: that is how anonymous gets its grants.
  EXPECT_EQ(server::AccessMap::parse("anonymous public ro\n", "access").grants_of("anonymous").size(), 1u);
}

class Beneath : public ::testing::Test {
 protected:
  test::TempDir scratch;
  std::string target = scratch / "target";
  std::string outside = scratch / "outside";
  Beneath() {
    fs::create_directories(target + "/sub");
    fs::create_directories(outside);
    fs::create_directory_symlink(outside, target + "/link");
  }
};

TEST_F(Beneath, PathBelowRefusesWhatIsNotBelow) {
  EXPECT_EQ(path_below("/t", "/t/a/b"), "a/b");
  EXPECT_EQ(path_below("/t/", "/t/a"), "a");
  EXPECT_EQ(path_below("/t", "/t"), "");
  EXPECT_EQ(path_below("/", "/a"), "a");
  EXPECT_EQ(code_of([] { path_below("/t", "/tx/a"); }), Errc::permission);
  EXPECT_EQ(code_of([] { path_below("/t", "/u/a"); }), Errc::permission);
}

TEST_F(Beneath, FilesAreNeverCreatedThroughASymlinkOrAboveTheTarget) {
  Directory dir = Directory::open_beneath(target);
  EXPECT_EQ(code_of([&] { FileSink(dir, "link/f", 3, false); }), Errc::permission);
  EXPECT_EQ(code_of([&] { FileSink(dir, "../f", 3, false); }), Errc::permission);
  EXPECT_EQ(code_of([&] { FileSink(dir, "/tmp/f", 3, false); }), Errc::permission);
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_FALSE(fs::exists(scratch / "f"));
  { FileSink ok(dir, "sub/f", 3, false); }
  // A symlink inside the target that stays inside is refused too: the server named nothing of it.
  fs::create_directory_symlink(target + "/sub", target + "/inner");
  EXPECT_EQ(code_of([&] { FileSink(dir, "inner/g", 3, false); }), Errc::permission);
}

// The fallback for kernels without openat2: no symlink followed, on the way or at the end.
TEST_F(Beneath, ComponentWalkFollowsNoSymlink) {
  int root = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root, 0);
  int fd = open_each_component(root, "sub/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0600);
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
  EXPECT_TRUE(fs::is_regular_file(target + "/sub/new.txt"));
  EXPECT_EQ(open_each_component(root, "link/x.txt", O_WRONLY | O_CREAT, 0600), -1);
  EXPECT_EQ(errno, ELOOP);
  fs::create_symlink(outside + "/leaf", target + "/sub/leaf");
  EXPECT_EQ(open_each_component(root, "sub/leaf", O_WRONLY | O_CREAT, 0600), -1);
  EXPECT_EQ(errno, ELOOP);
  fd = open_each_component(root, "sub", O_RDONLY | O_DIRECTORY, 0);
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
  EXPECT_TRUE(fs::is_empty(outside));
  ::close(root);
}

TEST_F(Beneath, TheLocalTreeOfAGetIsMadeBeneathItsRoot) {
  BatchPlan plan;
  plan.local_root = target;
  plan.local_directories = {target, target + "/new/deeper", target + "/link/planted"};
  std::vector<Error> errors;
  const std::set<std::string> made = make_local_tree(plan, errors);
  EXPECT_TRUE(fs::is_directory(target + "/new/deeper"));
  // The directories made here, as the plan names them: the target existed already (the fixture's),
  // the planted link's target is refused, so only new/deeper was made (its parent new too, but the
  // plan does not name it).
  EXPECT_EQ(made, (std::set<std::string>{target + "/new/deeper"}));
  std::vector<Error> again;
  EXPECT_TRUE(make_local_tree(plan, again).empty());  // all there now
  EXPECT_EQ(parent_of(target + "/new/f"), target + "/new");
  EXPECT_EQ(parent_of("f"), "");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors.front().code(), Errc::permission) << errors.front().what();
  EXPECT_TRUE(fs::is_empty(outside));
  LocalTarget at = local_target(target, target + "/new/f");
  EXPECT_EQ(at.path, "new/f");
  EXPECT_TRUE(at.dir.confined());
  EXPECT_EQ(local_target("", "x/y").path, "x/y");
}

}  // namespace
}  // namespace pxfer
