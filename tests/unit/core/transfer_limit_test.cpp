// What limited a transfer (issue 37, point 8): crafted figures for each limit, through the pure
// rule (transfer_limit.hpp) and through `pxfer report`'s reading of a run's NDJSON.
#include <gtest/gtest.h>

#include <algorithm>

#include "pxfer/core/report_html.hpp"
#include "pxfer/core/transfer_limit.hpp"

using namespace pxfer;

namespace {

// 1 GiB over 4 streams in 10 s on a 20 ms path, nothing remarkable yet.
LimitEvidence plain() {
  LimitEvidence e;
  e.put = true;
  e.seconds = 10;
  e.bytes = 1024.0 * 1024 * 1024;
  e.streams = 4;
  e.busy_streams = 1;
  e.mss = 1448;
  e.rtt_s = 0.020;
  e.cwnd_segments = 400;
  e.cpu_s = 2.0;
  return e;
}

bool says(const Limit& l, const std::string& text) { return l.sentence.find(text) != std::string::npos; }

}  // namespace

TEST(TransferLimit, IdleStreamsMeanTheDisks) {
  const Limit l = likely_limit(plain());
  EXPECT_EQ(l.kind, LimitKind::disk) << l.sentence;
  EXPECT_TRUE(says(l, "this host's reads, or the server's writes")) << l.sentence;
  EXPECT_NE(l.evidence.find("busy streams 1 of 4"), std::string::npos) << l.evidence;
  LimitEvidence get = plain();
  get.put = false;
  EXPECT_TRUE(says(likely_limit(get), "the server's reads, or this host's writes"));
}

TEST(TransferLimit, BusyStreamsMeanTheWindow) {
  LimitEvidence e = plain();
  e.busy_streams = 4;
  const Limit l = likely_limit(e);
  EXPECT_EQ(l.kind, LimitKind::window) << l.sentence;
  EXPECT_TRUE(says(l, "-w")) << l.sentence;
  // 400 segments x 1448 bytes / 20 ms x 4 streams = 115.8 MB/s
  EXPECT_NE(l.evidence.find("window cap 115.8 MB/s"), std::string::npos) << l.evidence;
}

TEST(TransferLimit, RetransmitsMeanLoss) {
  LimitEvidence e = plain();
  e.busy_streams = 4;
  e.retransmits = e.bytes / 1448 * 0.02;  // 2 % of the segments
  const Limit l = likely_limit(e);
  EXPECT_EQ(l.kind, LimitKind::loss) << l.sentence;
  EXPECT_TRUE(says(l, "2.00 %")) << l.sentence;
}

TEST(TransferLimit, ALongWaitMeansTheQueue) {
  LimitEvidence e = plain();
  e.queue_wait_s = 30;
  e.queued = true;
  const Limit l = likely_limit(e);
  EXPECT_EQ(l.kind, LimitKind::queue) << l.sentence;
  EXPECT_TRUE(says(l, "30.0 s")) << l.sentence;
  e.queue_wait_s = 0.5;  // a short wait is not the limit
  EXPECT_NE(likely_limit(e).kind, LimitKind::queue);
}

TEST(TransferLimit, ASaturatedCoreMeansCpu) {
  LimitEvidence e = plain();
  e.cpu_s = 9.8;
  const Limit l = likely_limit(e);
  EXPECT_EQ(l.kind, LimitKind::cpu) << l.sentence;
  EXPECT_NE(l.evidence.find("CPU 0.98 s per s"), std::string::npos) << l.evidence;
}

TEST(TransferLimit, WithoutStreamFiguresItSaysSo) {
  LimitEvidence e = plain();
  e.busy_streams.reset();
  e.cpu_s = 1;
  const Limit l = likely_limit(e);
  EXPECT_EQ(l.kind, LimitKind::unknown);
  EXPECT_TRUE(says(l, "--stream-stats")) << l.sentence;
}

// The report reads the same figures from a run's events: a batch whose files waited most of their
// time is limited by the queue; a single put with busy streams and retransmits by loss.
TEST(TransferLimit, ReportReadsTheRunsFiguresAndDrawsTheFinalRates) {
  const std::string batch =
      R"({"event":"file_start","path":"a","dest":"pxfer://h:1/a","direction":"put","number":1,"planned":2,"streams":2,"started_s":0}
{"event":"file_done","path":"a","dest":"pxfer://h:1/a","direction":"put","bytes":100000000,"seconds":1,"rate_Bps":1e8,"streams":2,"checksum":"adler32: 1","attempts":1,"started_s":0,"finished_s":9,"finished":1,"planned":2}
{"event":"batch_summary","files":1,"done":1,"skipped":0,"failed":0,"setup_errors":0,"bytes":100000000,"seconds":9,"rate_Bps":1.1e7,"exit_code":0,"failures":[],"cpu_s":0.5}
)";
  const std::string lossy =
      R"({"event":"start","direction":"put","source":"x","dest":"pxfer://h:1/x","bytes":100000000,"streams":2,"block_size":4194304}
{"event":"interval","bytes":100000000,"seconds":1,"avg_Bps":1e8,"inst_Bps":1e8,"streams":[{"stream":0,"bytes":5e7,"inst_Bps":5e7,"cwnd":10,"rtt_us":20000,"retransmits":900,"send_q":100000,"sndbuf":4194304,"mss":1448},{"stream":1,"bytes":5e7,"inst_Bps":5e7,"cwnd":10,"rtt_us":20000,"retransmits":800,"send_q":100000,"sndbuf":4194304,"mss":1448}]}
{"event":"summary","direction":"put","bytes":100000000,"seconds":1,"rate_Bps":1e8,"streams":2,"busy_streams":2,"stream_totals":[{"stream":0,"bytes":5e7,"share":0.5,"intervals":1,"intervals_send_q":1},{"stream":1,"bytes":5e7,"share":0.5,"intervals":1,"intervals_send_q":1}],"cpu_s":0.2}
)";
  std::vector<report::Run> runs{report::parse_run(batch, "batch.ndjson"), report::parse_run(lossy, "lossy.ndjson")};
  EXPECT_EQ(likely_limit(report::limit_evidence(runs[0])).kind, LimitKind::queue);
  EXPECT_EQ(likely_limit(report::limit_evidence(runs[1])).kind, LimitKind::loss);
  report::label_runs(runs);
  const std::string section = report::limits_section(runs);
  EXPECT_NE(section.find("What limited it"), std::string::npos);
  EXPECT_NE(section.find("admission queue"), std::string::npos) << section;
  EXPECT_NE(section.find("packet loss"), std::string::npos) << section;
  EXPECT_EQ(std::count(section.begin(), section.end(), '\n') > 0, true);
  std::size_t bars = 0;
  for (std::size_t at = section.find("class=\"final-rate\""); at != std::string::npos; at = section.find("class=\"final-rate\"", at + 1))
    ++bars;
  EXPECT_EQ(bars, 2u) << "one final-rate bar per run";
  EXPECT_NE(section.find("100.0 MB/s"), std::string::npos) << section;
}
