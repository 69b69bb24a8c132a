// pxfer report: NDJSON in, one self-contained HTML page out. The page must be well formed, fetch
// nothing, and show the input's own numbers.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <vector>

#include "pxfer/core/doctor.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/present/json_printer.hpp"
#include "pxfer/core/report_html.hpp"
#include "report/svg_chart.hpp"
#include "pxfer/core/report_model.hpp"

using namespace pxfer;
using namespace pxfer::report;

namespace {

std::string transfer_ndjson(const std::string& window) {
  return R"({"event":"start","direction":"put","source":"run42.root","dest":"pxfer://se01.example.org:7521/atlas/run42.root","bytes":314572800,"streams":3,"block_size":4194304}
{"event":"interval","bytes":104857600,"seconds":0.1,"avg_Bps":1.0e9,"inst_Bps":1.0e9,"streams":[{"stream":0,"bytes":60000000,"inst_Bps":6.0e8,"cwnd":18,"rtt_us":610,"retransmits":0,"send_q":3565158,"sndbuf":4194304,"mss":65483,"delivery_rate_Bps":0},{"stream":1,"bytes":40000000,"inst_Bps":4.0e8,"cwnd":10,"rtt_us":700,"retransmits":1,"send_q":2000,"sndbuf":4194304,"mss":65483,"delivery_rate_Bps":0},{"stream":2,"bytes":4857600,"inst_Bps":4.8e7,"cwnd":10,"rtt_us":500,"retransmits":0,"send_q":0,"sndbuf":4194304,"mss":65483,"delivery_rate_Bps":0}]}
{"event":"interval","bytes":209715200,"seconds":0.2,"avg_Bps":1.05e9,"inst_Bps":1.1e9,"streams":[{"stream":0,"bytes":120000000,"inst_Bps":6.0e8,"cwnd":20,"rtt_us":640,"retransmits":0,"send_q":3565158,"sndbuf":4194304,"mss":65483,"delivery_rate_Bps":0},{"stream":1,"bytes":80000000,"inst_Bps":4.0e8,"cwnd":12,"rtt_us":690,"retransmits":3,"send_q":1000,"sndbuf":4194304,"mss":65483,"delivery_rate_Bps":0},{"stream":2,"bytes":9715200,"inst_Bps":4.8e7,"cwnd":10,"rtt_us":510,"retransmits":0,"send_q":0,"sndbuf":4194304,"mss":65483,"delivery_rate_Bps":0}]}
{"event":"some_future_event","x":1}
{"event":"file_done","path":"pxfer://se01.example.org:7521/atlas/run42.root","bytes":314572800,"seconds":0.31,"rate_Bps":1.0026e9,"checksum":"adler32: 013c51cd"}
{"event":"summary","direction":"put","source":"run42.root","dest":"pxfer://se01.example.org:7521/atlas/run42.root","bytes":314572800,"seconds":0.31,"rate_Bps":1002600000,"rate_MBps":1002.6,"streams":3,"block_size":4194304,"congestion":"cubic","checksum":{"algorithm":"adler32","value":"013c51cd"},"buffers":{"local":{"requested":)" +
         window + R"(,"sndbuf":174760,"rcvbuf":131072},"remote":{"requested":)" + window +
         R"(,"sndbuf":174760,"rcvbuf":131072}},"warnings":[],"protection":"control TLS1.3 (TLS_AES_256_GCM_SHA384), data clear","identity":"alice","final":{"bytes":314572800,"seconds":0.31,"avg_Bps":1.0e9,"inst_Bps":1.0e9},"stream_totals":[{"stream":0,"bytes":180000000,"share":0.572,"avg_Bps":5.8e8,"retransmits":0,"intervals":2,"intervals_send_q":2},{"stream":1,"bytes":120000000,"share":0.381,"avg_Bps":3.9e8,"retransmits":3,"intervals":2,"intervals_send_q":2},{"stream":2,"bytes":14572800,"share":0.046,"avg_Bps":4.7e7,"retransmits":0,"intervals":2,"intervals_send_q":0}],"busy_streams":2}
)";
}

const char* batch_ndjson =
    R"({"event":"file_start","path":"tree/a.dat","dest":"pxfer://127.0.0.1:39799/d2/tree/a.dat","direction":"put","number":1,"planned":3,"streams":1,"started_s":0.0045}
{"event":"file_start","path":"tree/b.dat","dest":"pxfer://127.0.0.1:39799/d2/tree/b.dat","direction":"put","number":2,"planned":3,"streams":1,"started_s":0.01}
{"event":"file_done","path":"tree/a.dat","dest":"pxfer://127.0.0.1:39799/d2/tree/a.dat","direction":"put","bytes":8388608,"seconds":0.08,"rate_Bps":1.0e8,"rate_MBps":104.9,"streams":1,"checksum":"adler32: 5f1a0c3e","attempts":1,"started_s":0.0045,"finished_s":0.09,"finished":1,"planned":3}
{"event":"interval","bytes":12000000,"seconds":0.1,"avg_Bps":1.2e8,"inst_Bps":1.2e8,"in_flight":2,"target":2,"finished":1,"planned":3}
{"event":"file_start","path":"tree/c.dat","dest":"pxfer://127.0.0.1:39799/d2/tree/c.dat","direction":"put","number":3,"planned":3,"streams":1,"started_s":0.095}
{"event":"file_failed","path":"tree/b.dat","dest":"pxfer://127.0.0.1:39799/d2/tree/b.dat","direction":"put","error":{"code":5,"class":"network","message":"connection <lost>"},"attempts":1,"started_s":0.01,"finished_s":0.15,"finished":2,"planned":3}
{"event":"file_done","path":"tree/c.dat","dest":"pxfer://127.0.0.1:39799/d2/tree/c.dat","direction":"put","bytes":8388608,"seconds":0.1,"rate_Bps":8.0e7,"rate_MBps":83.9,"streams":1,"checksum":"adler32: 5f1a0c3f","attempts":1,"started_s":0.095,"finished_s":0.2,"finished":3,"planned":3}
{"event":"interval","bytes":25165824,"seconds":0.2,"avg_Bps":1.25e8,"inst_Bps":1.3e8,"in_flight":1,"target":2,"finished":3,"planned":3}
{"event":"batch_summary","files":3,"done":2,"skipped":0,"failed":1,"setup_errors":0,"bytes":16777216,"seconds":0.21,"rate_Bps":7.99e7,"rate_MBps":79.9,"rate_Gbps":0.64,"exit_code":5,"failures":[]}
)";

const char* sweep_ndjson =
    R"({"event":"sweep_cell","direction":"get","window":0,"congestion":"","compress":"none","files":1,"streams":1,"runs":1,"failures":0,"median_mbit":100.0,"rates_mbit":[100.0]}
{"event":"sweep_cell","direction":"get","window":0,"congestion":"","compress":"none","files":1,"streams":10,"runs":1,"failures":0,"median_mbit":640.5,"rates_mbit":[640.5]}
{"event":"sweep_cell","direction":"get","window":0,"congestion":"","compress":"none","files":10,"streams":1,"runs":1,"failures":2,"median_mbit":700.0,"rates_mbit":[700.0]}
{"event":"sweep_cell","direction":"get","window":0,"congestion":"","compress":"none","files":10,"streams":10,"runs":1,"failures":0,"median_mbit":912.25,"rates_mbit":[912.25]}
)";

// Every element closed in order (void elements and <x/> aside); returns "" or what went wrong.
std::string unbalanced_tags(const std::string& html) {
  static const std::set<std::string> void_elements = {"meta", "br", "hr", "img", "link", "input"};
  std::vector<std::string> open;
  std::size_t pos = 0;
  while ((pos = html.find('<', pos)) != std::string::npos) {
    auto end = html.find('>', pos);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(pos);
    std::string tag = html.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.empty() || tag[0] == '!') continue;
    const bool closing = tag[0] == '/';
    const bool self_closing = tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" \n/"));
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
    } else if (!self_closing && !void_elements.count(name)) {
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

std::string page_of(std::vector<report::Run> runs) { return render_page(std::move(runs), {"pxfer report", "2026-11-23T18:00:00Z"}); }

}  // namespace

TEST(ReportParse, TransferEventsFillTheModel) {
  report::Run r = parse_run(transfer_ndjson("87380"), "w87380.ndjson");
  EXPECT_EQ(r.meta.kind, RunKind::transfer);
  EXPECT_EQ(r.meta.direction, "put");
  EXPECT_EQ(r.meta.hosts, "se01.example.org:7521");
  EXPECT_DOUBLE_EQ(r.meta.bytes, 314572800);
  EXPECT_EQ(r.meta.streams, 3u);
  EXPECT_DOUBLE_EQ(r.meta.window_requested, 87380);
  EXPECT_EQ(r.meta.congestion, "cubic");
  ASSERT_EQ(r.rates.size(), 3u) << "two intervals and the summary's final sample";
  EXPECT_DOUBLE_EQ(r.rates[1].inst_Bps, 1.1e9);
  EXPECT_DOUBLE_EQ(r.rates[2].t, 0.31);
  EXPECT_EQ(r.streams.size(), 6u);
  EXPECT_EQ(r.stream_totals.size(), 3u);
  ASSERT_TRUE(r.meta.busy_streams);
  EXPECT_EQ(*r.meta.busy_streams, 2u);
  EXPECT_EQ(describe_options(r.meta), "put -p 3 -w 87380");
  EXPECT_EQ(describe_options(r.meta, true), "put -p 3 -w 87380 --congestion cubic");
}

TEST(ReportParse, BatchFilesHaveStartsAndEnds) {
  report::Run r = parse_run(batch_ndjson, "batch.ndjson");
  EXPECT_EQ(r.meta.kind, RunKind::batch);
  ASSERT_EQ(r.files.size(), 3u);
  EXPECT_EQ(r.files[1].path, "tree/b.dat");
  EXPECT_EQ(r.files[1].state, FileState::failed);
  EXPECT_DOUBLE_EQ(*r.files[1].end_s, 0.15);
  EXPECT_EQ(r.meta.files_done, 2u);
  EXPECT_EQ(r.meta.files_failed, 1u);
  EXPECT_EQ(r.meta.max_in_flight, 2u);
  EXPECT_FALSE(r.meta.ok);
}

TEST(ReportParse, BadInputSaysWhereAndWhat) {
  try {
    parse_run("{\"event\":\"start\"}\nnot json\n", "runs/a.ndjson");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("runs/a.ndjson:2: not JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_run("[1,2]\n", "x"), Error);
  EXPECT_THROW(parse_run("{\"no_event\":1}\n", "x"), Error);
  EXPECT_THROW(parse_run("", "empty.ndjson"), Error);
  EXPECT_THROW(parse_run("{\"event\":\"something_else\"}\n", "x"), Error) << "no known event at all";
}

TEST(ReportHtml, WellFormedSelfContainedAndNoScripts) {
  std::vector<report::Run> runs = {parse_run(transfer_ndjson("87380"), "a"), parse_run(batch_ndjson, "b"),
                           parse_run(sweep_ndjson, "c")};
  runs[1].files[0].path = "tree/<odd> & \"name\".dat";  // escaped, never markup
  const std::string html = page_of(runs);
  EXPECT_EQ(unbalanced_tags(html), "");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  std::string rest = html;
  for (std::size_t p; (p = rest.find("http://www.w3.org/2000/svg")) != std::string::npos;) rest.erase(p, 26);
  EXPECT_EQ(rest.find("http://"), std::string::npos);
  EXPECT_EQ(rest.find("https://"), std::string::npos);
  EXPECT_EQ(rest.find("url(http"), std::string::npos);
  EXPECT_NE(html.find("tree/&lt;odd&gt; &amp; &quot;name&quot;.dat"), std::string::npos);
  EXPECT_EQ(html.find("<odd>"), std::string::npos);
}

TEST(ReportHtml, ShowsTheInputsNumbers) {
  const std::string html = page_of({parse_run(transfer_ndjson("87380"), "a"), parse_run(sweep_ndjson, "s")});
  for (const char* expected : {"314572800 bytes", "1002.6 MB/s", "8.02 Gbit/s", "0.31 s", "cubic", "TLS_AES_256_GCM_SHA384",
                               "alice", "adler32: 013c51cd", "se01.example.org:7521", "4 MiB", "2 of 3",
                               "snd 170.7 KiB / rcv 128 KiB (asked 85.3 KiB)", "640.5", "912.2", "700.0",
                               "\xE2\x9C\x97 2 failed", "57.2%", "2 of 2"})
    EXPECT_NE(html.find(expected), std::string::npos) << expected;
  EXPECT_NE(html.find("rate (GB/s)"), std::string::npos) << "axes say their unit (1.1e9 B/s at the peak)";
  EXPECT_NE(html.find("time (s)"), std::string::npos);
  EXPECT_NE(html.find("#0072B2"), std::string::npos) << "Okabe-Ito colours";
}

TEST(ReportHtml, OverlaidRunsAreLabelledFromTheirOptions) {
  std::vector<report::Run> runs = {parse_run(transfer_ndjson("87380"), "small.ndjson"),
                           parse_run(transfer_ndjson("1048576"), "big.ndjson")};
  const std::string chart = aggregate_rate_chart([&] {
    auto copy = runs;
    label_runs(copy);
    return copy;
  }());
  EXPECT_NE(chart.find("put -p 3 -w 87380 avg"), std::string::npos);
  EXPECT_NE(chart.find("put -p 3 -w 1M inst"), std::string::npos);
  std::vector<report::Run> same = {parse_run(transfer_ndjson("0"), "one.ndjson"), parse_run(transfer_ndjson("0"), "two.ndjson")};
  label_runs(same);
  EXPECT_EQ(same[0].label, "put -p 3 -w 0 (one.ndjson)");
  EXPECT_EQ(same[1].label, "put -p 3 -w 0 (two.ndjson)");
}

TEST(ReportHtml, BatchMarksEveryFileStartAndEnd) {
  report::Run r = parse_run(batch_ndjson, "b");
  r.label = "batch";
  const std::string chart = aggregate_rate_chart({r});
  std::size_t marks = 0;
  for (std::size_t p = chart.find("class=\"file-marks\""); (p = chart.find("<path", p + 1)) != std::string::npos;) ++marks;
  EXPECT_EQ(marks, 6u) << "3 starts and 3 ends";
  const std::string lanes = files_chart(r);
  EXPECT_NE(lanes.find("url(#hatch)"), std::string::npos) << "the failed file is hatched";
  EXPECT_NE(lanes.find("connection &lt;lost&gt;"), std::string::npos);
}

TEST(ReportHtml, StreamChartsCoverRateCwndRttRetransmitsAndSendQ) {
  report::Run r = parse_run(transfer_ndjson("0"), "a");
  r.label = "x";
  auto charts = stream_charts(r);
  ASSERT_EQ(charts.size(), 5u);
  EXPECT_NE(charts[0].find("stacked"), std::string::npos);
  EXPECT_NE(charts[1].find("cwnd (segments)"), std::string::npos);
  EXPECT_NE(charts[2].find("RTT (\xC2\xB5s)"), std::string::npos);
  EXPECT_NE(charts[3].find("Retransmits"), std::string::npos);
  EXPECT_NE(charts[4].find("Send-Q (MiB)"), std::string::npos);
  for (const auto& c : charts) EXPECT_EQ(unbalanced_tags(c), "");
}

TEST(ReportDoctor, DoctorJsonBecomesAPathSection) {
  PathFacts f;
  f.rtt_s = 0.05;
  f.target_bytes_per_s = 10e9 / 8;
  f.local.tcp_rmem[2] = f.local.tcp_wmem[2] = 6u << 20;
  f.remote = f.local;
  f.local.congestion = f.remote.congestion = "cubic";
  const DoctorAdvice advice = advise(f);
  const std::string line = format_doctor_json("pxfer://se01.example.org:7521/", f, advice);
  report::Run r = parse_run(line + "\n", "doctor.ndjson");
  EXPECT_EQ(r.meta.kind, RunKind::doctor);
  EXPECT_EQ(r.meta.hosts, "se01.example.org:7521");
  ASSERT_TRUE(r.path);
  ASSERT_EQ(r.path->directions.size(), 2u);
  EXPECT_EQ(r.path->directions[0].streams_needed, advice.put.streams_needed);
  const std::string html = page_of({r});
  EXPECT_EQ(unbalanced_tags(html), "");
  EXPECT_NE(html.find("50.00 ms"), std::string::npos);
  EXPECT_NE(html.find("streams for the target: " + std::to_string(advice.get.streams_needed)), std::string::npos);
  ASSERT_FALSE(advice.put.advice.empty());
  EXPECT_NE(html.find(xml_escape(advice.put.advice[0])), std::string::npos);
}

TEST(ReportHtml, ManyRunsOrFilesStayReadable) {
  std::vector<report::Run> runs;
  for (char i = '0'; i < '6'; ++i) {
    runs.push_back(parse_run(batch_ndjson, std::string("b") + i));
    runs.back().label = std::string("run ") + i;
  }
  std::string chart = aggregate_rate_chart(runs);
  EXPECT_NE(chart.find("run 5 avg"), std::string::npos);
  EXPECT_EQ(chart.find(" inst</text>"), std::string::npos) << "six runs: the avg lines only";
  report::Run many = parse_run(batch_ndjson, "many");
  many.label = "many";
  for (int i = 0; i < 500; ++i) {
    std::string name = "f";
    name += std::to_string(i);
    many.files.push_back({name, 0.01 * i, 0.01 * i + 0.5, FileState::done, 1, ""});
  }
  chart = aggregate_rate_chart({many});
  EXPECT_EQ(chart.find("file-marks"), std::string::npos) << "503 files: the files chart marks them instead";
  EXPECT_NE(chart.find("many inst"), std::string::npos);
  const std::string lanes = files_chart(many);
  EXPECT_EQ(unbalanced_tags(lanes), "");
  EXPECT_LT(lanes.size(), 503u * 400) << "one small rect per file";
}

// -p auto says what it chose and why: in the --json summary, in its "streams" events, and so in
// pxfer report's "streams" rows.
TEST(ReportParse, AutoStreamsChoiceAndStepsReachThePage) {
  TransferSummary s;
  s.bytes = 1 << 20;
  s.seconds = 1;
  s.streams = 24;
  s.stream_choice = "auto 24 (RTT 50 ms, loss 0.011 %, aggregate stopped growing at 24: 236 -> 241 Mbit/s)";
  const std::string summary = json_summary(IntervalReport{}, s);
  EXPECT_NE(summary.find("\"streams_auto\":\"auto 24 (RTT 50 ms"), std::string::npos) << summary;
  const std::string ndjson = R"({"event":"start","direction":"get","source":"pxfer://h:1/f","dest":"f","bytes":1048576,"streams":64,"block_size":2097152}
)" + json_streams_changed("streams: 4 -> 8 streams (first measurement with 4 streams: 112 Mbit/s)") + "\n" + summary + "\n";
  report::Run r = parse_run(ndjson, "auto.ndjson");
  EXPECT_EQ(r.meta.stream_choice, s.stream_choice);
  ASSERT_EQ(r.meta.stream_steps.size(), 1u);
  EXPECT_EQ(r.meta.stream_steps[0], "streams: 4 -> 8 streams (first measurement with 4 streams: 112 Mbit/s)");
  const std::string html = page_of({r});
  EXPECT_NE(html.find("aggregate stopped growing at 24: 236 -&gt; 241 Mbit/s"), std::string::npos);
  EXPECT_NE(html.find("streams added and retired"), std::string::npos);
  EXPECT_EQ(s.streams, 24);
}

// Send buffers pinned past autotuning (core/send_window.hpp): the summary's send_window reaches the
// page; the streams' own lines are not auto's steps.
TEST(ReportParse, SendBuffersPastAutotuningReachThePage) {
  TransferSummary s;
  s.bytes = 1 << 20;
  s.seconds = 1;
  s.send_window = "pinned on 2 streams, up to 8 MiB; the first: send buffer pinned at 8 MiB, was 4 MiB: it held the "
                  "stream 93 % of the time, RTT 150 ms";
  const std::string summary = json_summary(IntervalReport{}, s);
  EXPECT_NE(summary.find("\"send_window\":\"pinned on 2 streams, up to 8 MiB"), std::string::npos) << summary;
  const std::string ndjson = R"({"event":"start","direction":"put","source":"f","dest":"pxfer://h:1/f","bytes":1048576,"streams":2,"block_size":2097152}
)" + json_streams_changed("stream 0: send buffer pinned at 8 MiB, was 4 MiB: it held the stream 93 % of the time, RTT 150 ms") +
                             "\n" + summary + "\n";
  report::Run r = parse_run(ndjson, "window.ndjson");
  EXPECT_EQ(r.meta.send_window, s.send_window);
  EXPECT_TRUE(r.meta.stream_steps.empty());
  const std::string html = page_of({r});
  EXPECT_NE(html.find("send buffers past autotuning"), std::string::npos);
  EXPECT_NE(html.find("pinned on 2 streams, up to 8 MiB"), std::string::npos);
}

// The end of the file (cap_block_copies): the copies and the streams let go reach the summary and
// pxfer report's page; a transfer that needed none shows no row.
TEST(ReportParse, BlocksSentTwiceReachThePage) {
  TransferSummary s;
  s.bytes = 1 << 20;
  s.seconds = 1;
  s.block_copies = 7;
  s.streams_let_go = 2;
  const std::string summary = json_summary(IntervalReport{}, s);
  EXPECT_NE(summary.find("\"block_copies\":7"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"streams_let_go\":2"), std::string::npos) << summary;
  const std::string start = R"({"event":"start","direction":"put","source":"f","dest":"pxfer://h:1/f","bytes":1048576,"streams":4,"block_size":2097152}
)";
  report::Run r = parse_run(start + summary + "\n", "copies.ndjson");
  EXPECT_EQ(r.meta.block_copies, 7);
  EXPECT_EQ(r.meta.streams_let_go, 2);
  EXPECT_NE(page_of({r}).find("7 copies of overdue blocks, 2 slow streams let go"), std::string::npos);
  s.block_copies = s.streams_let_go = 0;
  report::Run none = parse_run(start + json_summary(IntervalReport{}, s) + "\n", "none.ndjson");
  EXPECT_EQ(page_of({none}).find("end of the file"), std::string::npos);
}
