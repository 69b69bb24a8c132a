// The per-stream view: rates per interval, shares, and "streams with data queued".
#include <gtest/gtest.h>

#include "pxfer/present/json_printer.hpp"
#include "pxfer/present/progress_printer.hpp"
#include "pxfer/core/stream_meter.hpp"

using namespace pxfer;
using namespace std::chrono_literals;

namespace {
StreamFigures fig(std::uint16_t stream, std::uint64_t bytes, std::uint32_t unsent) {
  StreamFigures f;
  f.stream = stream;
  f.bytes = bytes;
  f.unsent = unsent;
  f.cwnd = 10;
  f.rtt_us = 50000;
  return f;
}
}  // namespace

TEST(StreamMeter, RatesSharesAndBusyStreams) {
  auto t0 = Clock::time_point{};
  StreamMeter m(t0);
  // Like the Manchester -> BNL case: of 3 streams only stream 0 keeps data queued.
  auto s1 = m.sample(t0 + 1s, {fig(0, 1000, 5000), fig(1, 100, 0), fig(2, 100, 0)});
  ASSERT_EQ(s1.size(), 3u);
  EXPECT_DOUBLE_EQ(s1[0].inst_bytes_per_s, 1000);
  auto s2 = m.sample(t0 + 2s, {fig(0, 3000, 7000), fig(1, 200, 10), fig(2, 200, 0)});
  EXPECT_DOUBLE_EQ(s2[0].inst_bytes_per_s, 2000);
  EXPECT_DOUBLE_EQ(s2[1].inst_bytes_per_s, 100);
  auto totals = m.totals(t0 + 2s);
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_EQ(totals[0].bytes, 3000u);
  EXPECT_NEAR(totals[0].share, 3000.0 / 3400, 1e-9);
  EXPECT_DOUBLE_EQ(totals[0].avg_bytes_per_s, 1500);
  EXPECT_EQ(totals[0].intervals_queued, 2u);
  EXPECT_EQ(totals[1].intervals_queued, 1u);
  EXPECT_EQ(StreamMeter::busy_streams(totals), 2u);  // stream 1 had a queue in 1 of 2 intervals
}

TEST(StreamMeter, TextAndJsonCarryTheSameFigures) {
  StreamSample s{fig(3, 12582912, 1258291), 12.58e6};
  std::string line = format_stream_line(s);
  EXPECT_NE(line.find("stream  3"), std::string::npos);
  EXPECT_NE(line.find("12582912 bytes"), std::string::npos);
  EXPECT_NE(line.find("12.58 MB/s"), std::string::npos);
  EXPECT_NE(line.find("rtt    50.00 ms"), std::string::npos);
  IntervalReport r{RateSample{12582912, 1.0, 12582912, 12582912}, {s}};
  std::string json = json_interval(r);
  EXPECT_NE(json.find("\"event\":\"interval\""), std::string::npos);
  EXPECT_NE(json.find("\"send_q\":1258291"), std::string::npos);
  EXPECT_NE(json.find("\"stream\":3"), std::string::npos);
  EXPECT_NE(json.find("\"bytes\":12582912"), std::string::npos);
}

TEST(StreamMeter, SummaryJsonHasTotalsAndBusyStreams) {
  TransferSummary s;
  s.bytes = 100;
  s.seconds = 2;
  s.streams = 2;
  s.stream_totals = {StreamTotals{0, 60, 0.6, 30, 1, 4, 4}, StreamTotals{1, 40, 0.4, 20, 0, 4, 0}};
  std::string json = json_summary(IntervalReport{}, s);
  EXPECT_NE(json.find("\"event\":\"summary\""), std::string::npos);
  EXPECT_NE(json.find("\"busy_streams\":1"), std::string::npos);
  EXPECT_NE(json.find("\"rate_Bps\":50.0"), std::string::npos);
}
