// The measuring features against a real pxferd: compression, the per-stream view, JSON events,
// congestion control, doctor and sweep.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

class LabFeatures : public ServedTest {
 protected:
  LabFeatures() : ServedTest({}, "127.0.0.1:0", big_file_base()) {}
};

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> events;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) events.push_back(nlohmann::json::parse(line));
  return events;
}

TEST_F(LabFeatures, CompressedTransfersArriveIntactBothWays) {
  std::string text;
  while (text.size() < (20u << 20)) text += "event 123456 run 42 lumi 17 energy 13.6 TeV ATLAS DPM gridftp\n";
  write_text(local + "/text.dat", text);
  make_file(local + "/random.dat", 9u << 20, 5);
  for (const std::string name : {"text.dat", "random.dat"})
    for (const std::string mode : {"zstd", "zstd:9", "auto"}) {
      auto put = run_pxfer("put", "--compress", mode, "--overwrite", local + "/" + name, server.url(name));
      ASSERT_EQ(put.exit_code, 0) << put.err;
      EXPECT_TRUE(files_equal(local + "/" + name, root + "/" + name));
      EXPECT_NE(put.out.find("compression "), std::string::npos) << put.out;
      auto get = run_pxfer("get", "--compress", mode, "--overwrite", server.url(name), local + "/back-" + name);
      ASSERT_EQ(get.exit_code, 0) << get.err;
      EXPECT_TRUE(files_equal(local + "/" + name, local + "/back-" + name)) << name << " " << mode;
    }
  // Text shrinks on the wire; random data goes raw (ratio 1.00).
  auto text_put = run_pxfer("put", "--compress", "zstd", "--overwrite", local + "/text.dat", server.url("text.dat"));
  EXPECT_EQ(text_put.out.find("ratio 1.00"), std::string::npos) << text_put.out;
  auto random_put = run_pxfer("put", "--compress", "zstd", "--overwrite", local + "/random.dat", server.url("random.dat"));
  EXPECT_NE(random_put.out.find("ratio 1.00"), std::string::npos) << random_put.out;
}

TEST_F(LabFeatures, StreamStatsShowEveryStreamAndTheBusyCount) {
  make_file(local + "/f.dat", 64u << 20, 1);
  for (const std::string direction : {"put", "get"}) {
    auto r = direction == "put"
                 ? run_pxfer("put", "-p", "3", "--stream-stats", "--perf-interval", "0.05", "--block-size", "1M",
                             local + "/f.dat", server.url("f.dat"))
                 : run_pxfer("get", "-p", "3", "--stream-stats", "--perf-interval", "0.05", "--block-size", "1M",
                             server.url("f.dat"), local + "/g.dat");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (int s = 0; s < 3; ++s)
      EXPECT_NE(r.out.find("stream  " + std::to_string(s) + ": "), std::string::npos) << direction << "\n" << r.out;
    EXPECT_NE(r.out.find("streams with data queued (Send-Q > 0) in at least half the intervals: "), std::string::npos);
  }
}

TEST_F(LabFeatures, JsonEventsCarryTheSameNumbers) {
  make_file(local + "/j.dat", 8u << 20, 2);
  auto r = run_pxfer("put", "--json", "--stream-stats", "-p", "2", local + "/j.dat", server.url("j.dat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto events = json_lines(r.out);
  ASSERT_GE(events.size(), 3u) << r.out;
  EXPECT_EQ(events.front()["event"], "start");
  EXPECT_EQ(events.back()["event"], "summary");
  const auto& summary = events.back();
  EXPECT_EQ(summary["bytes"], 8u << 20);
  EXPECT_EQ(summary["streams"], 2);
  EXPECT_EQ(summary["checksum"]["value"], adler32_hex(local + "/j.dat"));
  std::uint64_t per_stream = 0;
  for (const auto& t : summary["stream_totals"]) per_stream += t["bytes"].get<std::uint64_t>();
  EXPECT_EQ(per_stream, 8u << 20);

  auto failed = run_pxfer("get", "--json", server.url("missing.dat"), local + "/m.dat");
  EXPECT_EQ(failed.exit_code, 3);
  auto error = json_lines(failed.out);
  ASSERT_FALSE(error.empty());
  EXPECT_EQ(error.back()["event"], "error");
  EXPECT_EQ(error.back()["class"], "not-found");
}

std::string first_word_of(const std::string& path) {
  std::string text = read_text(path), word;
  std::istringstream(text) >> word;
  return word;
}

// The algorithm is read from the kernel (ss) on both ends' data sockets while the put runs, not
// from the summary. It is one that differs from the system default, so a build that ignores
// --congestion cannot pass by accident.
TEST_F(LabFeatures, CongestionControlIsAppliedOrRefusedWithTheAvailableList) {
  if (!ss_available()) GTEST_SKIP() << "ss (iproute2) not installed";
  const std::string system_default = first_word_of("/proc/sys/net/ipv4/tcp_congestion_control");
  const std::string algo = system_default == "reno" ? "cubic" : "reno";
  make_file(local + "/c.dat", 8u << 20, 3);
  // Paced at 4 MiB/s per connection: the put lasts about a second, long enough to sample.
  pxfer::testing::FaultProxy paced(server.port());
  paced.set_rate(4u << 20);
  pin_server("127.0.0.1:" + std::to_string(paced.port()), server.fingerprint());
  ChildProcess put = start_pxfer({"put", "-p", "2", "--congestion", algo, local + "/c.dat",
                                  "pxfer://127.0.0.1:" + std::to_string(paced.port()) + "/c.dat"});
  std::set<std::string> client_side, server_side, others;  // peer address of sockets seen with `algo`
  std::size_t samples = 0;
  while (!put.try_wait()) {
    for (const auto& s : established_sockets(paced.port())) {  // the client's sockets to the proxy
      if (s.peer_port != paced.port()) continue;
      (s.congestion == algo ? client_side : others).insert("client " + s.local + " " + s.congestion);
    }
    for (const auto& s : established_sockets(server.port())) {  // pxferd's accepted sockets
      if (s.local_port != server.port()) continue;
      (s.congestion == algo ? server_side : others).insert("server " + s.peer + " " + s.congestion);
    }
    ++samples;
    put.pump(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(put.wait(std::chrono::seconds(30)), 0) << put.err();
  EXPECT_TRUE(files_equal(local + "/c.dat", root + "/c.dat"));
  EXPECT_NE(put.out().find("congestion " + algo), std::string::npos) << put.out();
  std::string seen;
  for (const auto& o : others) seen += o + "\n";
  // Both data streams, at both ends (the control connection keeps the default).
  EXPECT_GE(client_side.size(), 2u) << "client data sockets with " << algo << " in " << samples << " samples; others:\n" << seen;
  EXPECT_GE(server_side.size(), 2u) << "server data sockets with " << algo << " in " << samples << " samples; others:\n" << seen;

  auto bad = run_pxfer("put", "--congestion", "warp9", local + "/c.dat", server.url("c2.dat"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("available: "), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("cubic"), std::string::npos) << bad.err;
}

TEST_F(LabFeatures, DoctorMeasuresAndAdvises) {
  auto r = run_pxfer("doctor", "pxfer://" + server.authority(), "--target", "100gbit");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* expected : {"round trip: ", "this host:", "server:", "tcp_rmem", "bandwidth-delay product",
                               "put (this host sends)", "get (the server sends)"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  auto bad = run_pxfer("doctor", "pxfer://" + server.authority(), "--target", "fast");
  EXPECT_EQ(bad.exit_code, 2);
}

TEST_F(LabFeatures, SweepPrintsTheMatrixAndCleansUp) {
  auto r = run_pxfer("sweep", server.url(""), "--streams", "1,2", "--files", "1,2", "--size", "2M", "--direction",
                     "get,put");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# get, window auto"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# put, window auto"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("files\\streams"), std::string::npos);
  EXPECT_EQ(list_dir(root), std::vector<std::string>{}) << "sweep files left on the server";
  auto csv = run_pxfer("sweep", server.url(""), "--streams", "1,auto", "--files", "1", "--size", "1M", "--csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("direction,window,congestion,compress,files,streams", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("get,0,,none,1,auto,1,0,"), std::string::npos) << "-p auto is a column of its own\n" << csv.out;
  auto bad = run_pxfer("sweep", server.url(""), "--streams", "1,65", "--files", "1", "--size", "1M");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace pxfer::e2e
