// TLS, server identity and client authentication against a real pxferd: refusals are one line
// with exit code 4 (permission), secrets never appear in any output, --encrypt moves the same bytes.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

constexpr int exit_usage = 2, exit_permission = 4;

void expect_refusal(const RunResult& r, int code, const std::string& needle) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, code) << "stderr: " << r.err << "\nstdout: " << r.out;
  EXPECT_TRUE(r.err.starts_with("pxfer: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be exactly one line: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr should name '" << needle << "': " << r.err;
}

// Credentials files are refused when other users could read them (ssh style): 0600 like
// `install -m 600` in docs/security.md.
void write_private(const std::string& path, const std::string& text) {
  write_text(path, text);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0) << path;
}

// Runs a shell command (openssl for the test PKI); fails the test when it fails.
void sh(const std::string& command) {
  int rc = std::system((command + " >/dev/null 2>&1").c_str());
  ASSERT_EQ(rc, 0) << command;
}

// A CA and certificates it signs, made with the openssl command.
struct Pki {
  explicit Pki(const std::string& dir) : dir(dir) {
    sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca -keyout " +
       dir + "/ca.key -out " + dir + "/ca.pem");
  }
  // NAME.key and NAME.pem for subject CN=cn, with an IP SAN for 127.0.0.1.
  void issue(const std::string& name, const std::string& cn) {
    std::string d = dir + "/" + name;
    sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=" + cn + " -keyout " + d +
       ".key -out " + d + ".csr");
    write_text(d + ".ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    sh("openssl x509 -req -in " + d + ".csr -CA " + dir + "/ca.pem -CAkey " + dir + "/ca.key -CAcreateserial -days 2 -extfile " +
       d + ".ext -out " + d + ".pem");
  }
  std::string file(const std::string& name) const { return dir + "/" + name; }
  std::string dir;
};

class Security : public DirsTest {
 protected:
  Security() {
    make_file(small, 64 * KiB + 5, 7);
  }

  // "--token-file FILE" for a new identity in the tokens file.
  std::string create_token(const std::string& name) {
    std::string token = e2e::create_token(name, tokens);
    EXPECT_EQ(token.size(), 64u) << token;
    std::string file = etc + "/" + name + ".token";
    write_private(file, token + "\n");
    return token;
  }

  std::string etc = dir.subdir("etc");
  std::string small = local + "/small.bin";
  std::string tokens = etc + "/tokens";
};

TEST_F(Security, TokenAuthenticatesAndNeverAppearsInOutputOrLogs) {
  std::string token = create_token("alice");
  ServerProcess server = serve({"--tokens", tokens, "-v"});
  RunResult r = run_pxfer("put", small, server.url("a.bin"), "--token-file", etc + "/alice.token", "-v");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(small, root + "/a.bin"));
  RunResult j = run_pxfer("get", server.url("a.bin"), local + "/back.bin", "--token-file", etc + "/alice.token", "--json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"identity\":\"alice\""), std::string::npos) << j.out;
  for (const auto& text : {r.out, r.err, j.out, j.err, server.log(), read_text(tokens)})
    EXPECT_EQ(text.find(token), std::string::npos) << "the token leaked into: " << text;
}

TEST_F(Security, NoCredentialsAreRefused) {
  create_token("alice");
  ServerProcess server = serve({"--tokens", tokens});
  RunResult r = run_pxfer("put", small, server.url("a.bin"));
  expect_refusal(r, exit_permission, "authentication required");
  EXPECT_FALSE(path_exists(root + "/a.bin"));
}

TEST_F(Security, WrongTokenIsRefusedAndLoggedOnlyByItsId) {
  create_token("alice");
  ServerProcess server = serve({"--tokens", tokens});
  std::string wrong(64, 'a');
  write_private(etc + "/wrong.token", wrong + "\n");
  RunResult r = run_pxfer("put", small, server.url("a.bin"), "--token-file", etc + "/wrong.token");
  expect_refusal(r, exit_permission, "authentication failed");
  EXPECT_EQ(server.log().find(wrong), std::string::npos) << server.log();
  EXPECT_NE(server.log().find("token-id:"), std::string::npos) << server.log();
}

TEST_F(Security, ReadOnlyIdentityCannotPut) {
  create_token("reader");
  create_token("writer");
  write_private(etc + "/access", "# identity path rights\nreader / ro\nwriter / rw\n");
  ServerProcess server = serve({"--tokens", tokens, "--access", etc + "/access"});
  RunResult w = run_pxfer("put", small, server.url("w.bin"), "--token-file", etc + "/writer.token");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  RunResult r = run_pxfer("put", small, server.url("r.bin"), "--token-file", etc + "/reader.token");
  expect_refusal(r, exit_permission, "read-only");
  EXPECT_FALSE(path_exists(root + "/r.bin"));
  RunResult g = run_pxfer("get", server.url("w.bin"), local + "/got.bin", "--token-file", etc + "/reader.token");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_TRUE(files_equal(small, local + "/got.bin"));
}

TEST_F(Security, ClientCertificatesSignedByTheClientCaAuthenticateOthersAreRefused) {
  Pki good(dir.subdir("pki-good")), other(dir.subdir("pki-other"));
  good.issue("client", "carol");
  other.issue("client", "mallory");
  ServerProcess server = serve({"--client-ca", good.file("ca.pem")});
  RunResult ok = run_pxfer("put", small, server.url("c.bin"), "--cert", good.file("client.pem"), "--key",
                           good.file("client.key"), "--json");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"identity\":\"carol\""), std::string::npos) << ok.out;
  RunResult bad = run_pxfer("put", small, server.url("m.bin"), "--cert", other.file("client.pem"), "--key",
                            other.file("client.key"));
  expect_refusal(bad, exit_permission, "client certificate refused");
  RunResult none = run_pxfer("put", small, server.url("n.bin"));
  expect_refusal(none, exit_permission, "authentication required");
  EXPECT_FALSE(path_exists(root + "/m.bin"));
}

TEST_F(Security, CaVerifiesTheServerCertificate) {
  Pki pki(dir.subdir("pki")), other(dir.subdir("pki-other"));
  pki.issue("server", "localhost");
  ServerProcess server = serve({"--insecure-no-auth", "--cert", pki.file("server.pem"), "--key", pki.file("server.key")});
  RunResult ok = run_pxfer("put", small, server.url("s.bin"), "--ca", pki.file("ca.pem"));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  RunResult bad = run_pxfer("put", small, server.url("t.bin"), "--ca", other.file("ca.pem"));
  expect_refusal(bad, exit_permission, "does not verify against --ca");
}

TEST_F(Security, ChangedServerFingerprintIsRefusedNamingTheLineToDelete) {
  ServerProcess server = serve({"--insecure-no-auth"});
  std::string known = etc + "/known_hosts";
  write_text(known, server.authority() + " sha256:" + std::string(64, '0') + "\n");
  RunResult r = run_pxfer("put", small, server.url("x.bin"), "--known-hosts", known);
  expect_refusal(r, exit_permission, "CHANGED");
  EXPECT_NE(r.err.find("delete line 1 of " + known), std::string::npos) << r.err;
  EXPECT_FALSE(path_exists(root + "/x.bin"));
  RunResult f = run_pxfer("put", small, server.url("x.bin"), "--fingerprint", "sha256:" + std::string(64, '1'));
  expect_refusal(f, exit_permission, "not the --fingerprint given");
}

TEST_F(Security, TrustOnFirstUsePinsTheServerAndTheSecondRunIsQuiet) {
  ServerProcess server = serve({"--insecure-no-auth"});
  std::string known = etc + "/tofu_known_hosts";
  RunResult first = run_pxfer("put", small, server.url("1.bin"), "--known-hosts", known);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(count_lines_containing(first.err, "warning: first connection to " + server.authority()), 1u) << first.err;
  EXPECT_NE(first.err.find(server.fingerprint()), std::string::npos) << first.err;
  EXPECT_EQ(read_text(known), server.authority() + " " + server.fingerprint() + "\n");
  RunResult second = run_pxfer("put", small, server.url("2.bin"), "--known-hosts", known);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err, "");
}

// Where the file's plaintext shows in what a proxy carried: the first stream offset at which 64
// bytes of the file starting at a 64-byte-aligned file offset appear (so any plaintext run of 127
// bytes or more is found), or npos. Independent of pxfer: a hash of the file's aligned 8-byte
// words, checked at every position of the captured bytes, then confirmed byte for byte.
class PlaintextFinder {
 public:
  explicit PlaintextFinder(const std::string& path) : file_(read_text(path)) {
    for (std::size_t off = 0; off + 64 <= file_.size(); off += 64) {
      std::uint64_t w;
      std::memcpy(&w, file_.data() + off, 8);
      words_.emplace(w, off);
    }
  }
  std::size_t find_in(const std::string& carried) const {
    for (std::size_t i = 0; i + 64 <= carried.size(); ++i) {
      std::uint64_t w;
      std::memcpy(&w, carried.data() + i, 8);
      auto it = words_.find(w);
      if (it != words_.end() && std::memcmp(carried.data() + i, file_.data() + it->second, 64) == 0) return i;
    }
    return std::string::npos;
  }
  // Connections (index) of `proxy` whose bytes towards the server or the client hold plaintext.
  std::vector<std::size_t> connections_with_plaintext(pxfer::testing::FaultProxy& proxy, std::size_t first,
                                                      bool to_server) const {
    std::vector<std::size_t> found;
    for (std::size_t i = first; i < proxy.accepted(); ++i)
      if (find_in(proxy.captured(i, to_server)) != std::string::npos) found.push_back(i);
    return found;
  }

 private:
  std::string file_;
  std::unordered_map<std::uint64_t, std::size_t> words_;
};

// --encrypt: the bytes are the same at the far end, and a proxy that keeps everything carried
// never sees the file's plaintext; without --encrypt the same proxy does see it (the check works).
TEST_F(Security, EncryptedTransferIsByteIdenticalAndSaysSo) {
  ServerProcess server = serve();
  pxfer::testing::FaultProxy tap(server.port());
  tap.set_capture(true);
  pin_server("127.0.0.1:" + std::to_string(tap.port()), server.fingerprint());
  auto via_tap = [&](const std::string& path) { return "pxfer://127.0.0.1:" + std::to_string(tap.port()) + "/" + path; };
  std::string big = local + "/big.bin";
  make_file(big, 16 * MiB + 12345, 3);
  const PlaintextFinder plaintext(big);

  RunResult put = run_pxfer("put", "-p", "4", "--encrypt", big, via_tap("big.bin"));
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_TRUE(files_equal(big, root + "/big.bin"));
  const std::size_t put_connections = tap.accepted();
  EXPECT_GE(put_connections, 5u) << "a control connection and 4 data streams";
  EXPECT_GE(tap.carried_since(0).to_server, 16 * MiB + 12345);
  EXPECT_EQ(plaintext.connections_with_plaintext(tap, 0, true), std::vector<std::size_t>{})
      << "the file's plaintext crossed the wire during put --encrypt";
  auto protection = line_starting_with(put.out, "protection: ");
  ASSERT_TRUE(protection) << put.out;
  EXPECT_NE(protection->find("control TLS1.3"), std::string::npos) << *protection;
  EXPECT_NE(protection->find("data encrypted TLS1.3"), std::string::npos) << *protection;
  // Its streams proved themselves over their own TLS channels, so TLS alone authenticates the
  // blocks (tls_relay_test.cpp is the relay that this stops).
  EXPECT_NE(protection->find("streams bound to the control session"), std::string::npos) << *protection;

  RunResult get = run_pxfer("get", "-p", "3", "--encrypt", via_tap("big.bin"), local + "/back.bin");
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_TRUE(files_equal(big, local + "/back.bin"));
  const std::size_t get_connections = tap.accepted();
  EXPECT_GE(tap.carried_since(put_connections).to_client, 16 * MiB + 12345);
  EXPECT_EQ(plaintext.connections_with_plaintext(tap, put_connections, false), std::vector<std::size_t>{})
      << "the file's plaintext crossed the wire during get --encrypt";

  RunResult clear = run_pxfer("get", via_tap("big.bin"), local + "/clear.bin", "--overwrite");
  ASSERT_EQ(clear.exit_code, 0) << clear.err;
  EXPECT_FALSE(plaintext.connections_with_plaintext(tap, get_connections, false).empty())
      << "a clear get showed no plaintext to the proxy: the check above proves nothing";
  auto p = line_starting_with(clear.out, "protection: ");
  ASSERT_TRUE(p) << clear.out;
  EXPECT_NE(p->find("data authenticated"), std::string::npos) << *p;
}

TEST_F(Security, PxferdRefusesToStartWithoutAnAuthenticationMethod) {
  auto bare = ChildProcess::piped({binary_path("pxferd"), "--root", root, "--listen", "127.0.0.1:0"});
  EXPECT_EQ(bare.wait(30s), exit_usage);
  EXPECT_NE(bare.err().find("no client authentication configured"), std::string::npos) << bare.err();
  auto wide = ChildProcess::piped({binary_path("pxferd"), "--root", root, "--listen", "0.0.0.0:0", "--insecure-no-auth"});
  EXPECT_EQ(wide.wait(30s), exit_usage);
  EXPECT_NE(wide.err().find("only allowed on a loopback address"), std::string::npos) << wide.err();
}

TEST_F(Security, FingerprintSubcommandMatchesTheServingCertificate) {
  std::string state = dir.subdir("state");
  auto fp = ChildProcess::piped({binary_path("pxferd"), "fingerprint", "--state-dir", state});
  ASSERT_EQ(fp.wait(30s), 0) << fp.err();
  std::string printed = fp.out().substr(0, fp.out().find('\n'));
  ServerProcess server = serve({"--insecure-no-auth", "--state-dir", state});
  EXPECT_EQ(printed, server.fingerprint());
  RunResult r = run_pxfer("put", small, server.url("f.bin"), "--fingerprint", printed);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace pxfer::e2e
