// -p auto's controller (pxfer/core/stream_controller.hpp) when the sender's congestion control keeps
// its rate under loss (bbr): a smaller start on a long path, no growth into loss's room, and added
// streams that gave little are shed. Synthetic paths sampled every 100 ms.
#include <gtest/gtest.h>

#include "pxfer/core/stream_controller.hpp"

namespace pxfer {
namespace {

using namespace std::chrono_literals;
constexpr double Mbit = 1e6 / 8;  // bytes per second

StreamControllerSettings sent_by(const std::string& congestion) {
  StreamControllerSettings s;
  s.sender_congestion = congestion;
  return s;
}

TEST(StreamControllerPaced, NamesTheSendersThatKeepTheirRateUnderLoss) {
  EXPECT_TRUE(keeps_rate_under_loss("bbr"));
  EXPECT_TRUE(keeps_rate_under_loss("bbr2"));
  EXPECT_FALSE(keeps_rate_under_loss("cubic"));
  EXPECT_FALSE(keeps_rate_under_loss("reno"));
  EXPECT_FALSE(keeps_rate_under_loss(""));  // unknown: sized as a loss-based one
}

// A get's name comes from the server and ends up in the printed choice: only a plain name is kept,
// so a server cannot send terminal escapes through it.
TEST(StreamControllerPaced, KeepsOnlyAPlainNameFromThePeer) {
  EXPECT_EQ(congestion_name_or_empty("bbr"), "bbr");
  EXPECT_EQ(congestion_name_or_empty("dctcp-x_2"), "dctcp-x_2");
  EXPECT_EQ(congestion_name_or_empty(""), "");
  EXPECT_EQ(congestion_name_or_empty("bbr\x1b[2J"), "");
  EXPECT_EQ(congestion_name_or_empty(std::string("bbr\x1b]0;owned\x07")), "");
  EXPECT_EQ(congestion_name_or_empty("bbr bbr"), "");
  EXPECT_EQ(congestion_name_or_empty(std::string(16, 'b')), "");  // over TCP_CA_NAME_MAX - 1
  auto junk = sent_by("bbr\x1b[31m");
  junk.path_rtt_ms = 150;
  StreamController c(junk, Clock::time_point{});
  EXPECT_EQ(c.target(), 50);  // unknown: sized as a loss-based sender
  EXPECT_EQ(c.evidence().find('\x1b'), std::string::npos);
}

TEST(StreamControllerPaced, ALongPathStartsWithAStreamPerTwentyMillisecondsOfRtt) {
  // The 150 ms bbr cells of bench/results/wan-matrix.md: -p 8 moved 735-748 Mbit/s where the 50 a
  // reno sender starts with moved 408-459.
  for (const auto& [rtt, start] : {std::pair{2.0, 4}, {20.0, 4}, {50.0, 4}, {150.0, 8}, {300.0, 15}}) {
    StreamController c(sent_by("bbr"), Clock::time_point{});
    c.observe(PathSample{Clock::time_point{} + 200ms, 1 << 20, 4, rtt, 0, 0, 0, false, 4});
    EXPECT_EQ(c.target(), start) << rtt << " ms";
  }
  auto known = sent_by("bbr");
  known.path_rtt_ms = 150;
  StreamController early(known, Clock::time_point{});
  EXPECT_EQ(early.target(), 8);
  auto told = early.observe(PathSample{Clock::time_point{} + 200ms, 1 << 20, 8, 150, 0, 0, 0, false, 8});
  ASSERT_TRUE(told);
  EXPECT_NE(told->reason.find("a bbr sender keeps its rate under loss"), std::string::npos) << told->reason;
  EXPECT_NE(early.evidence().find("bbr sender"), std::string::npos) << early.evidence();
  // The same RTT with a loss-based sender: a stream per 3 ms.
  auto reno = sent_by("reno");
  reno.path_rtt_ms = 150;
  EXPECT_EQ(StreamController(reno, Clock::time_point{}).target(), 50);
}

// After each change of count the streams run at the link's 700 Mbit/s for 2.5 s with a queue, then
// fall to 28 Mbit/s a stream with none, data waiting and cwnd / RTT at the rate: what a loss-based
// sender shows on a long lossy path, where the controller grows into the room (stream_controller_test).
std::vector<StreamStep> run_fall(const StreamControllerSettings& settings) {
  const auto t0 = Clock::time_point{};
  StreamController c(settings, t0);
  double bytes = 0, changed_s = 0, lost = 0;
  unsigned moving = c.target();
  for (int tick = 1; tick <= 200; ++tick) {
    const double now_s = tick / 10.0;
    if (moving != c.target()) moving = c.target(), changed_s = now_s;
    const double since = now_s - changed_s;
    const double steady = std::min(moving * 28.0, 700.0);
    const double mbit = since < 2.5 ? 700 : since < 5.5 ? 700 + (steady - 700) * (since - 2.5) / 3 : steady;
    bytes += mbit * Mbit * 0.1;
    const bool queue = since >= 0.3 && since < 2.5;
    lost += mbit * Mbit * 0.1 / 1448 * 1e-3;
    const double rtt = queue ? 100.0 : 50.0;
    c.observe(PathSample{t0 + tick * 100ms, static_cast<std::uint64_t>(bytes), moving, rtt,
                         static_cast<std::uint64_t>(bytes / 1448), static_cast<std::uint64_t>(lost),
                         static_cast<std::uint64_t>(mbit * Mbit * rtt / 1000), false, moving, 1448});
  }
  return c.steps();
}

bool grew_into_room(const std::vector<StreamStep>& steps) {
  for (const auto& step : steps)
    if (step.reason.find("the path has room") != std::string::npos) return true;
  return false;
}

TEST(StreamControllerPaced, NeverGrowsIntoTheRoomLossLeaves) {
  auto reno = sent_by("reno");
  reno.ms_per_start_stream = 0;
  ASSERT_TRUE(grew_into_room(run_fall(reno)));  // the path does show such room to a reno sender
  auto bbr = sent_by("bbr");
  bbr.ms_per_start_stream_paced = 0;
  EXPECT_FALSE(grew_into_room(run_fall(bbr)));
}

TEST(StreamControllerPaced, ShedsAddedStreamsThatGaveLittleWithNoQueue) {
  // 4 -> 8 gives +7.5 % with no queue and the senders' windows holding them: a reno sender's 8 took
  // from no one and are kept (stream_controller_test's KeepsStreamsThatGaveLittleButTookFromNoOne);
  // a bbr sender's windows are not what loss left them, so the 8 are shed.
  for (const std::string congestion : {"reno", "bbr"}) {
    auto settings = sent_by(congestion);
    settings.ms_per_start_stream = settings.ms_per_start_stream_paced = 0;
    const auto t0 = Clock::time_point{};
    StreamController c(settings, t0);
    double bytes = 0;
    std::uint64_t retransmits = 0;
    for (int tick = 1; tick <= 100 && !c.settled(); ++tick) {
      const unsigned n = c.target();
      const double mbit = n <= 4 ? 400 : 430;
      bytes += mbit * Mbit * 0.1;
      retransmits += n;
      PathSample s{t0 + tick * 100ms, static_cast<std::uint64_t>(bytes), n, 50, static_cast<std::uint64_t>(bytes / 1448),
                   retransmits, static_cast<std::uint64_t>(mbit * Mbit * 0.05), false, n};
      c.observe(s);
    }
    ASSERT_EQ(c.steps().size(), 2u) << congestion;
    EXPECT_EQ(c.target(), congestion == "bbr" ? 4 : 8) << format_step(c.steps()[1]);
  }
}

}  // namespace
}  // namespace pxfer
