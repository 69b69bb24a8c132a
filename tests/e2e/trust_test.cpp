// Issue 11, "trust the data path", attacked end to end: a hostile server that lists paths
// leaving the client's target, anonymous clients against an access file that does not name them,
// credentials files others could read, a path that tries to forge a log line, a token named
// anonymous, --ca with --fingerprint, and --encrypt under --ca against a DNS-only certificate.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/e2e.hpp"
#include "support/hostile_server.hpp"

namespace pxfer::e2e {
namespace {
namespace fs = std::filesystem;

constexpr int exit_usage = 2, exit_permission = 4;

void expect_one_line_refusal(const RunResult& r, int code, const std::string& needle) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, code) << "stderr: " << r.err << "\nstdout: " << r.out;
  EXPECT_TRUE(r.err.starts_with("pxfer: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be exactly one line: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr should name '" << needle << "': " << r.err;
}

// Every name below `dir` (symlinks not followed), files with their sizes.
std::map<std::string, std::int64_t> names_below(const std::string& dir) {
  std::map<std::string, std::int64_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    auto st = e.symlink_status();
    out[fs::relative(e.path(), dir).generic_string()] =
        fs::is_regular_file(st) ? static_cast<std::int64_t>(fs::file_size(e.path())) : -1;
  }
  return out;
}

void write_private(const std::string& path, const std::string& text, mode_t mode = 0600) {
  write_text(path, text);
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

// ---- a hostile server steering get -r ----

struct Steering {
  const char* name;
  wire::ListEntry bad;
};

void PrintTo(const Steering& s, std::ostream* os) { *os << s.name; }

class HostileListing : public ::testing::TestWithParam<Steering> {};

TEST_P(HostileListing, GetRecursiveRefusesInOneLineAndWritesNothing) {
  TempDir dir;
  const std::string work = dir.subdir("work/deep");  // room for ../.. to land inside `dir`
  const std::string state = dir.subdir("state");
  HostileServer server(state, {listed_directory("ok"), listed_file("ok/fine.txt"), GetParam().bad});
  const auto before = names_below(dir.path());
  RunResult r = run_pxfer("get", "-r", server.url("src/"), work + "/target", "--fingerprint", server.fingerprint());
  expect_one_line_refusal(r, exit_permission, "unsafe path");
  EXPECT_EQ(server.lists_answered(), 1u);
  EXPECT_EQ(names_below(dir.path()), before) << "get -r created or changed something";
}

INSTANTIATE_TEST_SUITE_P(
    Trust, HostileListing,
    ::testing::Values(Steering{"DotDotFile", listed_file("../escape.txt")},
                      Steering{"DotDotDirectory", listed_directory("../../escape-dir")},
                      Steering{"AbsoluteDirectory", listed_directory("/tmp/pxfer-hostile-absolute")},
                      Steering{"AbsoluteFile", listed_file("/etc/pxfer-hostile")},
                      Steering{"ClimbingDirectory", listed_directory("a/../../b")},
                      Steering{"ClimbingFile", listed_file("a/../../b.txt")},
                      Steering{"EmptyComponent", listed_directory("ok//x")},
                      Steering{"DotComponent", listed_directory("./x")},
                      Steering{"NewlineInName", listed_file("ok/x\ny.txt")},
                      Steering{"EscapeSequenceInName", listed_file("ok/\x1b[2Jx.txt")},
                      Steering{"EmptyPathInADirectoryListing", listed_file("")}),
    [](const ::testing::TestParamInfo<Steering>& p) { return std::string(p.param.name); });

// A name that is not UTF-8 (Latin-1 from an older file system) is not unsafe, but it must not
// break --json: every line stays valid JSON and the run ends with its own error, not a crash.
TEST(HostileJson, NamesThatAreNotUtf8KeepJsonOutputValid) {
  TempDir dir;
  HostileServer server(dir.subdir("state"), {listed_directory("ok"), listed_file("ok/caf\xe9.txt")});
  RunResult r = run_pxfer("get", "-r", "--json", server.url("src/"), dir / "target", "--fingerprint", server.fingerprint());
  EXPECT_EQ(r.exit_code, exit_permission) << r.err;  // the hostile server refuses every OPEN
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  std::istringstream lines(r.out);
  std::size_t parsed = 0;
  for (std::string line; std::getline(lines, line); ++parsed)
    EXPECT_TRUE(nlohmann::json::accept(line)) << "not JSON: " << line;
  EXPECT_GT(parsed, 0u) << r.out;
}

// ---- pxferd's access rules and credentials files ----

class Trust : public DirsTest {
 protected:
  Trust() {
    make_file(root + "/secret.dat", 1000, 1);
    make_file(local + "/small.bin", 64 * KiB + 5, 7);
  }
  // The identity's token, in etc/NAME.token with mode 0600.
  std::string token_file(const std::string& name) {
    std::string file = etc + "/" + name + ".token";
    write_private(file, create_token(name, tokens) + "\n");
    return file;
  }
  std::string etc = dir.subdir("etc");
  std::string tokens = etc + "/tokens";
};

TEST_F(Trust, AnonymousGetsNothingFromAnAccessFileWithoutAnAnonymousLine) {
  token_file("alice");
  write_private(etc + "/access", "alice / rw\n");
  ServerProcess server = serve({"--tokens", tokens, "--access", etc + "/access", "--anonymous-read"});
  RunResult one = run_pxfer("get", server.url("secret.dat"), local + "/got.dat");
  expect_one_line_refusal(one, exit_permission, "no access");
  EXPECT_FALSE(path_exists(local + "/got.dat"));
  RunResult tree = run_pxfer("get", "-r", server.url(""), local + "/all");
  EXPECT_EQ(tree.exit_code, exit_permission) << tree.err;
  EXPECT_FALSE(path_exists(local + "/all/secret.dat"));
}

TEST_F(Trust, AnonymousGetsOnlyTheLinesThatNameIt) {
  fs::create_directories(root + "/public");
  make_file(root + "/public/p.dat", 10, 2);
  write_private(etc + "/access", "anonymous public ro\n");
  ServerProcess server = serve({"--access", etc + "/access", "--anonymous-read"});
  EXPECT_EQ(run_pxfer("get", server.url("public/p.dat"), local + "/p.dat").exit_code, 0);
  expect_one_line_refusal(run_pxfer("get", server.url("secret.dat"), local + "/s.dat"), exit_permission, "may not read");
}

TEST_F(Trust, ClientTokenFileReadableByOthersIsRefused) {
  std::string file = token_file("alice");
  ServerProcess server = serve({"--tokens", tokens});
  ASSERT_EQ(::chmod(file.c_str(), 0644), 0);
  RunResult r = run_pxfer("get", server.url("secret.dat"), local + "/got.dat", "--token-file", file);
  expect_one_line_refusal(r, exit_permission, "chmod 600 " + file);
  EXPECT_FALSE(path_exists(local + "/got.dat"));
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  expect_one_line_refusal(run_pxfer("get", server.url("secret.dat"), local + "/got.dat", "--token-file", file),
                          exit_permission, "readable by its group");
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  EXPECT_EQ(run_pxfer("get", server.url("secret.dat"), local + "/got.dat", "--token-file", file).exit_code, 0);
}

// pxferd refuses to start on credentials files others could change or every user could read.
TEST_F(Trust, PxferdRefusesTokensAndAccessFilesOthersCanReadOrWrite) {
  token_file("alice");
  write_private(etc + "/access", "alice / rw\n");
  auto start = [&](mode_t tokens_mode, mode_t access_mode) {
    EXPECT_EQ(::chmod(tokens.c_str(), tokens_mode), 0);
    EXPECT_EQ(::chmod((etc + "/access").c_str(), access_mode), 0);
    auto p = ChildProcess::piped({binary_path("pxferd"), "--root", root, "--listen", "127.0.0.1:0", "--tokens", tokens,
                                  "--access", etc + "/access", "--port-file", dir / "port"});
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!path_exists(dir / "port") && !p.try_wait() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    bool listening = path_exists(dir / "port");
    if (listening) p.send_signal(SIGTERM);
    int status = p.wait(20s);
    ::unlink((dir / "port").c_str());
    return std::make_pair(listening ? 0 : status, p.err());
  };
  auto [world_readable, e1] = start(0644, 0600);
  EXPECT_EQ(world_readable, exit_permission) << e1;
  EXPECT_NE(e1.find("chmod 600 " + tokens), std::string::npos) << e1;
  auto [group_writable, e2] = start(0620, 0600);
  EXPECT_EQ(group_writable, exit_permission) << e2;
  auto [access_open, e3] = start(0600, 0666);
  EXPECT_EQ(access_open, exit_permission) << e3;
  EXPECT_NE(e3.find("access file"), std::string::npos) << e3;
  auto [service_group, e4] = start(0640, 0640);  // root:pxferd 0640, as docs/security.md says
  EXPECT_EQ(service_group, 0) << e4;
}

TEST_F(Trust, TokenNamedAnonymousIsRefusedAtCreateAndAtLoad) {
  auto create = ChildProcess::piped({binary_path("pxferd"), "token", "create", "anonymous", "--tokens", tokens});
  EXPECT_EQ(create.wait(30s), exit_usage) << create.err();
  EXPECT_NE(create.err().find("reserved"), std::string::npos) << create.err();
  EXPECT_EQ(std::count(create.err().begin(), create.err().end(), '\n'), 1) << create.err();
  // A line written by hand (or by an older pxferd) is refused when the server starts.
  token_file("alice");
  const std::string text = read_text(tokens);  // `# created alice ...` and alice's entry
  const std::string entry = text.substr(text.find("\nalice ") + 1);
  write_private(tokens, text + "anonymous" + entry.substr(entry.find(' ')));
  const auto line = std::count(text.begin(), text.end(), '\n') + 1;
  auto serve = ChildProcess::piped({binary_path("pxferd"), "--root", root, "--listen", "127.0.0.1:0", "--tokens", tokens});
  EXPECT_EQ(serve.wait(30s), exit_usage) << serve.err();
  EXPECT_NE(serve.err().find("line " + std::to_string(line) + ": the name anonymous is reserved"), std::string::npos)
      << serve.err();
}

TEST_F(Trust, PathWithANewlineCannotForgeALogLine) {
  ServerProcess server = serve();
  const std::string forged = "x.bin\n2026-01-01T00:00:00.000 info client=10.9.8.7:1 path=forged direction=put bytes=1 "
                             "result=ok";
  RunResult r = run_pxfer("put", local + "/small.bin", server.url(forged));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string log = server.log();
  EXPECT_EQ(log.find("\n2026-01-01T00:00:00.000"), std::string::npos) << "a forged line in the log:\n" << log;
  EXPECT_NE(log.find("path=\"x.bin\\n2026-01-01"), std::string::npos) << "the newline should show escaped:\n" << log;
}

// A peer that starts a TLS handshake and goes silent is dropped at 10 s, as docs/security.md says
// (the constant was 30 s).
TEST_F(Trust, StalledTlsHandshakeIsDroppedAtTenSeconds) {
  ServerProcess server = serve();
  RawConnection silent("127.0.0.1", server.port());
  ASSERT_TRUE(silent.send_all(std::string(1, '\x16')));  // the first byte of a TLS record, then nothing
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(silent.peer_closed_within(25000)) << "still open after 25 s";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(seconds, 8.0);
  EXPECT_LT(seconds, 15.0) << "the handshake deadline should be 10 s";
}

// The state directory holds the private key: pxferd refuses one that others may write into, and
// never writes the key through a name someone planted there.
TEST_F(Trust, StateDirectoryOthersCanWriteIsRefused) {
  const std::string state = dir.subdir("state");
  ASSERT_EQ(::chmod(state.c_str(), 0777), 0);
  auto p = ChildProcess::piped({binary_path("pxferd"), "fingerprint", "--state-dir", state});
  EXPECT_EQ(p.wait(30s), exit_permission) << p.err();
  EXPECT_NE(p.err().find("chmod 700 " + state), std::string::npos) << p.err();
  EXPECT_FALSE(path_exists(state + "/key.pem"));
}

TEST_F(Trust, KeyIsNeverWrittenThroughAPlantedSymlink) {
  const std::string state = dir.subdir("state");
  const std::string victim = dir / "victim.txt";
  write_text(victim, "precious\n");
  ASSERT_EQ(::symlink(victim.c_str(), (state + "/key.pem.tmp").c_str()), 0);
  auto p = ChildProcess::piped({binary_path("pxferd"), "fingerprint", "--state-dir", state});
  EXPECT_EQ(p.wait(30s), 0) << p.err();
  EXPECT_EQ(read_text(victim), "precious\n") << "the private key was written through the symlink";
  struct stat st {};
  ASSERT_EQ(::lstat((state + "/key.pem").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Another user of the export plants a hard link to a file pxferd may write at the fixed name of
// a resumable partial file or its journal: it is replaced (unlink, then O_EXCL), never truncated
// or written.
TEST_F(Trust, PartialFileNameHeldByAHardLinkIsNotWrittenThrough) {
  ServerProcess server = serve();
  const std::string victim = root + "/victim.dat";
  const std::string victim2 = root + "/victim2.dat";
  write_text(victim, "precious\n");
  write_text(victim2, "precious too\n");
  ASSERT_EQ(::link(victim.c_str(), (root + "/.big.dat.pxfer-part").c_str()), 0);
  ASSERT_EQ(::link(victim2.c_str(), (root + "/.big.dat.pxfer-journal").c_str()), 0);
  make_file(local + "/big.dat", 3 * MiB + 1, 4);
  RunResult r = run_pxfer("put", local + "/big.dat", server.url("big.dat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_text(victim) == "precious\n") << "the partial file was written through the planted link";
  EXPECT_TRUE(read_text(victim2) == "precious too\n") << "the journal was written through the planted link";
  EXPECT_TRUE(files_equal(local + "/big.dat", root + "/big.dat"));
}

// ---- the server's identity: --ca and --fingerprint together, DNS-only certificates ----

void sh(const std::string& command) { ASSERT_EQ(std::system((command + " >/dev/null 2>&1").c_str()), 0) << command; }

// A CA and a server certificate for `san` (e.g. "DNS:localhost": no IP address in it).
std::string make_pki(const std::string& d, const std::string& san) {
  sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca -keyout " + d +
     "/ca.key -out " + d + "/ca.pem");
  sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost -keyout " + d +
     "/server.key -out " + d + "/server.csr");
  write_text(d + "/server.ext", "subjectAltName=" + san + "\n");
  sh("openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d + "/ca.key -CAcreateserial -days 2 " +
     "-extfile " + d + "/server.ext -out " + d + "/server.pem");
  return d;
}

// A client certificate whose CN is "anonymous" would get anonymous's grants, with write access.
TEST_F(Trust, ClientCertificateNamedAnonymousIsRefused) {
  std::string pki = make_pki(dir.subdir("pki"), "DNS:localhost");
  sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=anonymous -keyout " + pki +
     "/client.key -out " + pki + "/client.csr");
  sh("openssl x509 -req -in " + pki + "/client.csr -CA " + pki + "/ca.pem -CAkey " + pki + "/ca.key -CAcreateserial -days 2 " +
     "-out " + pki + "/client.pem");
  write_private(etc + "/access", "anonymous / rw\n");
  ServerProcess server = serve({"--client-ca", pki + "/ca.pem", "--access", etc + "/access"});
  RunResult r = run_pxfer("put", local + "/small.bin", server.url("w.bin"), "--cert", pki + "/client.pem", "--key",
                          pki + "/client.key");
  expect_one_line_refusal(r, exit_permission, "client certificate refused");
  EXPECT_FALSE(path_exists(root + "/w.bin"));
}

TEST_F(Trust, CaAndFingerprintTogetherBothApply) {
  std::string pki = make_pki(dir.subdir("pki"), "IP:127.0.0.1,DNS:localhost");
  ServerProcess server = serve({"--insecure-no-auth", "--cert", pki + "/server.pem", "--key", pki + "/server.key"});
  RunResult ok = run_pxfer("get", server.url("secret.dat"), local + "/a.dat", "--ca", pki + "/ca.pem", "--fingerprint",
                           server.fingerprint());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  RunResult wrong = run_pxfer("get", server.url("secret.dat"), local + "/b.dat", "--ca", pki + "/ca.pem",
                              "--fingerprint", "sha256:" + std::string(64, '1'));
  expect_one_line_refusal(wrong, exit_permission, "not the --fingerprint given");
  EXPECT_FALSE(path_exists(local + "/b.dat"));
}

TEST_F(Trust, EncryptedStreamsUnderCaCheckTheHostNameTheUserTyped) {
  std::string pki = make_pki(dir.subdir("pki"), "DNS:localhost");
  make_file(root + "/big.dat", 5 * MiB + 3, 9);
  ServerProcess server = serve({"--insecure-no-auth", "--cert", pki + "/server.pem", "--key", pki + "/server.key"});
  const std::string url = "pxfer://localhost:" + std::to_string(server.port()) + "/big.dat";
  RunResult r = run_pxfer("get", "-p", "2", "--encrypt", "--ca", pki + "/ca.pem", url, local + "/big.dat");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(root + "/big.dat", local + "/big.dat"));
}

}  // namespace
}  // namespace pxfer::e2e
