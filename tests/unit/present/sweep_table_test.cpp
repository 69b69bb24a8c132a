// The sweep's output: one table per setting, files down, streams across, "rate (failures)".
#include <gtest/gtest.h>

#include "pxfer/present/sweep_table.hpp"

using namespace pxfer;

namespace {
SweepCell cell(Direction d, unsigned files, unsigned streams, std::vector<double> rates, unsigned failures) {
  SweepCell c;
  c.direction = d;
  c.files = files;
  c.streams = streams;
  c.rates_mbit = std::move(rates);
  c.runs = static_cast<unsigned>(c.rates_mbit.size());
  c.failures = failures;
  return c;
}
}  // namespace

TEST(SweepTable, MedianOfRepeats) {
  EXPECT_DOUBLE_EQ(cell(Direction::get, 1, 1, {3, 1, 2}, 0).median_mbit(), 2);
  EXPECT_DOUBLE_EQ(cell(Direction::get, 1, 1, {4, 1, 2, 3}, 0).median_mbit(), 2.5);
  EXPECT_DOUBLE_EQ(cell(Direction::get, 1, 1, {}, 3).median_mbit(), 0);
}

TEST(SweepTable, OneTablePerSettingWithFailures) {
  std::vector<SweepCell> cells = {cell(Direction::get, 1, 1, {100}, 0), cell(Direction::get, 1, 10, {640.5}, 0),
                                  cell(Direction::get, 10, 1, {700}, 2), cell(Direction::get, 10, 10, {900}, 0),
                                  cell(Direction::put, 1, 1, {90}, 0)};
  std::string text = format_sweep_tables(cells);
  EXPECT_NE(text.find("# get, window auto, congestion default, compress none"), std::string::npos);
  EXPECT_NE(text.find("# put, window auto"), std::string::npos);
  EXPECT_NE(text.find("640.5 (0)"), std::string::npos);
  EXPECT_NE(text.find("700.0 (2)"), std::string::npos);
  EXPECT_NE(text.find("files\\streams"), std::string::npos);
  std::string csv = format_sweep_csv(cells);
  EXPECT_NE(csv.find("get,0,,none,10,1,1,2,700.00,700.00"), std::string::npos);
  std::string json = format_sweep_json(cells);
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 5);
  EXPECT_NE(json.find("\"failures\":2"), std::string::npos);
}
