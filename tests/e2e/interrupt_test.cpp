// Ctrl-C on the client: the transfer ends through its failure path; nothing appears under the
// final name and the rerun resumes.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

TEST(Interrupt, SigintDuringAGetKeepsOnlyAResumablePartialFile) {
  TempDir dir{big_file_base()};
  std::string root = dir.subdir("root");
  std::string local = dir.subdir("local");
  const std::uint64_t size = 64 * MiB;
  make_file(root + "/big.dat", size, 4);
  ServerProcess server(root);
  // Through a proxy paced at 8 MiB/s the get needs 8 s: the signal always lands mid-transfer, on
  // any machine, and the proxy counts what the rerun carries.
  pxfer::testing::FaultProxy proxy(server.port());
  pin_server("127.0.0.1:" + std::to_string(proxy.port()), server.fingerprint());
  const std::string url = "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/big.dat";
  proxy.set_rate(8 * MiB);
  auto client = start_pxfer({"get", "-p", "1", url, local + "/big.dat"});
  // Interrupt once blocks are written (the journal records one), before the transfer can finish.
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (journaled_blocks(local, "big.dat") == 0 && std::chrono::steady_clock::now() < deadline && !client.try_wait())
    client.pump(5ms);
  ASSERT_GT(journaled_blocks(local, "big.dat"), 0u) << "the get never wrote a block: " << client.err();
  client.send_signal(SIGINT);
  bool timed_out = false;
  int status = client.wait(std::chrono::seconds(20), &timed_out);
  EXPECT_FALSE(timed_out);
  ASSERT_LT(proxy.carried_since(0).to_client, size) << "the whole file had crossed before the signal";
  EXPECT_EQ(status, 10) << "exit " << status << " (Errc::interrupted): " << client.err();
  EXPECT_NE(client.err().find("interrupted by SIGINT"), std::string::npos) << client.err();
  // Nothing under the final name; the partial file stays hidden for a resume, and the same
  // command picks it up, carrying only what the journal lacked.
  EXPECT_EQ(list_dir(local), resumable_leftovers("big.dat")) << "left behind in the destination directory";
  const std::uint64_t had = journaled_blocks(local, "big.dat") * 2 * MiB;
  proxy.set_rate(0);
  const std::size_t rerun_first = proxy.accepted();
  RunResult again = run_pxfer("get", "-p", "1", url, local + "/big.dat");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("resumed: "), std::string::npos) << again.out;
  EXPECT_TRUE(files_equal(root + "/big.dat", local + "/big.dat"));
  EXPECT_EQ(list_dir(local), std::vector<std::string>{"big.dat"});
  const std::uint64_t rerun = proxy.carried_since(rerun_first).to_client;
  EXPECT_LE(rerun, size - had + 1 * MiB) << "journal held " << had << " bytes; the rerun carried " << rerun;
}

}  // namespace
}  // namespace pxfer::e2e
