// One observer for single and many-file runs (issue 10.5): the tee passes every event of both
// kinds to the display and the recorder, and the text and JSON printers take a batch's events
// through the same interface as a transfer's.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "pxfer/present/batch_printer.hpp"
#include "pxfer/present/json_printer.hpp"
#include "pxfer/present/report_recorder.hpp"

namespace pxfer {
namespace {

struct Log final : ProgressListener {
  std::vector<std::string> seen;
  void on_start(const TransferSummary&) override { seen.push_back("start"); }
  void on_interval(const IntervalReport& r) override { seen.push_back("interval:" + std::to_string(r.streams.size())); }
  void on_retry(unsigned, unsigned, double, const std::string&) override { seen.push_back("retry"); }
  void on_file_start(const BatchFile&, std::size_t, std::size_t, std::uint16_t, double) override { seen.push_back("file_start"); }
  void on_file(const FileOutcome&, std::size_t, std::size_t) override { seen.push_back("file"); }
  void on_batch_interval(const BatchInterval&) override { seen.push_back("batch_interval"); }
  void on_decision(const AutoDecision&) override { seen.push_back("decision"); }
};

FileOutcome done_file() {
  FileOutcome o;
  o.file.direction = Direction::put;
  o.file.local = "/data/a.bin";
  o.status = FileStatus::done;
  o.summary.bytes = 1000;
  o.summary.seconds = 0.5;
  return o;
}

// Reads what a printer wrote to a temporary FILE*.
std::string text_of(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  return out;
}

TEST(ProgressListener, TheTeePassesSingleAndBatchEventsToBoth) {
  Log display, recorder;
  ListenerTee tee(&display, &recorder, /*hide_streams=*/true);
  ProgressListener& l = tee;
  l.on_start(TransferSummary{});
  IntervalReport r;
  r.streams.resize(2);
  l.on_interval(r);
  l.on_retry(2, 3, 1.0, "reset");
  l.on_file_start(BatchFile{}, 1, 2, 4, 0.0);
  l.on_file(done_file(), 1, 2);
  l.on_batch_interval(BatchInterval{});
  l.on_decision(AutoDecision{});
  const std::vector<std::string> all{"start", "interval:2", "retry", "file_start", "file", "batch_interval", "decision"};
  EXPECT_EQ(recorder.seen, all);
  // The display was not asked for per-stream figures: it gets the interval without them.
  EXPECT_EQ(display.seen[1], "interval:0");
  EXPECT_EQ(display.seen.size(), all.size());
}

TEST(ProgressListener, TheTextBatchPrinterPrintsAFileLineThroughTheCommonInterface) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  BatchPrinter printer(out, err, /*quiet=*/false);
  ProgressListener& l = printer;
  l.on_file(done_file(), 1, 3);
  FileOutcome failed = done_file();
  failed.status = FileStatus::failed;
  failed.error = Error(Errc::local_io, "disk full");
  l.on_file(failed, 2, 3);
  EXPECT_EQ(text_of(out).rfind("done /data/a.bin 1000 bytes", 0), 0u) << text_of(out);
  EXPECT_NE(text_of(out).find("[1/3]"), std::string::npos);
  EXPECT_EQ(text_of(err), "pxfer: FAILED /data/a.bin: disk full [2/3]\n");
  std::fclose(out);
  std::fclose(err);
}

TEST(ProgressListener, TheJsonPrinterTakesBatchEventsToo) {
  std::FILE* out = std::tmpfile();
  JsonPrinter printer(out);
  ProgressListener& l = printer;
  l.on_file(done_file(), 1, 1);
  const std::string text = text_of(out);
  EXPECT_NE(text.find("\"event\":\"file_done\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"path\":\"/data/a.bin\""), std::string::npos) << text;
  std::fclose(out);
}

}  // namespace
}  // namespace pxfer
