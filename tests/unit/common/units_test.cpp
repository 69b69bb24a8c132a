// Sizes and durations as users type them (1024-based suffixes, plain numbers), and sizes printed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "pxfer/common/units.hpp"

namespace pxfer {
namespace {

using std::chrono::milliseconds;

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

TEST(ParseSize, AcceptsPlainNumbersAndBinarySuffixes) {
  struct Case {
    const char* text;
    std::uint64_t bytes;
  };
  for (const Case& c : {
           Case{"0", 0},
           Case{"1", 1},
           Case{"87380", 87380},
           Case{"4194304", 4 * MiB},
           Case{"64k", 64 * KiB},
           Case{"64K", 64 * KiB},
           Case{"64KB", 64000},  // SI suffixes are decimal, as in coreutils (dd, head -c)
           Case{"64KiB", 64 * KiB},
           Case{"4M", 4 * MiB},
           Case{"4m", 4 * MiB},
           Case{"4MB", 4000000},
           Case{"2GB", 2000000000},
           Case{"1TB", 1000000000000},
           Case{"64kB", 64000},
           Case{"4MiB", 4 * MiB},
           Case{"4mib", 4 * MiB},
           Case{"1.5G", 3 * GiB / 2},
           Case{"1.5GiB", 3 * GiB / 2},
           Case{"1T", TiB},
           Case{"1TiB", TiB},
           Case{"0.5k", 512},
           Case{"100b", 100},
           Case{"100B", 100},
           Case{"16777215T", 16777215 * TiB},  // the largest whole number of TiB below 2^64
       }) {
    auto v = parse_size(c.text);
    ASSERT_TRUE(v) << c.text;
    EXPECT_EQ(*v, c.bytes) << c.text;
  }
}

TEST(ParseSize, RefusesEverythingElse) {
  for (const char* text : {
           "",
           "-1",
           "-4M",
           "+4M",
           "4X",
           "4Mx",
           "4MiBs",
           "M",
           "k",
           ".",
           "1.3",        // not a whole number of bytes
           "0.1k",       // 102.4 bytes
           "1.2.3",
           "1e3",
           "4 M",
           " 4M",
           "4M ",
           "0x10",
           "99999999999999999999G",  // overflows 64 bits
           "16777216T",              // exactly 2^64
           "18446744073709551616",   // 2^64
           "inf",
           "nan",
       }) {
    EXPECT_FALSE(parse_size(text)) << '"' << text << '"';
  }
}

TEST(ParseDuration, AcceptsSuffixesAndPlainSeconds) {
  struct Case {
    const char* text;
    std::int64_t ms;
  };
  for (const Case& c : {
           Case{"30s", 30'000},
           Case{"30S", 30'000},
           Case{"2m", 120'000},
           Case{"2min", 120'000},
           Case{"500ms", 500},
           Case{"1h", 3'600'000},
           Case{"2.5", 2'500},
           Case{"0", 0},
           Case{"0.25s", 250},
           Case{"1.5m", 90'000},
           Case{"1.5ms", 2},  // rounded to the millisecond
       }) {
    auto v = parse_duration(c.text);
    ASSERT_TRUE(v) << c.text;
    EXPECT_EQ(*v, milliseconds(c.ms)) << c.text;
  }
}

TEST(ParseDuration, RefusesEverythingElse) {
  for (const char* text : {"", "s", "ms", "-1s", "-1", "5x", "1w", "1sec", "1 s", "2.5.1", "1e3s",
                           "99999999999999999999h"}) {
    EXPECT_FALSE(parse_duration(text)) << '"' << text << '"';
  }
}

TEST(FormatSize, WholeUnitsWithoutDecimalsFractionsWithOne) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1), "1 B");
  EXPECT_EQ(format_size(1000), "1000 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1024), "1 KiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(87380), "85.3 KiB");
  EXPECT_EQ(format_size(4 * MiB), "4 MiB");
  EXPECT_EQ(format_size(212992), "208 KiB");
  EXPECT_EQ(format_size(3 * GiB / 2), "1.5 GiB");
  EXPECT_EQ(format_size(TiB), "1 TiB");
  EXPECT_EQ(format_size(1024 * TiB), "1024 TiB");  // TiB is the largest unit
  EXPECT_EQ(format_size(UINT64_MAX), "16777216 TiB");
}

TEST(FormatSize, ParsesBackToTheSameValue) {
  for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1000}, 64 * KiB, std::uint64_t{1536}, 4 * MiB, 3 * GiB / 2, 7 * TiB}) {
    std::string text = format_size(v);
    std::string compact;
    for (char c : text)
      if (c != ' ') compact += c;
    auto back = parse_size(compact);
    ASSERT_TRUE(back) << compact;
    EXPECT_EQ(*back, v) << compact;
  }
}

}  // namespace
}  // namespace pxfer
