// Failures through the real binaries: each must exit with its Errc value, say what went wrong in
// exactly one "pxfer: ..." line on stderr, and leave the server serving.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

constexpr int exit_usage = 2, exit_not_found = 3, exit_permission = 4, exit_network = 5, exit_protocol = 6, exit_exists = 9;

// Exit code, and stderr is one line "pxfer: ..." that contains `needle`.
void expect_error(const RunResult& r, int code, const std::string& needle) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, code) << "stderr: " << r.err << "\nstdout: " << r.out;
  EXPECT_TRUE(r.err.starts_with("pxfer: ")) << "stderr: " << r.err;
  EXPECT_TRUE(r.err.ends_with("\n")) << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be exactly one line: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr should name '" << needle << "': " << r.err;
}

class Errors : public ServedTest {
 protected:
  Errors() { make_file(small, 4 * KiB + 3, 1); }

  // After the failure, a small put still works: the server survived and serves.
  void expect_server_serving() {
    ASSERT_TRUE(server.running()) << "pxferd died; its log:\n" << server.log();
    std::string name = "alive-" + std::to_string(++probes) + ".bin";
    RunResult r = run_pxfer("put", small, server.url(name), "-p", "2");
    EXPECT_EQ(r.exit_code, 0) << "the server stopped serving after the failure: " << r.err << "\nlog:\n"
                              << server.log();
    EXPECT_TRUE(files_equal(small, root + "/" + name));
  }

  void TearDown() override {
    EXPECT_EQ(hidden_temporaries(root), std::vector<std::string>{});
    EXPECT_EQ(hidden_temporaries(local), std::vector<std::string>{});
    EXPECT_EQ(list_dir(outside), std::vector<std::string>{"victim.txt"}) << "something was written outside the root";
    EXPECT_EQ(read_text(outside + "/victim.txt"), "victim\n");
  }

  void SetUp() override { write_text(outside + "/victim.txt", "victim\n"); }

  std::string outside = dir.subdir("outside");
  std::string small = dir / "small.bin";
  int probes = 0;
};

TEST_F(Errors, ClosedPortIsConnectionRefused) {
  std::uint16_t port = closed_port();
  RunResult r = run_pxfer("put", small, "pxfer://127.0.0.1:" + std::to_string(port) + "/x.bin");
  EXPECT_EQ(r.exit_code, exit_network);
  EXPECT_EQ(r.err, "pxfer: cannot connect to 127.0.0.1:" + std::to_string(port) +
                       ": connection refused (is pxferd running?)\n");
  expect_server_serving();
}

// Issue 37: a port where something else listens (an SSH banner, a server that reads the TLS hello
// and hangs up) is "not a pxfer server", exit 6 as documented, not "TLS handshake ... End of file", exit 5.
TEST_F(Errors, APortThatIsNotAPxferServerSaysSo) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
  std::thread other_service([listener] {
    for (int i = 0; i < 2; ++i) {
      int c = ::accept(listener, nullptr, nullptr);
      if (c < 0) return;
      char hello[512];
      if (i == 0) {
        const char banner[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n";
        (void)!::write(c, banner, sizeof banner - 1);
      }
      (void)!::read(c, hello, sizeof hello);  // the TLS hello, then hang up
      ::close(c);
    }
  });
  const std::string url = "pxfer://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/x.bin";
  RunResult banner = run_pxfer("put", small, url);
  RunResult hangup = run_pxfer("put", small, url);
  other_service.join();
  ::close(listener);
  for (const RunResult* r : {&banner, &hangup}) {
    expect_error(*r, exit_protocol, "is not a pxfer server");
    EXPECT_EQ(r->err.find("End of file"), std::string::npos) << r->err;
  }
}

TEST_F(Errors, PutOfMissingLocalFileIsNotFound) {
  std::string missing = local + "/no-such-file.bin";
  RunResult r = run_pxfer("put", missing, server.url("x.bin"));
  expect_error(r, exit_not_found, "no-such-file.bin");
  EXPECT_FALSE(path_exists(root + "/x.bin"));
  expect_server_serving();
}

TEST_F(Errors, GetOfMissingRemoteFileIsNotFound) {
  RunResult r = run_pxfer("get", server.url("no-such-file.bin"), local + "/x.bin");
  expect_error(r, exit_not_found, "no-such-file.bin");
  EXPECT_FALSE(path_exists(local + "/x.bin"));
  expect_server_serving();
}

TEST_F(Errors, GetIntoNonexistentDirectoryIsNotFound) {
  write_text(root + "/data.txt", "data\n");
  RunResult r = run_pxfer("get", server.url("data.txt"), "/nonexistent/dir/file");
  expect_error(r, exit_not_found, "/nonexistent/dir");
  expect_server_serving();
}

// A destination directory the user may not write: permission denied (exit 4), nothing created.
// As root the permission check cannot fail (CAP_DAC_OVERRIDE), so pxfer runs as nobody then
// (run_pxfer_unprivileged), against a directory only root may write.
TEST_F(Errors, GetIntoUnwritableDestinationFails) {
  if (std::string why = unprivileged_unavailable(); !why.empty()) GTEST_SKIP() << why;
  write_text(root + "/data.txt", "data\n");
  std::string ro = dir.subdir("local/readonly");
  // Searchable by the unprivileged user on the way down, writable by nobody but root.
  for (const std::string& d : {dir.path(), local}) ASSERT_EQ(::chmod(d.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(ro.c_str(), ::geteuid() == 0 ? 0755 : 0555), 0);
  // pxfer pins the server itself (its known_hosts is the test's, private to root).
  RunResult r = run_pxfer_unprivileged({"get", server.url("data.txt"), ro + "/x", "--fingerprint", server.fingerprint()});
  ::chmod(ro.c_str(), 0755);
  expect_error(r, exit_permission, "readonly");
  EXPECT_NE(r.err.find("ermission denied"), std::string::npos) << r.err;
  // Issue 37: the message is about the file the user named, not pxfer's resume journal.
  EXPECT_NE(r.err.find("cannot "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(ro + "/x"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("journal"), std::string::npos) << r.err;
  EXPECT_EQ(list_dir(ro), std::vector<std::string>{});
  expect_server_serving();
}

// The server side of the same: pxferd as an unprivileged user (as root: nobody, setpriv) may
// not write into a directory only root may write, nor read a file only root may read. Both are
// permission errors (exit 4) naming the path, and nothing is left behind.
TEST_F(Errors, WhatTheServersFileSystemForbidsIsPermissionDenied) {
  if (std::string why = unprivileged_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const bool root_user = ::geteuid() == 0;
  std::string export_root = dir.subdir("uroot");
  std::string locked = dir.subdir("uroot/locked");
  for (const std::string& d : {dir.path(), export_root}) ASSERT_EQ(::chmod(d.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(locked.c_str(), root_user ? 0755 : 0555), 0);  // root's, or read-only for its owner
  write_text(export_root + "/secret.txt", "secret\n");
  ASSERT_EQ(::chmod((export_root + "/secret.txt").c_str(), root_user ? 0600 : 0000), 0);
  ServerProcess unprivileged(ServerProcess::Unprivileged{}, export_root);

  RunResult put = run_pxfer("put", small, unprivileged.url("locked/x.bin"));
  expect_error(put, exit_permission, "locked");
  EXPECT_EQ(list_dir(locked), std::vector<std::string>{});
  RunResult get = run_pxfer("get", unprivileged.url("secret.txt"), local + "/secret.txt");
  expect_error(get, exit_permission, "secret.txt");
  EXPECT_FALSE(path_exists(local + "/secret.txt"));
  ::chmod(locked.c_str(), 0755);
  ::chmod((export_root + "/secret.txt").c_str(), 0644);
  ASSERT_TRUE(unprivileged.running()) << unprivileged.log();
}

// A destination "inside" a regular file is unwritable for everyone, root included: opening its
// parent gives ENOTDIR, reported as not-found.
TEST_F(Errors, GetIntoAPathThroughARegularFileIsNotFound) {
  write_text(root + "/data.txt", "data\n");
  write_text(local + "/somefile", "plain file\n");
  RunResult r = run_pxfer("get", server.url("data.txt"), local + "/somefile/x");
  expect_error(r, exit_not_found, "somefile");
  EXPECT_EQ(read_text(local + "/somefile"), "plain file\n");
  expect_server_serving();
}

TEST_F(Errors, PutOverExistingRemoteNeedsOverwrite) {
  write_text(root + "/exists.bin", "old contents\n");
  RunResult r = run_pxfer("put", small, server.url("exists.bin"));
  expect_error(r, exit_exists, "exists.bin");
  EXPECT_NE(r.err.find("--overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(read_text(root + "/exists.bin"), "old contents\n");
  expect_server_serving();

  RunResult ok = run_pxfer("put", small, server.url("exists.bin"), "--overwrite");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(files_equal(small, root + "/exists.bin"));
}

TEST_F(Errors, GetOverExistingLocalNeedsOverwrite) {
  make_file(root + "/remote.bin", 70 * KiB + 1, 5);
  std::string dest = local + "/exists.bin";
  write_text(dest, "old contents\n");
  RunResult r = run_pxfer("get", server.url("remote.bin"), dest);
  expect_error(r, exit_exists, "exists.bin");
  EXPECT_NE(r.err.find("--overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(read_text(dest), "old contents\n");
  expect_server_serving();

  RunResult ok = run_pxfer("get", server.url("remote.bin"), dest, "--overwrite");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(files_equal(root + "/remote.bin", dest));
}

// --- Paths that would leave the export root --------------------------------------------------

TEST_F(Errors, GetWithDotDotIsRefused) {
  RunResult r = run_pxfer("get", server.url("../../etc/passwd"), local + "/passwd");
  expect_error(r, exit_permission, "../../etc/passwd");
  EXPECT_FALSE(path_exists(local + "/passwd"));
  expect_server_serving();
}

TEST_F(Errors, GetOfAbsolutePathIsRefused) {
  RunResult r = run_pxfer("get", "pxfer://" + server.authority() + "//etc/passwd", local + "/passwd");
  expect_error(r, exit_permission, "/etc/passwd");
  EXPECT_FALSE(path_exists(local + "/passwd"));
  expect_server_serving();
}

TEST_F(Errors, GetThroughSymlinkToOutsideDirectoryIsRefused) {
  ASSERT_EQ(::symlink("/etc", (root + "/link").c_str()), 0);
  RunResult r = run_pxfer("get", server.url("link/passwd"), local + "/passwd");
  expect_error(r, exit_permission, "link/passwd");
  EXPECT_FALSE(path_exists(local + "/passwd"));
  expect_server_serving();
}

TEST_F(Errors, GetOfSymlinkToOutsideFileIsRefused) {
  ASSERT_EQ(::symlink((outside + "/victim.txt").c_str(), (root + "/flink").c_str()), 0);
  RunResult r = run_pxfer("get", server.url("flink"), local + "/got.txt");
  expect_error(r, exit_permission, "flink");
  EXPECT_FALSE(path_exists(local + "/got.txt"));
  expect_server_serving();
}

TEST_F(Errors, PutWithDotDotIsRefused) {
  RunResult r = run_pxfer("put", small, server.url("../escape.txt"));
  expect_error(r, exit_permission, "../escape.txt");
  EXPECT_FALSE(path_exists(dir / "escape.txt")) << "created in the parent of the export root";
  EXPECT_EQ(hidden_temporaries(dir.path()), std::vector<std::string>{});
  expect_server_serving();
}

TEST_F(Errors, PutToAbsolutePathIsRefused) {
  RunResult r = run_pxfer("put", small, "pxfer://" + server.authority() + "/" + outside + "/abs.txt");
  expect_error(r, exit_permission, outside + "/abs.txt");
  EXPECT_FALSE(path_exists(outside + "/abs.txt"));
  expect_server_serving();
}

TEST_F(Errors, PutThroughSymlinkToOutsideDirectoryIsRefused) {
  // Points at a directory the test owns, not /etc: a confinement bug must not write into /etc.
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/olink").c_str()), 0);
  RunResult r = run_pxfer("put", small, server.url("olink/escape.txt"));
  expect_error(r, exit_permission, "olink");
  EXPECT_FALSE(path_exists(outside + "/escape.txt"));
  expect_server_serving();
}

TEST_F(Errors, PutOntoSymlinkToOutsideFileNeverWritesThroughIt) {
  std::string link = root + "/flink";
  ASSERT_EQ(::symlink((outside + "/victim.txt").c_str(), link.c_str()), 0);
  // Without --overwrite the link is an existing destination.
  RunResult r = run_pxfer("put", small, server.url("flink"));
  expect_error(r, exit_exists, "flink");
  // With --overwrite the link itself may be replaced by the new file (as cp --remove-destination
  // does) or the put refused; the file outside the root must never change (checked in TearDown).
  RunResult o = run_pxfer("put", small, server.url("flink"), "--overwrite");
  if (o.exit_code == 0) {
    struct stat st {};
    ASSERT_EQ(::lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "the symlink should have been replaced by a regular file";
    EXPECT_TRUE(files_equal(small, link));
  } else {
    expect_error(o, exit_permission, "flink");
  }
  expect_server_serving();
}

// --- Usage errors -----------------------------------------------------------------------------

struct UsageCase {
  const char* name;
  std::vector<std::string> args;  // "SRC" and "URL" are replaced by a local file and a server URL
  const char* needle;
};

class UsageErrors : public Errors, public ::testing::WithParamInterface<UsageCase> {};

TEST_P(UsageErrors, ExitTwoWithOneLine) {
  std::vector<std::string> args = GetParam().args;
  for (auto& a : args) {
    if (a == "SRC") a = small;
    else if (a == "URL") a = server.url("usage.bin");
    else if (a == "HTTP_URL") a = "http://" + server.authority() + "/usage.bin";
  }
  RunResult r = run_pxfer_args(args);
  expect_error(r, exit_usage, GetParam().needle);
  EXPECT_FALSE(path_exists(root + "/usage.bin"));
  expect_server_serving();
}

INSTANTIATE_TEST_SUITE_P(
    Options, UsageErrors,
    ::testing::Values(UsageCase{"streams_0", {"put", "SRC", "URL", "--streams", "0"}, "--streams 0"},
                      UsageCase{"streams_65", {"put", "SRC", "URL", "--streams", "65"}, "--streams 65"},
                      UsageCase{"block_size_17M", {"put", "SRC", "URL", "--block-size", "17M"}, "--block-size 17M"},
                      UsageCase{"block_size_abc", {"put", "SRC", "URL", "--block-size", "abc"}, "--block-size abc"},
                      UsageCase{"put_non_pxfer_url", {"put", "SRC", "HTTP_URL"}, "pxfer://"},
                      UsageCase{"get_non_pxfer_url", {"get", "HTTP_URL", "SRC"}, "pxfer://"},
                      UsageCase{"no_subcommand", {}, "subcommand"}),
    [](const ::testing::TestParamInfo<UsageCase>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace pxfer::e2e
