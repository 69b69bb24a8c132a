#pragma once
// The client's transfer options as one table (issue 38): one row per option says its names, what
// kind of value it takes, its default, its bounds (from pxfer/core/limits.hpp), its help text, the
// verbs that take it, its gfal2 [PXFER] key and the field it sets. pxfer's command line makes its
// CLI11 options from the rows (and so --help and the man pages), the gfal2 plugin reads its keys
// through the same apply(), and check() bounds a ClientOptions by the same rows: an option's
// bounds and its refusal ("--retries 21: use 0 to 20") are written once. Pure: no I/O.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pxfer/core/client_options.hpp"

namespace pxfer {

// What a row's text is: a flag takes none ("true" when given); a count a whole number; a size
// bytes with K/M/G (parse_size); a duration 30s, 500ms or plain seconds (parse_duration); a choice
// one of the words its setter knows; a text anything within its length bound.
enum class OptionKind { flag, count, size, duration, choice, text };

// The commands a row belongs to (bits). put, get and cp take a row for one file and for each file
// of -r / --from-file alike; `tpc` = a third-party copy (cp URL URL) takes it: a row without it is
// refused there unless it has its default (the copying server's configuration decides instead);
// `sweep` = pxfer sweep takes it as a comma-separated list; `ns` = ls, stat, mkdir, rm, mv, sum.
enum OptionVerb : unsigned { verb_put = 1, verb_get = 2, verb_cp = 4, verb_tpc = 8, verb_sweep = 16, verb_ns = 32 };
inline constexpr unsigned verb_transfer = verb_put | verb_get | verb_cp | verb_tpc;

// Not the transfer but the command around it: what pxfer prints and whether it makes the
// destination's directories first. Kept beside ClientOptions, not in it, because the library never
// reads them (the printers and the CLI do); as rows they still get --help and a test from the table.
struct CommandFlags {
  bool json = false;
  bool quiet = false;
  bool verbose = false;
  bool rate_lines = false;  // gridftp lines even on a terminal
  bool parents = false;     // make the destination's missing directories first
  std::string report;       // FILE.html, "" = none
};

struct OptionValues {
  ClientOptions client;
  CommandFlags flags;
};

// A value as its row's kind parsed it: `number` is the count, the bytes, the milliseconds or the
// flag (1); `text` the text as given (a choice's or a text's setter reads it).
struct OptionValue {
  std::uint64_t number = 0;
  std::string_view text;
};

struct OptionRow {
  const char* names;         // as CLI11 takes them: "-p,--streams"
  OptionKind kind;
  const char* default_text;  // what the command line shows and build() applies; "" for a flag
  std::uint64_t min, max;    // count, bytes, milliseconds or a text's length; max 0 = unbounded
  const char* use;           // what a refusal says to use: "use 0 to 20"
  const char* help;
  unsigned verbs;            // OptionVerb bits
  const char* gfal2_key;     // its key in gfal2's [PXFER] group, nullptr = none
  const char* gfal2_unit;    // appended to that key's value: PERF_INTERVAL_MS=200 is "200ms"
  const char* group;         // pxfer --help's group
  const char* type_name;     // pxfer --help's value name: SIZE, DURATION ...
  // Sets the value; false = the text is not one this row takes (a choice's unknown word).
  bool (*set)(OptionValues&, const OptionValue&);
  // The value a ClientOptions holds, in the row's unit, for check(); nullptr = nothing to bound.
  std::uint64_t (*read)(const ClientOptions&);
};

std::span<const OptionRow> option_table();
// "streams" for "-p,--streams".
std::string option_name(const OptionRow& row);
// The row named `name` (without dashes), nullptr if none.
const OptionRow* find_option(std::string_view name);

// Parses `text` by the row's kind and bounds into `values`: "" when done, else what to use
// instead (each caller names the option its own way: "--retries 21: " or "PXFER:RETRIES=21: ").
std::string apply_option(const OptionRow& row, std::string_view text, OptionValues& values);
// The same by name, throwing Error(usage) "--NAME TEXT: use ..." when refused.
void apply_option(std::string_view name, std::string_view text, OptionValues& values);

using OptionTexts = std::vector<std::pair<std::string, std::string>>;  // name -> text as given
// Applies only the flags among `given`: they cannot be refused, so a caller has --json and -q in
// force before a value is refused (its refusal is then printed the way they ask).
void apply_flags(const OptionTexts& given, OptionValues& values);
// Every row's default, then `given` (names without dashes), flags first; throws at the first refusal.
OptionValues build_options(const OptionTexts& given);

// Throws Error(usage) "--NAME VALUE: use ..." for a value of `options` outside its row's bounds
// (options a library caller filled itself; transfer::check_options calls it).
void check(const ClientOptions& options);

}  // namespace pxfer
