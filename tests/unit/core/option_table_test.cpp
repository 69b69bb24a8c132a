// The client option table (pxfer/core/option_table.hpp) checked as a table: every row's default
// parses and lies within its bounds, each bound is refused one past it, and names and gfal2 keys
// are unique, so a new row is tested by being there.
#include "pxfer/core/option_table.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "pxfer/common/error.hpp"

namespace pxfer {
namespace {

// `value` in the text the row's kind reads: milliseconds for a duration, bytes or a count else.
std::string text_of(const OptionRow& row, std::uint64_t value) {
  if (row.kind == OptionKind::duration) return std::to_string(value) + "ms";
  if (row.kind == OptionKind::text) return std::string(value, 'c');
  return std::to_string(value);
}

TEST(OptionTable, EveryDefaultParsesAndLiesWithinItsBounds) {
  for (const OptionRow& row : option_table()) {
    OptionValues values;
    const std::string text = row.kind == OptionKind::flag ? "true" : row.default_text;
    EXPECT_EQ(apply_option(row, text, values), "") << option_name(row) << " " << text;
    EXPECT_NO_THROW(check(values.client)) << option_name(row);
  }
  EXPECT_NO_THROW(check(build_options({}).client));
}

TEST(OptionTable, EachBoundIsAcceptedAndRefusedOnePastIt) {
  int bounded = 0;
  for (const OptionRow& row : option_table()) {
    if (row.kind == OptionKind::flag || (row.min == 0 && row.max == 0)) continue;
    ++bounded;
    OptionValues values;
    const std::string name = option_name(row);
    EXPECT_EQ(apply_option(row, text_of(row, row.min), values), "") << name << " at its minimum";
    if (row.max != 0) {
      EXPECT_EQ(apply_option(row, text_of(row, row.max), values), "") << name << " at its maximum";
    }
    if (row.min > 0) {
      EXPECT_EQ(apply_option(row, text_of(row, row.min - 1), values), row.use) << name << " below";
    }
    if (row.max != 0) {
      EXPECT_EQ(apply_option(row, text_of(row, row.max + 1), values), row.use) << name << " above";
    }
  }
  EXPECT_GE(bounded, 8);
}

TEST(OptionTable, NamesAndGfal2KeysAreUnique) {
  std::set<std::string> names, keys;
  for (const OptionRow& row : option_table()) {
    EXPECT_TRUE(names.insert(option_name(row)).second) << option_name(row);
    if (row.gfal2_key) {
      EXPECT_TRUE(keys.insert(row.gfal2_key).second) << row.gfal2_key;
    }
    EXPECT_NE(row.verbs, 0u) << option_name(row);
    EXPECT_NE(std::string(row.help), "") << option_name(row);
    EXPECT_EQ(find_option(option_name(row)), &row);
  }
  EXPECT_EQ(find_option("no-such-option"), nullptr);
}

TEST(OptionTable, ARefusalIsOneLineNamingTheOptionAndWhatToUse) {
  OptionValues values;
  auto message = [&](const char* name, const char* text) {
    try {
      apply_option(name, text, values);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("retries", "21"), "--retries 21: use 0 to 20");
  EXPECT_EQ(message("window", "2G"), "--window 2G: at most 1G");
  EXPECT_EQ(message("streams", "65"), "--streams 65: use 1 to 64, or auto");
  EXPECT_EQ(message("stall-timeout", "100ms"), "--stall-timeout 100ms: use a duration from 500ms to 1h (e.g. 30s, 2m)");
  EXPECT_EQ(message("perf-interval", "0.01"), "--perf-interval 0.01: use 0.05 to 3600 seconds");
  EXPECT_EQ(message("checksum", "crc64"), "--checksum crc64: use adler32, sha256, md5, crc32, sha1 or none");
  EXPECT_NE(message("block-size", "abc").find("--block-size abc: not a size"), std::string::npos);
  EXPECT_EQ(message("congestion", "a-very-long-name-x"), "--congestion a-very-long-name-x: name too long");
}

TEST(OptionTable, BuildTakesDefaultsAndGivenTextsFlagsFirst) {
  const OptionValues d = build_options({});
  EXPECT_TRUE(d.client.auto_streams) << "-p auto is the command line's default";
  EXPECT_EQ(d.client.block_size, 2u << 20);
  EXPECT_EQ(d.client.perf_interval, std::chrono::milliseconds(1000));
  EXPECT_EQ(d.client.stall_timeout, std::chrono::milliseconds(60000));
  EXPECT_EQ(d.client.partial_max_age, std::chrono::hours(7 * 24));
  EXPECT_FALSE(d.flags.json);
  const OptionValues v =
      build_options({{"streams", "8"}, {"perf-interval", "0.05"}, {"json", "true"}, {"no-resume", "true"}, {"retries", "3"}});
  EXPECT_EQ(v.client.streams, 8);
  EXPECT_FALSE(v.client.auto_streams);
  EXPECT_EQ(v.client.perf_interval, std::chrono::milliseconds(50));
  EXPECT_TRUE(v.flags.json);
  EXPECT_FALSE(v.client.resume);
  EXPECT_EQ(v.client.retry.retries, 3u);
  // A refused value leaves the flags given with it in force: its error is printed as they ask.
  OptionValues partial;
  apply_flags({{"window", "9G"}, {"quiet", "true"}}, partial);
  EXPECT_TRUE(partial.flags.quiet);
  EXPECT_THROW(build_options({{"window", "9G"}, {"quiet", "true"}}), Error);
}

TEST(OptionTable, CheckBoundsWhatALibraryCallerFilledIn) {
  ClientOptions o;
  o.window = static_cast<std::uint32_t>(limits::max_window + 1);
  EXPECT_THROW(check(o), Error);
  o = ClientOptions{};
  o.retry.retries = 21;
  try {
    check(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--retries 21: use 0 to 20");
  }
  o = ClientOptions{};
  o.perf_interval = std::chrono::milliseconds(0);  // sweeps and batches ask for no interval reports
  EXPECT_NO_THROW(check(o));
}

// docs/grid.md's table of [PXFER] keys names every key of the option table, with its option.
TEST(OptionTable, DocsGridListsEveryGfal2Key) {
  std::ifstream in(std::string(PXFER_SOURCE_DIR) + "/docs/grid.md");
  ASSERT_TRUE(in) << PXFER_SOURCE_DIR << "/docs/grid.md";
  std::stringstream text;
  text << in.rdbuf();
  for (const OptionRow& row : option_table()) {
    if (!row.gfal2_key) continue;
    const std::string line = "| `" + std::string(row.gfal2_key) + "` | `--" + option_name(row) + "`";
    EXPECT_NE(text.str().find(line), std::string::npos) << "docs/grid.md lacks the row " << line;
  }
}

}  // namespace
}  // namespace pxfer
