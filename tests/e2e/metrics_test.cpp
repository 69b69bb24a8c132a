// pxferd --metrics-listen: the Prometheus endpoint scraped with curl during and after a transfer.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <thread>

#include "support/e2e.hpp"
#include "support/raw_frames.hpp"

namespace pxfer::e2e {
namespace {

using Metrics = DirsTest;

TEST_F(Metrics, PrometheusEndpointCountsTransfersAndFailures) {
  if (capture_shell("command -v curl").empty()) GTEST_SKIP() << "curl not installed";
  std::string etc = dir.subdir("etc");
  std::string big = local + "/big.bin";
  make_file(big, 16 * MiB, 3);
  std::string tokens = etc + "/tokens";
  write_private(etc + "/alice.token", create_token("alice", tokens) + "\n");
  write_private(etc + "/wrong.token", std::string(64, 'b') + "\n");
  ServerProcess server = serve({"--tokens", tokens, "--metrics-listen", "127.0.0.1:0", "--emulate-disk-rate", "8M",
                                                    "--metrics-per-identity"});
  std::smatch m;
  std::string log = server.log();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("metrics on http://(127\\.0\\.0\\.1:[0-9]+)/metrics"))) << log;
  const std::string url = "http://" + m[1].str() + "/metrics";

  ChildProcess put = start_pxfer({"put", big, server.url("big.bin"), "--token-file", etc + "/alice.token"});
  std::string during;
  for (int i = 0; i < 100 && metric_sample(during, "pxferd_admission_slots_used") != 1; ++i) {
    std::this_thread::sleep_for(50ms);
    during = "\n" + capture_shell("curl -sf " + url);
  }
  EXPECT_EQ(metric_sample(during, "pxferd_admission_slots_used"), 1) << during;
  // The running transfer's bytes move while it runs (the slow disk makes it last about 2 s).
  long long first = -1, later = -1;
  for (int i = 0; i < 100 && (first <= 0 || later <= first); ++i) {
    std::string now = "\n" + capture_shell("curl -sf " + url);
    if (metric_sample(now, "pxferd_transfers_in_progress") != 1) break;
    (first <= 0 ? first : later) = metric_sample(now, "pxferd_transfers_in_progress_bytes");
    EXPECT_GE(metric_sample(now, "pxferd_data_streams_in_progress"), 1) << now;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(first, 0) << "pxferd_running_bytes never rose above 0 during the put";
  EXPECT_GT(later, first) << "pxferd_running_bytes did not move during the put";
  EXPECT_NE(during.find("# TYPE pxferd_transfers_total counter"), std::string::npos) << during;
  ASSERT_EQ(put.wait(60s), 0) << put.err();
  RunResult refused = run_pxfer("put", big, server.url("x.bin"), "--token-file", etc + "/wrong.token");
  EXPECT_EQ(refused.exit_code, 4) << refused.err;

  std::string after = "\n" + capture_shell("curl -sf " + url);
  EXPECT_EQ(metric_sample(after, "pxferd_admission_slots_used"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_admission_queue_length"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_transfers_total{direction=\"put\",result=\"ok\"}"), 1) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_bytes_total{direction=\"put\"}"), static_cast<long long>(16 * MiB)) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_auth_failures_total"), 1) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_bytes_by_identity_total{identity=\"alice\",direction=\"put\"}"),
            static_cast<long long>(16 * MiB)) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_transfers_in_progress"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_checksum_failures_total"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_draining"), 0) << after;
  // One file of 8 blocks, 4 streams, each on a new connection (nothing kept before it).
  EXPECT_EQ(metric_sample(after, "pxferd_data_streams_total"), 4) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_data_streams_on_kept_connections_total"), 0) << after;
  EXPECT_NE(after.find("pxferd_build_info{version=\""), std::string::npos) << after;
  EXPECT_EQ(capture_shell("curl -s -o /dev/null -w '%{http_code}' http://" + m[1].str() + "/other"), "404");
  // Histograms, reasons, process_* and the lint of Prometheus's own tool.
  EXPECT_EQ(metric_sample(after, "pxferd_transfer_duration_seconds_count{direction=\"put\"}"), 1) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_transfer_size_bytes_bucket{direction=\"put\",le=\"16777216\"}"), 1) << after;
  EXPECT_GE(metric_sample(after, "pxferd_admission_wait_seconds_count"), 1) << after;
  EXPECT_GT(metric_sample(after, "process_resident_memory_bytes"), 1'000'000) << after;
  EXPECT_GT(metric_sample(after, "process_open_fds"), 3) << after;
  EXPECT_NE(after.find("\nprocess_start_time_seconds "), std::string::npos) << after;
  if (capture_shell("command -v promtool").empty()) GTEST_SKIP() << "promtool (package prometheus) not installed";
  const std::string lint = capture_shell("curl -sf " + url + " | promtool check metrics 2>&1; echo exit=$?");
  EXPECT_NE(lint.find("exit=0"), std::string::npos) << lint;
}

// Issue 34: the endpoint served one connection at a time with 5 s per recv, so a scraper that
// connected and sent nothing held every other scrape for 5 s, and one that trickled a byte at a
// time held it for ever. Now each scraper has its own coroutine and one deadline for the whole
// request (checked: fails on the old code, where the curl below waits out the silent scraper).
TEST_F(Metrics, SlowScraperDelaysNoOtherAndMeetsOneDeadline) {
  if (capture_shell("command -v curl").empty()) GTEST_SKIP() << "curl not installed";
  ServerProcess server = serve({"--metrics-listen", "127.0.0.1:0"});
  std::smatch m;
  std::string log = server.log();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("metrics on http://127\\.0\\.0\\.1:([0-9]+)/metrics"))) << log;
  const auto port = static_cast<std::uint16_t>(std::stoi(m[1].str()));
  int silent = raw::connect_loopback(port);
  int trickler = raw::connect_loopback(port);
  ASSERT_GE(silent, 0);
  ASSERT_GE(trickler, 0);
  const auto opened = std::chrono::steady_clock::now();
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  ASSERT_TRUE(raw::send_all(trickler, reinterpret_cast<const std::uint8_t*>(head.data()), head.size()));
  std::this_thread::sleep_for(200ms);  // both are surely accepted before the real scrape
  const auto asked = std::chrono::steady_clock::now();
  std::string scrape = "\n" + capture_shell("curl -sf -m 4 http://127.0.0.1:" + m[1].str() + "/metrics");
  const auto took = std::chrono::steady_clock::now() - asked;
  EXPECT_LT(took, 1500ms) << "a scrape waited for a slow scraper";
  EXPECT_EQ(metric_sample(scrape, "pxferd_draining"), 0) << scrape;
  // The trickler sends a byte every 250 ms, never finishing its head: the deadline still ends it.
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() - opened < 9s) {
    const std::uint8_t byte = 'a';
    closed = !raw::send_all(trickler, &byte, 1);
    std::uint8_t got = 0;
    const ssize_t r = ::recv(trickler, &got, 1, MSG_DONTWAIT);
    closed = closed || r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_TRUE(closed) << "a trickling scraper was not cut off by the whole-request deadline";
  EXPECT_LT(std::chrono::steady_clock::now() - opened, 7s);
  ::close(silent);
  ::close(trickler);
}

}  // namespace
}  // namespace pxfer::e2e
