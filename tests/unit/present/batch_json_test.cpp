// -r/--from-file --json: every batch event encoder produces one line of valid JSON with the
// fields docs/json.md promises.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pxfer/present/json_printer.hpp"

using namespace pxfer;
using nlohmann::json;

namespace {

BatchFile put_file_entry() {
  BatchFile f;
  f.direction = Direction::put;
  f.local = "tree/a.dat";
  f.remote = *parse_url("pxfer://se01:7521/dest/tree/a.dat");
  return f;
}

json parsed(const std::string& line) {
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one event, one line";
  return json::parse(line);
}

}  // namespace

TEST(BatchJson, FileStartNamesSourceDestAndStreams) {
  auto j = parsed(json_batch_file_start(put_file_entry(), 3, 40, 4, 0.25));
  EXPECT_EQ(j["event"], "file_start");
  EXPECT_EQ(j["path"], "tree/a.dat");
  EXPECT_EQ(j["dest"], "pxfer://se01:7521/dest/tree/a.dat");
  EXPECT_EQ(j["direction"], "put");
  EXPECT_EQ(j["number"], 3);
  EXPECT_EQ(j["planned"], 40);
  EXPECT_EQ(j["streams"], 4);
  EXPECT_DOUBLE_EQ(j["started_s"].get<double>(), 0.25);
  EXPECT_FALSE(j.contains("bytes")) << "a put's size is not known to the plan";

  BatchFile get;
  get.direction = Direction::get;
  get.local = "back/a.dat";
  get.remote = *parse_url("pxfer://se01/tree/a.dat");
  get.source_size = 1234;
  auto g = parsed(json_batch_file_start(get, 1, 1, 2, 0));
  EXPECT_EQ(g["path"], "pxfer://se01:7521/tree/a.dat");
  EXPECT_EQ(g["dest"], "back/a.dat");
  EXPECT_EQ(g["bytes"], 1234);
}

TEST(BatchJson, DoneSkippedAndFailedFiles) {
  FileOutcome done{put_file_entry(), FileStatus::done, {}, std::nullopt, 1};
  done.summary.bytes = 4000000;
  done.summary.seconds = 2;
  done.summary.streams = 4;
  done.summary.checksum = ChecksumAlgo::adler32;
  done.summary.checksum_value = "0a3c1f2e";
  done.started_s = 1.5;
  done.finished_s = 9.25;
  auto d = parsed(json_batch_file(done, 7, 40));
  EXPECT_DOUBLE_EQ(d["finished_s"].get<double>(), 9.25);
  EXPECT_EQ(d["event"], "file_done");
  EXPECT_EQ(d["path"], "tree/a.dat");
  EXPECT_EQ(d["bytes"], 4000000);
  EXPECT_DOUBLE_EQ(d["seconds"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(d["rate_Bps"].get<double>(), 2e6);
  EXPECT_DOUBLE_EQ(d["rate_MBps"].get<double>(), 2);
  EXPECT_EQ(d["checksum"], "adler32: 0a3c1f2e");
  EXPECT_EQ(d["finished"], 7);
  EXPECT_EQ(d["planned"], 40);
  EXPECT_EQ(d["attempts"], 1);

  FileOutcome skipped{put_file_entry(), FileStatus::skipped, {}, std::nullopt, 1};
  EXPECT_EQ(parsed(json_batch_file(skipped, 1, 1))["event"], "file_skipped");

  FileOutcome failed{put_file_entry(), FileStatus::failed, {}, Error(Errc::network, "connection lost \"x\""), 3};
  auto f = parsed(json_batch_file(failed, 2, 2));
  EXPECT_EQ(f["event"], "file_failed");
  EXPECT_EQ(f["attempts"], 3);
  EXPECT_EQ(f["error"]["code"], 5);
  EXPECT_EQ(f["error"]["class"], "network");
  EXPECT_EQ(f["error"]["message"], "connection lost \"x\"");
}

TEST(BatchJson, AggregateInterval) {
  BatchInterval i{RateSample{1000, 2, 500, 250}, 3, 4, 10, 40};
  auto j = parsed(json_batch_interval(i));
  EXPECT_EQ(j["event"], "interval");
  EXPECT_EQ(j["bytes"], 1000);
  EXPECT_DOUBLE_EQ(j["avg_Bps"].get<double>(), 500);
  EXPECT_DOUBLE_EQ(j["inst_Bps"].get<double>(), 250);
  EXPECT_EQ(j["in_flight"], 3);
  EXPECT_EQ(j["target"], 4);
  EXPECT_EQ(j["finished"], 10);
  EXPECT_EQ(j["planned"], 40);
}

TEST(BatchJson, AutoDecision) {
  AutoDecision d;
  d.at_s = 5;
  d.action = AutoAction::more_files;
  d.from = 3;
  d.to = 4;
  d.streams_from = d.streams_to = 4;
  d.rate_Bps = 420e6;
  d.smoothed_Bps = 412.3e6;
  d.change = 0.061;
  d.succeeded = 6;
  d.reason = "rate rose";
  auto j = parsed(json_auto_decision(d));
  EXPECT_EQ(j["event"], "auto");
  EXPECT_EQ(j["action"], "more_files");
  EXPECT_EQ(j["from"], 3);
  EXPECT_EQ(j["to"], 4);
  EXPECT_DOUBLE_EQ(j["change"].get<double>(), 0.061);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["reason"], "rate rose");
  EXPECT_EQ(j["text"], "auto: 3 -> 4 files in flight (rate 412.3 MB/s avg, up 6.1%, 0 failures; rate rose)");
  d.change.reset();
  EXPECT_TRUE(parsed(json_auto_decision(d))["change"].is_null()) << "the baseline has nothing to compare with";
}

TEST(BatchJson, SummaryCountsAndFailures) {
  BatchReport r;
  r.planned = 4;
  r.files.push_back({put_file_entry(), FileStatus::done, {}, std::nullopt, 1});
  r.files.push_back({put_file_entry(), FileStatus::done, {}, std::nullopt, 1});
  r.files.push_back({put_file_entry(), FileStatus::skipped, {}, std::nullopt, 1});
  r.files.push_back({put_file_entry(), FileStatus::failed, {}, Error(Errc::not_found, "tree/a.dat: no such file"), 1});
  r.setup_errors.emplace_back(Errc::permission, "cannot create directory x");
  r.skipped = 1;
  r.failed = 1;
  r.bytes = 3000;
  r.seconds = 1.5;
  r.first_failure = Errc::permission;
  auto j = parsed(json_batch_summary(r));
  EXPECT_EQ(j["event"], "batch_summary");
  EXPECT_EQ(j["files"], 4);
  EXPECT_EQ(j["done"], 2);
  EXPECT_EQ(j["skipped"], 1);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["setup_errors"], 1);
  EXPECT_EQ(j["bytes"], 3000);
  EXPECT_DOUBLE_EQ(j["rate_Bps"].get<double>(), 2000);
  EXPECT_EQ(j["exit_code"], 4);
  ASSERT_EQ(j["failures"].size(), 2u);
  EXPECT_TRUE(j["failures"][0]["path"].is_null());
  EXPECT_EQ(j["failures"][1]["path"], "tree/a.dat");
  EXPECT_EQ(j["failures"][1]["error"]["class"], "not-found");
}
