// pxfer's command line as the option table (pxfer/core/option_table.hpp) makes it: every row of a
// verb is in that verb's --help, and a value one past a row's bound is refused by the real binary
// with one line naming the option and exit 2, before any connection (no server needed).
#include <gtest/gtest.h>

#include <algorithm>

#include "pxfer/core/option_table.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

constexpr int exit_usage = 2;

std::string past(const OptionRow& row, bool above) {
  const std::uint64_t value = above ? row.max + 1 : row.min - 1;
  if (row.kind == OptionKind::duration) return std::to_string(value) + "ms";
  if (row.kind == OptionKind::text) return std::string(value, 'c');
  return std::to_string(value);
}

TEST(OptionTableCli, EveryRowIsInItsVerbsHelp) {
  for (const auto& [verb, bit] : {std::pair{"put", verb_put}, {"get", verb_get}, {"cp", verb_cp}}) {
    RunResult help = run_pxfer(verb, "--help");
    ASSERT_EQ(help.exit_code, 0) << help.err;
    for (const OptionRow& row : option_table()) {
      if (!(row.verbs & bit)) continue;
      const std::string name = "--" + option_name(row);
      EXPECT_NE(help.out.find(name), std::string::npos) << verb << " --help lacks " << name << "\n" << help.out;
      EXPECT_NE(help.out.find(std::string(row.help).substr(0, 30)), std::string::npos) << name << "'s help text";
    }
  }
}

TEST(OptionTableCli, AValuePastABoundIsOneLineAndExitTwo) {
  int checked = 0;
  for (const OptionRow& row : option_table()) {
    if (!(row.verbs & verb_put) || row.kind == OptionKind::flag || (row.min == 0 && row.max == 0)) continue;
    for (bool above : {false, true}) {
      if (above ? row.max == 0 : row.min == 0) continue;
      const std::string name = "--" + option_name(row), value = past(row, above);
      // Port 1 on loopback: nothing listens, and a refused value must stop pxfer before it connects.
      RunResult r = run_pxfer("put", "/nonexistent/source", "pxfer://127.0.0.1:1/x", name, value);
      EXPECT_EQ(r.exit_code, exit_usage) << name << " " << value << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
      EXPECT_NE(r.err.find(name + " " + value + ": " + row.use), std::string::npos) << r.err;
      ++checked;
    }
  }
  EXPECT_GE(checked, 8);
}

}  // namespace
}  // namespace pxfer::e2e
