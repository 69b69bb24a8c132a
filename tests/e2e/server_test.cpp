// pxferd as a service: IPv6, concurrent clients, its per-transfer log line, shutdown on SIGTERM
// in the middle of a transfer, and connections that are not pxfer at all.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <future>
#include <random>
#include <thread>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"
#include "support/progress.hpp"

namespace pxfer::e2e {
namespace {

using pxfer::testing::FaultProxy;

// A proxy in front of `server` whose byte counts say what a rerun really carried; its address is
// pinned like the server's.
struct CountingProxy {
  explicit CountingProxy(const ServerProcess& server) : proxy(server.port()) {
    pin_server("127.0.0.1:" + std::to_string(proxy.port()), server.fingerprint());
  }
  std::string url(const std::string& path) const { return "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/" + path; }
  FaultProxy proxy;
};

constexpr std::uint64_t block = 2 * MiB;  // pxfer's default --block-size

// Waits (reading the client's output) until the journal of `name` in `dir` records a block.
bool wait_for_journal(ChildProcess& client, const std::string& dir, const std::string& name) {
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline && !client.try_wait()) {
    if (journaled_blocks(dir, name) > 0) return true;
    client.pump(10ms);
  }
  return false;
}

// Polls the server log until `count` lines contain `needle` (the server logs a transfer just
// after answering the client, so the client may exit first). Returns the log.
std::string wait_for_log_lines(const ServerProcess& server, const std::string& needle, std::size_t count,
                               std::chrono::milliseconds timeout = 5s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string log = server.log();
  while (count_lines_containing(log, needle) < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
    log = server.log();
  }
  return log;
}

std::vector<std::string> lines_containing(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& line : split_lines(text))
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

using Server = DirsTest;

TEST_F(Server, ServesOverIpv6Loopback) {
  if (!ipv6_loopback_available()) GTEST_SKIP() << "no IPv6 loopback";
  ServerProcess server = serve({}, "[::1]:0");
  EXPECT_EQ(server.authority(), "[::1]:" + std::to_string(server.port()));
  std::string src = local + "/v6.bin", back = local + "/back.bin";
  make_file(src, 3 * MiB + 11, 6);

  RunResult p = run_pxfer("put", src, server.url("v6.bin"), "-p", "3", "--block-size", "1M");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(files_equal(src, root + "/v6.bin"));
  RunResult g = run_pxfer("get", server.url("v6.bin"), back, "-p", "3");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_TRUE(files_equal(src, back));

  std::string log = wait_for_log_lines(server, "result=ok", 2);
  EXPECT_EQ(count_lines_containing(log, "client=[::1]:"), 2u) << log;
}

TEST_F(Server, ServesFourClientsAtOnce) {
  TestDirs big(big_file_base());
  ServerProcess server = big.serve();
  constexpr int clients = 4;
  for (int i = 0; i < clients; ++i) {
    auto n = static_cast<std::uint64_t>(i);
    make_file(big.local + "/c" + std::to_string(i), 20 * MiB + n, 100 + n);
  }

  std::vector<std::future<RunResult>> runs;
  for (int i = 0; i < clients; ++i) {
    std::string name = std::string("c").append(std::to_string(i));
    runs.push_back(std::async(std::launch::async, [&, name] {
      return run_pxfer("put", big.local + "/" + name, server.url(name), "-p", "2", "--block-size", "1M");
    }));
  }
  for (int i = 0; i < clients; ++i) {
    RunResult r = runs[i].get();
    std::string name = std::string("c").append(std::to_string(i));
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_TRUE(files_equal(big.local + "/" + name, big.root + "/" + name));
  }
  EXPECT_EQ(hidden_temporaries(big.root), std::vector<std::string>{});
  std::string log = wait_for_log_lines(server, "result=ok", clients);
  EXPECT_EQ(count_lines_containing(log, "result=ok"), static_cast<std::size_t>(clients)) << log;
}

TEST_F(Server, LogsOneLinePerFinishedTransfer) {
  ServerProcess server = serve();
  const std::uint64_t size = 2 * MiB + 99;
  std::string src = local + "/log.bin";
  make_file(src, size, 9);

  RunResult p = run_pxfer("put", src, server.url("log.bin"), "-p", "3", "--block-size", "1M");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::string log = wait_for_log_lines(server, "result=ok", 1);
  RunResult g = run_pxfer("get", server.url("log.bin"), local + "/back.bin", "-p", "3", "--block-size", "1M");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  log = wait_for_log_lines(server, "result=ok", 2);

  // The accounting line: the checksum's algorithm and value as separate keys (docs/operations.md).
  const std::string adler = "checksum_algo=adler32 checksum=" + adler32_hex(src) + " ";
  auto lines = lines_containing(log, "path=log.bin");
  ASSERT_EQ(lines.size(), 2u) << log;
  for (int i = 0; i < 2; ++i) {
    const std::string& line = lines[i];
    SCOPED_TRACE(line);
    EXPECT_NE(line.find("client=127.0.0.1:"), std::string::npos);
    EXPECT_NE(line.find(i == 0 ? "direction=put" : "direction=get"), std::string::npos);
    EXPECT_NE(line.find("bytes=" + std::to_string(size) + " "), std::string::npos);
    EXPECT_NE(line.find("seconds="), std::string::npos);
    EXPECT_NE(line.find("streams=3 "), std::string::npos);
    EXPECT_NE(line.find("rate="), std::string::npos);
    EXPECT_NE(line.find(adler), std::string::npos);
    EXPECT_TRUE(line.ends_with("result=ok"));
  }
}

// Waits until the client's rate lines show bytes moving; returns the largest count seen.

// SIGTERM to pxferd in the middle of a 1 GiB transfer, in either direction: nothing under the
// final name, the partial file kept hidden, and the same command against a restarted server
// resumes.
class SigtermDuringTransfer : public DirsTest, public ::testing::WithParamInterface<const char*> {
 protected:
  SigtermDuringTransfer() : DirsTest(big_file_base()) {}
};

TEST_P(SigtermDuringTransfer, ServerExitsAndNothingIsLeftBehind) {
  const std::string direction = GetParam();
  const bool put = direction == "put";
  const std::uint64_t size = 1 * GiB;
  // The receiving side's directory must end up without the file and without temporaries.
  std::string source = put ? local + "/big.bin" : root + "/big.bin";
  std::string receiving_dir = put ? root : local;
  make_file(source, size, 77);
  // --drain-timeout 0: the abort path (the drain is tests/e2e/drain_test.cpp).
  ServerProcess server = serve({"--drain-timeout", "0"});

  ChildProcess client = put ? start_pxfer({"put", source, server.url("big.bin"), "-p", "2", "--perf-interval", "0.05"})
                            : start_pxfer({"get", server.url("big.bin"), local + "/big.bin", "-p", "2",
                                           "--perf-interval", "0.05"});
  std::uint64_t seen = wait_for_progress(client);
  ASSERT_GT(seen, 0u) << "no progress from the client; stdout:\n" << client.out() << "\nstderr:\n" << client.err();
  ASSERT_LT(seen, size) << "the transfer finished before the server could be stopped";
  ASSERT_TRUE(wait_for_journal(client, receiving_dir, "big.bin")) << client.out() << client.err();

  auto stopped = server.stop(5s);
  EXPECT_FALSE(stopped.killed) << "pxferd did not exit within 5 s of SIGTERM";
  EXPECT_LT(stopped.elapsed, 5s);
  EXPECT_EQ(stopped.status, 0) << server.log();
  EXPECT_NE(server.log().find("pxferd stopped"), std::string::npos) << server.log();

  // Regression guard: before eea4040 the client never exited here (Asio's || waited for the
  // progress reporter, which never ends, once the transfer failed).
  bool timed_out = false;
  int client_status = client.wait(10s, &timed_out);
  EXPECT_FALSE(timed_out) << "pxfer still running 10 s after the server stopped; its last output:\n"
                          << client.out().substr(client.out().size() > 400 ? client.out().size() - 400 : 0);
  EXPECT_NE(client_status, 0) << client.out();
  // A server that goes away is a network error (Errc::network = 5), told in one line.
  // Regression guard: before 7327314 a get exited 1 with "internal error: multiple exceptions"
  // (Asio's && on the receiving side); net::both() now rethrows the first failure.
  EXPECT_EQ(client_status, 5) << client.err();
  EXPECT_TRUE(client.err().starts_with("pxfer: ")) << client.err();
  EXPECT_EQ(std::count(client.err().begin(), client.err().end(), '\n'), 1) << client.err();

  EXPECT_FALSE(path_exists(receiving_dir + "/big.bin")) << "a partial file was left under the final name";
  EXPECT_EQ(hidden_temporaries(receiving_dir), resumable_leftovers("big.bin"));
  if (!put) {
    EXPECT_EQ(file_size(source), size) << "the source of the get was changed";
  }

  const std::uint64_t had = journaled_blocks(receiving_dir, "big.bin") * block;
  EXPECT_GT(had, 0u) << "the journal recorded no block before the stop";
  ServerProcess restarted = serve();
  CountingProxy counted(restarted);
  RunResult again = put ? run_pxfer("put", source, counted.url("big.bin"), "-p", "2")
                        : run_pxfer("get", counted.url("big.bin"), local + "/big.bin", "-p", "2");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("resumed: "), std::string::npos) << again.out;
  // Measured by the proxy: the rerun carried what the journal lacked, not the whole file.
  auto carried = counted.proxy.carried_since(0);
  const std::uint64_t rerun = put ? carried.to_server : carried.to_client;
  EXPECT_LE(rerun, size - had + 1 * MiB) << "journal held " << had << " bytes; the rerun carried " << rerun;
  EXPECT_GE(rerun, size - had);
  EXPECT_TRUE(files_equal(source, receiving_dir + "/big.bin"));
  EXPECT_EQ(hidden_temporaries(receiving_dir), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Server, SigtermDuringTransfer, ::testing::Values("put", "get"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param);
                         });

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(n, '\0');
  for (auto& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

TEST_F(Server, SurvivesGarbageAndSilentConnections) {
  ServerProcess server = serve();
  std::string src = local + "/after.bin";
  make_file(src, 1 * MiB + 3, 12);

  RawConnection silent("127.0.0.1", server.port());  // connects, says nothing, stays open
  RawConnection rogue("127.0.0.1", server.port());
  rogue.send_all(random_bytes(1024, 12345));
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(server.running()) << server.log();

  RunResult r = run_pxfer("put", src, server.url("after.bin"), "-p", "4", "--block-size", "1M");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(src, root + "/after.bin"));
  RunResult g = run_pxfer("get", server.url("after.bin"), local + "/back.bin", "-p", "2");
  EXPECT_EQ(g.exit_code, 0) << g.err;
  EXPECT_TRUE(files_equal(src, local + "/back.bin"));
  EXPECT_TRUE(server.running());
}

TEST_F(Server, StopsOnSigtermWhileAConnectionIsSilent) {
  ServerProcess server = serve();
  RawConnection silent("127.0.0.1", server.port());  // connects, says nothing, stays open
  std::this_thread::sleep_for(100ms);
  // Regression guard: before eea4040 pxferd waited for the silent connection's 10 s HELLO
  // deadline (read_message_within used Asio's ||, which waits for one *successful* completion,
  // so the read failed by stop() waited for the timer).
  auto stopped = server.stop(5s);
  EXPECT_FALSE(stopped.killed) << "pxferd did not exit within 5 s of SIGTERM (a silent connection was open)";
  EXPECT_EQ(stopped.status, 0);
}

TEST_F(Server, DropsGarbageConnectionAtOnce) {
  ServerProcess server = serve();
  RawConnection rogue("127.0.0.1", server.port());
  rogue.send_all(random_bytes(1024, 12345));
  // Regression guard: before eea4040 a garbage first frame was held until the 10 s HELLO
  // deadline (read_message_within's || waited for the timer once the read had failed).
  EXPECT_TRUE(rogue.peer_closed_within(3000)) << "the server kept a garbage connection open for 3 s";
  EXPECT_TRUE(server.running());
}

// After a transfer fails on the server, its log says so and it lets go of the file.
TEST_F(Server, ClientKilledDuringPutIsLoggedAndReleased) {
  TestDirs big(big_file_base());
  const std::uint64_t size = 512 * MiB;
  std::string src = big.local + "/big.bin";
  make_file(src, size, 78);
  ServerProcess server = big.serve();

  ChildProcess client = start_pxfer({"put", src, server.url("big.bin"), "-p", "2", "--perf-interval", "0.05"});
  std::uint64_t seen = wait_for_progress(client);
  ASSERT_GT(seen, 0u) << client.err();
  ASSERT_LT(seen, size) << "the transfer finished before the client could be killed";
  ASSERT_TRUE(wait_for_journal(client, big.root, "big.bin")) << client.out() << client.err();
  client.send_signal(SIGKILL);
  client.wait(5s);

  // Regression guard: before 7327314 the failed put was logged as "multiple exceptions" and
  // skipped the result=failed line and registry clean-up (Asio's && on the receiving side).
  std::string log = wait_for_log_lines(server, "result=failed", 1);
  EXPECT_EQ(count_lines_containing(log, "direction=put"), 1u) << log;
  EXPECT_EQ(count_lines_containing(log, "result=failed"), 1u) << log;
  EXPECT_EQ(count_lines_containing(log, "multiple exceptions"), 0u) << log;
  // Released promptly: a data stream may still be finishing the write of a whole verified block
  // when the control exchange has failed and logged (issue 11: blocks are written whole), so the
  // files are let go within moments of the log line, not necessarily before it. Only then is the
  // journal read below final.
  for (int i = 0; i < 250 && !open_files_of(server.pid(), big.root + "/").empty(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(open_files_of(server.pid(), big.root + "/"), std::vector<std::string>{});
  // Only the hidden partial file and its journal stay, for a resume.
  EXPECT_EQ(list_dir(big.root), resumable_leftovers("big.bin"));

  // The same command again sends only what is missing (counted by a proxy, not the client).
  const std::uint64_t had = journaled_blocks(big.root, "big.bin") * block;
  EXPECT_GT(had, 0u) << "the journal recorded no block before the kill";
  CountingProxy counted(server);
  RunResult r = run_pxfer("put", src, counted.url("big.bin"), "-p", "2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("resumed: "), std::string::npos) << r.out;
  const std::uint64_t rerun = counted.proxy.carried_since(0).to_server;
  EXPECT_LE(rerun, size - had + 1 * MiB) << "journal held " << had << " bytes; the rerun carried " << rerun;
  EXPECT_GE(rerun, size - had);
  EXPECT_TRUE(files_equal(src, big.root + "/big.bin"));
  EXPECT_EQ(list_dir(big.root), std::vector<std::string>{"big.bin"});
}

TEST_F(Server, GetAbortedByClientIsLoggedAndReleased) {
  make_file(root + "/data.bin", 2 * MiB, 3);
  ServerProcess server = serve();
  // The client cannot create its destination after the server opened the file, and tells the
  // server so with an ERROR frame.
  RunResult r = run_pxfer("get", server.url("data.bin"), "/nonexistent/dir/file");
  ASSERT_EQ(r.exit_code, 3) << r.err;

  // Regression guard: before eea4040 the sending side's `wait_streams() || watch_peer(control)`
  // threw multiple_exceptions here, so the server logged "multiple exceptions" instead of the
  // transfer and never removed its registry entry.
  std::string log = wait_for_log_lines(server, "result=failed", 1);
  EXPECT_EQ(count_lines_containing(log, "path=data.bin direction=get"), 1u) << log;
  EXPECT_EQ(count_lines_containing(log, "multiple exceptions"), 0u) << log;
  EXPECT_EQ(open_files_of(server.pid(), root + "/"), std::vector<std::string>{});
}

// The lab's slow disk (pxferd --emulate-disk-rate) is one bucket for the whole server: two puts
// of 8 MiB at once share 4 MiB/s, so together they need at least (16 - 4 of credit) / 4 = 3 s,
// where either alone would take 1 s. Only a lower bound: a slow machine may take longer.
TEST_F(Server, EmulatedDiskRateIsSharedByAllTransfers) {
  make_file(local + "/a.bin", 8 * MiB, 31);
  make_file(local + "/b.bin", 8 * MiB, 32);
  ServerProcess server = serve({"--emulate-disk-rate", "4M"});
  auto start = std::chrono::steady_clock::now();
  ChildProcess a = start_pxfer({"put", local + "/a.bin", server.url("a.bin")});
  ChildProcess b = start_pxfer({"put", local + "/b.bin", server.url("b.bin")});
  EXPECT_EQ(a.wait(60s), 0) << a.err();
  EXPECT_EQ(b.wait(60s), 0) << b.err();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 2500ms);
  EXPECT_TRUE(files_equal(local + "/a.bin", root + "/a.bin"));
  EXPECT_TRUE(files_equal(local + "/b.bin", root + "/b.bin"));
}

}  // namespace
}  // namespace pxfer::e2e
