// What an administrator meets (issue 14): one version everywhere, the --config file and its
// precedence, --check-config, SIGHUP reloading tokens under a running transfer, token create on a
// fresh machine, unknown commands and the grouped --help.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

constexpr int exit_usage = 2, exit_permission = 4;

RunResult run_pxferd(const std::vector<std::string>& args) {
  std::vector<std::string> argv{binary_path("pxferd")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = ChildProcess::piped(argv);
  RunResult r;
  r.exit_code = child.wait(30s, &r.timed_out);
  r.out = child.out();
  r.err = child.err();
  return r;
}

// "0.2.0" from "pxfer 0.2.0 (git ...)".
std::string version_in(const std::string& line, const std::string& program) {
  EXPECT_TRUE(line.starts_with(program + " ")) << line;
  auto start = program.size() + 1;
  return line.substr(start, line.find(' ', start) - start);
}

void expect_one_line(const RunResult& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be one line: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr should name '" << needle << "': " << r.err;
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

bool wait_for_log(ServerProcess& server, const std::string& needle, std::chrono::milliseconds timeout = 10s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (server.log().find(needle) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class Operations : public DirsTest {
 protected:
  Operations() {
    make_file(small, 64 * KiB + 3, 11);
  }
  // The --token-file for a new identity in `tokens`.
  std::string token_file(const std::string& name) {
    std::string file = etc + "/" + name + ".token";
    write_private(file, create_token(name, tokens) + "\n");
    return file;
  }
  std::string etc = dir.subdir("etc");
  std::string small = local + "/small.bin";
  std::string tokens = etc + "/tokens";
};

TEST_F(Operations, VersionIsTheOneBothHellosCarry) {
  RunResult client = run_pxfer("--version");
  RunResult server_version = run_pxferd({"--version"});
  ASSERT_EQ(client.exit_code, 0) << client.err;
  ASSERT_EQ(server_version.exit_code, 0) << server_version.err;
  const std::string v = version_in(client.out, "pxfer");
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(version_in(server_version.out, "pxferd"), v);
  ServerProcess server = serve({"-v"});
  RunResult put = run_pxfer("put", small, server.url("v.bin"), "-v");
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_NE(put.err.find("(pxferd/" + v + ")"), std::string::npos) << "the server's hello: " << put.err;
  EXPECT_NE(server.log().find("agent=pxfer/" + v), std::string::npos) << "the client's hello: " << server.log();
  EXPECT_NE(server.log().find("pxferd " + v + " (git "), std::string::npos) << server.log();
}

TEST_F(Operations, ConfigFileIsReadAndTheCommandLineWins) {
  std::string elsewhere = dir.subdir("elsewhere");
  std::string config = etc + "/pxferd.toml";
  std::string alice = token_file("alice");
  write_text(config, "# test\nroot = \"" + elsewhere + "\"\ntokens = \"" + tokens + "\"\nmax-active = 3\n");
  // --root on the command line (ServerProcess passes it) beats the file's root; tokens come from
  // the file only: alice may write, which --anonymous-read alone would not allow.
  ServerProcess server = serve({"--config", config, "--anonymous-read"});
  RunResult put = run_pxfer("put", small, server.url("c.bin"), "--token-file", alice);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_TRUE(files_equal(small, root + "/c.bin"));
  EXPECT_FALSE(path_exists(elsewhere + "/c.bin"));
  RunResult anonymous = run_pxfer("put", small, server.url("d.bin"));
  EXPECT_EQ(anonymous.exit_code, exit_permission) << anonymous.err;

  // --print-config: each value with its origin, and a file pxferd reads back to the same values.
  RunResult printed = run_pxferd({"--config", config, "--root", root, "--max-active", "5", "--print-config"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("root = \"" + root + "\""), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("max-active = 5"), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("# command line"), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("tokens = \"" + tokens + "\""), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("# " + config), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("idle-timeout = \"5m\""), std::string::npos) << printed.out;
  std::string round = etc + "/round.toml";
  write_text(round, printed.out);
  RunResult again = run_pxferd({"--config", round, "--print-config"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto values = [](const std::string& text) {  // the lines without their origin comments
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (!line.starts_with("#")) out += line.substr(0, line.find(" #")) + "\n";
    return out;
  };
  EXPECT_EQ(values(again.out), values(printed.out));
  RunResult check = run_pxferd({"--config", round, "--check-config"});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(check.out.find("configuration OK"), std::string::npos) << check.out;
}

TEST_F(Operations, CheckConfigRefusesBadValuesInOneLine) {
  std::string config = etc + "/bad.toml";
  auto check = [&](const std::string& extra) {
    write_text(config, "root = \"" + root + "\"\ninsecure-no-auth = true\n" + extra);
    return run_pxferd({"--config", config, "--check-config"});
  };
  expect_one_line(check("max-active = \"ten\"\n"), exit_usage, "max-active: expected a whole number");
  expect_one_line(check("queue-timeout = \"soon\"\n"), exit_usage, config + ":3:1: --queue-timeout");
  expect_one_line(check("max-actve = 3\n"), exit_usage, config + ":3:1: max-actve: not an option");
  expect_one_line(check("tokens = \"" + etc + "/missing\"\n"), 3, etc + "/missing");
  write_private(etc + "/broken", "alice sha256:zz\n");
  expect_one_line(check("tokens = \"" + etc + "/broken\"\n"), exit_usage, "line 1");
  expect_one_line(run_pxferd({"--config", etc + "/nothing.toml", "--check-config"}), exit_usage, "cannot read it");
  RunResult good = check("");
  EXPECT_EQ(good.exit_code, 0) << good.err;
  // Without --check-config the same bad value stops pxferd before it binds.
  write_text(config, "root = \"" + root + "\"\ninsecure-no-auth = true\nidle-timeout = \"0s\"\n");
  expect_one_line(run_pxferd({"--config", config, "--listen", "127.0.0.1:0"}), exit_usage, "--idle-timeout 0s");
}

TEST_F(Operations, SighupRevokesATokenAndEndsItsRunningTransfer) {
  std::string alice = token_file("alice"), bob = token_file("bob");
  std::string big = local + "/big.bin";
  make_file(big, 24 * MiB, 5);
  // A slow shared disk (8 MiB/s): the put takes about 3 s, long enough to reload under it.
  ServerProcess server = serve({"--tokens", tokens, "--emulate-disk-rate", "8M"});
  ChildProcess put = start_pxfer({"put", "-p", "4", big, server.url("big.bin"), "--token-file", alice});
  std::this_thread::sleep_for(700ms);
  // Revoke alice: the tokens file without her line.
  std::string kept;
  std::istringstream in(read_text(tokens));
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("alice ")) kept += line + "\n";
  write_text(tokens, kept);
  ::kill(server.pid(), SIGHUP);
  ASSERT_TRUE(wait_for_log(server, "reloaded: tokens")) << server.log();
  EXPECT_FALSE(put.try_wait().has_value()) << "the put ended before the reload: make it slower";
  // Issue 34: the revoked identity's running put ends with the reason (within a second: the
  // Revocation.* tests time it), and nothing appears under the final name.
  EXPECT_EQ(put.wait(60s), exit_permission) << put.err();
  EXPECT_NE(put.err().find("credential revoked"), std::string::npos) << put.err();
  EXPECT_FALSE(std::filesystem::exists(root + "/big.bin"));
  RunResult refused = run_pxfer("put", small, server.url("after.bin"), "--token-file", alice);
  expect_one_line(refused, exit_permission, "authentication failed");
  RunResult other = run_pxfer("put", small, server.url("bob.bin"), "--token-file", bob);
  EXPECT_EQ(other.exit_code, 0) << other.err;

  // A reload that fails validation keeps the previous tokens and says why.
  write_text(tokens, kept + "carol not-a-hash\n");
  ::kill(server.pid(), SIGHUP);
  ASSERT_TRUE(wait_for_log(server, "reload refused")) << server.log();
  // carol's line follows the kept lines (bob's entry and the `# created` comments token create writes).
  const auto carol_line = std::count(kept.begin(), kept.end(), '\n') + 1;
  EXPECT_NE(server.log().find("line " + std::to_string(carol_line) + ":"), std::string::npos) << server.log();
  RunResult still = run_pxfer("put", small, server.url("bob2.bin"), "--token-file", bob);
  EXPECT_EQ(still.exit_code, 0) << still.err;
  EXPECT_TRUE(server.running());
  // SIGTERM still stops it cleanly.
  EXPECT_EQ(server.stop().status, 0);
}

// A renewed certificate takes a reload, not a restart: after SIGHUP the connections from then on
// handshake with the new one (a client pinned to the old fingerprint is refused, one pinned to the
// new is let in), while a bad certificate file leaves the old one in force.
TEST_F(Operations, SighupLoadsARenewedCertificate) {
  auto make_cert = [&](const std::string& name) {
    std::string command = "umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
                          "-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 -keyout " + etc + "/" + name +
                          ".key -out " + etc + "/" + name + ".pem >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  };
  make_cert("old");
  make_cert("new");
  const std::string cert = etc + "/cert.pem", key = etc + "/key.pem";
  ASSERT_EQ(std::system(("cp -p " + etc + "/old.pem " + cert + " && cp -p " + etc + "/old.key " + key).c_str()), 0);
  std::string alice = token_file("alice");
  ServerProcess server = serve({"--tokens", tokens, "--cert", cert, "--key", key});
  RunResult before = run_pxfer("put", small, server.url("before.bin"), "--token-file", alice);
  ASSERT_EQ(before.exit_code, 0) << before.err;

  RunResult fp = run_pxferd({"fingerprint", "--cert", etc + "/new.pem"});
  ASSERT_EQ(fp.exit_code, 0) << fp.err;
  std::string renewed = fp.out.substr(0, fp.out.find_first_of(" \n"));
  ASSERT_TRUE(renewed.starts_with("sha256:")) << fp.out;
  ASSERT_EQ(std::system(("cp -p " + etc + "/new.pem " + cert + " && cp -p " + etc + "/new.key " + key).c_str()), 0);
  ::kill(server.pid(), SIGHUP);
  ASSERT_TRUE(wait_for_log(server, "new certificate " + renewed)) << server.log();

  RunResult pinned_old = run_pxfer("put", small, server.url("old-pin.bin"), "--token-file", alice);
  EXPECT_NE(pinned_old.exit_code, 0) << "a client pinned to the old certificate got in after the reload";
  EXPECT_FALSE(path_exists(root + "/old-pin.bin"));
  RunResult pinned_new =
      run_pxfer("put", small, server.url("new-pin.bin"), "--token-file", alice, "--fingerprint", renewed);
  EXPECT_EQ(pinned_new.exit_code, 0) << pinned_new.err;

  // A certificate file that does not parse: the reload is refused and the renewed one stays.
  write_text(cert, "not a certificate\n");
  ::kill(server.pid(), SIGHUP);
  ASSERT_TRUE(wait_for_log(server, "reload refused")) << server.log();
  RunResult still = run_pxfer("put", small, server.url("still.bin"), "--token-file", alice, "--fingerprint", renewed);
  EXPECT_EQ(still.exit_code, 0) << still.err;
}

// A stand-in for systemd's notification socket ($NOTIFY_SOCKET): what pxferd tells the service manager.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
    ::setenv("NOTIFY_SOCKET", path.c_str(), 1);  // inherited by the pxferd started next
  }
  ~NotifySocket() {
    ::unsetenv("NOTIFY_SOCKET");
    ::close(fd_);
  }
  // The next datagram, or "" after 10 s.
  std::string next() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 10'000) != 1) return "";
    char buf[1024];
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
};

TEST_F(Operations, TellsSystemdReadyReloadingAndStopping) {
  NotifySocket notify(dir.path() + "/notify");
  ServerProcess server = serve();
  std::string ready = notify.next();
  EXPECT_TRUE(ready.starts_with("READY=1")) << ready;
  EXPECT_NE(ready.find("STATUS=serving on 127.0.0.1:" + std::to_string(server.port())), std::string::npos) << ready;
  ::kill(server.pid(), SIGHUP);
  EXPECT_EQ(notify.next(), "RELOADING=1");
  EXPECT_EQ(notify.next(), "READY=1");
  EXPECT_EQ(server.stop().status, 0);
  EXPECT_EQ(notify.next(), "STOPPING=1");
}

TEST_F(Operations, SighupRereadsTheConfigFileAndNamesWhatNeedsARestart) {
  std::string alice = token_file("alice");
  std::string others = etc + "/others";
  std::string bob_file = etc + "/bob.token";
  write_private(bob_file, create_token("bob", others) + "\n");
  std::string config = etc + "/pxferd.toml";
  write_text(config, "tokens = \"" + tokens + "\"\nmax-active = 4\n");
  ServerProcess server = serve({"--config", config, "--anonymous-read"});
  EXPECT_EQ(run_pxfer("put", small, server.url("a.bin"), "--token-file", alice).exit_code, 0);
  // The file now names another tokens file and another limit: the tokens change, the limit waits.
  write_text(config, "tokens = \"" + others + "\"\nmax-active = 9\n");
  ::kill(server.pid(), SIGHUP);
  ASSERT_TRUE(wait_for_log(server, "reloaded: tokens " + others)) << server.log();
  EXPECT_NE(server.log().find("reload: max-active changed from '4' to '9'"), std::string::npos) << server.log();
  expect_one_line(run_pxfer("put", small, server.url("b.bin"), "--token-file", alice), exit_permission,
                  "authentication failed");
  EXPECT_EQ(run_pxfer("put", small, server.url("c.bin"), "--token-file", bob_file).exit_code, 0);
  // A config that no longer parses changes nothing.
  write_text(config, "tokens = \"" + others + "\"\nmax-active = \"many\"\n");
  ::kill(server.pid(), SIGHUP);
  ASSERT_TRUE(wait_for_log(server, "reload refused")) << server.log();
  EXPECT_EQ(run_pxfer("put", small, server.url("d.bin"), "--token-file", bob_file).exit_code, 0);
}

TEST_F(Operations, TokenCreateMakesMissingDirectoriesWithSafeModes) {
  std::string file = dir.path() + "/fresh/etc/pxferd/tokens";
  RunResult r = run_pxferd({"token", "create", "alice", "--tokens", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(dir.path() + "/fresh"), 0750u);
  EXPECT_EQ(mode_of(dir.path() + "/fresh/etc/pxferd"), 0750u);
  // 0640 with group pxferd where that group exists (an installed package), else 0600.
  mode_t mode = mode_of(file);
  EXPECT_TRUE(mode == 0600u || mode == 0640u) << std::oct << mode;
  EXPECT_NE(read_text(file).find("alice sha256:"), std::string::npos);
}

TEST_F(Operations, UnknownCommandsAreNamedInOneLine) {
  expect_one_line(run_pxfer("bogus"), exit_usage, "unknown command 'bogus'; commands: put, get");
  expect_one_line(run_pxfer_args({}), exit_usage, "no subcommand given; commands: put, get");
  expect_one_line(run_pxferd({"bogus"}), exit_usage, "unknown command 'bogus'; commands: token, fingerprint");
}

TEST_F(Operations, HelpIsGroupedWithTypeNames) {
  RunResult put = run_pxfer("put", "--help");
  ASSERT_EQ(put.exit_code, 0) << put.err;
  for (const char* group : {"Security", "Reliability", "Many files", "Examples:"})
    EXPECT_NE(put.out.find(group), std::string::npos) << group << "\n" << put.out;
  EXPECT_NE(put.out.find("--block-size SIZE"), std::string::npos) << put.out;
  RunResult daemon = run_pxferd({"--help"});
  ASSERT_EQ(daemon.exit_code, 0) << daemon.err;
  EXPECT_NE(daemon.out.find("--idle-timeout DURATION"), std::string::npos) << daemon.out;
  for (const auto& text : {put.out, daemon.out}) {
    EXPECT_EQ(text.find(" TEXT"), std::string::npos) << text;
    EXPECT_EQ(text.find(" UINT"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace pxfer::e2e
