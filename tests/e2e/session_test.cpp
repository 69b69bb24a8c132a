// Many small files do not each pay for a connection set-up (issue 4, point 2): a batch worker
// keeps its control connection from file to file (ClientSession), and a file smaller than the
// streams asked for opens only as many data connections as it has blocks. Connections are
// counted by a proxy the test owns, in front of a real pxferd.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "fault_proxy.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/common/url.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {
namespace fs = std::filesystem;
using pxfer::testing::FaultProxy;

std::string via(const FaultProxy& proxy, const std::string& path) {
  return "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/" + path;
}

// `count` files of 1-64 KiB (one block each) in a two-level tree below `top`.
void make_small_tree(const std::string& top, int count) {
  for (int i = 0; i < count; ++i) {
    std::string sub = top + "/d" + std::to_string(i % 4);
    fs::create_directories(sub);
    make_file(sub + "/f" + std::to_string(i), 1 + (static_cast<std::uint64_t>(i) * 7919) % (64 * KiB),
              static_cast<std::uint64_t>(700 + i));
  }
}

void expect_same_files(const std::string& expected, const std::string& actual) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(expected)) {
    if (!e.is_regular_file()) continue;
    auto rel = fs::relative(e.path(), expected).string();
    EXPECT_TRUE(files_equal(e.path().string(), actual + "/" + rel)) << rel;
    ++n;
  }
  EXPECT_GT(n, 0u);
}

// 60 one-block files with -c 3 -p 4, each way: every file needs one data connection and each of
// the 3 workers one control connection, so at most 63 connections each way (before sessions:
// 60 x (1 control + 4 data) = 300). The LIST that plans a get -r and the MKDIR that prepares a
// put -r are one more control connection each.
using Session = DirsTest;

TEST_F(Session, ManySmallFilesShareEachWorkersControlConnection) {
  constexpr int files = 60;
  make_small_tree(local + "/tree", files);
  ServerProcess server = serve();

  FaultProxy put_proxy(server.port());
  RunResult put = run_pxfer("put", "-r", "-c", "3", "-p", "4", local + "/tree", via(put_proxy, ""));
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  expect_same_files(local + "/tree", root + "/tree");
  EXPECT_LE(put_proxy.accepted(), files + 3u + 1u) << put.out;

  FaultProxy get_proxy(server.port());
  RunResult get = run_pxfer("get", "-r", "-c", "3", "-p", "4", via(get_proxy, "tree"), local + "/back");
  ASSERT_EQ(get.exit_code, 0) << get.err << get.out;
  expect_same_files(local + "/tree", local + "/back");
  EXPECT_LE(get_proxy.accepted(), files + 3u + 1u) << get.out;
}

// Files of one block move without data streams of their own: 60 of them with -c 3 open only the
// 3 workers' control connections, each worker's small-file channel (PUT_SMALL / GET_SMALL bytes,
// docs/protocol.md "Small files") and the one that plans the run (MKDIR for a put, LIST for a
// get). A file of two blocks in the same tree still gets its data streams (2); a get learns that
// size only from OPEN_OK, after the 4 streams' connections were made beside OPEN's round trip
// (client/early_streams.hpp), so its worker may have opened 4.
TEST_F(Session, OneBlockFilesMoveOnTheControlConnection) {
  make_small_tree(local + "/tree", 60);
  make_file(local + "/tree/two-blocks.bin", 3 * MiB, 720);
  ServerProcess server = serve();

  FaultProxy put_proxy(server.port());
  RunResult put = run_pxfer("put", "-r", "-c", "3", "-p", "4", local + "/tree", via(put_proxy, ""));
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  expect_same_files(local + "/tree", root + "/tree");
  EXPECT_LE(put_proxy.accepted(), 1u + 3u + 3u + 2u) << put.out;

  FaultProxy get_proxy(server.port());
  RunResult get = run_pxfer("get", "-r", "-c", "3", "-p", "4", via(get_proxy, "tree"), local + "/back");
  ASSERT_EQ(get.exit_code, 0) << get.err << get.out;
  expect_same_files(local + "/tree", local + "/back");
  EXPECT_LE(get_proxy.accepted(), 1u + 3u + 3u + 4u) << get.out;
}

// The worker's control connection, or its small-file channel, is cut while small files move on
// them: the files in flight fail, --retries runs them again on a new control connection, and
// every file arrives whole.
class SessionCut : public DirsTest, public ::testing::WithParamInterface<std::pair<std::size_t, std::uint64_t>> {};
TEST_P(SessionCut, MidFileIsRetriedOnANewOne) {
  make_small_tree(local + "/tree", 60);  // ~12 KB of requests and answers on the control connection
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  // Connection 0 makes the directories (MKDIR); 1 is the only worker's control connection, 2 its
  // small-file channel.
  const auto [connection, after] = GetParam();
  proxy.inject(connection, pxfer::testing::Fault::cut, after);
  RunResult put = run_pxfer("put", "-r", "-c", "1", "--retries", "2", local + "/tree", via(proxy, ""));
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  EXPECT_EQ(proxy.faults_fired(), 1u);
  EXPECT_GE(proxy.accepted(), 4u) << "no new control connection after the cut";
  expect_same_files(local + "/tree", root + "/tree");
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(hidden_temporaries(root + "/tree/d" + std::to_string(d)), std::vector<std::string>{}) << d;
}
INSTANTIATE_TEST_SUITE_P(Session, SessionCut,
                         ::testing::Values(std::make_pair(std::size_t{1}, std::uint64_t{5 * KiB}),
                                           std::make_pair(std::size_t{2}, std::uint64_t{300 * KiB})),
                         [](const auto& p) { return p.param.first == 1 ? "ControlConnection" : "SmallFileChannel"; });

// The server closes a control session that stays idle (--idle-timeout 1s); files spaced 2 s
// apart (--connect-rate 1: two connections per file) find their worker's kept connection gone,
// open a new one and succeed, without an error or a retry.
TEST_F(Session, KeptControlConnectionClosedByTheServerIsReplaced) {
  fs::create_directories(local + "/tree");
  // Over limits::max_small_file: each file has its own OPEN (small files are pipelined instead, and
  // SmallFiles.AKeptConnectionTheServerClosedIsReplaced covers them).
  for (int i = 0; i < 3; ++i)
    make_file(local + "/tree/f" + std::to_string(i), 1 * MiB + 10 * KiB, static_cast<std::uint64_t>(800 + i));
  ServerProcess server = serve({"--idle-timeout", "1s"});
  RunResult put = run_pxfer("put", "-r", "-c", "1", "-p", "1", "--connect-rate", "1", local + "/tree", server.url(""));
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  expect_same_files(local + "/tree", root + "/tree");
  EXPECT_EQ(put.err.find("retry"), std::string::npos) << put.err;
  EXPECT_GE(count_lines_containing(server.log(), "control session closed"), 2u) << server.log();
}

// A file of fewer blocks than -p asks for moves on one stream per block (a put opens no more
// data connections), and the summary says how many streams moved it, without a warning about a
// server limit.
TEST_F(Session, SmallFileUsesOneStreamPerBlock) {
  make_file(local + "/small.bin", 3 * MiB, 810);  // two 2 MiB blocks
  ServerProcess server = serve();
  for (const char* direction : {"put", "get"}) {
    FaultProxy proxy(server.port());
    bool put = std::string(direction) == "put";
    RunResult r = put ? run_pxfer("put", "-p", "8", local + "/small.bin", via(proxy, "small.bin"))
                      : run_pxfer("get", "-p", "8", via(proxy, "small.bin"), local + "/back.bin");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // A put knows its size: 1 control + 2 data connections. A get learns it only from OPEN_OK,
    // after the connections of the 8 streams asked for were made beside OPEN's round trip
    // (client/early_streams.hpp); 2 move the file, the others wait in the session's pool.
    if (put) EXPECT_EQ(proxy.accepted(), 3u) << "put: 1 control + 2 data connections";
    else EXPECT_LE(proxy.accepted(), 9u) << "get: 1 control + the 8 streams' early connections";
    EXPECT_NE(r.out.find(", 2 streams,"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("granted"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(files_equal(local + "/small.bin", local + "/back.bin"));
}

// Credentials belong to a session, not to the process (issue 10.4): two sessions made side by
// side, one with alice's token and one with a wrong token, each use their own, in whatever order
// they were made. Before, the gfal2 plugin had to install its credentials process-wide under a
// lock just before making each session.
TEST_F(Session, EachSessionUsesItsOwnCredentials) {
  const std::string tokens = dir / "tokens";
  const std::string token = create_token("alice", tokens);
  make_file(local + "/a.bin", 100 * KiB, 5);
  ServerProcess server = serve({"--tokens", tokens});
  std::string why;
  const auto target = parse_url(server.url("a.bin"), &why);
  ASSERT_TRUE(target) << why;

  ClientOptions options;
  ClientSecurity alice;
  alice.token = token;
  ClientSecurity stranger;
  stranger.token = std::string(64, 'a');
  ClientSession good(options, alice);
  ClientSession bad(options, stranger);
  set_client_security(ClientSecurity{});  // the process's own (none): used by neither session

  std::optional<Error> refused;
  try {
    bad.put(local + "/a.bin", *target, options);
  } catch (const Error& e) {
    refused = e;
  }
  ASSERT_TRUE(refused.has_value()) << "a wrong token was accepted";
  EXPECT_EQ(refused->code(), Errc::permission) << refused->what();
  TransferSummary done = good.put(local + "/a.bin", *target, options);
  EXPECT_EQ(done.identity, "alice");
  EXPECT_TRUE(files_equal(local + "/a.bin", root + "/a.bin"));
}

// Files of two blocks get two data streams each. With -c 1 the run's one worker carries every
// file's streams on the connections its first file opened (issue 12.3): the MKDIR (or LIST) that
// plans the run, the worker's control connection and 2 data connections, where each file used to
// open its own (2 + 8 x 2 = 18). A stream still attaching when the other one had already moved
// both blocks (a loaded machine) is refused as too late and its connection closed, so a few more
// connections are allowed for; before the change every file opened its own.
TEST_F(Session, TheFilesOfARunShareOneSetOfDataStreams) {
  constexpr int files = 8;
  fs::create_directories(local + "/tree");
  for (int i = 0; i < files; ++i)
    make_file(local + "/tree/m" + std::to_string(i), 3 * MiB + static_cast<std::uint64_t>(i) * 1000, 730 + i);
  ServerProcess server = serve();

  FaultProxy put_proxy(server.port());
  RunResult put = run_pxfer("put", "-r", "-c", "1", "-p", "4", local + "/tree", via(put_proxy, ""));
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  expect_same_files(local + "/tree", root + "/tree");
  EXPECT_GE(put_proxy.accepted(), 4u) << put.out;
  EXPECT_LE(put_proxy.accepted(), 4u + files / 2) << put.out;

  FaultProxy get_proxy(server.port());
  RunResult get = run_pxfer("get", "-r", "-c", "1", "-p", "4", via(get_proxy, "tree"), local + "/back");
  ASSERT_EQ(get.exit_code, 0) << get.err << get.out;
  expect_same_files(local + "/tree", local + "/back");
  EXPECT_GE(get_proxy.accepted(), 4u) << get.out;
  EXPECT_LE(get_proxy.accepted(), 4u + files / 2) << get.out;
}

// A kept data connection that died while idle (cut here; the server's idle deadline or a restart
// look the same) is replaced by a new one for the next file, which moves as if nothing happened:
// no failed attempt, no stream counted as recovered.
TEST_F(Session, AKeptDataConnectionThatDiedWhileIdleIsReplaced) {
  fs::create_directories(local);
  make_file(local + "/a.bin", 3 * MiB, 741);
  make_file(local + "/b.bin", 3 * MiB + 5, 742);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  pin_server("127.0.0.1:" + std::to_string(proxy.port()), server.fingerprint());
  std::string why;
  const auto a = parse_url(via(proxy, "a.bin"), &why);
  const auto b = parse_url(via(proxy, "b.bin"), &why);
  ASSERT_TRUE(a && b) << why;

  ClientOptions options;
  options.streams = 4;
  ClientSession session(options);
  TransferSummary first = session.put(local + "/a.bin", *a, options);
  EXPECT_EQ(proxy.accepted(), 3u) << "one control and two data connections for a file of two blocks";
  proxy.inject_all(pxfer::testing::Fault::cut);  // the kept data connections and the control one
  TransferSummary second = session.put(local + "/b.bin", *b, options);
  EXPECT_EQ(second.attempts, 1u);
  EXPECT_EQ(second.stream_recoveries, 0u);
  EXPECT_EQ(proxy.accepted(), 6u) << "a new control connection and two new data connections";
  EXPECT_TRUE(files_equal(local + "/a.bin", root + "/a.bin"));
  EXPECT_TRUE(files_equal(local + "/b.bin", root + "/b.bin"));
  EXPECT_EQ(first.checksum_value.empty(), false);
}

}  // namespace
}  // namespace pxfer::e2e
