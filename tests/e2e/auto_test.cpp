// --auto and batch --json against a real pxferd: the controller's decisions are printed, every
// file still arrives intact, every --json line is a JSON object and the summary adds up, and
// bad values are usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {
namespace fs = std::filesystem;

class Auto : public ServedTest {
 protected:
  Auto() : ServedTest({}, "127.0.0.1:0", big_file_base()) {}

  // `count` files of 1-3 MiB in local/NAME.
  std::string make_many(const std::string& name, int count) {
    std::string tree = local + "/" + name;
    fs::create_directories(tree);
    for (int i = 0; i < count; ++i)
      make_file(tree + "/f" + std::to_string(i) + ".dat", MiB + static_cast<std::uint64_t>(i % 3) * MiB + 17u * i, i);
    return tree;
  }
};

std::vector<nlohmann::json> events(const std::string& out) {
  std::vector<nlohmann::json> all;
  for (const auto& line : split_lines(out)) {
    if (line.empty()) continue;
    all.push_back(nlohmann::json::parse(line));  // throws (and fails the test) on a bad line
  }
  return all;
}

std::size_t count_events(const std::vector<nlohmann::json>& all, const std::string& name) {
  std::size_t n = 0;
  for (const auto& e : all) n += e.at("event") == name;
  return n;
}

// -p auto in a get sheds streams that only take from the others (issue 39.1): through a link of
// 16 MiB/s that all connections share (the proxy's one clock), 4 streams fill it, 8 move no more,
// so the client asks the server with RETIRE to end the 4 it added; each ends after the blocks it
// had sent, and the file arrives whole. Before RETIRE a get held at 8.
TEST_F(Auto, AGetShedsStreamsThatOnlyTakeFromTheOthers) {
  // 8 s at 16 MiB/s: the proxy's queue stands from the start, so each phase warms up for its
  // longest (2 s) before its 1 s of measurement.
  make_file(root + "/shared.bin", 128 * MiB + 4321, 5);
  pxfer::testing::FaultProxy link(server.port());
  link.set_total_rate(16 * MiB);
  const std::string url = "pxfer://127.0.0.1:" + std::to_string(link.port()) + "/shared.bin";
  auto r = run_pxfer("get", "--json", "--stream-stats", "--block-size", "1M", url, local + "/shared.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out << server.log();
  EXPECT_TRUE(files_equal(root + "/shared.bin", local + "/shared.bin"));
  std::string steps, choice, recoveries;
  for (const auto& e : events(r.out)) {
    if (e.at("event") == "streams") steps += e.at("message").get<std::string>() + "\n";
    if (e.at("event") == "stream_recovery") recoveries += e.dump() + "\n";
    if (e.at("event") == "summary") choice = e.value("streams_auto", "");
  }
  EXPECT_NE(steps.find("streams: 4 -> 8 streams"), std::string::npos) << steps;
  EXPECT_NE(steps.find("streams: 8 -> 4 streams"), std::string::npos) << steps;
  EXPECT_EQ(choice.rfind("auto 4 (", 0), 0u) << choice << "\n" << steps;
  EXPECT_EQ(recoveries, "") << "the shed streams must end cleanly, not break";
}

TEST_F(Auto, PutOfFortyFilesDecidesAndMovesEveryFile) {
  std::string tree = make_many("forty", 40);
  // -p 1 --connect-rate 20: 80 connections take at least 3 s, so several 500 ms decisions happen
  // however fast this machine is.
  auto r = run_pxfer("put", "-r", "--auto", "--auto-interval", "500ms", "-c", "6", "-p", "1", "--connect-rate", "20", tree,
                     server.url("dest/"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(count_lines_containing(r.out, "done "), 40u) << r.out;
  EXPECT_NE(r.out.find("40 files: 40 done, 0 skipped, 0 failed"), std::string::npos) << r.out;
  for (int i = 0; i < 40; ++i)
    EXPECT_TRUE(files_equal(tree + "/f" + std::to_string(i) + ".dat", root + "/dest/forty/f" + std::to_string(i) + ".dat"));

  std::regex decision(R"(^auto: (?:(\d+) -> )?(\d+) files? in flight.* \(rate [0-9.]+ MB/s avg, (baseline|up [0-9.]+%|down [0-9.]+%), (\d+) failures?; .+\)$)");
  std::size_t decisions = 0;
  for (const auto& line : split_lines(r.out)) {
    if (!line.starts_with("auto:")) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, decision)) << line;
    const int files = std::stoi(m[2]);
    EXPECT_GE(files, 1) << line;
    EXPECT_LE(files, 6) << line;
    EXPECT_EQ(m[4], "0") << line;
    if (decisions == 0) {
      EXPECT_EQ(files, 3) << "starts halfway between 1 and 6: " << line;
      EXPECT_EQ(m[3], "baseline") << line;
    }
    ++decisions;
  }
  EXPECT_GE(decisions, 2u) << r.out;
}

// pxferd --max-active 2: --auto asks the server (INFO) before it starts and never aims above 2
// files in flight, whatever -c says; the first decision says why.
TEST_F(Auto, ServerMaxActiveCapsFilesInFlight) {
  std::string tree = make_many("capped", 12);
  ServerProcess limited(dir.subdir("limited"), "127.0.0.1:0", {"--max-active", "2"});
  auto r = run_pxfer("put", "-r", "--auto", "--auto-interval", "500ms", "-c", "8", "-p", "1", "--connect-rate", "10", tree,
                     limited.url("dest/"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("12 files: 12 done, 0 skipped, 0 failed"), std::string::npos) << r.out;
  std::regex decision(R"(^auto: (?:(\d+) -> )?(\d+) files? in flight.*\)$)");
  std::size_t decisions = 0;
  for (const auto& line : split_lines(r.out)) {
    if (!line.starts_with("auto:")) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, decision)) << line;
    EXPECT_LE(std::stoi(m[2]), 2) << line;
    if (decisions++ == 0) {
      EXPECT_NE(line.find("the server's limits cap files in flight at 2"), std::string::npos) << line;
    }
  }
  EXPECT_GE(decisions, 1u) << r.out;
}

TEST_F(Auto, GetWithMinAndMaxStaysInside) {
  make_many("src", 12);
  ASSERT_EQ(run_pxfer("put", "-r", "-q", local + "/src", server.url("")).exit_code, 0);
  auto r = run_pxfer("get", "-r", "--auto", "--min-concurrency", "2", "-c", "3", "--auto-interval", "200ms", "-p", "1",
                     "--connect-rate", "10", server.url("src"), local + "/back");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  for (int i = 0; i < 12; ++i)
    EXPECT_TRUE(files_equal(local + "/src/f" + std::to_string(i) + ".dat", local + "/back/f" + std::to_string(i) + ".dat"));
  std::regex files_in_flight(R"((\d+) files? in flight)");
  for (const auto& line : split_lines(r.out)) {
    if (!line.starts_with("auto:")) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, files_in_flight)) << line;
    EXPECT_GE(std::stoi(m[1]), 2) << line;
    EXPECT_LE(std::stoi(m[1]), 3) << line;
  }
  EXPECT_GE(count_lines_containing(r.out, "auto: "), 1u) << r.out;
}

TEST_F(Auto, BatchJsonLinesAllParseAndTheSummaryAddsUp) {
  std::string tree = make_many("j", 10);
  auto r = run_pxfer("put", "-r", "--json", "--auto", "--auto-interval", "300ms", "--perf-interval", "0.2", "-p", "1",
                     "--connect-rate", "10", tree, server.url("j"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto all = events(r.out);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(count_events(all, "file_start"), 10u);
  EXPECT_EQ(count_events(all, "file_done"), 10u);
  EXPECT_GE(count_events(all, "interval"), 1u) << r.out;
  EXPECT_GE(count_events(all, "auto"), 1u) << r.out;
  const auto& summary = all.back();
  ASSERT_EQ(summary.at("event"), "batch_summary") << r.out;
  EXPECT_EQ(summary.at("files"), 10);
  EXPECT_EQ(summary.at("done"), 10);
  EXPECT_EQ(summary.at("skipped"), 0);
  EXPECT_EQ(summary.at("failed"), 0);
  EXPECT_EQ(summary.at("exit_code"), 0);
  // The figures are checked against the files themselves, not against other lines of the same
  // output: sizes and checksums on disk at both ends.
  std::uint64_t bytes = 0;
  std::map<std::string, std::uint64_t> done_sizes;
  for (int i = 0; i < 10; ++i) {
    const std::string name = std::string("f") + std::to_string(i) + ".dat";
    EXPECT_TRUE(files_equal(tree + "/" + name, root + "/j/" + name));
    bytes += file_size(tree + "/" + name);
  }
  for (const auto& e : all)
    if (e.at("event") == "file_done") {
      const std::string path = e.at("path").get<std::string>();
      const std::string name = fs::path(path).filename().string();
      SCOPED_TRACE(e.dump());
      ASSERT_TRUE(path_exists(tree + "/" + name));
      EXPECT_EQ(e.at("bytes").get<std::uint64_t>(), file_size(tree + "/" + name));
      EXPECT_EQ(e.at("checksum").get<std::string>(), "adler32: " + adler32_hex(root + "/j/" + name));
      done_sizes[name] = e.at("bytes").get<std::uint64_t>();
    }
  EXPECT_EQ(done_sizes.size(), 10u) << "a file_done per file, each named once";
  EXPECT_EQ(summary.at("bytes").get<std::uint64_t>(), bytes) << "the sum of the sizes on disk";
  for (const auto& e : all) {
    if (e.at("event") == "interval") {
      EXPECT_LE(e.at("bytes").get<std::uint64_t>(), bytes) << e.dump();
    }
  }
}

TEST_F(Auto, BatchJsonReportsFailedAndSkippedFiles) {
  make_file(local + "/good", 10 * KiB, 1);
  make_file(local + "/again", 20 * KiB, 2);
  make_file(root + "/again", 20 * KiB, 2);
  write_text(local + "/list", local + "/good " + server.url("good") + "\n" + local + "/missing " + server.url("m") + "\n" +
                                  local + "/again " + server.url("again") + "\n");
  auto r = run_pxfer("put", "--from-file", local + "/list", "--json", "--skip-existing");
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  auto all = events(r.out);
  EXPECT_EQ(count_events(all, "file_done"), 1u);
  EXPECT_EQ(count_events(all, "file_skipped"), 1u);
  ASSERT_EQ(count_events(all, "file_failed"), 1u);
  for (const auto& e : all)
    if (e.at("event") == "file_failed") {
      EXPECT_EQ(e.at("path"), local + "/missing");
      EXPECT_EQ(e.at("error").at("code"), 3);
    }
  const auto& summary = all.back();
  ASSERT_EQ(summary.at("event"), "batch_summary");
  EXPECT_EQ(summary.at("files"), 3);
  EXPECT_EQ(summary.at("done"), 1);
  EXPECT_EQ(summary.at("skipped"), 1);
  EXPECT_EQ(summary.at("failed"), 1);
  EXPECT_EQ(summary.at("exit_code"), 3);
  EXPECT_EQ(summary.at("failures").size(), 1u);
  EXPECT_EQ(count_lines_containing(r.err, "pxfer: FAILED " + local + "/missing"), 1u) << r.err;
}

TEST(AutoOptions, BadValuesAreOneLineUsageErrors) {
  TempDir dir;
  const std::string url = "pxfer://127.0.0.1:1/x/";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--auto", "--auto-interval", "soon"}, "--auto-interval soon"},
      {{"--auto", "--auto-interval", "10ms"}, "--auto-interval 10ms"},
      {{"--auto", "-c", "2", "--min-concurrency", "3"}, "--min-concurrency 3"},
      {{"--auto", "--min-concurrency", "0"}, "--min-concurrency 0"},
      {{"--min-concurrency", "2"}, "--min-concurrency needs --auto"},
      {{"--auto-interval", "1s"}, "--auto-interval needs --auto"},
      {{"--auto", "--auto-tolerance", "80"}, "--auto-tolerance"},
      {{"--auto", "--ramp-up", "2s"}, "--ramp-up and --auto do not mix"},
      {{"--auto", "-c", "65"}, "--concurrency 65"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args{"put", "-r"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(dir.path());
    args.push_back(url);
    auto r = run_pxfer_args(args);
    EXPECT_EQ(r.exit_code, 2) << extra.back() << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(count_lines_containing(r.err, "pxfer: "), 1u) << r.err;
    EXPECT_EQ(split_lines(r.err).size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace pxfer::e2e
