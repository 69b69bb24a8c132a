// Ctrl-C on the client: the transfer ends through its failure path; nothing appears under the
// final name and the rerun resumes. Issue 34: the whole command ends within a second (put -r,
// get -r, a third-party cp, a single transfer with retries; SIGINT and SIGTERM), no file starts
// after the signal, and one line names what did not finish.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <functional>
#include <thread>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

using Interrupt = DirsTest;

TEST_F(Interrupt, SigintDuringAGetKeepsOnlyAResumablePartialFile) {
  TestDirs big(big_file_base());
  const std::uint64_t size = 64 * MiB;
  make_file(big.root + "/big.dat", size, 4);
  ServerProcess server = big.serve();
  // Through a proxy paced at 8 MiB/s the get needs 8 s: the signal always lands mid-transfer, on
  // any machine, and the proxy counts what the rerun carries.
  pxfer::testing::FaultProxy proxy(server.port());
  pin_server("127.0.0.1:" + std::to_string(proxy.port()), server.fingerprint());
  const std::string url = "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/big.dat";
  proxy.set_rate(8 * MiB);
  auto client = start_pxfer({"get", "-p", "1", url, big.local + "/big.dat"});
  // Interrupt once blocks are written (the journal records one), before the transfer can finish.
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (journaled_blocks(big.local, "big.dat") == 0 && std::chrono::steady_clock::now() < deadline && !client.try_wait())
    client.pump(5ms);
  ASSERT_GT(journaled_blocks(big.local, "big.dat"), 0u) << "the get never wrote a block: " << client.err();
  client.send_signal(SIGINT);
  bool timed_out = false;
  int status = client.wait(std::chrono::seconds(20), &timed_out);
  EXPECT_FALSE(timed_out);
  ASSERT_LT(proxy.carried_since(0).to_client, size) << "the whole file had crossed before the signal";
  EXPECT_EQ(status, 10) << "exit " << status << " (Errc::interrupted): " << client.err();
  EXPECT_NE(client.err().find("interrupted by SIGINT"), std::string::npos) << client.err();
  // Nothing under the final name; the partial file stays hidden for a resume, and the same
  // command picks it up, carrying only what the journal lacked.
  EXPECT_EQ(list_dir(big.local), resumable_leftovers("big.dat")) << "left behind in the destination directory";
  const std::uint64_t had = journaled_blocks(big.local, "big.dat") * 2 * MiB;
  proxy.set_rate(0);
  const std::size_t rerun_first = proxy.accepted();
  RunResult again = run_pxfer("get", "-p", "1", url, big.local + "/big.dat");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("resumed: "), std::string::npos) << again.out;
  EXPECT_TRUE(files_equal(big.root + "/big.dat", big.local + "/big.dat"));
  EXPECT_EQ(list_dir(big.local), std::vector<std::string>{"big.dat"});
  const std::uint64_t rerun = proxy.carried_since(rerun_first).to_client;
  EXPECT_LE(rerun, size - had + 1 * MiB) << "journal held " << had << " bytes; the rerun carried " << rerun;
}

// How many times `needle` appears in `text`.
std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Sends `signo` once `ready` holds (or the client ended), then waits; the seconds from the
// signal to the client's exit.
double interrupt_when(ChildProcess& client, int signo, const std::function<bool()>& ready, int& status) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!ready() && std::chrono::steady_clock::now() < deadline && !client.try_wait()) client.pump(5ms);
  EXPECT_FALSE(client.try_wait()) << "the command ended before the signal: " << client.err();
  const auto sent = std::chrono::steady_clock::now();
  client.send_signal(signo);
  bool timed_out = false;
  status = client.wait(20s, &timed_out);
  EXPECT_FALSE(timed_out);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
}

void expect_one_summary_line(const ChildProcess& client, const std::string& signal_name) {
  EXPECT_EQ(count_of(client.err(), "interrupted by " + signal_name), 1u) << client.err();
  EXPECT_NE(client.err().find("did not finish"), std::string::npos) << client.err();
}

class InterruptBatch : public DirsTest, public ::testing::WithParamInterface<int> {
 protected:
  std::string signal_name() const { return GetParam() == SIGINT ? "SIGINT" : "SIGTERM"; }
};

// put -r -c 1 --retries 3 of six files into a disk that takes 4 MB/s (half a second a file).
TEST_P(InterruptBatch, PutRecursiveEndsWithinASecondAndStartsNoOtherFile) {
  const std::string src = dir.subdir("src");
  for (int i = 0; i < 6; ++i) make_file(src + "/f" + std::to_string(i) + ".bin", 2 * MiB + 1, i + 1);
  ServerProcess server = serve({"--insecure-no-auth", "--emulate-disk-rate", "4M", "--verbose"});
  auto client = start_pxfer({"put", "-r", "-c", "1", "--retries", "3", src, server.url("dst/")});
  int status = -1;
  const double seconds =
      interrupt_when(client, GetParam(), [&] { return count_of(server.log(), " admitted ") >= 2; }, status);
  const std::size_t started = count_of(server.log(), " admitted ");
  std::printf("put -r: %s to exit %.3f s\n", signal_name().c_str(), seconds);
  EXPECT_LT(seconds, 3.0) << "asked: within 1 s";
  EXPECT_EQ(status, 10) << client.err();
  expect_one_summary_line(client, signal_name());
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(count_of(server.log(), " admitted "), started) << "a file started after the signal:\n" << server.log();
  RunResult again = run_pxfer("put", "-r", "-c", "1", src, server.url("dst/"));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  for (int i = 0; i < 6; ++i)
    EXPECT_TRUE(files_equal(src + "/f" + std::to_string(i) + ".bin", root + "/dst/src/f" + std::to_string(i) + ".bin"));
}

// get -r -c 1 --retries 3 through a proxy that carries 8 MB/s.
TEST_P(InterruptBatch, GetRecursiveEndsWithinASecondAndKeepsThePartialHidden) {
  dir.subdir("root/src");
  for (int i = 0; i < 6; ++i) make_file(root + "/src/f" + std::to_string(i) + ".bin", 4 * MiB + 1, i + 1);
  ServerProcess server = serve();
  pxfer::testing::FaultProxy proxy(server.port());
  pin_server("127.0.0.1:" + std::to_string(proxy.port()), server.fingerprint());
  proxy.set_rate(8 * MiB);
  const std::string url = "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/src/";
  auto client = start_pxfer({"get", "-r", "-c", "1", "--retries", "3", url, local + "/dst"});
  int status = -1;
  const double seconds = interrupt_when(client, GetParam(), [&] { return proxy.accepted() >= 3; }, status);
  std::printf("get -r: %s to exit %.3f s\n", signal_name().c_str(), seconds);
  EXPECT_LT(seconds, 3.0) << "asked: within 1 s";
  EXPECT_EQ(status, 10) << client.err();
  expect_one_summary_line(client, signal_name());
  proxy.set_rate(0);
  RunResult again = run_pxfer("get", "-r", "-c", "1", url, local + "/dst");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  for (int i = 0; i < 6; ++i)
    EXPECT_TRUE(files_equal(root + "/src/f" + std::to_string(i) + ".bin", local + "/dst/f" + std::to_string(i) + ".bin"));
}

INSTANTIATE_TEST_SUITE_P(Interrupt, InterruptBatch, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& p) { return p.param == SIGINT ? "Sigint" : "Sigterm"; });

// A third-party copy: the client ends, and the active server cancels its copy (partial kept).
TEST_F(Interrupt, ThirdPartyCopyIsCancelledOnTheServers) {
  const std::string root_a = dir.subdir("a"), root_b = dir.subdir("b");
  make_file(root_a + "/x.bin", 16 * MiB, 5);
  ServerProcess a(root_a);
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*", "--emulate-disk-rate", "4M"});
  auto client = start_pxfer({"cp", "--retries", "3", a.url("x.bin"), b.url("y.bin")});
  int status = -1;
  const double seconds = interrupt_when(client, SIGINT, [&] { return b.log().find("third-party copy pull") != std::string::npos; }, status);
  const auto signalled = std::chrono::steady_clock::now();
  std::printf("cp (third-party): SIGINT to exit %.3f s\n", seconds);
  EXPECT_LT(seconds, 3.0) << "asked: within 1 s";
  EXPECT_EQ(status, 10) << client.err();
  EXPECT_NE(client.err().find("interrupted by SIGINT"), std::string::npos) << client.err();
  while (b.log().find("copy aborted") == std::string::npos && std::chrono::steady_clock::now() - signalled < 5s)
    std::this_thread::sleep_for(10ms);
  EXPECT_NE(b.log().find("copy aborted"), std::string::npos) << "the server went on copying:\n" << b.log();
  EXPECT_FALSE(path_exists(root_b + "/y.bin"));
}

// One file, --retries 3: SIGTERM ends it at once, not retried.
TEST_F(Interrupt, SigtermEndsASingleTransferWithRetries) {
  make_file(local + "/one.bin", 16 * MiB, 6);
  ServerProcess server = serve({"--insecure-no-auth", "--emulate-disk-rate", "4M", "--verbose"});
  auto client = start_pxfer({"put", "--retries", "3", local + "/one.bin", server.url("one.bin")});
  int status = -1;
  const double seconds = interrupt_when(client, SIGTERM, [&] { return server.log().find(" admitted ") != std::string::npos; }, status);
  std::printf("put: SIGTERM to exit %.3f s\n", seconds);
  EXPECT_LT(seconds, 3.0) << "asked: within 1 s";
  EXPECT_EQ(status, 10) << client.err();
  EXPECT_EQ(count_of(client.err(), "interrupted by SIGTERM"), 1u) << client.err();
  EXPECT_FALSE(path_exists(root + "/one.bin"));
}

}  // namespace
}  // namespace pxfer::e2e
