// pxfer: put and get files over N parallel TCP streams. Parses options into ClientOptions and
// hands them to the library; every failure is one line on stderr and a distinct exit code.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "batch_command.hpp"
#include "cli_support.hpp"
#include "cp_command.hpp"
#include "namespace_command.hpp"
#include "option_rows.hpp"
#include "process_memory.hpp"
#include "pxfer/client/interrupt_watch.hpp"
#include "report_command.hpp"
#include "security_args.hpp"
#include "token_discovery.hpp"
#include "client_help.hpp"
#include "command_line.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/core/doctor.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/present/json_printer.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/core/option_table.hpp"
#include "pxfer/present/progress_printer.hpp"
#include "pxfer/present/report_recorder.hpp"
#include "pxfer/io/secret_file.hpp"
#include "pxfer/core/stream_count.hpp"
#include "pxfer/client/sweep.hpp"
#include "pxfer/tpc/tpc.hpp"
#include "pxfer/version.hpp"

using namespace pxfer;
using pxfer::cli::SecurityArgs;
using pxfer::cli::add_security;
using pxfer::cli::apply_security;
using pxfer::cli::to_security;

namespace {

using cli::CommonArgs;

// How a recorded run is labelled in its report: the options that shape a transfer.
std::string command_label(bool is_put, const CommonArgs& a, const cli::BatchArgs& b) {
  std::string out = is_put ? "put" : "get";
  if (b.recursive) out += " -r";
  if (!b.from_file.empty()) out += " --from-file";
  out += " -p " + a.text("streams") + " -w " + a.text("window");
  if (b.wanted()) out += b.auto_tune ? " --auto" : " -c " + std::to_string(b.concurrency);
  for (const char* name : {"congestion", "block-size", "compress"})
    if (a.text(name) != find_option(name)->default_text) out += std::string(" --") + name + " " + a.text(name);
  if (a.given("encrypt")) out += " --encrypt";
  return out;
}

struct SweepArgs {
  std::string url, streams = "1,3,5,10", files = "1,3,5,10", size = "256M", direction = "get", window = "0";
  std::string congestion, compress = "none", block_size = "2M";
  unsigned repeat = 1;
  bool csv = false, json = false;
  std::string report;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::vector<unsigned> count_list(const std::string& name, const std::string& text, unsigned max) {
  std::vector<unsigned> out;
  for (const auto& item : split_list(text)) {
    auto v = parse_size(item);
    if (!v || *v < 1 || *v > max)
      throw Error(Errc::usage, name + " " + text + ": '" + item + "' is not a number from 1 to " + std::to_string(max));
    out.push_back(static_cast<unsigned>(*v));
  }
  if (out.empty()) throw Error(Errc::usage, name + ": give at least one value");
  return out;
}

// One item of a sweep's list through its row of the option table: the same parse, bounds and
// refusal as put's and get's.
ClientOptions sweep_item(const char* name, const std::string& item) {
  OptionValues values;
  apply_option(name, item, values);
  return values.client;
}

int run_sweep_command(const SweepArgs& a, const SecurityArgs& security) {
  try {
    apply_security(security);
    std::string why;
    auto url = parse_url(a.url, &why);
    if (!url) throw Error(Errc::usage, a.url + ": " + why);
    SweepOptions o;
    o.streams.clear();  // each item through the streams row: 1-64 or auto (0 in SweepOptions)
    for (const auto& item : split_list(a.streams)) {
      const ClientOptions one = sweep_item("streams", item);
      o.streams.push_back(one.auto_streams ? 0u : one.streams);
    }
    if (o.streams.empty()) throw Error(Errc::usage, "--streams: give at least one value");
    o.files = count_list("--files", a.files, 64);
    o.size = cli::size_option("--size", a.size);
    if (o.size == 0) throw Error(Errc::usage, "--size must be positive");
    o.directions.clear();
    for (const auto& d : split_list(a.direction)) {
      if (d == "get") o.directions.push_back(Direction::get);
      else if (d == "put") o.directions.push_back(Direction::put);
      else throw Error(Errc::usage, "--direction " + a.direction + ": use get, put or get,put");
    }
    o.windows.clear();
    for (const auto& w : split_list(a.window)) o.windows.push_back(sweep_item("window", w).window);
    if (!a.congestion.empty()) o.congestions = split_list(a.congestion);
    for (const auto& c : o.congestions) sweep_item("congestion", c);
    o.compressions.clear();
    for (const auto& c : split_list(a.compress)) o.compressions.push_back(sweep_item("compress", c).compression);
    o.repeat = std::clamp(a.repeat, 1u, 100u);
    o.base.block_size = sweep_item("block-size", a.block_size).block_size;
    std::size_t total = o.directions.size() * o.windows.size() * o.congestions.size() * o.compressions.size() *
                        o.files.size() * o.streams.size();
    if (!a.report.empty()) cli::check_report_path("--report", a.report);
    std::size_t done = 0;
    auto cells = run_sweep(*url, o, [&](const SweepCell& c) {
      std::fprintf(stderr, "sweep: %zu/%zu %s files=%u streams=%u: %.1f Mbit/s, %u failures\n", ++done, total,
                   c.direction == Direction::put ? "put" : "get", c.files, c.streams, c.median_mbit(), c.failures);
    });
    std::string text = a.json ? format_sweep_json(cells) : a.csv ? format_sweep_csv(cells) : format_sweep_tables(cells);
    std::fputs(text.c_str(), stdout);
    if (!a.report.empty()) {
      ReportRecorder recorder("sweep " + a.direction + " --files " + a.files + " --streams " + a.streams + " --size " + a.size);
      recorder.add(format_sweep_json(cells));
      cli::write_recorded_report(a.report, recorder, false);
    }
    for (const auto& c : cells)
      if (c.failures) return exit_code(Errc::network);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pxfer: %s\n", log_safe(e.what()).c_str());
    return exit_code(e.code());
  }
}

int run_doctor(std::string url_text, const std::string& target, double loss_pct, unsigned pings, bool json,
               const SecurityArgs& security) {
  try {
    apply_security(security);
    if (url_text.find('/', std::string("pxfer://").size()) == std::string::npos) url_text += '/';
    std::string why;
    auto url = parse_url(url_text, &why);
    if (!url) throw Error(Errc::usage, url_text + ": " + why);
    DoctorOptions options;
    auto rate = parse_rate(target);
    if (!rate) throw Error(Errc::usage, "--target " + target + ": not a rate; use e.g. 10gbit, 500mbit or 1GB/s");
    options.target_bytes_per_s = *rate;
    if (!(loss_pct >= 0 && loss_pct < 100)) throw Error(Errc::usage, "--loss: a percentage from 0 to 100");
    options.loss = loss_pct / 100;
    options.pings = std::clamp(pings, 1u, 1000u);
    PathFacts facts = measure_path(*url, options);
    std::fputs(json ? (format_doctor_json(url->to_string(), facts, advise(facts)) + "\n").c_str()
                    : format_doctor(facts, advise(facts)).c_str(),
               stdout);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pxfer: %s\n", log_safe(e.what()).c_str());
    return exit_code(e.code());
  }
}

// put or get: one file, or a batch (-r, --from-file). SOURCE and DEST as given (a put's local file
// and URL, a get's URL and local path), checked here: --from-file needs neither.
int run_transfer_command(bool is_put, const CommonArgs& args, const cli::BatchArgs& batch, const std::string& source,
                         const std::string& dest, const SecurityArgs& security) {
  // Ctrl-C and SIGTERM end the whole command, caught (never the default kill): no file starts
  // after them, the ones in flight stay resumable, one line says what did not finish (issue 34).
  const InterruptWatch interrupt_watch;
  // The flags first: they cannot be refused, so a refused value is reported as --json or -q ask.
  OptionValues values;
  apply_flags(args.given(), values);
  const CommandFlags& flags = values.flags;
  cli::set_verbosity(flags.verbose);
  JsonPrinter json(stdout);
  // The bar on a terminal; the gridftp lines otherwise or with --rate-lines.
  const bool bar = !flags.json && !flags.quiet && !flags.rate_lines && ::isatty(STDOUT_FILENO) != 0;
  ProgressPrinter text(stdout, bar, flags.quiet, cli::terminal_width(STDOUT_FILENO));
  std::optional<ReportRecorder> recorder;
  try {
    apply_security(security);
    values = build_options(args.given());
    ClientOptions& options = values.client;
    if (flags.parents) cli::make_destination_parents(is_put, dest, to_security(security), options.connect_timeout);
    if (!flags.report.empty()) {
      cli::check_report_path("--report", flags.report);
      recorder.emplace(command_label(is_put, args, batch));
    }
    if (batch.wanted()) {
      BatchOptions batch_options = cli::to_batch_options(batch, options);  // bad values before any LIST
      BatchPlan plan = cli::plan_batch(batch, is_put, source, dest, options);
      const int status = cli::run_batch_command(plan, batch_options, flags.quiet, flags.json,
                                                {bar, cli::terminal_width(STDOUT_FILENO), recorder ? &*recorder : nullptr});
      if (recorder) cli::write_recorded_report(flags.report, *recorder, flags.quiet || flags.json);
      return status;
    }
    if (source.empty() || dest.empty())
      throw Error(Errc::usage, std::string(is_put ? "put needs LOCAL and URL" : "get needs URL and LOCAL") +
                                   " (or -r, or --from-file LIST); see pxfer --help");
    std::string why;
    const std::string& url_text = is_put ? dest : source;
    auto url = parse_url(url_text, &why);
    if (!url) throw Error(Errc::usage, url_text + ": " + why);
    ProgressListener* shown = flags.json ? static_cast<ProgressListener*>(&json) : &text;
    // The report charts every stream; the screen shows them only with --stream-stats.
    ListenerTee tee(shown, recorder ? &*recorder : nullptr, !options.stream_stats);
    if (recorder) options.stream_stats = true;
    ProgressListener* listener = recorder ? static_cast<ProgressListener*>(&tee) : shown;
    if (is_put) put_file(source, *url, options, listener);
    else get_file(*url, dest, options, listener);
    if (recorder) cli::write_recorded_report(flags.report, *recorder, flags.quiet || flags.json);
    return 0;
  } catch (const Error& e) {
    text.close_line();  // an error starts on a line of its own
    if (flags.json) json.on_error(e);
    std::fflush(stdout);
    std::fprintf(stderr, "pxfer: %s\n", log_safe(e.what()).c_str());
    if (recorder && !recorder->empty()) {  // a run that started: its page shows the error
      recorder->on_error(e);
      cli::write_recorded_report(flags.report, *recorder, flags.quiet || flags.json);
    }
    return exit_code(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pxfer: internal error: %s (please report it)\n", log_safe(e.what()).c_str());
    return exit_code(Errc::internal);
  }
}

// pxfer cp SRC... DST: put or get, whichever side is local (apps/pxfer/cp_command.hpp).
struct CpArgs {
  CommonArgs common;
  cli::BatchArgs batch;
  std::vector<std::string> paths;
  std::string copy_mode = "pull";  // pxfer:// -> pxfer://, as gfal-copy --copy-mode names them
};

// pxfer cp pxfer://A/x pxfer://B/y: the servers move the data; this prints what the active one reports.
int run_third_party(const CpArgs& a, const std::string& source, const std::string& dest, const SecurityArgs& security) {
  OptionValues values;
  apply_flags(a.common.given(), values);
  const CommandFlags& flags = values.flags;
  cli::set_verbosity(flags.verbose);
  JsonPrinter json(stdout);
  const bool bar = !flags.json && !flags.quiet && !flags.rate_lines && ::isatty(STDOUT_FILENO) != 0;
  ProgressPrinter text(stdout, bar, flags.quiet, cli::terminal_width(STDOUT_FILENO));
  try {
    apply_security(security);
    values = build_options(a.common.given());
    const ClientOptions& options = values.client;
    // TPC_START carries streams, block size, checksum and the overwrite/resume/sync/encrypt flags;
    // the socket and compression settings (the rows without verb_tpc) stay with the copying
    // server's defaults. Said, not ignored.
    for (const auto& [name, given] : a.common.given())
      if (const OptionRow* row = find_option(name); !(row->verbs & verb_tpc) && given != row->default_text)
        throw Error(Errc::usage, "--" + name + " does not reach the server that runs a third-party copy; "
                                               "set it in that pxferd's configuration, or copy through a local disk");
    std::string why;
    auto from = parse_url(source, &why);
    if (!from) throw Error(Errc::usage, source + ": " + why);
    auto to = parse_url(dest, &why);
    if (!to) throw Error(Errc::usage, dest + ": " + why);
    const CopyMode mode = a.copy_mode == "push" ? CopyMode::push : CopyMode::pull;
    ProgressListener* shown = flags.json ? static_cast<ProgressListener*>(&json) : &text;
    copy_between_servers(*from, *to, options, mode, shown);
    return 0;
  } catch (const Error& e) {
    text.close_line();
    if (flags.json) json.on_error(e);
    std::fflush(stdout);
    std::fprintf(stderr, "pxfer: %s\n", log_safe(e.what()).c_str());
    return exit_code(e.code());
  }
}

CLI::App* add_cp_command(CLI::App& app, CpArgs& a) {
  auto* cp = app.add_subcommand("cp", "copy SRC... to DST, either side local or pxfer:// (put or get, chosen for you)");
  cp->add_option("SRC... DST", a.paths, "local files or pxfer:// URLs; with several sources DST is a directory");
  cp->add_option("--copy-mode", a.copy_mode,
                 "pxfer:// -> pxfer:// (third-party copy): pull = the destination server reads from the source, "
                 "push = the source server writes to the destination")
      ->check(CLI::IsMember({"pull", "push"}))->capture_default_str();
  cli::add_common(*cp, a.common, verb_cp);
  cli::add_batch_options(*cp, a.batch, true);
  return cp;
}

int run_cp_command(const CpArgs& a, const SecurityArgs& security) {
  const InterruptWatch interrupt_watch;  // as for put and get: the whole command stops on a signal
  try {
    return cli::run_cp(
        a.paths, !a.batch.from_file.empty(),
        [&](bool is_put, const std::string& s, const std::string& d) {
          return run_transfer_command(is_put, a.common, a.batch, s, d, security);
        },
        [&](const std::string& s, const std::string& d) { return run_third_party(a, s, d, security); });
  } catch (const Error& e) {
    std::fprintf(stderr, "pxfer: %s\n", log_safe(e.what()).c_str());
    return exit_code(e.code());
  }
}

}  // namespace

int main(int argc, char** argv) {
  cli::keep_freed_memory();
  CLI::App app{"pxfer: parallel-stream file transfer (client). Exit codes: see README."};
  app.require_subcommand(1);
  CommonArgs put_args, get_args;
  std::string put_local, put_remote, get_remote, get_local;
  // SOURCE and DEST are checked after parsing: --from-file needs neither.
  cli::BatchArgs put_batch, get_batch;
  auto* put = app.add_subcommand("put", "send LOCAL to pxfer://HOST[:PORT]/PATH");
  put->add_option("LOCAL", put_local, "local file (a directory with -r)");
  put->add_option("URL", put_remote, "pxfer://HOST[:PORT]/PATH (a trailing / means into that directory)");
  cli::add_common(*put, put_args, verb_put);
  cli::add_batch_options(*put, put_batch, true);
  auto* get = app.add_subcommand("get", "fetch pxfer://HOST[:PORT]/PATH into LOCAL");
  get->add_option("URL", get_remote, "pxfer://HOST[:PORT]/PATH");
  get->add_option("LOCAL", get_local, "local file or directory (a trailing / means into that directory)");
  cli::add_common(*get, get_args, verb_get);
  cli::add_batch_options(*get, get_batch, false);
  CpArgs cp_args;
  auto* cp = add_cp_command(app, cp_args);
  cli::NamespaceArgs ns_args;
  const cli::NamespaceCommands ns_commands = cli::add_namespace_commands(app, ns_args);
  std::string doctor_url, doctor_target = "10gbit";
  double doctor_loss_pct = 0;
  unsigned doctor_pings = 10;
  bool doctor_json = false;
  auto* doctor = app.add_subcommand("doctor", "measure the path to a server and say what limits a transfer and what to change");
  doctor->add_option("URL", doctor_url, "pxfer://HOST[:PORT]/")->required();
  doctor->add_option("--target", doctor_target, "the rate you want, e.g. 10gbit, 500mbit, 1GB/s")->capture_default_str();
  doctor->add_option("--loss", doctor_loss_pct, "packet loss on the path in percent (e.g. 0.01), if known");
  doctor->add_option("--pings", doctor_pings, "round trips to measure")->capture_default_str();
  doctor->add_flag("--json", doctor_json, "one JSON object instead of text (pxfer report reads it)");

  SweepArgs sweep_args;
  auto* sweep = app.add_subcommand("sweep", "run the files x streams matrix against a server and print rate and failures per cell");
  sweep->add_option("URL", sweep_args.url, "pxfer://HOST[:PORT]/DIR/ where the server may hold temporary files")->required();
  sweep->add_option("--streams", sweep_args.streams, "streams per file, comma-separated (1-64 or auto)")->capture_default_str();
  sweep->add_option("--files", sweep_args.files, "files at once, comma-separated")->capture_default_str();
  sweep->add_option("--size", sweep_args.size, "size of each file")->capture_default_str();
  sweep->add_option("--direction", sweep_args.direction, "get, put or get,put")->capture_default_str();
  sweep->add_option("--window", sweep_args.window, "socket buffers, comma-separated (0 = autotuning)")->capture_default_str();
  sweep->add_option("--congestion", sweep_args.congestion, "congestion controls, comma-separated (default: the system's)");
  sweep->add_option("--compress", sweep_args.compress, "compressions, comma-separated (none, zstd[:LEVEL], auto)")->capture_default_str();
  sweep->add_option("--repeat", sweep_args.repeat, "runs per cell (the median is shown)")->capture_default_str();
  sweep->add_option("--block-size", sweep_args.block_size, "block size")->capture_default_str();
  sweep->add_flag("--csv", sweep_args.csv, "CSV instead of tables");
  sweep->add_flag("--json", sweep_args.json, "one JSON object per cell instead of tables");
  sweep->add_option("--report", sweep_args.report, "also write the matrix as an HTML page (heatmap)");
  cli::ReportArgs report_args;
  auto* report = cli::add_report_command(app, report_args);
  SecurityArgs security;
  for (auto* cmd : {put, get, doctor, sweep, cp}) add_security(*cmd, security);
  for (auto* cmd : ns_commands.all()) add_security(*cmd, security);
  // Last, so that every subcommand's options are there to be grouped (apps/pxfer/client_help.hpp).
  app.set_version_flag("--version", std::string("pxfer ") + version + " (git " + revision() + ")", "print the version and exit");
  cli::lay_out_help(app);
  if (auto unknown = cli::unknown_command(app, {argv, argv + argc}, "pxfer", true); !unknown.empty()) {
    std::fprintf(stderr, "pxfer: %s\n", unknown.c_str());
    return exit_code(Errc::usage);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pxfer: %s (see pxfer --help)\n", log_safe(e.what()).c_str());
    return exit_code(Errc::usage);
  }

  if (doctor->parsed()) return run_doctor(doctor_url, doctor_target, doctor_loss_pct, doctor_pings, doctor_json, security);
  if (sweep->parsed()) return run_sweep_command(sweep_args, security);
  if (report->parsed()) return cli::run_report_command(report_args);
  if (const CLI::App* ns = ns_commands.parsed())
    return cli::run_namespace_command(*ns, ns_args, [&] { return to_security(security); });
  if (cp->parsed()) return run_cp_command(cp_args, security);
  const bool is_put = put->parsed();
  return is_put ? run_transfer_command(true, put_args, put_batch, put_local, put_remote, security)
                : run_transfer_command(false, get_args, get_batch, get_remote, get_local, security);
}
