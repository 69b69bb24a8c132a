// pxferd's options: defined once, for the command line and the --config file alike.
#include "cli.hpp"

#include "config_report.hpp"
#include "pxfer/version.hpp"

namespace pxfer::pxferd {
namespace {

constexpr const char* g_serve = "Serving";
constexpr const char* g_auth = "Authentication and TLS (docs/security.md)";
constexpr const char* g_limits = "Limits and timeouts";
constexpr const char* g_config = "Configuration";
constexpr const char* g_lab = "Lab and tests only";
constexpr const char* g_monitor = "Monitoring";

void add_serving(CLI::App& app, DaemonArgs& a) {
  app.add_option("--root", a.root, "export root: clients see only the files below it (required)")
      ->type_name("DIR")->group(g_serve);
  app.add_option("--listen", a.listen, "address to listen on ([::]:PORT for IPv6; port 0 = any free port)")
      ->type_name("HOST:PORT")->capture_default_str()->group(g_serve);
  app.add_option("--threads", a.threads, "worker threads (0 = one per core)")
      ->type_name("N")->capture_default_str()->group(g_serve);
  app.add_option("--port-file", a.port_file, "write the bound port number to FILE once listening")
      ->type_name("FILE")->group(g_serve);
  app.add_option("--partial-max-age", a.partial_max_age,
                 "remove partial files of interrupted puts (kept for resume) after this long unused")
      ->type_name("DURATION")->capture_default_str()->group(g_serve);
  app.add_flag("-v,--verbose", a.verbose, "log connection-level detail (debug)")->group(g_serve);
  app.add_option("--log-file", a.log_file,
                 "log to FILE instead of the journal or stderr; opened again on SIGUSR1 or SIGHUP (logrotate)")
      ->type_name("FILE")->group(g_monitor);
  app.add_option("--metrics-listen", a.metrics_listen,
                 "serve Prometheus metrics at http://ADDR/metrics (a plain PORT means 127.0.0.1:PORT; no "
                 "authentication, so keep it on loopback or behind a firewall); default: off")
      ->type_name("[HOST:]PORT")->group(g_monitor);
  app.add_flag("--metrics-per-identity", a.options.metrics_per_identity,
               "add pxferd_bytes_by_identity_total, one series per client identity (token name or certificate CN)")
      ->group(g_monitor);
}

void add_auth(CLI::App& app, ServerOptions& o) {
  app.add_option("--tokens", o.tokens_file, "client tokens, one identity a line (pxferd token create); re-read on SIGHUP")
      ->type_name("FILE")->group(g_auth);
  app.add_option("--access", o.access_file,
                 "`IDENTITY PATH ro|rw` lines (default: every identity read-write everywhere); re-read on SIGHUP")
      ->type_name("FILE")->group(g_auth);
  app.add_option("--client-ca", o.client_ca_file, "accept client certificates signed by this CA; the identity is their CN")
      ->type_name("FILE")->group(g_auth);
  app.add_flag("--x509", o.x509,
               "accept grid X.509 client certificates and RFC 3820 proxies verified against --x509-ca-dir; the "
               "identity is the user certificate's DN (/DC=.../CN=...), never a proxy's (docs/grid.md)")
      ->group(g_auth);
  app.add_option("--x509-ca-dir", o.x509_ca_dir,
                 "grid CA directory: hashed CA files (HASH.0) and CRLs (HASH.r0, checked where present); re-read on SIGHUP")
      ->type_name("DIR")->capture_default_str()->group(g_auth);
  app.add_option("--voms-dir", o.voms_dir,
                 "with --x509: VOMS servers trusted per VO (VO/HOST.lsc); a proxy's AC that does not verify is refused")
      ->type_name("DIR")->capture_default_str()->group(g_auth);
  app.add_option("--token-issuers", o.token_issuers_file,
                 "accept WLCG/SciTokens JWT bearer tokens from the issuers in this TOML file ([[issuer]] url, "
                 "base_path, key_file; audience); their storage.* scopes are their rights (docs/grid.md)")
      ->type_name("FILE")->group(g_auth);
  app.add_flag("--anonymous-read", o.anonymous_read, "clients without credentials may read (not write)")->group(g_auth);
  app.add_flag("--insecure-no-auth", o.insecure_no_auth,
               "no authentication, anonymous read-write: loopback addresses only (tests, demos)")
      ->group(g_auth);
  app.add_option("--cert", o.cert_file, "server certificate chain (PEM); default: a self-signed one in --state-dir")
      ->type_name("FILE")->group(g_auth);
  app.add_option("--key", o.key_file, "private key of --cert (PEM)")->type_name("FILE")->group(g_auth);
  app.add_option("--tpc-allow", o.tpc_allow,
                 "third-party copy: a peer this server may connect to when a client asks it to pull from or push to "
                 "another pxferd (HOST, HOST:PORT, HOST:*, ADDRESS/PREFIX such as 10.1.0.0/16, ADDRESS/PREFIX:PORT; without a "
                 "port only the pxfer port 7521, :* any port; repeatable or comma-separated; "
                 "in the config file a list). Default: none, this server makes no third-party copy connections")
      ->type_name("PEER")->delimiter(',')->group(g_auth);  // --print-config writes the list comma-separated
  app.add_option("--state-dir", o.state_dir,
                 "where the self-signed certificate lives (default $XDG_STATE_HOME/pxferd or ~/.local/state/pxferd)")
      ->type_name("DIR")->group(g_auth);
}

void add_limits(CLI::App& app, DaemonArgs& a) {
  app.add_option("--max-active", a.max_active, "transfers moving data at once; more wait in line (0 = no limit)")
      ->type_name("N")->capture_default_str()->group(g_limits);
  app.add_option("--queue-timeout", a.queue_timeout, "how long a transfer may wait in line")
      ->type_name("DURATION")->capture_default_str()->group(g_limits);
  app.add_option("--drain-timeout", a.drain_timeout,
                 "on SIGTERM, refuse new transfers and let running ones finish this long before aborting them "
                 "(0 = abort at once; a second SIGTERM also aborts at once)")
      ->type_name("DURATION")->capture_default_str()->group(g_limits);
  app.add_option("--max-streams-per-client", a.max_streams_per_client,
                 "data streams one client address may hold at once; a transfer is granted fewer or waits (0 = no limit)")
      ->type_name("N")->capture_default_str()->group(g_limits);
  app.add_option("--max-clients", a.max_clients,
                 "client addresses with transfers running or waiting; one more is refused (0 = no limit)")
      ->type_name("N")->capture_default_str()->group(g_limits);
  app.add_option("--max-starts-per-second", a.max_starts, "pace admissions to RATE per second, e.g. 2 or 0.5 (0 = no pacing)")
      ->type_name("RATE")->capture_default_str()->group(g_limits);
  app.add_option("--max-connections", a.options.max_connections,
                 "connections open at once, all clients together; more are closed at accept (0 = no limit)")
      ->type_name("N")->capture_default_str()->group(g_limits);
  app.add_option("--max-connections-per-address", a.options.max_connections_per_address,
                 "connections open at once from one source address (0 = no limit)")
      ->type_name("N")->capture_default_str()->group(g_limits);
  app.add_option("--idle-timeout", a.idle_timeout, "close a control session with no request for this long")
      ->type_name("DURATION")->capture_default_str()->group(g_limits);
  app.add_option("--max-file-size", a.max_file_size,
                 "refuse a put of a file larger than SIZE (e.g. 100G) before anything is allocated; default: no limit "
                 "but the destination's free space")
      ->type_name("SIZE")->group(g_limits);
  app.add_option("--max-unfinished-per-identity", a.max_unfinished,
                 "refuse a put when the claimed sizes of the same identity's unfinished puts would pass SIZE "
                 "(e.g. 500G): the space one identity may hold with transfers in progress; default: no limit")
      ->type_name("SIZE")->group(g_limits);
  app.add_flag("--no-stored-checksums", a.no_stored_checksums,
               "neither keep a verified file's checksum in its extended attributes (user.pxfer.adler32, "
               "user.pxfer.sha256) nor answer SUM and gets from a kept one; every checksum reads the whole file")
      ->group(g_limits);
  app.add_option("--tpc-grant-lifetime", a.tpc_grant_lifetime,
                 "how long a third-party copy grant stays valid for the peer's login (shorter only for tests)")
      ->type_name("DURATION")->capture_default_str()->group(g_lab);
  app.add_option("--emulate-disk-rate", a.disk_rate,
                 "pace all file writes together to SIZE bytes a second (e.g. 40M), a slow disk shared by every transfer")
      ->type_name("SIZE")->group(g_lab);
}

void add_subcommands(CLI::App& app, Commands& c) {
  auto* token = app.add_subcommand("token", "manage client tokens");
  c.token_create = token->add_subcommand("create", "add an identity to a tokens file and print its token once");
  c.token_create->add_option("NAME", c.token_name, "identity name (A-Z a-z 0-9 . _ @ -)")->type_name("")->required();
  c.token_create
      ->add_option("--tokens", c.tokens_file,
                   "tokens file; a missing file is created 0600 (0640 with group pxferd in a directory of that "
                   "group, as the package's /etc/pxferd), missing directories 0750; a symlink is refused")
      ->type_name("FILE")->required();
  c.token_list = token->add_subcommand("list", "list the identities of a tokens file and when each was created (never a secret)");
  c.token_list->add_option("--tokens", c.tokens_file, "tokens file")->type_name("FILE")->required();
  c.token_revoke = token->add_subcommand("revoke", "remove an identity from a tokens file (a running pxferd forgets it on reload)");
  c.token_revoke->add_option("NAME", c.token_name, "identity name")->type_name("")->required();
  c.token_revoke->add_option("--tokens", c.tokens_file, "tokens file")->type_name("FILE")->required();
  c.token_revoke->add_flag("--reload", c.reload_service, "then run `systemctl reload pxferd`");
  c.token_revoke->add_option("--reload-pid", c.reload_pid, "then send SIGHUP to the pxferd of this process id")
      ->type_name("PID");
  token->require_subcommand(1);
  c.fingerprint = app.add_subcommand(
      "fingerprint", "print the SHA-256 fingerprint of the server certificate (creating the self-signed one if needed)");
  c.fingerprint->add_option("--cert", c.fp_cert, "certificate file (default: the self-signed one in --state-dir)")
      ->type_name("FILE");
  c.fingerprint->add_option("--state-dir", c.fp_state, "state directory")->type_name("DIR");
  c.check_credential = app.add_subcommand(
      "check-credential",
      "say what identity and rights a grid proxy/certificate (PEM) or WLCG token (JWT) would get from this "
      "configuration, and why (exit 4 when it would be refused): pxferd --config FILE check-credential FILE|-");
  c.check_credential->add_option("FILE", c.credential_file, "the proxy, certificate or token; - reads stdin")
      ->type_name("")->required();
  app.require_subcommand(0, 1);
}

}  // namespace

void define_cli(CLI::App& app, DaemonArgs& args, Commands& commands) {
  app.name("pxferd");  // "Usage: pxferd ...", not the path it was started by
  app.set_version_flag("--version", std::string("pxferd ") + version + " (git " + revision() + ")",
                       "print the version and exit");
  app.get_option("--version")->group(g_config);
  app.get_help_ptr()->group(g_config);
  commands.config = app.set_config("--config", "",
                                   "read options from this TOML file (`key = value`, keys are the long options "
                                   "without --; [[issuer]] tables); options given on the command line win")
                        ->type_name("FILE")
                        ->group(g_config);
  app.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt key is an error, not ignored
  commands.config_file = use_toml_config(app);
  app.add_flag("--print-config", commands.print_config,
               "print the options in force as a config file, each with where it came from, and exit")
      ->group(g_config)->configurable(false);
  app.add_flag("--check-config", commands.check_config,
               "check the options and the files they name (root, tokens, access, certificates); exit 0, or non-zero with one line saying what is wrong")
      ->group(g_config)->configurable(false);
  add_serving(app, args);
  add_auth(app, args.options);
  add_limits(app, args);
  add_subcommands(app, commands);
  app.footer(
      "Examples:\n"
      "  pxferd token create alice --tokens /etc/pxferd/tokens\n"
      "  pxferd token revoke alice --tokens /etc/pxferd/tokens --reload\n"
      "  pxferd --root /srv/pxfer --listen 0.0.0.0:7521 --tokens /etc/pxferd/tokens\n"
      "  pxferd --config /etc/pxferd/pxferd.toml --check-config\n"
      "  systemctl reload pxferd      # SIGHUP: re-read the tokens and access files\n"
      "Types: DURATION 30s, 5m, 12h, 7d; SIZE bytes, K/M/G/T = KiB/MiB/GiB/TiB (1024-based), kB/MB/GB/TB (1000-based). Signals: SIGTERM/SIGINT drain "
      "(new transfers refused, running ones finish within --drain-timeout, then the rest are aborted with partial "
      "puts kept for resume; a second signal aborts at once); SIGHUP reloads; SIGUSR1 reopens --log-file. Docs: "
      "/usr/share/doc/pxfer, man pxferd.");
}

void parse_cli(CLI::App& app, int argc, const char* const* argv) { app.parse(argc, argv); }

std::string parse_error_line(const CLI::ParseError& e, const CLI::App& app, const std::vector<std::string>& argv) {
  const CLI::Option* config = app.get_config_ptr();
  const std::string file = config && config->count() > 0 ? config->as<std::string>() : "";
  std::string what = e.what();
  if (dynamic_cast<const CLI::ConfigError*>(&e) && what.rfind(file + ":", 0) == 0) return what;  // TomlConfig's
  const std::string extra = "INI was not able to parse ";
  if (what.rfind(extra, 0) == 0)
    return file + ": '" + what.substr(extra.size()) +
           "' is not an option of pxferd (a key is a long option without --, e.g. max-active = 10); see pxferd --help";
  if (!file.empty() && what.find("was not readable") != std::string::npos)
    return "--config " + file + ": cannot read it (missing, or not readable by this user)";
  return with_origin(what, app, argv) + "; see pxferd --help";
}

}  // namespace pxfer::pxferd
