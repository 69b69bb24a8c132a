// Issue 13 point 3: a third-party copy recovers as a two-party transfer does. The source server A
// sits behind the fault proxy (the client names it by the proxy's port, so the destination B, in
// pull mode, reaches A through it too): a data stream cut mid-copy is replaced by the engine
// between the servers; a copy whose control connection between the servers is cut fails, and the
// steering client's --retries asks for a new grant and resumes from what B kept.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <csignal>
#include <thread>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

using pxfer::testing::Fault;
using pxfer::testing::FaultProxy;

class ThirdPartyCopyFaults : public ::testing::Test {
 protected:
  ThirdPartyCopyFaults() : root_a(dir.subdir("a")), root_b(dir.subdir("b")) { make_file(root_a + "/x.bin", 48 * MiB, 11); }
  std::string via(const FaultProxy& proxy, const std::string& path) const {
    return "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/" + path;
  }
  TempDir dir;
  std::string root_a, root_b;
};

TEST_F(ThirdPartyCopyFaults, ADataStreamCutBetweenTheServersIsReplaced) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*"});
  FaultProxy proxy(a.port());
  proxy.set_rate(8 * MiB);  // per connection: 4 streams take about 1.5 s
  // Connection 0 is the client's to A, 1 B's control connection to A, 2 to 5 B's data streams.
  proxy.inject(2, Fault::cut, 3 * MiB);
  RunResult r = run_pxfer("cp", "--streams", "4", "--json", via(proxy, "x.bin"), b.url("y.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nB:\n" << b.log();
  EXPECT_EQ(proxy.faults_fired(), 1u);
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/y.bin"));
  EXPECT_GT(proxy.accepted(), 6u) << "no replacement data stream was opened";
  EXPECT_NE(r.out.find("\"stream_recoveries\":1"), std::string::npos) << r.out;
}

TEST_F(ThirdPartyCopyFaults, AFailedCopyIsRetriedWithANewGrantAndResumes) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*"});
  FaultProxy proxy(a.port());
  proxy.set_rate(4 * MiB);  // per connection: 4 streams take about 3 s
  ChildProcess cp = start_pxfer({"cp", "--streams", "4", "--retries", "2", "--json", via(proxy, "x.bin"), b.url("y.bin")});
  // Once B's copy is well under way, its control connection to A (connection 1) is cut: the
  // attempt fails on both servers.
  for (int i = 0; i < 100 && proxy.carried_since(2).to_client < 16 * MiB; ++i) std::this_thread::sleep_for(50ms);
  proxy.inject_now(1, Fault::cut);
  bool timed_out = false;
  const int status = cp.wait(120s, &timed_out);
  ASSERT_FALSE(timed_out) << cp.err() << cp.out() << "\nA:\n" << a.log() << "\nB:\n" << b.log();
  ASSERT_EQ(status, 0) << cp.err() << "\nB:\n" << b.log();
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/y.bin"));
  EXPECT_NE(cp.out().find("\"event\":\"retry\""), std::string::npos) << cp.out();
  // Two grants, two logins: the second copy resumed from what B kept.
  std::size_t copies = 0;
  for (std::size_t at = 0; (at = b.log().find("third-party copy pull", at)) != std::string::npos; ++at) ++copies;
  EXPECT_EQ(copies, 2u) << b.log();
  nlohmann::json j;
  for (std::size_t start = 0, end; (end = cp.out().find('\n', start)) != std::string::npos; start = end + 1) {
    auto line = nlohmann::json::parse(cp.out().substr(start, end - start));
    if (line["event"] == "summary") j = line;
  }
  const std::string summary = j.dump();
  EXPECT_GT(j["resumed_bytes"].get<std::uint64_t>(), 0u) << summary;
  EXPECT_EQ(j["attempts"], 2) << summary;
  EXPECT_EQ(j["bytes"], 48 * MiB) << summary;
}

// FTS3 kills a url-copy that overruns its timeout: the copy between the servers must not run on
// without anyone to report to. Within about a progress interval the active server notices and
// stops; the destination keeps no file under its final name.
TEST_F(ThirdPartyCopyFaults, ACopyStopsWhenTheSteeringClientGoesAway) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*"});
  FaultProxy proxy(a.port());
  proxy.set_rate(1 * MiB);  // per connection: the copy would take 12 s
  ChildProcess cp = start_pxfer({"cp", "--streams", "4", via(proxy, "x.bin"), b.url("y.bin")});
  for (int i = 0; i < 200 && proxy.carried_since(2).to_client < 2 * MiB; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_GE(proxy.carried_since(2).to_client, 2 * MiB) << "the copy did not start";
  cp.send_signal(SIGKILL);
  cp.wait(10s);
  const auto killed = std::chrono::steady_clock::now();
  while (proxy.open_now() > 0 && std::chrono::steady_clock::now() - killed < 8s) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(proxy.open_now(), 0u) << "B still copies from A without its client";
  EXPECT_LT(proxy.carried_since(2).to_client, 24 * MiB);
  EXPECT_NE(b.log().find("copy aborted"), std::string::npos) << b.log();
  EXPECT_FALSE(path_exists(root_b + "/y.bin"));
}

// A server stopping while it copies as the active end ends the copy and exits cleanly, and the
// client is told. (It passes without TpcService's destructor too: process exit closes the
// sockets; the destructor makes the end deterministic, the copy aborted before the exit.)
TEST_F(ThirdPartyCopyFaults, TheActiveServerStopsCleanlyDuringACopy) {
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*", "--drain-timeout", "0"});
  FaultProxy proxy(a.port());
  proxy.set_rate(1 * MiB);  // the copy would take 12 s
  ChildProcess cp = start_pxfer({"cp", "--streams", "4", via(proxy, "x.bin"), b.url("y.bin")});
  for (int i = 0; i < 200 && proxy.carried_since(2).to_client < 2 * MiB; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_GE(proxy.carried_since(2).to_client, 2 * MiB) << "the copy did not start";
  const auto stopped = b.stop();
  EXPECT_FALSE(stopped.killed) << "pxferd needed SIGKILL";
  EXPECT_EQ(stopped.status, 0) << b.log();
  EXPECT_LT(stopped.elapsed, 5s);
  bool timed_out = false;
  EXPECT_NE(cp.wait(30s, &timed_out), 0);
  EXPECT_FALSE(timed_out);
  EXPECT_FALSE(path_exists(root_b + "/y.bin"));
}

}  // namespace
}  // namespace pxfer::e2e
