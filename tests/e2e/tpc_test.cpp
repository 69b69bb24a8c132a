// Issue 13 point 3: third-party copy between two real pxferd on loopback. Byte-exact pull and
// push copies; the steering client's JSON; and the attacks: a grant used twice, an expired grant,
// a grant for another path, a peer outside --tpc-allow, a read-only identity at the destination.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <atomic>
#include <cstring>
#include <map>
#include <thread>

#include "support/raw_frames.hpp"

#include "client/connect.hpp"
#include "fault_proxy.hpp"
#include "net/frame_io.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

constexpr int exit_permission = 4, exit_exists = 9;
const std::vector<std::string> allow_loopback = {"--tpc-allow", "127.0.0.1:*"};

class ThirdPartyCopy : public ::testing::Test {
 protected:
  ThirdPartyCopy() : root_a(dir.subdir("a")), root_b(dir.subdir("b")), etc(dir.subdir("etc")) {
    make_file(root_a + "/x.bin", 24 * MiB + 12345, 7);
  }
  TempDir dir;
  std::string root_a, root_b, etc;
};

// One control connection to `server` logged in with `token` (a token or a grant), `request`
// sent, its answer returned. Throws pxfer::Error as the client library does (AUTH refused, ...).
net::awaitable<void> exchange(const Url& url, std::shared_ptr<ClientTrust> trust, const wire::Message& request,
                              wire::Message& reply) {
  ControlLink link = co_await open_control(url, std::chrono::milliseconds(5000), trust);
  co_await net::send_message(*link.connection, request);
  reply = co_await net::read_message(*link.connection);
}

wire::Message ask(const ServerProcess& server, const std::string& token, const wire::Message& request) {
  auto trust = std::make_shared<ClientTrust>(ClientSecurity{"", server.fingerprint(), "/dev/null", token, "", ""});
  auto url = parse_url(server.url(""));
  wire::Message reply;
  run_io(1, [&](boost::asio::io_context&) { return exchange(*url, trust, request, reply); });
  return reply;
}

std::string grant_for(const ServerProcess& server, const std::string& path, std::uint64_t size) {
  wire::Message reply = ask(server, "", wire::TpcGrantRequest{wire::Direction::put, 0, size, path});
  return net::expect<wire::TpcGrant>(std::move(reply), server.authority()).secret;
}

wire::Open put_of(const std::string& path, std::uint64_t size) {
  wire::Open o;
  o.direction = wire::Direction::put;
  o.streams = 1;
  o.block_size = 4u << 20;
  o.size = size;
  o.path = path;
  return o;
}

TEST_F(ThirdPartyCopy, PullIsByteExactAndReportsRates) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", allow_loopback);
  RunResult r = run_pxfer("cp", a.url("x.bin"), b.url("y.bin"), "--streams", "4", "--rate-lines", "--perf-interval", "0.1");
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nA:\n" << a.log() << "\nB:\n" << b.log();
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/y.bin"));
  EXPECT_NE(r.out.find("bytes"), std::string::npos) << r.out;
  EXPECT_NE(b.log().find("third-party copy pull"), std::string::npos) << b.log();
}

// --encrypt between two servers: the connecting server's data streams run TLS bound to the
// transfer (cap_tls_bound_streams) and carry no Poly1305; both ends must agree on that.
TEST_F(ThirdPartyCopy, EncryptedPullIsByteExact) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", allow_loopback);
  RunResult r = run_pxfer("cp", a.url("x.bin"), b.url("z.bin"), "--streams", "3", "--encrypt");
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nA:\n" << a.log() << "\nB:\n" << b.log();
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/z.bin"));
  EXPECT_NE(r.out.find("data encrypted TLS1.3 between the servers"), std::string::npos) << r.out;
  RunResult clear = run_pxfer("cp", a.url("x.bin"), b.url("c.bin"), "--streams", "2");
  ASSERT_EQ(clear.exit_code, 0) << clear.err;
  EXPECT_NE(clear.out.find("data authenticated (Poly1305 per block, not encrypted) between the servers"), std::string::npos) << clear.out;
}

// The JSON lines, by event (the last of each).
std::map<std::string, nlohmann::json> events_of(const std::string& out) {
  std::map<std::string, nlohmann::json> events;
  std::size_t start = 0;
  while (start < out.size()) {
    auto end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    auto j = nlohmann::json::parse(out.substr(start, end - start));
    events[j["event"]] = j;
    start = end + 1;
  }
  return events;
}

TEST_F(ThirdPartyCopy, PushIsByteExactAndJsonHasTheChecksumBothEndsAgreedOn) {
  ServerProcess a(root_a, "127.0.0.1:0", allow_loopback);
  ServerProcess b(root_b);
  ASSERT_EQ(run_pxfer("mkdir", b.url("sub")).exit_code, 0);
  RunResult r = run_pxfer("cp", "--copy-mode", "push", "--json", "--streams", "3", a.url("x.bin"), b.url("sub/"));
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nA:\n" << a.log() << "\nB:\n" << b.log();
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/sub/x.bin"));
  auto events = events_of(r.out);
  ASSERT_TRUE(events.count("summary")) << r.out;
  EXPECT_EQ(events["summary"]["bytes"], file_size(root_a + "/x.bin"));
  EXPECT_EQ(events["summary"]["checksum"]["value"], adler32_hex(root_a + "/x.bin"));
  EXPECT_EQ(events["summary"]["streams"], 3);
  EXPECT_NE(a.log().find("third-party copy push"), std::string::npos) << a.log();
}

// A third-party copy is a transfer like a put (issue 34): three pulls into a server with
// --max-active 1 write one at a time (the others wait in its queue, the steering clients hear
// TPC_PROGRESS meanwhile), each asks for 64 streams and gets --max-streams-per-client, and each
// ends with the accounting line of a put. The old code ran them all at once, unchecked.
TEST_F(ThirdPartyCopy, PullsIntoAServerWaitInItsAdmissionQueue) {
  ServerProcess a(root_a);
  // A is reached through a proxy at 8 MiB/s a connection: each copy of 24 MiB on 4 streams
  // lasts most of a second.
  pxfer::testing::FaultProxy paced(a.port());
  paced.set_rate(8u << 20);
  const std::string via = "127.0.0.1:" + std::to_string(paced.port());
  pin_server(via, a.fingerprint());
  ServerProcess b(root_b, "127.0.0.1:0",
                  {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*", "--max-active", "1", "--max-streams-per-client", "4"});
  TemporaryWatcher writing(root_b);
  std::vector<ChildProcess> copies;
  for (int i = 0; i < 3; ++i)
    copies.push_back(start_pxfer({"cp", "-p", "64", "--block-size", "1M", "pxfer://" + via + "/x.bin",
                                  b.url("y" + std::to_string(i) + ".bin")}));
  for (auto& c : copies) EXPECT_EQ(c.wait(60s), 0) << c.err();
  writing.stop();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/y" + std::to_string(i) + ".bin"));
  EXPECT_EQ(writing.seen().size(), 3u) << writing.samples() << " samples";
  EXPECT_EQ(writing.most_at_once(), 1u) << "third-party copies ran at once past --max-active 1";
  const std::string log = b.log();
  EXPECT_GE(count_lines_containing(log, "third-party copy queued"), 1u) << log;
  EXPECT_EQ(count_lines_containing(log, "third-party copy admitted"), 3u) << log;
  EXPECT_EQ(count_lines_containing(log, "admitted active=1 max_active=1"), 3u) << log;
  EXPECT_EQ(count_lines_containing(log, "streams=4 asked="), 3u) << log;
  EXPECT_EQ(count_lines_containing(log, "direction=put"), 3u) << log;
  EXPECT_EQ(count_lines_containing(log, "result=ok"), 3u) << log;
}

// --stream-stats: the per-stream view comes from the server that sends (A in a push: the server
// doing the copy), through TPC_PROGRESS, into the same JSON fields as for put and get.
TEST_F(ThirdPartyCopy, StreamStatsShowTheSendingServersStreams) {
  ServerProcess a(root_a, "127.0.0.1:0", allow_loopback);
  // B's disk takes 16 MB/s: the copy lasts about 1.5 s, some fifteen intervals of 100 ms.
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--emulate-disk-rate", "16M"});
  RunResult r = run_pxfer("cp", "--copy-mode", "push", "--json", "--stream-stats", "--streams", "3", "--perf-interval",
                          "0.1", a.url("x.bin"), b.url("y.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/y.bin"));
  bool seen_streams = false;
  std::size_t start = 0;
  for (std::size_t end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1) {
    auto j = nlohmann::json::parse(r.out.substr(start, end - start));
    if (j["event"] == "interval" && j.contains("streams") && !j["streams"].empty()) {
      seen_streams = true;
      EXPECT_LE(j["streams"].size(), 3u);
      EXPECT_TRUE(j["streams"][0].contains("cwnd")) << j.dump();
    }
    if (j["event"] == "summary") {
      ASSERT_TRUE(j.contains("stream_totals")) << j.dump();
      EXPECT_EQ(j["stream_totals"].size(), 3u) << j.dump();
    }
  }
  EXPECT_TRUE(seen_streams) << r.out;
}

TEST_F(ThirdPartyCopy, AnExistingDestinationNeedsOverwrite) {
  ServerProcess a(root_a, "127.0.0.1:0", allow_loopback);
  ServerProcess b(root_b, "127.0.0.1:0", allow_loopback);
  make_file(root_b + "/y.bin", 1000, 1);
  for (const char* mode : {"pull", "push"}) {
    SCOPED_TRACE(mode);
    RunResult r = run_pxfer("cp", "--copy-mode", mode, a.url("x.bin"), b.url("y.bin"));
    EXPECT_EQ(r.exit_code, exit_exists) << r.err;
    EXPECT_EQ(file_size(root_b + "/y.bin"), 1000u) << "not clobbered";
  }
  RunResult r = run_pxfer("cp", "--overwrite", a.url("x.bin"), b.url("y.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/y.bin"));
}

// The operator decides: a server without --tpc-allow for the peer makes no connection to it.
TEST_F(ThirdPartyCopy, APeerOutsideTpcAllowIsRefused) {
  ServerProcess a(root_a);
  ServerProcess b(root_b);  // no --tpc-allow at all
  RunResult r = run_pxfer("cp", a.url("x.bin"), b.url("y.bin"));
  EXPECT_EQ(r.exit_code, exit_permission) << r.err;
  EXPECT_NE(r.err.find("--tpc-allow"), std::string::npos) << r.err;
  ServerProcess c(dir.subdir("c"), "127.0.0.1:0", {"--tpc-allow", "10.0.0.0/8"});
  RunResult other = run_pxfer("cp", a.url("x.bin"), c.url("y.bin"));
  EXPECT_EQ(other.exit_code, exit_permission) << other.err;
  EXPECT_NE(other.err.find("not in its --tpc-allow"), std::string::npos) << other.err;
  EXPECT_FALSE(path_exists(root_b + "/y.bin"));
}

// The steering identity needs write access at the destination in both modes: for a push the
// destination will not grant what its identity may not do itself; for a pull it will not write.
TEST_F(ThirdPartyCopy, AReadOnlyIdentityAtTheDestinationIsRefused) {
  const std::string tokens = etc + "/tokens";
  write_private(etc + "/reader.token", create_token("reader", tokens) + "\n");
  write_private(etc + "/access_b", "reader / ro\n");
  write_private(etc + "/access_a", "reader / rw\n");
  ServerProcess a(root_a, "127.0.0.1:0", {"--tokens", tokens, "--access", etc + "/access_a", "--tpc-allow", "127.0.0.1:*"});
  ServerProcess b(root_b, "127.0.0.1:0", {"--tokens", tokens, "--access", etc + "/access_b", "--tpc-allow", "127.0.0.1:*"});
  for (const char* mode : {"pull", "push"}) {
    SCOPED_TRACE(mode);
    RunResult r = run_pxfer("cp", "--copy-mode", mode, "--token-file", etc + "/reader.token", a.url("x.bin"), b.url("y.bin"));
    EXPECT_EQ(r.exit_code, exit_permission) << r.err;
    EXPECT_NE(r.err.find("read-only"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(path_exists(root_b + "/y.bin"));
}

TEST_F(ThirdPartyCopy, AGrantLogsInOnceOnly) {
  ServerProcess b(root_b);
  const std::string grant = grant_for(b, "y.bin", 1000);
  wire::Message ping = wire::Ping{7};
  EXPECT_TRUE(std::holds_alternative<wire::Pong>(ask(b, grant, ping)));
  try {
    ask(b, grant, ping);
    ADD_FAILURE() << "a used grant logged in again";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::permission) << e.what();
    EXPECT_NE(std::string(e.what()).find("grant"), std::string::npos) << e.what();
  }
}

TEST_F(ThirdPartyCopy, AnExpiredGrantIsRefused) {
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-grant-lifetime", "300ms"});
  const std::string grant = grant_for(b, "y.bin", 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  wire::Message ping = wire::Ping{7};
  try {
    ask(b, grant, ping);
    ADD_FAILURE() << "an expired grant logged in";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::permission) << e.what();
  }
}

// A grant names one file, one direction and one size: anything else on its session is refused
// (and ends the session), and nothing is written.
TEST_F(ThirdPartyCopy, AGrantForOnePathOpensNoOther) {
  ServerProcess b(root_b);
  make_file(root_b + "/secret.bin", 1000, 3);
  const std::vector<wire::Message> attacks = {
      put_of("other.bin", 1000), put_of("y.bin", 999), put_of("../b/other.bin", 1000), wire::Remove{"secret.bin"},
      wire::Stat{"secret.bin"}, wire::Sum{"secret.bin", 1, 1000}, wire::Mkdir{"made"},
      wire::TpcGrantRequest{wire::Direction::put, 0, 5, "z.bin"}};
  for (const auto& attack : attacks) {
    SCOPED_TRACE(wire::type_name(wire::type_of(attack)));
    const std::string grant = grant_for(b, "y.bin", 1000);
    wire::Message reply = ask(b, grant, attack);
    auto* error = std::get_if<wire::ErrorMsg>(&reply);
    ASSERT_NE(error, nullptr) << wire::type_name(wire::type_of(reply));
    EXPECT_EQ(error->code, static_cast<std::uint16_t>(Errc::permission)) << error->message;
  }
  wire::Message get = [] {
    wire::Open o = put_of("secret.bin", 0);
    o.direction = wire::Direction::get;
    return wire::Message(o);
  }();
  wire::Message reply = ask(b, grant_for(b, "secret.bin", 1000), get);
  EXPECT_TRUE(std::holds_alternative<wire::ErrorMsg>(reply)) << "a put grant reads nothing";
  EXPECT_TRUE(path_exists(root_b + "/secret.bin"));
  EXPECT_FALSE(path_exists(root_b + "/other.bin"));
  EXPECT_FALSE(path_exists(root_b + "/made"));
}

// The active server accepts only the certificate the steering client verified: a grant with
// another fingerprint does not get past TLS (checked by a TPC_START forged with a wrong one).
TEST_F(ThirdPartyCopy, TheActiveServerChecksThePeersFingerprint) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", allow_loopback);
  wire::TpcStart start;
  start.mode = wire::CopyMode::pull;
  start.checksum = 1;
  start.streams = 2;
  start.block_size = 4u << 20;
  start.local_path = "y.bin";
  start.peer_url = a.url("x.bin");
  start.grant = net::expect<wire::TpcGrant>(ask(a, "", wire::TpcGrantRequest{wire::Direction::get, 0, 0, "x.bin"}),
                                            a.authority()).secret;
  start.peer_fingerprint = "sha256:" + std::string(64, '0');
  wire::Message reply = ask(b, "", start);
  auto* error = std::get_if<wire::ErrorMsg>(&reply);
  ASSERT_NE(error, nullptr) << wire::type_name(wire::type_of(reply));
  // What the peer presented is not told (issue 34): the fixed text of a peer that is not the one meant.
  EXPECT_EQ(error->code, static_cast<std::uint16_t>(Errc::network)) << error->message;
  EXPECT_NE(error->message.find("fingerprint"), std::string::npos) << error->message;
  EXPECT_EQ(error->message.find(a.fingerprint()), std::string::npos) << error->message;
  EXPECT_FALSE(path_exists(root_b + "/y.bin"));
}

// A push reads its file beneath the export root's descriptor: a symlink out of the root (which
// the client's STAT would already refuse) is refused by the server itself in a forged TPC_START.
TEST_F(ThirdPartyCopy, APushNeverReadsOutsideTheExportRoot) {
  const std::string outside = dir.subdir("outside");
  make_file(outside + "/secret.bin", 5000, 9);
  ASSERT_EQ(::symlink((outside + "/secret.bin").c_str(), (root_a + "/escape.bin").c_str()), 0);
  ServerProcess a(root_a, "127.0.0.1:0", allow_loopback);
  ServerProcess b(root_b);
  wire::TpcStart start;
  start.mode = wire::CopyMode::push;
  start.checksum = 1;
  start.streams = 1;
  start.block_size = 4u << 20;
  start.local_path = "escape.bin";
  start.peer_url = b.url("stolen.bin");
  start.grant = grant_for(b, "stolen.bin", 5000);
  start.peer_fingerprint = b.fingerprint();
  wire::Message reply = ask(a, "", start);
  ASSERT_TRUE(std::holds_alternative<wire::ErrorMsg>(reply)) << wire::type_name(wire::type_of(reply));
  EXPECT_FALSE(path_exists(root_b + "/stolen.bin"));
}

// A plain TCP service that greets each connection with a banner, as SSH or SMTP do.
class BannerService {
 public:
  static constexpr const char* banner = "SSH-2.0-OpenSSH_9.2 SECRET-BANNER\r\n";
  BannerService() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (int c; (c = ::accept(fd_, nullptr, nullptr)) >= 0;) {
        ++accepted_;
        raw::send_all(c, reinterpret_cast<const std::uint8_t*>(banner), std::strlen(banner));
        std::uint8_t sink[4096];
        while (::recv(c, sink, sizeof sink, 0) > 0) {
        }
        ::close(c);
      }
    });
  }
  ~BannerService() {
    ::shutdown(fd_, SHUT_RDWR);  // accept() returns
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }
  unsigned accepted() const { return accepted_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<unsigned> accepted_{0};
  std::thread thread_;
};

wire::TpcStart pull_from(const std::string& peer_url) {
  wire::TpcStart start;
  start.checksum = 1;
  start.block_size = 4u << 20;
  start.interval_ms = 60'000;  // no TPC_PROGRESS before the answer
  start.local_path = "y.bin";
  start.peer_url = peer_url;
  start.grant = "a-grant";
  start.peer_fingerprint = "sha256:" + std::string(64, '1');
  return start;
}

// Issue 34: a TPC_START aimed at another service of an allowed host. An entry without a port
// reaches the pxfer port only: refused before any connection. With the port allowed, the answer
// is a fixed text that tells nothing of what answered there (or that something did).
TEST_F(ThirdPartyCopy, NoPortScanningThroughAThirdPartyCopy) {
  BannerService service;
  const std::string url = "pxfer://127.0.0.1:" + std::to_string(service.port()) + "/x.bin";
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1"});
  wire::Message reply = ask(b, "", pull_from(url));
  auto* refused = std::get_if<wire::ErrorMsg>(&reply);
  ASSERT_NE(refused, nullptr) << wire::type_name(wire::type_of(reply));
  EXPECT_EQ(refused->code, static_cast<std::uint16_t>(Errc::permission)) << refused->message;
  EXPECT_NE(refused->message.find("--tpc-allow"), std::string::npos) << refused->message;
  EXPECT_EQ(service.accepted(), 0u) << "pxferd connected to a port its --tpc-allow does not name";

  ServerProcess c(dir.subdir("c"), "127.0.0.1:0",
                  {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:" + std::to_string(service.port())});
  wire::Message answer = ask(c, "", pull_from(url));
  auto* failed = std::get_if<wire::ErrorMsg>(&answer);
  ASSERT_NE(failed, nullptr) << wire::type_name(wire::type_of(answer));
  EXPECT_GE(service.accepted(), 1u);
  for (const char* leak : {"SSH", "SECRET", "wrong version", "packet length"})
    EXPECT_EQ(failed->message.find(leak), std::string::npos) << failed->message;
  EXPECT_NE(failed->message.find("is not a pxfer server"), std::string::npos) << failed->message;
  // A port where nothing listens gets the same words: listening or not is not told either.
  const std::uint16_t closed = closed_port();
  ServerProcess d(dir.subdir("d"), "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:" + std::to_string(closed)});
  wire::Message none = ask(d, "", pull_from("pxfer://127.0.0.1:" + std::to_string(closed) + "/x.bin"));
  auto* nothing = std::get_if<wire::ErrorMsg>(&none);
  ASSERT_NE(nothing, nullptr);
  std::string same = nothing->message;
  const auto at = same.find(std::to_string(closed));
  ASSERT_NE(at, std::string::npos) << same;
  same.replace(at, std::to_string(closed).size(), std::to_string(service.port()));
  EXPECT_EQ(same, failed->message);
  EXPECT_EQ(nothing->code, failed->code);
}

TEST_F(ThirdPartyCopy, BadArgumentsAreOneLineUsageErrors) {
  ServerProcess a(root_a);
  RunResult mode = run_pxfer("cp", "--copy-mode", "sideways", a.url("x.bin"), a.url("y.bin"));
  EXPECT_EQ(mode.exit_code, 2) << mode.err;
  RunResult dir_source = run_pxfer("cp", a.url(""), a.url("y.bin"));
  EXPECT_EQ(dir_source.exit_code, 2) << dir_source.err;
  RunResult missing = run_pxfer("cp", a.url("none.bin"), a.url("y.bin"));
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  // Settings TPC_START does not carry are refused, not silently dropped.
  for (const char* option : {"--window", "--congestion", "--compress"}) {
    const std::string value = std::string(option) == "--window" ? "1M" : std::string(option) == "--congestion" ? "reno" : "zstd";
    RunResult r = run_pxfer("cp", option, value, a.url("x.bin"), a.url("y.bin"));
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_NE(r.err.find(std::string(option) + " does not reach the server"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// -p auto (cp's default) runs on the active server (cap_tpc_auto_streams): TPC_START asks for
// auto's ceiling, the server's copy runs the stream controller, and the steering client's summary
// says what it chose (issue 39.1); a fixed -p stays fixed and has no such line.
TEST_F(ThirdPartyCopy, AutoStreamsRunOnTheActiveServerAndSayWhatTheyChose) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", {"--tpc-allow", "127.0.0.1:*", "-v"});
  RunResult r = run_pxfer("cp", "--json", a.url("x.bin"), b.url("auto.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nB:\n" << b.log();
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/auto.bin"));
  auto events = events_of(r.out);
  ASSERT_TRUE(events.count("summary")) << r.out;
  ASSERT_TRUE(events["summary"].contains("streams_auto")) << r.out;
  EXPECT_EQ(events["summary"]["streams_auto"].get<std::string>().rfind("auto ", 0), 0u) << r.out;
  EXPECT_NE(b.log().find("asked=64"), std::string::npos) << b.log();  // auto's ceiling, not a fixed 4
  RunResult text = run_pxfer("cp", a.url("x.bin"), b.url("auto2.bin"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("streams: auto "), std::string::npos) << text.out;
  RunResult fixed = run_pxfer("cp", "--json", "-p", "3", a.url("x.bin"), b.url("fixed.bin"));
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  auto fixed_events = events_of(fixed.out);
  EXPECT_FALSE(fixed_events["summary"].contains("streams_auto")) << fixed.out;
  EXPECT_EQ(fixed_events["summary"]["streams"], 3);
}

}  // namespace
}  // namespace pxfer::e2e
