// Staggered starts: the ramp from one file in flight to N, and the pacer behind --connect-rate
// (and pxferd --emulate-disk-rate).
#include <gtest/gtest.h>

#include "pxfer/client/batch.hpp"
#include "pxfer/core/rate_pacer.hpp"

using namespace pxfer;
using namespace std::chrono_literals;

TEST(RampStart, LinearFromOneFileToAllOverTheDuration) {
  // -c 4 --ramp-up 3s: workers start at 0, 1, 2 and 3 s.
  EXPECT_EQ(ramp_start(0, 4, 3000ms), 0ms);
  EXPECT_EQ(ramp_start(1, 4, 3000ms), 1000ms);
  EXPECT_EQ(ramp_start(2, 4, 3000ms), 2000ms);
  EXPECT_EQ(ramp_start(3, 4, 3000ms), 3000ms);
  // -c 30 over 29 s: one more file in flight each second, as the sites ramped 1 -> 30.
  EXPECT_EQ(ramp_start(29, 30, 29000ms), 29000ms);
  EXPECT_EQ(ramp_start(10, 30, 29000ms), 10000ms);
}

TEST(RampStart, NoRampMeansAllAtOnce) {
  EXPECT_EQ(ramp_start(3, 4, 0ms), 0ms);
  EXPECT_EQ(ramp_start(0, 1, 5000ms), 0ms);
}

TEST(RatePacer, NoLimitNeverWaits) {
  RatePacer pacer(0);
  auto now = Clock::time_point{} + 100s;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(pacer.reserve(now, 5), now);
}

TEST(RatePacer, AllowsOneSecondOfBurstThenSpacesStarts) {
  RatePacer pacer(10);  // 10 connections per second
  auto now = Clock::time_point{} + 100s;
  // Two files of 5 connections fit in the first second's credit...
  EXPECT_EQ(pacer.reserve(now, 5), now);
  EXPECT_EQ(pacer.reserve(now, 5), now);
  // ...then each further file waits 0.5 s more.
  EXPECT_EQ(pacer.reserve(now, 5), now + 500ms);
  EXPECT_EQ(pacer.reserve(now, 5), now + 1000ms);
}

TEST(RatePacer, CreditDoesNotPileUpWhileIdle) {
  RatePacer pacer(10);
  auto t0 = Clock::time_point{} + 100s;
  pacer.reserve(t0, 10);
  // An hour later the bucket holds one second of credit, not an hour's.
  auto later = t0 + 3600s;
  EXPECT_EQ(pacer.reserve(later, 10), later);
  EXPECT_EQ(pacer.reserve(later, 10), later + 1000ms);
}
