// pxferd --metrics-listen: the Prometheus endpoint scraped with curl during and after a transfer.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

TEST(Metrics, PrometheusEndpointCountsTransfersAndFailures) {
  if (capture_shell("command -v curl").empty()) GTEST_SKIP() << "curl not installed";
  TempDir dir;
  std::string root = dir.subdir("root"), local = dir.subdir("local"), etc = dir.subdir("etc");
  std::string big = local + "/big.bin";
  make_file(big, 16 * MiB, 3);
  std::string tokens = etc + "/tokens";
  write_private(etc + "/alice.token", create_token("alice", tokens) + "\n");
  write_private(etc + "/wrong.token", std::string(64, 'b') + "\n");
  ServerProcess server(root, "127.0.0.1:0", {"--tokens", tokens, "--metrics-listen", "127.0.0.1:0", "--emulate-disk-rate", "8M"});
  std::smatch m;
  std::string log = server.log();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("metrics on http://(127\\.0\\.0\\.1:[0-9]+)/metrics"))) << log;
  const std::string url = "http://" + m[1].str() + "/metrics";

  ChildProcess put = start_pxfer({"put", big, server.url("big.bin"), "--token-file", etc + "/alice.token"});
  std::string during;
  for (int i = 0; i < 100 && metric_sample(during, "pxferd_transfers_active") != 1; ++i) {
    std::this_thread::sleep_for(50ms);
    during = "\n" + capture_shell("curl -sf " + url);
  }
  EXPECT_EQ(metric_sample(during, "pxferd_transfers_active"), 1) << during;
  // The running transfer's bytes move while it runs (the slow disk makes it last about 2 s).
  long long first = -1, later = -1;
  for (int i = 0; i < 100 && (first <= 0 || later <= first); ++i) {
    std::string now = "\n" + capture_shell("curl -sf " + url);
    if (metric_sample(now, "pxferd_transfers_running") != 1) break;
    (first <= 0 ? first : later) = metric_sample(now, "pxferd_running_bytes");
    EXPECT_GE(metric_sample(now, "pxferd_running_streams"), 1) << now;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(first, 0) << "pxferd_running_bytes never rose above 0 during the put";
  EXPECT_GT(later, first) << "pxferd_running_bytes did not move during the put";
  EXPECT_NE(during.find("# TYPE pxferd_transfers_total counter"), std::string::npos) << during;
  ASSERT_EQ(put.wait(60s), 0) << put.err();
  RunResult refused = run_pxfer("put", big, server.url("x.bin"), "--token-file", etc + "/wrong.token");
  EXPECT_EQ(refused.exit_code, 4) << refused.err;

  std::string after = "\n" + capture_shell("curl -sf " + url);
  EXPECT_EQ(metric_sample(after, "pxferd_transfers_active"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_transfers_queued"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_transfers_total{direction=\"put\",result=\"ok\"}"), 1) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_bytes_total{direction=\"put\"}"), static_cast<long long>(16 * MiB)) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_auth_failures_total"), 1) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_bytes_by_identity_total{identity=\"alice\",direction=\"put\"}"),
            static_cast<long long>(16 * MiB)) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_transfers_running"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_checksum_failures_total"), 0) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_draining"), 0) << after;
  // One file of 8 blocks, 4 streams, each on a new connection (nothing kept before it).
  EXPECT_EQ(metric_sample(after, "pxferd_data_streams_total"), 4) << after;
  EXPECT_EQ(metric_sample(after, "pxferd_data_streams_on_kept_connections_total"), 0) << after;
  EXPECT_NE(after.find("pxferd_build_info{version=\""), std::string::npos) << after;
  EXPECT_EQ(capture_shell("curl -s -o /dev/null -w '%{http_code}' http://" + m[1].str() + "/other"), "404");
}

}  // namespace
}  // namespace pxfer::e2e
