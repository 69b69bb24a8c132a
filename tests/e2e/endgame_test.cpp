// The end of a file (issue 39, cap_block_copies): a data stream that stops moving holds its blocks;
// once nothing else is left to send, an idle stream sends them again, and the transfer ends without
// waiting for the stall timeout or a replacement connection. On a long lossy path that stream is
// one recovering from slow start's burst loss at cwnd 2-6 (bench/results/wan-matrix.md, "The tail").
#include <gtest/gtest.h>

#include <chrono>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

using pxfer::testing::Fault;
using pxfer::testing::FaultProxy;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

class OverdueBlocks : public DirsTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(OverdueBlocks, AreSentAgainAndTheStalledStreamIsLetGo) {
  const bool put = std::string(GetParam()) == "put";
  const std::string source = put ? local + "/f.bin" : root + "/f.bin";
  const std::string dest = put ? root + "/f.bin" : local + "/f.bin";
  make_file(source, 24 * MiB, 39);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(8 * MiB);  // per connection: 24 MiB over 4 streams in about a second
  // Connection 0 is the control connection; 1 to 4 are the data streams. The first stops moving
  // anything, both ways, with its first block (and whatever its socket held) not yet delivered.
  proxy.inject(1, Fault::stall, 1 * MiB);
  const std::string url = "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/f.bin";
  std::vector<std::string> args = put ? std::vector<std::string>{"put", source, url} : std::vector<std::string>{"get", url, dest};
  args.insert(args.end(), {"-p", "4", "--stall-timeout", "60s"});
  const auto start = std::chrono::steady_clock::now();
  RunResult r = run_pxfer_args(args);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(proxy.faults_fired(), 1u);
  EXPECT_TRUE(files_equal(source, dest));
  // Without copies the stalled stream's blocks wait for the 60 s stall timeout.
  EXPECT_LT(took, 30s) << r.err << r.out;
  // The sender says so (in a put the client is the sender; in a get pxferd is, and logs it).
  if (put) {
    EXPECT_TRUE(contains(r.err, "sent again on stream")) << r.err;
  }
  // The summary counts them: a put the copies it sent, a get those that arrived (BLOCK flag bit 1).
  EXPECT_TRUE(contains(r.out, put ? " copies of overdue blocks sent, 1 slow stream let go"
                                  : " copies of overdue blocks arrived, 1 slow stream let go"))
      << r.out;
  EXPECT_FALSE(contains(r.out, ", 0 copies")) << r.out;
  // Letting go of the stalled stream is no failure, and nothing reconnects it.
  EXPECT_FALSE(contains(r.out, "data stream failures recovered")) << r.out;
  EXPECT_FALSE(contains(r.err, "reconnected after")) << r.err;
  EXPECT_EQ(proxy.accepted(), 5u) << "no replacement connection is opened";
  EXPECT_EQ(hidden_temporaries(put ? root : local), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Endgame, OverdueBlocks, ::testing::Values("put", "get"));

// The same in a third-party copy (pull: B, the active server, gets from A through the proxy): B's
// copy counts the copies that arrived and the stream it let go, and TPC_DONE's second tail
// (cap_tpc_end_counts) brings them to `pxfer cp`'s summary and --json.
TEST(EndgameCopy, OverdueBlocksInAThirdPartyCopyReachTheSteeringClient) {
  TempDir dir;
  const std::string root_a = dir.subdir("a"), root_b = dir.subdir("b");
  make_file(root_a + "/x.bin", 24 * MiB, 40);
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*"});
  FaultProxy proxy(a.port());
  proxy.set_rate(8 * MiB);
  // Connection 0 is the client's to A, 1 B's control connection to A, 2 to 5 B's data streams.
  proxy.inject(2, Fault::stall, 1 * MiB);
  const std::string from = "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/x.bin";
  const auto start = std::chrono::steady_clock::now();
  RunResult r = run_pxfer("cp", "--streams", "4", "--stall-timeout", "60s", from, b.url("y.bin"));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out << "\nB:\n" << b.log();
  EXPECT_EQ(proxy.faults_fired(), 1u);
  EXPECT_TRUE(files_equal(root_a + "/x.bin", root_b + "/y.bin"));
  EXPECT_LT(took, 30s) << r.out;
  EXPECT_TRUE(contains(r.out, " copies of overdue blocks arrived, 1 slow stream let go")) << r.out;
  EXPECT_FALSE(contains(r.out, ", 0 copies")) << r.out;
  EXPECT_FALSE(contains(r.out, "data stream failures recovered")) << r.out;
}

}  // namespace
}  // namespace pxfer::e2e
