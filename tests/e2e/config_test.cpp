// pxferd --config is real TOML and --check-config runs the checks start-up runs (issue 37 point 1):
// a table of broken configs, each refused with exit != 0 and FILE:LINE in one line, and a good one.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

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

// `text` with the first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// A TCP port this process listens on for the test's duration.
struct Listener {
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd, 1);
    socklen_t n = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
  int fd = -1;
  unsigned port = 0;
};

class Config : public ::testing::Test {
 protected:
  Config() { write_private(tokens, "alice sha256:00112233:" + std::string(64, 'a') + "\n"); }
  // The good config's lines, then `extra`.
  std::string good(const std::string& extra = "") {
    return "# pxferd.toml\nroot = \"" + root + "\"\ntokens = \"" + tokens + "\"\nlisten = \"127.0.0.1:0\"\n" +
           "state-dir = \"" + state + "\"\nmax-active = 4\nqueue-timeout = \"10m\"\n" +
           "tpc-allow = [\"se02.example.org\", \"10.1.0.0/16\"]\nverbose = false\n" + extra;
  }
  RunResult check(const std::string& text) {
    write_text(config, text);
    return run_pxferd({"--config", config, "--check-config"});
  }
  TempDir dir;
  std::string root = dir.subdir("root"), etc = dir.subdir("etc"), state = dir.subdir("state");
  std::string tokens = etc + "/tokens", config = etc + "/pxferd.toml";
};

TEST_F(Config, AGoodConfigPassesWithIssuerTables) {
  RunResult r = check(good("\n[[issuer]]\nurl = \"https://issuer.example.org\"\naudiences = [\"pxfer\"]\n"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("configuration OK"), std::string::npos) << r.out;
}

TEST_F(Config, EveryBrokenConfigIsRefusedWithFileAndLine) {
  Listener busy;
  const std::string world_writable = etc + "/open-tokens";
  write_text(world_writable, "alice sha256:00112233:" + std::string(64, 'a') + "\n");
  ::chmod(world_writable.c_str(), 0666);
  struct Case {
    std::string name, text, needle;
  };
  const std::vector<Case> cases = {
      {"unterminated string", good("access = \"/etc/pxferd/access\n"), ":10:"},
      {"duplicate key", good("max-active = 5\n"), ":10:"},
      {"unknown key", good("max-actve = 5\n"), ":10:1: max-actve: not an option"},
      {"wrong type, number", good("threads = \"four\"\n"), ":10:1: threads: expected a whole number"},
      {"wrong type, flag", good("anonymous-read = \"yes\"\n"), ":10:1: anonymous-read: expected true or false"},
      {"wrong type, string", good("access = 5\n"), ":10:1: access: expected a string"},
      {"negative count", good("max-clients = -1\n"), ":10:1: max-clients: expected a whole number from 0"},
      {"a [section]", good("[server]\nthreads = 2\n"), ": server: a [section] is not used"},
      {"an unknown [[table]]", good("[[peer]]\nhost = \"x\"\n"), ": peer: not an option"},
      {"bad duration", good("idle-timeout = \"soon\"\n"), ":10:1: --idle-timeout"},
      {"unresolvable listen address", replaced(good(""), "127.0.0.1:0", "no-such-host.invalid:7521"),
       ":4:1: --listen no-such-host.invalid:7521: the address does not resolve"},
      {"port in use", replaced(good(""), "127.0.0.1:0", "127.0.0.1:" + std::to_string(busy.port)),
       ":4:1: --listen 127.0.0.1:" + std::to_string(busy.port) + ": the port is in use"},
      {"metrics port in use", good("metrics-listen = \"127.0.0.1:" + std::to_string(busy.port) + "\"\n"),
       ":10:1: --metrics-listen"},
      {"missing root", replaced(good(""), "\"" + root + "\"", "\"" + root + "/missing\""), ":2:1: --root"},
      {"missing tokens file", replaced(good(""), tokens, etc + "/missing"), ":3:1: "},
      {"world-writable tokens file", replaced(good(""), tokens, world_writable), ":3:1: "},
  };
  for (const auto& c : cases) {
    RunResult r = check(c.text);
    EXPECT_NE(r.exit_code, 0) << c.name << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": one line expected: " << r.err;
    const std::string line = c.needle.starts_with(":") ? "" : ":10:";  // FILE:LINE: with every message
    EXPECT_NE(r.err.find(config + (line.empty() ? ":" : line)), std::string::npos) << c.name << ": no FILE:LINE: " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.name << ": expected '" << c.needle << "' in " << r.err;
  }
}

// The config that --check-config accepts is the one start-up accepts: an unterminated string no
// longer passes the check and then stops the server (issue 37: a crash loop under Restart=).
TEST_F(Config, StartUpRefusesWhatTheCheckRefuses) {
  write_text(config, good("access = \"/etc/pxferd/access\n"));
  RunResult r = run_pxferd({"--config", config});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(config + ":10:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pxfer::e2e
