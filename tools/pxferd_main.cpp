// pxferd: serves the files under --root on one TCP port (control and data streams alike).
// Subcommands: `pxferd token create NAME --tokens FILE`, `pxferd fingerprint`.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sys/resource.h>

#include "cli_support.hpp"
#include "pxfer/error.hpp"
#include "pxfer/secret_file.hpp"
#include "pxfer/server.hpp"
#include "pxfer/server_admin.hpp"
#include "pxfer/units.hpp"

using namespace pxfer;

namespace {
// --max-starts-per-second: 0 (no pacing) or a plain number from 0.001 to 1000000.
double parse_rate(const std::string& text) {
  std::size_t used = 0;
  double r = -1;
  try {
    r = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(r >= 0) || r > 1e6 || (r > 0 && r < 0.001))
    throw Error(Errc::usage, "--max-starts-per-second " + text + ": use a number of starts per second, e.g. 2 or 0.5");
  return r;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pxferd: pxfer server daemon"};
  std::string root, listen = "127.0.0.1:" + std::to_string(default_port), port_file;
  unsigned threads = 0;
  bool verbose = false;
  ServerOptions options;
  app.add_option("--root", root, "export root: clients see only the files below it");
  app.add_option("--listen", listen, "HOST:PORT to listen on ([::1]:PORT for IPv6, port 0 = any free port)")
      ->capture_default_str();
  app.add_option("--threads", threads, "worker threads (0 = one per core)");
  app.add_option("--port-file", port_file, "write the bound port number to this file once listening");
  app.add_flag("-v,--verbose", verbose, "log connection-level detail");
  unsigned max_active = 0;
  std::string queue_timeout = "10m";
  std::string partial_max_age = "7d";
  app.add_option("--max-active", max_active, "transfers moving data at once; more wait in line (0 = no limit)");
  std::string idle_timeout = "5m";
  app.add_option("--idle-timeout", idle_timeout, "close a control session with no request for this long (30s, 5m, ...)")
      ->capture_default_str();
  app.add_option("--max-connections", options.max_connections,
                 "connections open at once, all clients together; more are closed at accept (0 = no limit)")
      ->capture_default_str();
  app.add_option("--max-connections-per-address", options.max_connections_per_address,
                 "connections open at once from one source address (0 = no limit)")
      ->capture_default_str();
  app.add_option("--queue-timeout", queue_timeout, "how long a transfer may wait in line (30s, 10m, ...)")->capture_default_str();
  app.add_option("--partial-max-age", partial_max_age,
                 "remove partial files of interrupted puts (kept for resume) after this long unused (7d, 12h, ...)")
      ->capture_default_str();
  app.add_option("--cert", options.cert_file, "server certificate chain (PEM); default: a self-signed one in --state-dir");
  app.add_option("--key", options.key_file, "private key of --cert (PEM)");
  app.add_option("--state-dir", options.state_dir, "where the self-signed certificate lives (default $XDG_STATE_HOME/pxferd or ~/.local/state/pxferd)");
  app.add_option("--tokens", options.tokens_file, "client tokens, one identity a line (pxferd token create)");
  app.add_option("--client-ca", options.client_ca_file, "accept client certificates signed by this CA; the identity is their CN");
  app.add_option("--access", options.access_file, "access file: `IDENTITY PATH ro|rw` lines (default: every identity read-write everywhere)");
  app.add_flag("--anonymous-read", options.anonymous_read, "clients without credentials may read (not write)");
  app.add_flag("--insecure-no-auth", options.insecure_no_auth, "no authentication, anonymous read-write: loopback addresses only (tests, demos)");

  auto* token = app.add_subcommand("token", "manage client tokens");
  auto* token_create = token->add_subcommand("create", "add an identity to a tokens file and print its token once");
  std::string token_name, tokens_file;
  token_create->add_option("NAME", token_name, "identity name (A-Z a-z 0-9 . _ @ -)")->required();
  token_create->add_option("--tokens", tokens_file, "tokens file (created with mode 0600)")->required();
  token->require_subcommand(1);
  auto* fingerprint = app.add_subcommand("fingerprint", "print the SHA-256 fingerprint of the server certificate (creating the self-signed one if needed)");
  std::string fp_cert, fp_state;
  fingerprint->add_option("--cert", fp_cert, "certificate file (default: the self-signed one in --state-dir)");
  fingerprint->add_option("--state-dir", fp_state, "state directory");
  app.require_subcommand(0, 1);
  unsigned max_streams_per_client = 0, max_clients = 0;
  std::string max_starts = "0";
  std::string disk_rate;
  app.add_option("--emulate-disk-rate", disk_rate,
                 "lab and tests only: pace all file writes together to this many bytes a second (e.g. 40M), "
                 "a slow disk shared by every transfer");
  app.add_option("--max-streams-per-client", max_streams_per_client,
                 "data streams one client address may hold at once; a transfer is granted fewer or waits (0 = no limit)");
  app.add_option("--max-clients", max_clients,
                 "client addresses with transfers running or waiting; one more is refused (0 = no limit)");
  app.add_option("--max-starts-per-second", max_starts, "pace admissions to R per second, e.g. 2 or 0.5 (0 = no pacing)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pxferd: %s (see pxferd --help)\n", e.what());
    return exit_code(Errc::usage);
  }
  cli::set_verbosity(verbose);
  try {
    if (token_create->parsed()) {
      std::string secret = create_client_token(tokens_file, token_name);
      std::fprintf(stdout, "%s\n", secret.c_str());
      std::fprintf(stderr, "pxferd: identity %s added to %s; the token above is shown only this once: give it to the "
                           "client as a --token-file FILE or the PXFER_TOKEN variable\n",
                   token_name.c_str(), tokens_file.c_str());
      return 0;
    }
    if (fingerprint->parsed()) {
      std::fprintf(stdout, "%s\n", server_fingerprint(fp_cert, fp_state).c_str());
      return 0;
    }
    if (root.empty()) throw Error(Errc::usage, "--root is required (see pxferd --help)");
    std::string why;
    auto ep = parse_endpoint(listen, &why);
    if (!ep) throw Error(Errc::usage, "--listen " + listen + ": " + why);
    options.root = root;
    options.listen = *ep;
    options.threads = threads;
    options.handle_signals = true;
    options.max_active = max_active;
    auto idle = parse_duration(idle_timeout);
    if (!idle || idle->count() < 1000)
      throw Error(Errc::usage, "--idle-timeout " + idle_timeout + ": use a duration of at least 1s (e.g. 5m, 30s)");
    options.idle_timeout = *idle;
    // Every connection is a descriptor (two while a transfer's file is open): raise the soft
    // open-file limit as far as --max-connections needs and the hard limit allows (only when
    // needed, so a unit with LimitNOFILE= set high never calls setrlimit), and say when it falls short.
    rlimit files{};
    const rlim_t wanted = options.max_connections > 0 ? static_cast<rlim_t>(options.max_connections) + 256 : 65536;
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY && files.rlim_cur < wanted &&
        files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, files.rlim_max);
      ::setrlimit(RLIMIT_NOFILE, &files);
      ::getrlimit(RLIMIT_NOFILE, &files);
    }
    if (options.max_connections > 0 && files.rlim_cur != RLIM_INFINITY &&
        files.rlim_cur < static_cast<rlim_t>(options.max_connections) + 64)
      spdlog::warn("open-file limit {} is below --max-connections {} plus the server's own files: raise LimitNOFILE "
                   "(ulimit -n) or lower --max-connections",
                   static_cast<unsigned long long>(files.rlim_cur), options.max_connections);
    auto timeout = parse_duration(queue_timeout);
    if (!timeout || timeout->count() <= 0) throw Error(Errc::usage, "--queue-timeout " + queue_timeout + ": use e.g. 30s or 10m");
    options.queue_timeout = *timeout;
    auto max_age = parse_duration(partial_max_age);
    if (!max_age || max_age->count() < 1000)
      throw Error(Errc::usage, "--partial-max-age " + partial_max_age + ": use a duration of at least 1s (e.g. 7d, 12h)");
    options.partial_max_age = std::chrono::duration_cast<std::chrono::seconds>(*max_age);
    options.max_streams_per_client = max_streams_per_client;
    options.max_clients = max_clients;
    options.max_starts_per_second = parse_rate(max_starts);
    if (!disk_rate.empty()) {
      auto rate = parse_size(disk_rate);
      if (!rate || *rate < 4096)
        throw Error(Errc::usage, "--emulate-disk-rate " + disk_rate + ": use bytes per second of at least 4K, e.g. 40M");
      options.emulate_disk_rate = *rate;
    }
    Server server(options);
    if (server.created_identity())
      spdlog::info("created a self-signed certificate {}", server.certificate_file());
    spdlog::info("pxferd serving {} on {}, certificate {}", root, server.listen_address(), server.fingerprint());
    if (options.insecure_no_auth) spdlog::warn("--insecure-no-auth: any local user can read and write {}", root);
    if (!port_file.empty()) {
      // Written under a new temporary name (O_EXCL) and renamed, so a script never reads a
      // half-written file and nothing planted at either name is written through.
      write_file_atomically(port_file, std::to_string(server.port()) + "\n", 0644);
    }
    server.run();
    spdlog::info("pxferd stopped");
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pxferd: %s\n", e.what());
    return exit_code(e.code());
  }
}
