// pxferd: serves the files under --root on one TCP port (control and data streams alike).
// Subcommands: `pxferd token create|list|revoke ... --tokens FILE`, `pxferd fingerprint`. Options come from
// the command line and an optional --config TOML file (apps/pxferd/cli.cpp); running it is
// apps/pxferd/serve.cpp.
#include <fstream>
#include <iostream>
#include <sstream>
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/server/server_admin.hpp"
#include "pxfer/version.hpp"
#include "cli.hpp"
#include "config_report.hpp"
#include "serve.hpp"
#include "systemd.hpp"
#include "token_commands.hpp"

using namespace pxfer;
using namespace pxfer::pxferd;

namespace {

// --check-config's checks of what only the daemon's main uses: the metrics address, the log file
// and the port file (each writable where it is to be written).
void check_daemon_files(const DaemonArgs& args) {
  if (auto metrics = metrics_endpoint(args.metrics_listen)) check_bindable(*metrics, "--metrics-listen");
  auto writable = [](const std::string& file, const char* option) {
    if (file.empty()) return;
    const bool exists = ::access(file.c_str(), F_OK) == 0;
    auto slash = file.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
    if (exists ? ::access(file.c_str(), W_OK) != 0 : ::access(dir.c_str(), W_OK | X_OK) != 0)
      throw Error(Errc::permission, std::string(option) + " " + file + ": cannot write " + (exists ? file : "in " + dir) +
                                        ": " + errno_text(errno));
  };
  writable(args.log_file, "--log-file");
  writable(args.port_file, "--port-file");
}

std::string config_source(const Commands& c) {
  return c.config->count() > 0 ? c.config->as<std::string>() : std::string("no --config file");
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> arguments(argv, argv + argc);
  CLI::App app{"pxferd: the pxfer server. Serves the files below --root to pxfer clients on one TCP port "
               "(control connections and data streams alike)."};
  DaemonArgs args;
  Commands commands;
  define_cli(app, args, commands);
  if (auto unknown = cli::unknown_command(app, arguments, "pxferd", false); !unknown.empty()) {
    std::fprintf(stderr, "pxferd: %s\n", unknown.c_str());
    return exit_code(Errc::usage);
  }
  try {
    parse_cli(app, argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pxferd: %s\n", parse_error_line(e, app, arguments).c_str());
    return exit_code(Errc::usage);
  }
  try {
    // Only a serving pxferd writes --log-file; the commands and checks answer on stderr.
    const bool serving = !commands.print_config && !commands.check_config && app.get_subcommands().empty();
    set_up_logging(args.verbose, serving ? args.log_file : "");
    args.options.token_issuers = issuer_tables(app);  // pxferd.toml's [[issuer]] tables
    if (commands.token_create->parsed() || commands.token_list->parsed() || commands.token_revoke->parsed())
      return run_token_command(commands);
    if (commands.fingerprint->parsed()) {
      std::fprintf(stdout, "%s\n", server_fingerprint(commands.fp_cert, commands.fp_state).c_str());
      return 0;
    }
    if (commands.check_credential->parsed()) {
      std::ostringstream text;
      if (commands.credential_file == "-") {
        text << std::cin.rdbuf();
      } else {
        std::ifstream in(commands.credential_file);
        if (!in) throw Error(Errc::not_found, "check-credential: cannot read " + commands.credential_file);
        text << in.rdbuf();
      }
      std::fputs(check_credential(args.options, text.str()).c_str(), stdout);
      return 0;
    }
    if (commands.print_config) {
      std::string header = std::string("# pxferd ") + version + ": the options in force (" + config_source(commands) +
                           "), each followed by where its value came from\n";
      std::fputs(format_config(options_in_force(app, arguments), header).c_str(), stdout);
      std::fputs(format_issuers(args.options.token_issuers).c_str(), stdout);
      return 0;
    }
    ServerOptions options = to_server_options(args);
    if (commands.check_config) {
      check_server_options(options);
      check_daemon_files(args);
      std::fprintf(stdout, "pxferd: configuration OK (%s)\n", config_source(commands).c_str());
      return 0;
    }
    return serve(options, args.port_file, args.metrics_listen, arguments, app);
  } catch (const Error& e) {
    std::fprintf(stderr, "pxferd: %s%s\n", commands.check_config ? "--check-config: " : "",
                 with_origin(e.what(), app, arguments).c_str());
    return exit_code(e.code());
  }
}
