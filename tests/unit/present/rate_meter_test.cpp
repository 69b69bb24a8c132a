// RateMeter's average and instantaneous rates, driven by made-up time points, and the text it
// becomes: the globus-url-copy -vb rate line and the end-of-transfer summary.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "pxfer/present/progress_printer.hpp"
#include "pxfer/core/rate_meter.hpp"

namespace pxfer {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1000);

TEST(RateMeter, AverageSinceStartAndInstantOverLastInterval) {
  RateMeter meter(t0);

  RateSample s1 = meter.sample(t0 + seconds(2), 2048);
  EXPECT_EQ(s1.bytes, 2048u);
  EXPECT_DOUBLE_EQ(s1.seconds, 2.0);
  EXPECT_DOUBLE_EQ(s1.avg_bytes_per_s, 1024.0);
  EXPECT_DOUBLE_EQ(s1.inst_bytes_per_s, 1024.0);  // first interval starts at the start

  RateSample s2 = meter.sample(t0 + seconds(4), 6144);
  EXPECT_DOUBLE_EQ(s2.seconds, 4.0);
  EXPECT_DOUBLE_EQ(s2.avg_bytes_per_s, 1536.0);   // 6144 / 4
  EXPECT_DOUBLE_EQ(s2.inst_bytes_per_s, 2048.0);  // 4096 / 2

  RateSample s3 = meter.sample(t0 + milliseconds(4500), 6144);
  EXPECT_DOUBLE_EQ(s3.avg_bytes_per_s, 6144 / 4.5);
  EXPECT_DOUBLE_EQ(s3.inst_bytes_per_s, 0.0);  // stalled

  RateSample s4 = meter.sample(t0 + milliseconds(4750), 6144 + 1'000'000);
  EXPECT_DOUBLE_EQ(s4.inst_bytes_per_s, 4'000'000.0);  // 1e6 bytes in 0.25 s
}

TEST(RateMeter, SampleAtTheStartIsZero) {
  RateMeter meter(t0);
  RateSample s = meter.sample(t0, 0);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.seconds, 0.0);
  EXPECT_EQ(s.avg_bytes_per_s, 0.0);
  EXPECT_EQ(s.inst_bytes_per_s, 0.0);
}

TEST(RateMeter, EmptyIntervalOrCounterGoingBackFallsBackToAverage) {
  RateMeter meter(t0);
  meter.sample(t0 + seconds(1), 1000);
  // Same instant again: no interval to divide by.
  RateSample same = meter.sample(t0 + seconds(1), 3000);
  EXPECT_DOUBLE_EQ(same.inst_bytes_per_s, same.avg_bytes_per_s);
  EXPECT_DOUBLE_EQ(same.avg_bytes_per_s, 3000.0);
  // A counter that went backwards (never expected) does not produce a huge unsigned rate.
  RateSample back = meter.sample(t0 + seconds(2), 500);
  EXPECT_DOUBLE_EQ(back.inst_bytes_per_s, back.avg_bytes_per_s);
  EXPECT_DOUBLE_EQ(back.avg_bytes_per_s, 250.0);
}

TEST(RateLine, GlobusUrlCopyFormat) {
  RateSample s;
  s.bytes = 47054848;
  s.avg_bytes_per_s = 511.15 * 1024;
  s.inst_bytes_per_s = 522.27 * 1024;
  EXPECT_EQ(format_rate_line(s), "    47054848 bytes    511.15 KB/sec avg    522.27 KB/sec inst");
}

TEST(RateLine, WidthsGrowButNeverTruncate) {
  RateSample zero;
  EXPECT_EQ(format_rate_line(zero), "           0 bytes      0.00 KB/sec avg      0.00 KB/sec inst");
  RateSample big;
  big.bytes = 18446744073709551615ull;
  big.avg_bytes_per_s = 1.25e9 * 1024;  // 1.25e9 KB/s: wider than 9 characters
  big.inst_bytes_per_s = 1024;
  EXPECT_EQ(format_rate_line(big), "18446744073709551615 bytes 1250000000.00 KB/sec avg      1.00 KB/sec inst");
}

TEST(RateLine, ParseRoundTrips) {
  RateSample s;
  s.bytes = 47054848;
  s.avg_bytes_per_s = 511.15 * 1024;
  s.inst_bytes_per_s = 522.27 * 1024;
  auto parsed = parse_rate_line(format_rate_line(s));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->bytes, s.bytes);
  EXPECT_NEAR(parsed->avg_bytes_per_s, s.avg_bytes_per_s, 0.005 * 1024);
  EXPECT_NEAR(parsed->inst_bytes_per_s, s.inst_bytes_per_s, 0.005 * 1024);
  // And printing the parsed sample gives the same line back.
  EXPECT_EQ(format_rate_line(*parsed), format_rate_line(s));

  // Values that print with more precision than the line keeps come back to within 0.005 KB/s.
  RateSample odd;
  odd.bytes = 123456789012ull;
  odd.avg_bytes_per_s = 987654.321;
  odd.inst_bytes_per_s = 0.4;
  auto p2 = parse_rate_line(format_rate_line(odd));
  ASSERT_TRUE(p2);
  EXPECT_EQ(p2->bytes, odd.bytes);
  EXPECT_NEAR(p2->avg_bytes_per_s, odd.avg_bytes_per_s, 0.005 * 1024);
  EXPECT_NEAR(p2->inst_bytes_per_s, odd.inst_bytes_per_s, 0.005 * 1024);
}

TEST(RateLine, ParseAcceptsGlobusLinesAsTheyAppearInLogs) {
  // A \r-redrawn line as captured from a terminal, and one without the leading padding.
  auto a = parse_rate_line("\r    47054848 bytes    511.15 KB/sec avg    522.27 KB/sec inst");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bytes, 47054848u);
  EXPECT_DOUBLE_EQ(a->avg_bytes_per_s, 511.15 * 1024);
  auto b = parse_rate_line("1 bytes 2.00 KB/sec avg 3.00 KB/sec inst");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->bytes, 1u);
  EXPECT_DOUBLE_EQ(b->avg_bytes_per_s, 2048.0);
  EXPECT_DOUBLE_EQ(b->inst_bytes_per_s, 3072.0);
}

TEST(RateLine, ParseRejectsGarbage) {
  for (const char* line : {
           "",
           "   ",
           "garbage",
           "Source: file:///tmp/x",
           "47054848",
           "47054848 bytes",
           "47054848 bytes 511.15 KB/sec avg",
           "47054848 bytes 511.15 KB/sec avg 522.27 KB/sec",      // cut before "inst"
           "47054848 bytes 511.15 KB/sec avg 522.27 KB/sec ins",  // cut inside "inst"
           "47054848 bytes 511.15 MB/sec avg 522.27 MB/sec inst", // other unit
           "47054848 bytes avg 522.27 KB/sec inst",
           "bytes 511.15 KB/sec avg 522.27 KB/sec inst",
           "x47054848 bytes 511.15 KB/sec avg 522.27 KB/sec inst",
       }) {
    EXPECT_FALSE(parse_rate_line(line)) << '"' << line << '"';
  }
}

TEST(RateUnits, MegabytesAndGigabits) {
  EXPECT_DOUBLE_EQ(to_megabytes_per_s(1e6), 1.0);
  EXPECT_DOUBLE_EQ(to_megabytes_per_s(1167110678.26), 1167.11067826);
  EXPECT_DOUBLE_EQ(to_gigabits_per_s(1.25e9), 10.0);
  EXPECT_DOUBLE_EQ(to_gigabits_per_s(0), 0.0);
}

TransferSummary example_summary() {
  TransferSummary s;
  s.bytes = 1073741824;
  s.seconds = 0.92;
  s.streams = 4;
  s.block_size = 4u << 20;
  s.local_buffers = BufferGrant{0, 2626560, 131072, ""};
  s.remote_buffers = BufferGrant{8u << 20, 16u << 20, 16u << 20, ""};
  return s;
}

TEST(Summary, NamesBytesSecondsRatesStreamsAndBlock) {
  const std::string text = format_summary(example_summary());
  // 1073741824 B / 0.92 s = 1167.11 MB/s = 9.337 Gbit/s
  EXPECT_EQ(text.rfind("1073741824 bytes in 0.92 s, 1167.1 MB/s, 9.34 Gbit/s, 4 streams, block 4 MiB", 0), 0u)
      << text;
  EXPECT_NE(text.find("buffers local auto (snd "), std::string::npos) << text;
  EXPECT_NE(text.find("remote snd 16 MiB / rcv 16 MiB"), std::string::npos) << text;
  EXPECT_EQ(text.find("congestion"), std::string::npos) << text;
}

TEST(Summary, CongestionWhenKnown) {
  TransferSummary s = example_summary();
  s.congestion = "bbr";
  const std::string text = format_summary(s);
  EXPECT_TRUE(text.ends_with(", congestion bbr")) << text;
}

// A resumed put sent only what the receiver lacked: the head counts those bytes and their rate
// (not the whole file over the time of the part sent), and the rest is named apart.
TEST(Summary, ResumedTransferCountsTheBytesSentApartFromThoseAlreadyThere) {
  TransferSummary s = example_summary();
  s.resumed_bytes = 1073741824 - 536870912;
  const std::string text = format_summary(s);
  // 536870912 B / 0.92 s = 583.56 MB/s
  EXPECT_EQ(text.rfind("536870912 bytes sent in 0.92 s, 583.6 MB/s, 4.67 Gbit/s", 0), 0u) << text;
  EXPECT_NE(text.find(", resumed: 536870912 bytes were already there (file 1073741824 bytes)"), std::string::npos) << text;
}

TEST(Summary, ZeroSecondsDoesNotDivideByZero) {
  TransferSummary s = example_summary();
  s.bytes = 0;
  s.seconds = 0;
  s.streams = 1;
  s.block_size = 1u << 20;
  const std::string text = format_summary(s);
  EXPECT_EQ(text.rfind("0 bytes in 0.00 s, 0.0 MB/s, 0.00 Gbit/s, 1 streams, block 1 MiB", 0), 0u) << text;
}

}  // namespace
}  // namespace pxfer
