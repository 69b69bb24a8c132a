#pragma once
// pxfer put/get -r and --from-file: the options of a multi-file run, parsed into BatchOptions,
// and the lines it prints (one per file, then the aggregate report).
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>

#include "pxfer/client/batch.hpp"
#include "pxfer/present/batch_printer.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/present/json_printer.hpp"
#include "pxfer/common/log_safe.hpp"
#include "pxfer/present/report_recorder.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer::cli {

inline constexpr unsigned default_concurrency = 2;
inline constexpr unsigned default_auto_max_concurrency = 8;  // -c's default with --auto

struct BatchArgs {
  bool recursive = false;
  std::string from_file;
  unsigned concurrency = default_concurrency;
  unsigned max_streams = 0;
  bool skip_existing = false;
  bool preserve = false;
  std::string ramp_up;
  double connect_rate = 0;
  bool auto_tune = false;
  unsigned min_concurrency = 1;
  std::string auto_interval = "5s";
  double auto_tolerance = 5;  // percent
  CLI::Option* concurrency_option = nullptr;
  CLI::Option* min_concurrency_option = nullptr;
  CLI::Option* auto_interval_option = nullptr;
  CLI::Option* auto_tolerance_option = nullptr;

  bool wanted() const { return recursive || !from_file.empty(); }
};

inline void add_batch_options(CLI::App& cmd, BatchArgs& a, bool is_put) {
  cmd.add_flag("-r,--recursive", a.recursive, "copy a directory and everything below it (a trailing / on DEST: into it)");
  cmd.add_option("--from-file", a.from_file, "transfer every 'SOURCE DEST' line of FILE (# comments; one side a pxfer:// URL)");
  a.concurrency_option =
      cmd.add_option("-c,--concurrency", a.concurrency,
                     "files in flight with -r/--from-file (each with -p streams); with --auto the maximum (default 8)")
          ->capture_default_str();
  cmd.add_flag("--auto", a.auto_tune,
               "adapt files in flight (between --min-concurrency and -c) to the measured throughput");
  a.min_concurrency_option =
      cmd.add_option("--min-concurrency", a.min_concurrency, "with --auto: the fewest files in flight")->capture_default_str();
  a.auto_interval_option =
      cmd.add_option("--auto-interval", a.auto_interval, "with --auto: time between decisions (5s, 500ms, ...)")
          ->capture_default_str();
  a.auto_tolerance_option =
      cmd.add_option("--auto-tolerance", a.auto_tolerance, "with --auto: a rate fall beyond this percentage backs off")
          ->capture_default_str();
  cmd.add_option("--max-streams", a.max_streams, "cap on concurrency x streams; streams per file are reduced to fit (0 = none)")
      ->capture_default_str();
  cmd.add_option("--ramp-up", a.ramp_up, "start with one file in flight and reach -c linearly over DURATION (30s, 2m, 500ms)");
  cmd.add_option("--connect-rate", a.connect_rate, "open at most this many new connections per second (0 = no limit)");
  cmd.add_flag("--skip-existing", a.skip_existing, "skip a file whose destination exists with the same size and checksum (both copies are read)");
  cmd.add_flag("--preserve", a.preserve,
               is_put ? "set each file's mode (never world-writable there) and modification time on the server"
                      : "keep each file's mode and modification time");
}

inline BatchOptions to_batch_options(const BatchArgs& a, const ClientOptions& client) {
  const bool concurrency_given = a.concurrency_option && a.concurrency_option->count() > 0;
  if (!a.auto_tune) {
    for (const CLI::Option* o : {a.min_concurrency_option, a.auto_interval_option, a.auto_tolerance_option})
      if (o && o->count() > 0) throw Error(Errc::usage, o->get_name() + " needs --auto");
  }
  if (a.concurrency < 1 || a.concurrency > 64)
    throw Error(Errc::usage, "--concurrency " + std::to_string(a.concurrency) + ": use 1 to 64 files in flight");
  if (a.max_streams > 4096) throw Error(Errc::usage, "--max-streams " + std::to_string(a.max_streams) + ": use 0 (no cap) to 4096");
  BatchOptions o;
  o.client = client;
  o.concurrency = a.concurrency;
  o.max_streams = a.max_streams;
  o.skip_existing = a.skip_existing;
  o.preserve = a.preserve;
  if (!a.ramp_up.empty()) {
    auto ramp = parse_duration(a.ramp_up);
    if (!ramp || ramp->count() > 24 * 3600 * 1000)
      throw Error(Errc::usage, "--ramp-up " + a.ramp_up + ": not a duration; use e.g. 30s, 2m, 500ms or plain seconds");
    o.ramp_up = *ramp;
  }
  if (!(a.connect_rate >= 0 && a.connect_rate <= 100000))
    throw Error(Errc::usage, "--connect-rate: use 0 (no limit) to 100000 connections per second");
  o.connect_rate = a.connect_rate;
  if (a.auto_tune) {
    o.auto_tune = true;
    if (!concurrency_given) o.concurrency = default_auto_max_concurrency;
    if (a.min_concurrency < 1 || a.min_concurrency > o.concurrency)
      throw Error(Errc::usage, "--min-concurrency " + std::to_string(a.min_concurrency) + ": use 1 to the maximum, -c " +
                                   std::to_string(o.concurrency));
    o.min_concurrency = a.min_concurrency;
    auto interval = parse_duration(a.auto_interval);
    if (!interval || interval->count() < 100 || interval->count() > 3600 * 1000)
      throw Error(Errc::usage, "--auto-interval " + a.auto_interval + ": use a duration from 100ms to 1h (e.g. 5s, 500ms)");
    o.auto_interval = *interval;
    if (!(a.auto_tolerance >= 0 && a.auto_tolerance <= 50))
      throw Error(Errc::usage, "--auto-tolerance: use 0 to 50 (percent)");
    o.auto_tolerance = a.auto_tolerance / 100;
    if (o.ramp_up.count() > 0)
      throw Error(Errc::usage, "--ramp-up and --auto do not mix: --auto starts halfway between --min-concurrency and -c");
  }
  return o;
}

// SOURCE and DEST as given on the command line (empty when not given).
inline BatchPlan plan_batch(const BatchArgs& a, bool is_put, const std::string& source, const std::string& dest,
                            const ClientOptions& client) {
  if (!a.from_file.empty()) {
    if (a.recursive) throw Error(Errc::usage, "--from-file and -r do not mix: list files, or copy one directory with -r");
    if (!source.empty() || !dest.empty())
      throw Error(Errc::usage, "--from-file takes no SOURCE DEST on the command line; put them in " + a.from_file);
    return plan_from_list(a.from_file);
  }
  if (source.empty() || dest.empty()) throw Error(Errc::usage, "-r needs SOURCE and DEST (see pxfer --help)");
  std::string why;
  const std::string& url_text = is_put ? dest : source;
  auto url = parse_url(url_text, &why);
  if (!url) throw Error(Errc::usage, url_text + ": " + why);
  return is_put ? plan_recursive_put(source, *url) : plan_recursive_get(*url, dest, client.connect_timeout);
}

// How a batch shows itself: a bar on a terminal, a recorder for --report.
struct BatchDisplay {
  bool bar = false;
  unsigned width = 80;
  ReportRecorder* recorder = nullptr;
};

// Bytes the plan will move: a put's local sizes, a get's listed sizes; 0 when one is unknown.
inline std::uint64_t planned_bytes(const BatchPlan& plan) {
  std::uint64_t total = 0;
  for (const auto& f : plan.files) {
    struct stat st {};
    if (f.direction == Direction::get && f.source_size) total += *f.source_size;
    else if (f.direction == Direction::put && ::stat(f.local.c_str(), &st) == 0) total += static_cast<std::uint64_t>(st.st_size);
    else return 0;
  }
  return total;
}

// Runs the batch, printing as files finish; returns the exit status. Directories that could not
// be made are named once, in the final report.
inline int run_batch_command(const BatchPlan& plan, BatchOptions options, bool quiet, bool json, BatchDisplay display = {}) {
  if (json || display.bar || display.recorder) options.interval = options.client.perf_interval;  // aggregate progress
  JsonPrinter json_printer(stdout);
  BatchPrinter text_printer(stdout, stderr, quiet, display.bar, display.width, display.bar ? planned_bytes(plan) : 0);
  ProgressListener* shown = json ? static_cast<ProgressListener*>(&json_printer) : &text_printer;
  ListenerTee tee(shown, display.recorder);
  auto report = run_batch(plan, options, display.recorder ? static_cast<ProgressListener&>(tee) : *shown);
  if (display.recorder) display.recorder->add(json_batch_summary(report));
  if (json) {
    json_printer.emit(json_batch_summary(report));
    for (const auto& e : report.setup_errors) std::fprintf(stderr, "pxfer: failed: %s\n", log_safe(e.what()).c_str());
    if (!report.unfinished.empty()) std::fprintf(stderr, "pxfer: %s\n", format_unfinished(report).c_str());
    return report.first_failure ? exit_code(*report.first_failure) : 0;
  }
  text_printer.clear_bar();
  if (!quiet || report.first_failure) std::fputs(format_batch_report(report).c_str(), report.first_failure ? stderr : stdout);
  return report.first_failure ? exit_code(*report.first_failure) : 0;
}

}  // namespace pxfer::cli
