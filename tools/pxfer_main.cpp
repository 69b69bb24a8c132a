// pxfer: put and get files over N parallel TCP streams. Parses options into ClientOptions and
// hands them to the library; every failure is one line on stderr and a distinct exit code.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "batch_command.hpp"
#include "cli_support.hpp"
#include "client_help.hpp"
#include "command_line.hpp"
#include "pxfer/client.hpp"
#include "pxfer/doctor.hpp"
#include "pxfer/error.hpp"
#include "pxfer/json_printer.hpp"
#include "pxfer/progress_printer.hpp"
#include "pxfer/sweep.hpp"
#include "pxfer/version.hpp"

using namespace pxfer;

namespace {

struct CommonArgs {
  unsigned streams = default_streams;
  std::string block_size = "2M";
  std::string window = "0";
  double perf_interval = 1.0;
  std::string checksum = "adler32";
  std::string congestion;
  std::string window_clamp = "0";
  std::string compress = "none";
  bool stream_stats = false;
  bool json = false;
  bool overwrite = false;
  bool quiet = false;
  bool verbose = false;
  std::string stall_timeout = "60s";
  bool no_resume = false;
  bool sync = false;
  bool encrypt = false;
};

// Trust and credentials, shared by every subcommand (docs/security.md).
struct SecurityArgs {
  std::string ca, fingerprint, known_hosts, token_file, cert, key;
};

void add_security(CLI::App& cmd, SecurityArgs& a) {
  cmd.add_option("--ca", a.ca, "verify the server's certificate chain and host name against this CA (PEM)");
  cmd.add_option("--fingerprint", a.fingerprint, "pin the server's certificate: sha256:HEX (as `pxferd fingerprint` prints)");
  cmd.add_option("--known-hosts", a.known_hosts, "pinned server certificates (default ~/.config/pxfer/known_hosts, trust on first use)");
  cmd.add_option("--token-file", a.token_file, "file holding the token `pxferd token create` printed (or set PXFER_TOKEN)");
  cmd.add_option("--cert", a.cert, "client certificate (PEM) for servers that verify them (pxferd --client-ca)");
  cmd.add_option("--key", a.key, "private key of --cert (PEM)");
}

// A token from a file or the environment; its value never appears in a message.
std::string read_token(const SecurityArgs& a) {
  std::string raw, origin;
  if (!a.token_file.empty()) {
    std::ifstream in(a.token_file);
    if (!in) throw Error(Errc::usage, "--token-file " + a.token_file + ": cannot read it");
    std::ostringstream s;
    s << in.rdbuf();
    raw = s.str();
    origin = "--token-file " + a.token_file;
  } else if (const char* env = std::getenv("PXFER_TOKEN")) {
    raw = env;
    origin = "PXFER_TOKEN";
  }
  auto first = raw.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    if (!origin.empty()) throw Error(Errc::usage, origin + " holds no token");
    return "";
  }
  auto last = raw.find_last_not_of(" \t\r\n");
  std::string token = raw.substr(first, last - first + 1);
  bool printable = token.size() <= 256;
  for (char c : token)
    if (c <= ' ' || c > '~') printable = false;
  if (!printable) throw Error(Errc::usage, origin + ": not a token (expected the single line `pxferd token create` printed)");
  return token;
}

void apply_security(const SecurityArgs& a) {
  ClientSecurity s;
  s.ca_file = a.ca;
  s.known_hosts_file = a.known_hosts;
  s.cert_file = a.cert;
  s.key_file = a.key;
  if (!a.fingerprint.empty()) {
    s.fingerprint = normalize_fingerprint(a.fingerprint);
    if (s.fingerprint.empty())
      throw Error(Errc::usage, "--fingerprint " + a.fingerprint + ": expected sha256: and 64 hex digits");
  }
  if (!a.ca.empty() && !a.fingerprint.empty()) throw Error(Errc::usage, "--ca and --fingerprint: give one of them");
  if (a.cert.empty() != a.key.empty()) throw Error(Errc::usage, "--cert and --key go together");
  s.token = read_token(a);
  set_client_security(std::move(s));
}

void add_common(CLI::App& cmd, CommonArgs& a) {
  cmd.add_option("-p,--streams", a.streams, "parallel TCP data streams (1-64)")->capture_default_str();
  cmd.add_option("--block-size", a.block_size, "block size, 1M-16M (K/M/G = 1024-based)")->capture_default_str();
  cmd.add_option("-w,--window", a.window, "SO_SNDBUF/SO_RCVBUF on every data stream, both ends; 0 = kernel autotuning")
      ->capture_default_str();
  cmd.add_option("--perf-interval", a.perf_interval, "seconds between rate lines")->capture_default_str();
  cmd.add_option("--checksum", a.checksum, "whole-file checksum: adler32, sha256 or none")->capture_default_str();
  cmd.add_option("--congestion", a.congestion, "TCP congestion control on every data stream, both ends (e.g. cubic, reno, bbr)");
  cmd.add_option("--window-clamp", a.window_clamp, "TCP_WINDOW_CLAMP: keep autotuning below SIZE; 0 = none")->capture_default_str();
  cmd.add_option("--compress", a.compress, "per-block compression: none, zstd[:LEVEL] or auto (stops when it does not pay)")
      ->capture_default_str();
  cmd.add_flag("--stream-stats", a.stream_stats, "each interval, per stream: rate, cwnd, RTT, retransmits, Send-Q, buffer (sending side)");
  cmd.add_flag("--json", a.json, "newline-delimited JSON events instead of text (docs/json.md)");
  cmd.add_flag("--overwrite", a.overwrite, "replace an existing destination");
  cmd.add_flag("--encrypt", a.encrypt, "TLS on every data stream too (the control connection always has it); slower");
  cmd.add_flag("-q,--quiet", a.quiet, "print nothing but errors");
  cmd.add_flag("-v,--verbose", a.verbose, "print debugging detail on stderr");
  cmd.add_option("--stall-timeout", a.stall_timeout,
                 "replace a data stream that hears nothing from the peer this long (30s, 2m, 500ms)")
      ->capture_default_str();
  cmd.add_flag("--no-resume", a.no_resume, "discard a partial file an interrupted attempt left and start over");
  cmd.add_flag("--sync", a.sync, "the receiver makes each block durable (fdatasync) before acknowledging it");
}

ClientOptions to_options(const CommonArgs& a) {
  ClientOptions o;
  if (a.streams < 1 || a.streams > 64) throw Error(Errc::usage, "--streams " + std::to_string(a.streams) + ": use 1 to 64");
  o.streams = static_cast<std::uint16_t>(a.streams);
  auto block = cli::size_option("--block-size", a.block_size);
  if (block < (1u << 20) || block > (16u << 20))
    throw Error(Errc::usage, "--block-size " + a.block_size + ": use 1M to 16M");
  o.block_size = static_cast<std::uint32_t>(block);
  auto window = cli::size_option("--window", a.window);
  if (window > (1ull << 30)) throw Error(Errc::usage, "--window " + a.window + ": at most 1G");
  o.window = static_cast<std::uint32_t>(window);
  if (!(a.perf_interval >= 0.05 && a.perf_interval <= 3600))
    throw Error(Errc::usage, "--perf-interval " + std::to_string(a.perf_interval) + ": use 0.05 to 3600 seconds");
  o.perf_interval = std::chrono::milliseconds(static_cast<long>(a.perf_interval * 1000));
  auto algo = parse_checksum_algo(a.checksum);
  if (!algo) throw Error(Errc::usage, "--checksum " + a.checksum + ": use adler32, sha256 or none");
  o.checksum = *algo;
  o.overwrite = a.overwrite;
  o.congestion = a.congestion;
  if (o.congestion.size() > 15) throw Error(Errc::usage, "--congestion " + a.congestion + ": name too long");
  auto clamp = cli::size_option("--window-clamp", a.window_clamp);
  if (clamp > (1ull << 30)) throw Error(Errc::usage, "--window-clamp " + a.window_clamp + ": at most 1G");
  o.window_clamp = static_cast<std::uint32_t>(clamp);
  o.stream_stats = a.stream_stats;
  auto compression = parse_compression(a.compress);
  if (!compression) throw Error(Errc::usage, "--compress " + a.compress + ": use none, zstd, zstd:LEVEL (1-22) or auto");
  o.compression = *compression;
  auto stall = parse_duration(a.stall_timeout);
  if (!stall || stall->count() < 500 || stall->count() > 3'600'000)
    throw Error(Errc::usage, "--stall-timeout " + a.stall_timeout + ": use a duration from 500ms to 1h (e.g. 30s, 2m)");
  o.stall_timeout = *stall;
  o.resume = !a.no_resume;
  o.sync = a.sync;
  o.encrypt = a.encrypt;
  return o;
}

struct SweepArgs {
  std::string url, streams = "1,3,5,10", files = "1,3,5,10", size = "256M", direction = "get", window = "0";
  std::string congestion, compress = "none", block_size = "2M";
  unsigned repeat = 1;
  bool csv = false, json = false;
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

int run_sweep_command(const SweepArgs& a, const SecurityArgs& security) {
  try {
    apply_security(security);
    std::string why;
    auto url = parse_url(a.url, &why);
    if (!url) throw Error(Errc::usage, a.url + ": " + why);
    SweepOptions o;
    o.streams = count_list("--streams", a.streams, 64);
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
    for (const auto& w : split_list(a.window)) o.windows.push_back(static_cast<std::uint32_t>(cli::size_option("--window", w)));
    if (!a.congestion.empty()) o.congestions = split_list(a.congestion);
    o.compressions.clear();
    for (const auto& c : split_list(a.compress)) {
      auto z = parse_compression(c);
      if (!z) throw Error(Errc::usage, "--compress " + c + ": use none, zstd, zstd:LEVEL or auto");
      o.compressions.push_back(*z);
    }
    o.repeat = std::clamp(a.repeat, 1u, 100u);
    auto block = cli::size_option("--block-size", a.block_size);
    if (block < (1u << 20) || block > (16u << 20)) throw Error(Errc::usage, "--block-size " + a.block_size + ": use 1M to 16M");
    o.base.block_size = static_cast<std::uint32_t>(block);
    std::size_t total = o.directions.size() * o.windows.size() * o.congestions.size() * o.compressions.size() *
                        o.files.size() * o.streams.size();
    std::size_t done = 0;
    auto cells = run_sweep(*url, o, [&](const SweepCell& c) {
      std::fprintf(stderr, "sweep: %zu/%zu %s files=%u streams=%u: %.1f Mbit/s, %u failures\n", ++done, total,
                   c.direction == Direction::put ? "put" : "get", c.files, c.streams, c.median_mbit(), c.failures);
    });
    std::string text = a.json ? format_sweep_json(cells) : a.csv ? format_sweep_csv(cells) : format_sweep_tables(cells);
    std::fputs(text.c_str(), stdout);
    for (const auto& c : cells)
      if (c.failures) return exit_code(Errc::network);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pxfer: %s\n", e.what());
    return exit_code(e.code());
  }
}

int run_doctor(std::string url_text, const std::string& target, double loss_pct, unsigned pings,
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
    std::fputs(format_doctor(facts, advise(facts)).c_str(), stdout);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pxfer: %s\n", e.what());
    return exit_code(e.code());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pxfer: parallel-stream file transfer (client). Exit codes: see README."};
  app.require_subcommand(1);
  CommonArgs put_args, get_args;
  std::string put_local, put_remote, get_remote, get_local;
  // SOURCE and DEST are checked after parsing: --from-file needs neither.
  cli::BatchArgs put_batch, get_batch;
  auto* put = app.add_subcommand("put", "send LOCAL to pxfer://HOST[:PORT]/PATH");
  put->add_option("LOCAL", put_local, "local file (a directory with -r)");
  put->add_option("URL", put_remote, "pxfer://HOST[:PORT]/PATH (a trailing / means into that directory)");
  add_common(*put, put_args);
  cli::add_batch_options(*put, put_batch, true);
  auto* get = app.add_subcommand("get", "fetch pxfer://HOST[:PORT]/PATH into LOCAL");
  get->add_option("URL", get_remote, "pxfer://HOST[:PORT]/PATH");
  get->add_option("LOCAL", get_local, "local file or directory (a trailing / means into that directory)");
  add_common(*get, get_args);
  cli::add_batch_options(*get, get_batch, false);
  std::string doctor_url, doctor_target = "10gbit";
  double doctor_loss_pct = 0;
  unsigned doctor_pings = 10;
  auto* doctor = app.add_subcommand("doctor", "measure the path to a server and say what limits a transfer and what to change");
  doctor->add_option("URL", doctor_url, "pxfer://HOST[:PORT]/")->required();
  doctor->add_option("--target", doctor_target, "the rate you want, e.g. 10gbit, 500mbit, 1GB/s")->capture_default_str();
  doctor->add_option("--loss", doctor_loss_pct, "packet loss on the path in percent (e.g. 0.01), if known");
  doctor->add_option("--pings", doctor_pings, "round trips to measure")->capture_default_str();

  SweepArgs sweep_args;
  auto* sweep = app.add_subcommand("sweep", "run the files x streams matrix against a server and print rate and failures per cell");
  sweep->add_option("URL", sweep_args.url, "pxfer://HOST[:PORT]/DIR/ where the server may hold temporary files")->required();
  sweep->add_option("--streams", sweep_args.streams, "streams per file, comma-separated")->capture_default_str();
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
  SecurityArgs security;
  for (auto* cmd : {put, get, doctor, sweep}) add_security(*cmd, security);
  // Last, so that every subcommand's options are there to be grouped (tools/client_help.hpp).
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
    std::fprintf(stderr, "pxfer: %s (see pxfer --help)\n", e.what());
    return exit_code(Errc::usage);
  }

  if (doctor->parsed()) return run_doctor(doctor_url, doctor_target, doctor_loss_pct, doctor_pings, security);
  if (sweep->parsed()) return run_sweep_command(sweep_args, security);
  const bool is_put = put->parsed();
  const CommonArgs& args = is_put ? put_args : get_args;
  cli::set_verbosity(args.verbose);
  JsonPrinter json(stdout);
  try {
    apply_security(security);
    ClientOptions options = to_options(args);
    const cli::BatchArgs& batch = is_put ? put_batch : get_batch;
    if (batch.wanted()) {
      BatchOptions batch_options = cli::to_batch_options(batch, options);  // bad values before any LIST
      BatchPlan plan = is_put ? cli::plan_batch(batch, true, put_local, put_remote, options)
                              : cli::plan_batch(batch, false, get_remote, get_local, options);
      return cli::run_batch_command(plan, batch_options, args.quiet, args.json);
    }
    if (batch.retries > 20) throw Error(Errc::usage, "--retries " + std::to_string(batch.retries) + ": use 0 to 20");
    options.retries = batch.retries;  // one file: the retries are the transfer's own, each resuming
    if ((is_put ? put_local : get_remote).empty() || (is_put ? put_remote : get_local).empty())
      throw Error(Errc::usage, std::string(is_put ? "put needs LOCAL and URL" : "get needs URL and LOCAL") +
                                   " (or -r, or --from-file LIST); see pxfer --help");
    std::string why;
    const std::string& url_text = is_put ? put_remote : get_remote;
    auto url = parse_url(url_text, &why);
    if (!url) throw Error(Errc::usage, url_text + ": " + why);
    ProgressPrinter text(stdout, ::isatty(STDOUT_FILENO) != 0, args.quiet);
    ProgressListener* listener = args.json ? static_cast<ProgressListener*>(&json) : &text;
    if (is_put) put_file(put_local, *url, options, listener);
    else get_file(*url, get_local, options, listener);
    return 0;
  } catch (const Error& e) {
    if (args.json) json.on_error(e);
    std::fflush(stdout);
    std::fprintf(stderr, "pxfer: %s\n", e.what());
    return exit_code(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pxfer: internal error: %s (please report it)\n", e.what());
    return exit_code(Errc::internal);
  }
}
