// pxferd token create / list / revoke as an administrator meets them (issues 34 and 37): a
// symlink planted at the tokens file is refused, never followed; list shows names and dates,
// never a secret; revoke with --reload-pid makes a running server forget the identity and its
// log names who was added and removed; files of another owner are refused; an unprivileged
// create never fails over the service group.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

constexpr int exit_usage = 2, exit_permission = 4, exit_not_found = 3;

RunResult run_argv(const std::vector<std::string>& argv) {
  auto child = ChildProcess::piped(argv);
  RunResult r;
  r.exit_code = child.wait(30s, &r.timed_out);
  r.out = child.out();
  r.err = child.err();
  return r;
}

RunResult run_pxferd(std::vector<std::string> args) {
  args.insert(args.begin(), binary_path("pxferd"));
  return run_argv(args);
}

struct stat stat_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

bool wait_for_log(ServerProcess& server, const std::string& needle) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server.log().find(needle) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class TokenAdmin : public DirsTest {
 protected:
  std::string etc = dir.subdir("etc");
  std::string tokens = etc + "/tokens";
};

// Issue 34: the old code opened FILE through a planted symlink, created or appended to its target
// and then chmod/chgrp-ed it. Checked: both halves fail on the code before this change.
TEST_F(TokenAdmin, CreateRefusesASymlinkPlantedAtTheTokensFile) {
  const std::string victim = dir.path() + "/victim";
  ASSERT_EQ(::symlink(victim.c_str(), tokens.c_str()), 0);
  RunResult dangling = run_pxferd({"token", "create", "alice", "--tokens", tokens});
  EXPECT_EQ(dangling.exit_code, exit_usage) << dangling.err;
  EXPECT_NE(dangling.err.find("symbolic link"), std::string::npos) << dangling.err;
  EXPECT_NE(::access(victim.c_str(), F_OK), 0) << "the symlink's target was created";

  write_private(victim, "# a file of the same user that must not change\n");
  RunResult existing = run_pxferd({"token", "create", "alice", "--tokens", tokens});
  EXPECT_EQ(existing.exit_code, exit_usage) << existing.err;
  EXPECT_EQ(read_text(victim), "# a file of the same user that must not change\n");
  EXPECT_EQ(stat_of(victim).st_mode & 07777, 0600u);
  EXPECT_TRUE(S_ISLNK(stat_of(tokens).st_mode));
}

TEST_F(TokenAdmin, CreateRefusesAnExistingNameAndListShowsNoSecret) {
  const std::string alice = create_token("alice", tokens);
  create_token("bob", tokens);
  RunResult again = run_pxferd({"token", "create", "alice", "--tokens", tokens});
  EXPECT_EQ(again.exit_code, 9) << again.err;  // Errc::exists
  EXPECT_NE(again.err.find("already in"), std::string::npos) << again.err;
  RunResult list = run_pxferd({"token", "list", "--tokens", tokens});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("alice"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("bob"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("T"), std::string::npos) << list.out;  // 2026-...T..Z
  EXPECT_NE(list.out.find("Z "), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find(alice), std::string::npos) << "the token itself was printed";
  EXPECT_EQ(list.out.find("sha256:"), std::string::npos) << "the stored hash was printed";
}

TEST_F(TokenAdmin, RevokeWithReloadEndsTheIdentityAndTheLogNamesWhoChanged) {
  make_file(local + "/a.bin", 4096, 1);
  write_private(etc + "/alice.token", create_token("alice", tokens) + "\n");
  write_private(etc + "/bob.token", create_token("bob", tokens) + "\n");
  ::chmod(tokens.c_str(), 0640);
  ServerProcess server = serve({"--tokens", tokens});
  EXPECT_EQ(run_pxfer("put", local + "/a.bin", server.url("a1.bin"), "--token-file", etc + "/alice.token").exit_code, 0);
  create_token("carol", tokens);
  RunResult revoke = run_pxferd({"token", "revoke", "alice", "--tokens", tokens, "--reload-pid",
                                 std::to_string(server.pid())});
  ASSERT_EQ(revoke.exit_code, 0) << revoke.err;
  EXPECT_EQ(stat_of(tokens).st_mode & 07777, 0640u) << "revoke kept the file's mode";
  ASSERT_TRUE(wait_for_log(server, "added: carol; removed: alice")) << server.log();
  RunResult refused = run_pxfer("put", local + "/a.bin", server.url("a2.bin"), "--token-file", etc + "/alice.token");
  EXPECT_EQ(refused.exit_code, exit_permission) << refused.err;
  EXPECT_EQ(run_pxfer("put", local + "/a.bin", server.url("b.bin"), "--token-file", etc + "/bob.token").exit_code, 0);
  RunResult gone = run_pxferd({"token", "revoke", "alice", "--tokens", tokens});
  EXPECT_EQ(gone.exit_code, exit_not_found) << gone.err;
  RunResult list = run_pxferd({"token", "list", "--tokens", tokens});
  EXPECT_EQ(list.out.find("alice"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("carol"), std::string::npos) << list.out;
}

// A tokens or key file another user owns could be rewritten by that user whatever its mode.
TEST_F(TokenAdmin, FilesOfAnotherOwnerAreRefusedAtLoad) {
  if (::geteuid() != 0) return;  // only root can give a file away; CI runs as root
  create_token("alice", tokens);
  ASSERT_EQ(::chown(tokens.c_str(), 65534, 65534), 0);
  RunResult r = run_pxferd({"--root", root, "--tokens", tokens, "--check-config"});
  EXPECT_EQ(r.exit_code, exit_permission) << r.err;
  EXPECT_NE(r.err.find("owned by uid 65534"), std::string::npos) << r.err;
}

// Issue 37 point 9: an unprivileged `token create` on a machine with the service group: the file
// stays the user's 0600 and the command succeeds (the old code tried chgrp and exited 4).
TEST_F(TokenAdmin, UnprivilegedCreateNeverFailsOverTheServiceGroup) {
  ASSERT_EQ(unprivileged_unavailable(), "");
  const std::string mine = dir.subdir("mine");
  if (::geteuid() == 0) {
    ::chmod(dir.path().c_str(), 0755);
    ASSERT_EQ(::chown(mine.c_str(), unprivileged_uid(), 65534), 0);
  }
  std::vector<std::string> argv;
  if (::geteuid() == 0)
    argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"};
  argv.insert(argv.end(), {"/usr/bin/env", "PXFERD_SERVICE_GROUP=root", binary_path("pxferd"), "token", "create",
                           "alice", "--tokens", mine + "/tokens"});
  RunResult r = run_argv(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "no warning expected: " << r.err;
  EXPECT_EQ(stat_of(mine + "/tokens").st_mode & 07777, 0600u);
}

// In a directory of the service group (the package's /etc/pxferd) a new file is 0640 of that group.
TEST_F(TokenAdmin, CreateInTheServiceGroupsDirectoryGivesTheFileThatGroup) {
  if (::geteuid() != 0) return;  // only root can give a directory to a group it is not in
  const std::string conf = dir.subdir("conf");
  ASSERT_EQ(::chown(conf.c_str(), 0, 65534), 0);
  RunResult r = run_argv({"/usr/bin/env", "PXFERD_SERVICE_GROUP=nogroup", binary_path("pxferd"), "token", "create",
                          "alice", "--tokens", conf + "/tokens"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(stat_of(conf + "/tokens").st_mode & 07777, 0640u);
  EXPECT_EQ(stat_of(conf + "/tokens").st_gid, 65534u);
}

}  // namespace
}  // namespace pxfer::e2e
