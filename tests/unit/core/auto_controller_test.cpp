// --auto: the controller's decisions on recorded throughput traces (rising, plateau, falling,
// failures, noise), its limits, and the decision line.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "pxfer/core/auto_controller.hpp"

using namespace pxfer;
using namespace std::chrono_literals;

namespace {

constexpr double MBps = 1e6;

struct Step {
  double rate_MBps;
  unsigned failed = 0;
  unsigned succeeded = 1;
};

// Replays one interval of `interval` per step (the rate over that interval) and returns every
// decision.
class Trace {
 public:
  explicit Trace(AutoLimits limits, AutoSettings settings = {}) : ctl(limits, t0, settings) {}
  std::vector<AutoDecision> run(const std::vector<Step>& steps, std::chrono::milliseconds interval = 5000ms) {
    std::vector<AutoDecision> out;
    for (const auto& s : steps) {
      now += interval;
      bytes += static_cast<std::uint64_t>(s.rate_MBps * MBps * std::chrono::duration<double>(interval).count());
      out.push_back(ctl.decide(now, bytes, s.succeeded, s.failed));
    }
    return out;
  }
  Clock::time_point t0 = Clock::time_point{} + 1000s;
  Clock::time_point now = t0;
  std::uint64_t bytes = 0;
  AutoController ctl;
};

std::vector<unsigned> files_after(const std::vector<AutoDecision>& ds) {
  std::vector<unsigned> out;
  for (const auto& d : ds) out.push_back(d.to);
  return out;
}

AutoLimits limits(unsigned min, unsigned max, std::uint16_t streams = 4, unsigned max_streams = 0) {
  return AutoLimits{min, max, streams, max_streams};
}

}  // namespace

TEST(AutoController, StartsHalfwayBetweenMinAndMax) {
  auto t = Clock::time_point{};
  EXPECT_EQ(AutoController(limits(1, 8), t).concurrency(), 4u);
  EXPECT_EQ(AutoController(limits(2, 10), t).concurrency(), 6u);
  EXPECT_EQ(AutoController(limits(1, 2), t).concurrency(), 1u);  // rounded down
  EXPECT_EQ(AutoController(limits(3, 3), t).concurrency(), 3u);
  // A max below the min is taken as the min.
  EXPECT_EQ(AutoController(limits(5, 2), t).concurrency(), 5u);
}

TEST(AutoController, RisingTraceAddsOneFilePerIntervalUpToTheMax) {
  Trace t(limits(1, 8));
  auto ds = t.run({{100}, {120}, {140}, {160}, {180}, {200}, {220}});
  EXPECT_EQ(ds[0].action, AutoAction::baseline);
  EXPECT_FALSE(ds[0].change);
  EXPECT_EQ(files_after(ds), (std::vector<unsigned>{4, 5, 6, 7, 8, 8, 8}));
  EXPECT_EQ(ds[1].action, AutoAction::more_files);
  EXPECT_EQ(ds[1].reason, "rate rose");
  EXPECT_EQ(ds[5].action, AutoAction::hold);
  EXPECT_EQ(ds[5].reason, "at the maximum");
  // EWMA with weight 0.5: 100, then 0.5 * 120 + 0.5 * 100 = 110 (+10%).
  EXPECT_NEAR(ds[1].smoothed_Bps, 110 * MBps, 1);
  EXPECT_NEAR(*ds[1].change, 0.10, 1e-9);
  EXPECT_NEAR(ds[1].rate_Bps, 120 * MBps, 1);
}

TEST(AutoController, PlateauWithinToleranceKeepsAdding) {
  // Throughput that holds (wiggling by under 5%) still earns another file, as FTS3 does.
  Trace t(limits(1, 6));
  auto ds = t.run({{500}, {498}, {503}, {497}, {501}});
  EXPECT_EQ(files_after(ds), (std::vector<unsigned>{3, 4, 5, 6, 6}));
  EXPECT_EQ(ds[1].reason, "rate held");
}

TEST(AutoController, FallingTraceBacksOffOneFileAtATimeDownToTheMin) {
  Trace t(limits(2, 8));
  auto ds = t.run({{800}, {600}, {400}, {300}, {200}, {100}, {50}});
  // 800 -> EWMA 700 (-12.5%), 550, 425, 312.5, 206, 128: each a fall beyond 5%.
  EXPECT_EQ(files_after(ds), (std::vector<unsigned>{5, 4, 3, 2, 2, 2, 2}));
  EXPECT_EQ(ds[1].action, AutoAction::fewer_files);
  EXPECT_EQ(ds[1].reason, "rate fell more than 5.0%");
  EXPECT_EQ(ds[4].action, AutoAction::hold);
  EXPECT_EQ(ds[4].reason, "rate fell, already at the minimum");
}

TEST(AutoController, AnyFailureHalvesEvenWhenTheRateRises) {
  Trace t(limits(1, 16));
  auto ds = t.run({{100}, {200}, {300}, {400, 1}, {400}, {400, 3}, {400, 2}, {400, 1}});
  EXPECT_EQ(files_after(ds), (std::vector<unsigned>{8, 9, 10, 5, 6, 3, 1, 1}));
  EXPECT_EQ(ds[3].action, AutoAction::fewer_files);
  EXPECT_EQ(ds[3].reason, "backing off after failures");
  EXPECT_EQ(ds[7].action, AutoAction::hold);
  EXPECT_EQ(ds[7].reason, "failures, already at the minimum");
}

TEST(AutoController, FailureInTheFirstIntervalBacksOffAtOnce) {
  Trace t(limits(1, 8));
  auto ds = t.run({{100, 2}});
  EXPECT_EQ(ds[0].to, 2u);
  EXPECT_EQ(ds[0].failed, 2u);
}

TEST(AutoController, NoisyTraceStaysWithinLimits) {
  // +-20% noise around 300 MB/s with an occasional failure: decisions go both ways but never
  // leave [2, 6].
  Trace t(limits(2, 6));
  std::vector<Step> steps;
  const double noise[] = {1.0, 1.2, 0.8, 1.15, 0.85, 1.2, 0.8, 1.1, 0.9, 1.0, 1.2, 0.7, 1.3, 0.75, 1.0, 1.05};
  for (int i = 0; i < 16; ++i) steps.push_back({300 * noise[i], i == 9 ? 1u : 0u});
  auto ds = t.run(steps);
  bool up = false, down = false;
  for (const auto& d : ds) {
    EXPECT_GE(d.to, 2u);
    EXPECT_LE(d.to, 6u);
    const bool step = d.to + 1 == d.from || d.to == d.from + 1 || d.to == d.from;
    EXPECT_TRUE(step || d.to == std::max(2u, d.from / 2)) << "one step, or a halving";
    up |= d.to > d.from;
    down |= d.to < d.from;
  }
  EXPECT_TRUE(up);
  EXPECT_TRUE(down);
  EXPECT_EQ(ds[9].action, AutoAction::fewer_files);
}

TEST(AutoController, SmoothingDampsASingleDip) {
  // One interval at -8% is a -4% change of the average: within tolerance, so it keeps adding.
  Trace t(limits(1, 10));
  auto ds = t.run({{500}, {500}, {460}, {500}});
  EXPECT_EQ(files_after(ds), (std::vector<unsigned>{5, 6, 7, 8}));
  // Without smoothing the same dip is a fall.
  Trace raw(limits(1, 10), AutoSettings{0.05, 1.0});
  auto rs = raw.run({{500}, {500}, {460}, {500}});
  EXPECT_EQ(files_after(rs), (std::vector<unsigned>{5, 6, 5, 6}));
}

TEST(AutoController, ToleranceIsConfigurable) {
  Trace strict(limits(1, 10), AutoSettings{0.01, 1.0});
  EXPECT_EQ(files_after(strict.run({{500}, {490}})), (std::vector<unsigned>{5, 4}));
  Trace loose(limits(1, 10), AutoSettings{0.2, 1.0});
  EXPECT_EQ(files_after(loose.run({{500}, {420}})), (std::vector<unsigned>{5, 6}));
}

TEST(AutoController, MoreStreamsOnlyAtTheMaximumWithABudget) {
  // Budget 24 streams, -p 4, at most 4 files: at 4 files a rising rate adds streams per file
  // (5, then 6 = 24 / 4), and a fall takes the added streams away before any file.
  Trace t(limits(1, 4, 4, 24));
  auto ds = t.run({{100}, {130}, {170}, {220}, {260}, {300}, {150}, {100}, {60}});
  EXPECT_EQ(files_after(ds), (std::vector<unsigned>{2, 3, 4, 4, 4, 4, 4, 4, 3}));
  EXPECT_EQ(ds[3].action, AutoAction::more_streams);
  EXPECT_EQ(ds[3].streams_from, 4u);
  EXPECT_EQ(ds[3].streams_to, 5u);
  EXPECT_EQ(ds[4].streams_to, 6u);
  EXPECT_EQ(ds[5].action, AutoAction::hold) << "6 x 4 = 24: the budget is spent";
  EXPECT_EQ(ds[6].action, AutoAction::fewer_streams);
  EXPECT_EQ(ds[6].streams_to, 5u);
  EXPECT_EQ(ds[7].streams_to, 4u);
  EXPECT_EQ(ds[8].action, AutoAction::fewer_files);
  for (const auto& d : ds) EXPECT_LE(d.to * d.streams_to, 24u);
}

TEST(AutoController, NoBudgetMeansStreamsStayAtP) {
  Trace t(limits(1, 2, 4, 0));
  auto ds = t.run({{100}, {200}, {300}, {400}});
  for (const auto& d : ds) EXPECT_EQ(d.streams_to, 4u);
}

TEST(AutoController, BudgetSqueezesStreamsAsFilesAreAdded) {
  // 16 streams for up to 8 files of -p 4: 4 files x 4, then 5 x 3, 6..8 x 2.
  Trace t(limits(1, 8, 4, 16));
  EXPECT_EQ(t.ctl.concurrency(), 4u);
  EXPECT_EQ(t.ctl.streams(), 4u);
  auto ds = t.run({{100}, {100}, {100}, {100}, {100}});
  EXPECT_EQ(ds[1].to, 5u);
  EXPECT_EQ(ds[1].streams_to, 3u);
  EXPECT_EQ(ds[4].to, 8u);
  EXPECT_EQ(ds[4].streams_to, 2u);
  // The budget also caps files in flight: each file needs a stream.
  EXPECT_EQ(AutoController(limits(1, 32, 4, 6), Clock::time_point{}).max_concurrency(), 6u);
}

TEST(AutoController, ServerLimitsNarrowTheUsersLimits) {
  AutoController ctl(limits(4, 16), Clock::time_point{});
  EXPECT_EQ(ctl.concurrency(), 10u);
  ctl.apply_server_limits(ServerLimits{3, std::nullopt});
  EXPECT_EQ(ctl.max_concurrency(), 3u);
  EXPECT_EQ(ctl.min_concurrency(), 3u) << "the server's cap wins over the user's minimum";
  EXPECT_EQ(ctl.concurrency(), 3u);
  AutoController budget(limits(1, 8, 8), Clock::time_point{});
  budget.apply_server_limits(ServerLimits{std::nullopt, 16});
  EXPECT_EQ(budget.concurrency() * budget.streams(), 16u);
  budget.apply_server_limits(ServerLimits{});  // no opinion: nothing changes
  EXPECT_EQ(budget.max_concurrency(), 8u);
}

TEST(AutoController, StalledIntervalsAreFallsNotDivisionsByZero) {
  Trace t(limits(1, 8));
  auto ds = t.run({{0}, {0}, {100}, {0}});
  EXPECT_EQ(ds[1].action, AutoAction::more_files) << "0 -> 0 holds";
  EXPECT_NEAR(*ds[2].change, 1.0, 1e-9);
  EXPECT_EQ(ds[3].action, AutoAction::fewer_files);
  // Two decisions at the same instant: no rate, no crash.
  auto same = t.ctl.decide(t.now, t.bytes, 0, 0);
  EXPECT_EQ(same.rate_Bps, 0);
}

TEST(AutoController, DecisionLines) {
  Trace t(limits(1, 8));
  auto ds = t.run({{400}, {424.8}, {430, 2}});
  EXPECT_EQ(format_decision(ds[0]), "auto: 4 files in flight, unchanged (rate 400.0 MB/s avg, baseline, 0 failures; "
                                    "first interval, baseline)");
  EXPECT_EQ(format_decision(ds[1]), "auto: 4 -> 5 files in flight (rate 412.4 MB/s avg, up 3.1%, 0 failures; rate held)");
  EXPECT_EQ(format_decision(ds[2]),
            "auto: 5 -> 2 files in flight (rate 421.2 MB/s avg, up 2.1%, 2 failures; backing off after failures)");
  AutoDecision s;
  s.from = s.to = 1;
  s.streams_from = 4;
  s.streams_to = 5;
  s.change = -0.5;
  s.failed = 1;
  s.reason = "r";
  EXPECT_EQ(format_decision(s), "auto: 1 file in flight, 4 -> 5 streams per file (rate 0.0 MB/s avg, down 50.0%, 1 failure; r)");
}
