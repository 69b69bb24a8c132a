// pxfer doctor's reasoning on made-up facts: which limit applies and what it advises.
#include <cmath>
#include <gtest/gtest.h>

#include "pxfer/core/doctor.hpp"

using namespace pxfer;

namespace {
HostSettings debian_defaults() {
  HostSettings h;
  h.tcp_rmem[0] = 4096, h.tcp_rmem[1] = 131072, h.tcp_rmem[2] = 6291456;
  h.tcp_wmem[0] = 4096, h.tcp_wmem[1] = 16384, h.tcp_wmem[2] = 4194304;
  h.rmem_max = h.wmem_max = 212992;
  h.congestion = "cubic";
  h.available_congestion = "reno cubic";
  h.mtu = 1500;
  return h;
}
PathFacts wan(double rtt_s, double target_Bps, double loss = 0) {
  PathFacts f;
  f.rtt_s = rtt_s;
  f.local = f.remote = debian_defaults();
  f.target_bytes_per_s = target_Bps;
  f.loss = loss;
  return f;
}
}  // namespace

TEST(Doctor, WindowLimitedPathAdvisesBuffersAndStreams) {
  // 50 ms, 10 Gbit/s: one stream with 2 MiB usable window moves ~42 MB/s.
  auto a = advise(wan(0.050, 10e9 / 8));
  EXPECT_NEAR(a.bdp_bytes, 62.5e6, 1e3);
  EXPECT_NEAR(a.put.window_bytes, 4194304.0 / 2, 1);
  EXPECT_NEAR(a.put.window_bytes_per_s, 2097152 / 0.050, 1);
  EXPECT_EQ(a.put.streams_needed, 30u);  // ceil(1.25e9 / 41.9e6)
  EXPECT_GE(a.put.buffer_needed, 2 * 62500000ull);
  std::string text;
  for (auto& line : a.put.advice) text += line + "\n";
  EXPECT_NE(text.find("net.ipv4.tcp_wmem"), std::string::npos);
  EXPECT_NE(text.find("net.ipv4.tcp_rmem"), std::string::npos);
  EXPECT_NE(text.find("-p 30"), std::string::npos);
}

TEST(Doctor, LossLimitedPathFollowsMathis) {
  // 50 ms RTT, 0.01 % loss: MSS/(RTT*sqrt(p)) * sqrt(3/2) = 1448 / (0.05 * 0.01) * 1.2247 = 3.55 MB/s.
  auto f = wan(0.050, 1e9 / 8, 0.0001);
  f.local.tcp_wmem[2] = f.remote.tcp_rmem[2] = 256u << 20;  // big buffers: loss is the only limit
  auto a = advise(f);
  EXPECT_NEAR(a.put.loss_bytes_per_s, 1448 / (0.05 * 0.01) * 1.224744871, 1e3);
  EXPECT_DOUBLE_EQ(a.put.per_stream_bytes_per_s, a.put.loss_bytes_per_s);
  EXPECT_EQ(a.put.streams_needed, 36u);
  bool mentions_loss = false;
  for (auto& line : a.put.advice) mentions_loss |= line.find("sqrt(p)") != std::string::npos;
  EXPECT_TRUE(mentions_loss);
}

TEST(Doctor, FastEnoughPathNeedsNothing) {
  auto a = advise(wan(0.0001, 100e6 / 8));
  EXPECT_EQ(a.get.streams_needed, 1u);
  ASSERT_EQ(a.get.advice.size(), 1u);
  EXPECT_NE(a.get.advice[0].find("one stream can reach the target"), std::string::npos);
}

TEST(Doctor, DirectionsUseTheSendersWriteAndTheReceiversReadBuffers) {
  auto f = wan(0.020, 10e9 / 8);
  f.local.tcp_wmem[2] = 64u << 20;   // this host sends well...
  f.remote.tcp_rmem[2] = 1u << 20;   // ...but the server receives with 1 MiB
  auto a = advise(f);
  EXPECT_NEAR(a.put.window_bytes, (1u << 20) / 2.0, 1);
  EXPECT_NEAR(a.get.window_bytes, std::min(f.remote.tcp_wmem[2], f.local.tcp_rmem[2]) / 2.0, 1);
}

TEST(Doctor, ParseRate) {
  EXPECT_DOUBLE_EQ(*parse_rate("10gbit"), 1.25e9);
  EXPECT_DOUBLE_EQ(*parse_rate("500mbit"), 62.5e6);
  EXPECT_DOUBLE_EQ(*parse_rate("1GB/s"), 1e9);
  EXPECT_DOUBLE_EQ(*parse_rate("100mbps"), 12.5e6);
  EXPECT_FALSE(parse_rate("fast"));
  EXPECT_FALSE(parse_rate("10 parsecs"));
  EXPECT_FALSE(parse_rate("-1gbit"));
  EXPECT_EQ(format_rate_bits(1.25e9), "10.00 Gbit/s");
}

// Regression (fuzz/fuzz_units.cpp's check that a rate is finite): 305 digits of gbit overflowed
// to +infinity and was accepted as a --target.
TEST(Doctor, ParseRateRefusesARateThatOverflows) {
  EXPECT_FALSE(parse_rate(std::string(305, '9') + "gbit"));
  EXPECT_FALSE(parse_rate(std::string(308, '9') + "kbit"));
  ASSERT_TRUE(parse_rate(std::string(300, '9') + "bit"));
  EXPECT_TRUE(std::isfinite(*parse_rate(std::string(300, '9') + "bit")));
}

TEST(Doctor, ReportShowsBothHostsAndTheBdp) {
  auto f = wan(0.050, 10e9 / 8);
  std::string text = format_doctor(f, advise(f));
  EXPECT_NE(text.find("round trip: 50.00 ms"), std::string::npos);
  EXPECT_NE(text.find("this host:"), std::string::npos);
  EXPECT_NE(text.find("server:"), std::string::npos);
  EXPECT_NE(text.find("bandwidth-delay product"), std::string::npos);
}
