// Axis arithmetic of the report charts: nice ticks, units that keep labels short.
#include <gtest/gtest.h>

#include "report/chart_scale.hpp"

using namespace pxfer::report;

TEST(ReportChartScale, NiceTicksAreOneTwoOrFiveTimesAPowerOfTen) {
  Axis a = nice_axis(0, 947, 5);
  EXPECT_DOUBLE_EQ(a.step, 200);
  EXPECT_DOUBLE_EQ(a.lo, 0);
  EXPECT_DOUBLE_EQ(a.hi, 1000);
  EXPECT_EQ(a.ticks, (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_DOUBLE_EQ(nice_axis(0, 9.3, 5).step, 2);
  EXPECT_DOUBLE_EQ(nice_axis(0, 0.42, 5).step, 0.1);
  EXPECT_DOUBLE_EQ(nice_axis(0, 0.42, 4).step, 0.2);
  EXPECT_DOUBLE_EQ(nice_axis(0, 3.1, 8).step, 0.5);
}

TEST(ReportChartScale, AxisCoversTheDataAndStartsOnATick) {
  for (double hi : {0.7, 1.0, 13.0, 99.9, 101.0, 12345.0, 8e9}) {
    Axis a = nice_axis(0, hi, 5);
    EXPECT_LE(a.lo, 0);
    EXPECT_GE(a.hi, hi) << hi;
    EXPECT_LE(a.hi, hi + a.step * 1.0001) << "no empty step above the data: " << hi;
    EXPECT_GE(a.ticks.size(), 2u);
    EXPECT_LE(a.ticks.size(), 12u);
    EXPECT_DOUBLE_EQ(a.ticks.front(), a.lo);
    EXPECT_DOUBLE_EQ(a.ticks.back(), a.hi);
  }
  Axis shifted = nice_axis(12, 38, 5);
  EXPECT_DOUBLE_EQ(shifted.lo, 10);
  EXPECT_DOUBLE_EQ(shifted.hi, 40);
}

TEST(ReportChartScale, DegenerateRangesStillGiveAnAxis) {
  Axis flat = nice_axis(0, 0, 5);
  EXPECT_GT(flat.hi, flat.lo);
  EXPECT_GE(flat.ticks.size(), 2u);
  Axis nan = nice_axis(0, std::numeric_limits<double>::quiet_NaN(), 5);
  EXPECT_GT(nan.hi, nan.lo);
  Axis reversed = nice_axis(5, 1, 5);
  EXPECT_GT(reversed.hi, reversed.lo);
}

TEST(ReportChartScale, RateUnitsAreDecimalLikeTheSummaries) {
  EXPECT_EQ(rate_unit(500).name, "B/s");
  EXPECT_EQ(rate_unit(2500).name, "kB/s");
  EXPECT_EQ(rate_unit(1.17e9 / 1.9).name, "MB/s");
  EXPECT_DOUBLE_EQ(rate_unit(1.17e9 / 1.9).divisor, 1e6);
  EXPECT_EQ(rate_unit(3e9).name, "GB/s");
  EXPECT_EQ(rate_unit(0).name, "B/s");
}

TEST(ReportChartScale, SizeTimeAndRttUnits) {
  EXPECT_EQ(size_unit(1000).name, "B");
  EXPECT_EQ(size_unit(4 << 20).name, "MiB");
  EXPECT_DOUBLE_EQ(size_unit(4 << 20).divisor, 1 << 20);
  EXPECT_EQ(time_unit(42).name, "s");
  EXPECT_EQ(time_unit(600).name, "min");
  EXPECT_EQ(time_unit(5 * 3600).name, "h");
  EXPECT_EQ(rtt_unit(610).name, "\xC2\xB5s");
  EXPECT_EQ(rtt_unit(50'210).name, "ms");
  EXPECT_DOUBLE_EQ(rtt_unit(50'210).divisor, 1000);
}

TEST(ReportChartScale, TickLabelsHaveJustTheDecimalsTheStepNeeds) {
  EXPECT_EQ(format_tick(400, 200), "400");
  EXPECT_EQ(format_tick(0.5, 0.5), "0.5");
  EXPECT_EQ(format_tick(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(format_tick(2.5, 0.25), "2.50");
  EXPECT_EQ(format_tick(-0.0, 1), "0");
  EXPECT_EQ(format_tick(1e-17, 0.1), "0.0");
}
