#pragma once
// pxferd's command line and configuration file: one CLI11 definition serves both (every long
// option is also a key of the TOML file given with --config; a flag on the command line beats the
// file), and one function turns the parsed text into ServerOptions, validating every value.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pxfer/server/server.hpp"
#include "toml_config.hpp"

namespace pxfer::pxferd {

// The server's options as typed. Fields of ServerOptions that need no conversion are bound directly.
struct DaemonArgs {
  ServerOptions options;
  std::string root;
  std::string listen = "127.0.0.1:" + std::to_string(default_port);
  std::string port_file;
  unsigned threads = 0;
  bool verbose = false;
  unsigned max_active = 0;
  std::string queue_timeout = "10m";
  std::string partial_max_age = "7d";
  std::string idle_timeout = "5m";
  std::string drain_timeout = "30s";
  unsigned max_streams_per_client = 0, max_clients = 0;
  std::string max_starts = "0";
  std::string disk_rate;
  std::string max_file_size;  // "" = no limit
  std::string max_unfinished;  // --max-unfinished-per-identity, "" = no limit
  bool no_stored_checksums = false;  // ServerOptions::stored_checksums, the other way round
  std::string metrics_listen;  // "" = off; PORT = 127.0.0.1:PORT
  std::string tpc_grant_lifetime = "60s";
  std::string log_file;  // "" = the journal or stderr
};

// The subcommands and the flags that are not server options.
struct Commands {
  CLI::App* token_create = nullptr;
  CLI::App* token_list = nullptr;
  CLI::App* token_revoke = nullptr;
  std::string token_name, tokens_file;
  bool reload_service = false;  // token revoke --reload: systemctl reload pxferd
  int reload_pid = 0;           // token revoke --reload-pid PID: kill -HUP PID
  CLI::App* fingerprint = nullptr;
  std::string fp_cert, fp_state;
  CLI::App* check_credential = nullptr;
  std::string credential_file;  // "-" = stdin
  CLI::Option* config = nullptr;  // --config FILE
  std::shared_ptr<TomlConfig> config_file;  // its reader: positions and [[issuer]] tables
  bool print_config = false, check_config = false;
};

// Defines every option, its group in --help, its type name and its config key.
void define_cli(CLI::App& app, DaemonArgs& args, Commands& commands);
// Parses argv (and the --config file) into `args`; CLI11 exceptions go to the caller.
void parse_cli(CLI::App& app, int argc, const char* const* argv);
// Validated ServerOptions; throws Error(usage) naming the option, its bad value and what to use.
ServerOptions to_server_options(const DaemonArgs& args);
// --metrics-listen: nullopt for "", 127.0.0.1:PORT for a plain PORT, else HOST:PORT; Error(usage)
// when it is neither.
std::optional<Endpoint> metrics_endpoint(const std::string& text);
// One line for a CLI11 parse error: what, where (the config file when it came from there), what to do.
std::string parse_error_line(const CLI::ParseError& e, const CLI::App& app, const std::vector<std::string>& argv);
}  // namespace pxfer::pxferd
