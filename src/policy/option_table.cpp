// The client's option table (pxfer/core/option_table.hpp): one row per option, then the few
// functions that parse, bound and check by the rows.
#include "pxfer/core/option_table.hpp"

#include <array>
#include <charconv>

#include "pxfer/common/error.hpp"
#include "pxfer/common/units.hpp"
#include "pxfer/core/stream_count.hpp"

namespace pxfer {
namespace {

using K = OptionKind;
using V = OptionValues;
using X = OptionValue;
using ms = std::chrono::milliseconds;
constexpr auto ms_of = [](ms d) { return static_cast<std::uint64_t>(d.count()); };
constexpr unsigned transfer = verb_transfer;
constexpr unsigned transfer_list = verb_put | verb_get | verb_cp | verb_sweep;  // not carried by a third-party copy
const char *const t = "Transfer", *const n = "Network tuning", *const o = "Output", *const r = "Reliability",
                  *const s = "Security (docs/security.md)";

bool set_streams(V& v, const X& x) {
  const auto request = parse_stream_request(x.text);
  if (!request) return false;
  v.client.streams = request->count;
  v.client.auto_streams = request->automatic;
  return true;
}
bool set_checksum(V& v, const X& x) {
  const auto algo = parse_checksum_algo(x.text);
  if (algo) v.client.checksum = *algo;
  return algo.has_value();
}
bool set_compress(V& v, const X& x) {
  const auto c = parse_compression(x.text);
  if (c) v.client.compression = *c;
  return c.has_value();
}

// clang-format off
// names, kind, default, min, max, refusal, help, verbs, gfal2 key, its unit, --help group, value name, set, read
const std::array rows{
OptionRow{"-p,--streams", K::choice, "auto", limits::min_streams, limits::max_streams, "use 1 to 64, or auto",
  "parallel TCP data streams: 1-64, or auto (start with a few, add while the rate grows)", transfer | verb_sweep, nullptr, nullptr, t, "N",
  set_streams, [](const ClientOptions& c) -> std::uint64_t { return c.streams; }},
OptionRow{"--block-size", K::size, "2M", limits::min_block_size, limits::max_block_size, "use 1M to 16M",
  "block size, 1M-16M (K/M/G and KiB/MiB/GiB = 1024-based)", transfer | verb_sweep, nullptr, nullptr, t, "SIZE",
  [](V& v, const X& x) { v.client.block_size = static_cast<std::uint32_t>(x.number); return true; },
  [](const ClientOptions& c) -> std::uint64_t { return c.block_size; }},
OptionRow{"-w,--window", K::size, "0", 0, limits::max_window, "at most 1G",
  "SO_SNDBUF/SO_RCVBUF on every data stream, both ends; 0 = kernel autotuning, past which a "
  "sending stream its send buffer holds pins a larger one", transfer_list, nullptr, nullptr, n, "SIZE",
  [](V& v, const X& x) { v.client.window = static_cast<std::uint32_t>(x.number); return true; },
  [](const ClientOptions& c) -> std::uint64_t { return c.window; }},
OptionRow{"--perf-interval", K::duration, "1", ms_of(limits::min_perf_interval), ms_of(limits::max_perf_interval),
  "use 0.05 to 3600 seconds", "seconds between rate lines (or 500ms, 2m)", transfer, "PERF_INTERVAL_MS", "ms", o, "SECONDS",
  [](V& v, const X& x) { v.client.perf_interval = ms(x.number); return true; }, nullptr},
OptionRow{"--checksum", K::choice, "adler32", 0, 0, "use adler32, sha256, md5, crc32, sha1 or none",
  "whole-file checksum: adler32, sha256 or none", transfer, nullptr, nullptr, t, "adler32|sha256|md5|crc32|sha1|none",
  set_checksum, nullptr},
OptionRow{"--congestion", K::text, "", 0, limits::max_congestion_name, "name too long",
  "TCP congestion control on every data stream, both ends (e.g. cubic, reno, bbr)", transfer_list, nullptr, nullptr, n, "NAME",
  [](V& v, const X& x) { v.client.congestion = x.text; return true; },
  [](const ClientOptions& c) -> std::uint64_t { return c.congestion.size(); }},
OptionRow{"--window-clamp", K::size, "0", 0, limits::max_window, "at most 1G",
  "TCP_WINDOW_CLAMP: keep autotuning below SIZE; 0 = none", transfer_list & ~verb_sweep, nullptr, nullptr, n, "SIZE",
  [](V& v, const X& x) { v.client.window_clamp = static_cast<std::uint32_t>(x.number); return true; },
  [](const ClientOptions& c) -> std::uint64_t { return c.window_clamp; }},
OptionRow{"--compress", K::choice, "none", 0, 0, "use none, zstd, zstd:LEVEL (1-22) or auto",
  "per-block compression: none, zstd[:LEVEL] or auto (stops when it does not pay)", transfer_list, nullptr, nullptr, t,
  "none|zstd[:LEVEL]|auto", set_compress, nullptr},
OptionRow{"--stream-stats", K::flag, "", 0, 0, "", "each interval, per stream: rate, cwnd, RTT, retransmits, Send-Q, buffer (sending side)",
  transfer, nullptr, nullptr, o, "", [](V& v, const X&) { v.client.stream_stats = true; return true; }, nullptr},
OptionRow{"--json", K::flag, "", 0, 0, "", "newline-delimited JSON events instead of text (docs/json.md)",
  transfer, nullptr, nullptr, o, "", [](V& v, const X&) { v.flags.json = true; return true; }, nullptr},
OptionRow{"--overwrite", K::flag, "", 0, 0, "", "replace an existing destination",
  transfer, nullptr, nullptr, t, "", [](V& v, const X&) { v.client.overwrite = true; return true; }, nullptr},
OptionRow{"--encrypt", K::flag, "", 0, 0, "", "TLS on every data stream too (the control connection always has it); slower",
  transfer, nullptr, nullptr, s, "", [](V& v, const X&) { v.client.encrypt = true; return true; }, nullptr},
OptionRow{"-q,--quiet", K::flag, "", 0, 0, "", "print nothing but errors",
  transfer, nullptr, nullptr, o, "", [](V& v, const X&) { v.flags.quiet = true; return true; }, nullptr},
OptionRow{"-v,--verbose", K::flag, "", 0, 0, "", "print debugging detail on stderr",
  transfer, nullptr, nullptr, o, "", [](V& v, const X&) { v.flags.verbose = true; return true; }, nullptr},
OptionRow{"--stall-timeout", K::duration, "60s", ms_of(limits::min_stall_timeout), ms_of(limits::max_stall_timeout),
  "use a duration from 500ms to 1h (e.g. 30s, 2m)", "replace a data stream that hears nothing from the peer this long (30s, 2m, 500ms)",
  transfer, nullptr, nullptr, r, "DURATION", [](V& v, const X& x) { v.client.stall_timeout = ms(x.number); return true; }, nullptr},
OptionRow{"--no-resume", K::flag, "", 0, 0, "", "discard a partial file an interrupted attempt left and start over",
  transfer, nullptr, nullptr, r, "", [](V& v, const X&) { v.client.resume = false; return true; }, nullptr},
OptionRow{"--partial-max-age", K::duration, "7d", ms_of(limits::min_partial_max_age), ms_of(limits::max_partial_max_age),
  "use a duration from 1s to 366d (e.g. 12h, 7d)", "a get removes temporary files older than this that interrupted transfers "
  "left in its destination directory (1s to 366d)", transfer, nullptr, nullptr, r, "DURATION",
  [](V& v, const X& x) { v.client.partial_max_age = std::chrono::duration_cast<std::chrono::seconds>(ms(x.number)); return true; },
  nullptr},
OptionRow{"--retries", K::count, "0", 0, limits::max_retries, "use 0 to 20",
  "further attempts of a file that failed on the network, the protocol or its checksum, each resuming what arrived; pauses "
  "of 1 s, 2 s, 4 s ... (+-50 %, at most 1 min); never after a refusal, a missing file, a full disk or Ctrl-C (0-20; per "
  "file with -r)", transfer, nullptr, nullptr, r, "N",
  [](V& v, const X& x) { v.client.retry.retries = static_cast<unsigned>(x.number); return true; },
  [](const ClientOptions& c) -> std::uint64_t { return c.retry.retries; }},
OptionRow{"--sync", K::flag, "", 0, 0, "", "the receiver makes each block durable (fdatasync) before acknowledging it",
  transfer, nullptr, nullptr, r, "", [](V& v, const X&) { v.client.sync = true; return true; }, nullptr},
OptionRow{"--report", K::text, "", 0, 0, "", "at the end, write the run as one HTML page of charts (as `pxfer report` makes)",
  verb_put | verb_get | verb_cp, nullptr, nullptr, o, "FILE.html", [](V& v, const X& x) { v.flags.report = x.text; return true; }, nullptr},
OptionRow{"--parents", K::flag, "", 0, 0, "", "create the missing directories above the destination (gfal-copy -p)",
  verb_put | verb_get | verb_cp, nullptr, nullptr, t, "", [](V& v, const X&) { v.flags.parents = true; return true; }, nullptr},
OptionRow{"--rate-lines", K::flag, "", 0, 0, "", "print the gridftp rate lines even on a terminal (instead of the progress bar)",
  transfer, nullptr, nullptr, o, "", [](V& v, const X&) { v.flags.rate_lines = true; return true; }, nullptr},
OptionRow{"--connect-timeout", K::duration, "15", ms_of(limits::min_connect_timeout), ms_of(limits::max_connect_timeout),
  "use 0.1 to 3600 seconds", "seconds to wait for the server", verb_ns, "CONNECT_TIMEOUT", nullptr, n, "SECONDS",
  [](V& v, const X& x) { v.client.connect_timeout = ms(x.number); return true; }, nullptr},
};
// clang-format on

const std::string not_a_size =
    "not a size; use bytes, K/M/G/T or KiB/MiB/GiB (1024-based) or kB/MB/GB (1000-based), e.g. 4M";

bool within(const OptionRow& row, std::uint64_t value) { return value >= row.min && (row.max == 0 || value <= row.max); }

// The number a kind reads from `text`; false when it is not one.
bool number_of(const OptionRow& row, std::string_view text, std::uint64_t& out) {
  switch (row.kind) {
    case K::count: {
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
      return ec == std::errc() && end == text.data() + text.size();
    }
    case K::size:
      if (auto v = parse_size(text)) return out = *v, true;
      return false;
    case K::duration:
      if (auto d = parse_duration(text); d && d->count() >= 0) return out = static_cast<std::uint64_t>(d->count()), true;
      return false;
    case K::flag: return out = 1, true;
    case K::text: return out = text.size(), true;
    case K::choice: return true;
  }
  return false;
}

// How check() shows a value in the row's unit.
std::string shown(const OptionRow& row, std::uint64_t value) {
  if (row.kind == K::duration) return std::to_string(value) + "ms";
  if (row.kind == K::text) return "of " + std::to_string(value) + " characters";
  return std::to_string(value);
}

}  // namespace

std::span<const OptionRow> option_table() { return rows; }

std::string option_name(const OptionRow& row) {
  const std::string_view names = row.names;
  const auto at = names.find("--");
  return std::string(at == std::string_view::npos ? names : names.substr(at + 2));
}

const OptionRow* find_option(std::string_view name) {
  for (const OptionRow& row : rows)
    if (option_name(row) == name) return &row;
  return nullptr;
}

std::string apply_option(const OptionRow& row, std::string_view text, OptionValues& values) {
  OptionValue value{0, text};
  if (!number_of(row, text, value.number)) return row.kind == K::size ? not_a_size : row.use;
  if (row.kind != K::choice && row.kind != K::flag && !within(row, value.number)) return row.use;
  if (!row.set(values, value)) return row.use;
  return "";
}

void apply_option(std::string_view name, std::string_view text, OptionValues& values) {
  const OptionRow* row = find_option(name);
  if (!row) throw Error(Errc::internal, "no client option --" + std::string(name));
  if (auto problem = apply_option(*row, text, values); !problem.empty())
    throw Error(Errc::usage, "--" + std::string(name) + " " + std::string(text) + ": " + problem);
}

void apply_flags(const OptionTexts& given, OptionValues& values) {
  for (const auto& [name, text] : given)
    if (const OptionRow* row = find_option(name); row && row->kind == K::flag) apply_option(*row, text, values);
}

OptionValues build_options(const OptionTexts& given) {
  OptionValues values;
  for (const OptionRow& row : rows)
    if (row.kind != K::flag) apply_option(option_name(row), row.default_text, values);
  apply_flags(given, values);
  for (const auto& [name, text] : given)
    if (const OptionRow* row = find_option(name); !row || row->kind != K::flag) apply_option(name, text, values);
  return values;
}

void check(const ClientOptions& options) {
  for (const OptionRow& row : rows) {
    if (!row.read) continue;
    const std::uint64_t value = row.read(options);
    if (!within(row, value)) throw Error(Errc::usage, "--" + option_name(row) + " " + shown(row, value) + ": " + row.use);
  }
}

}  // namespace pxfer
