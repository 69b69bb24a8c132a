#include "reloader.hpp"

#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "config_report.hpp"
#include "pxfer/common/error.hpp"
#include "systemd.hpp"
#include "toml_config.hpp"

namespace pxfer::pxferd {
namespace {

std::map<std::string, std::string> as_map(const std::vector<OptionValue>& values) {
  std::map<std::string, std::string> out;
  for (const auto& v : values) out[v.key] = v.value;
  return out;
}

bool reloadable(const std::string& key) {
  return key == "tokens" || key == "access" || key == "verbose" || key == "token-issuers";
}

}  // namespace

Reloader::Reloader(Server& server, std::vector<std::string> argv, const CLI::App& parsed_at_start)
    : server_(server), argv_(std::move(argv)), in_force_(as_map(options_in_force(parsed_at_start, argv_))) {}

void Reloader::apply() {
  CLI::App app;
  DaemonArgs args;
  Commands commands;
  define_cli(app, args, commands);
  std::vector<const char*> raw;
  for (const auto& a : argv_) raw.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(raw.size()), raw.data());
  } catch (const CLI::ParseError& e) {
    throw Error(Errc::usage, parse_error_line(e, app, argv_));
  }
  args.options.token_issuers = issuer_tables(app);
  ServerOptions next = to_server_options(args);
  auto values = as_map(options_in_force(app, argv_));
  server_.reload(next);
  spdlog::set_level(args.verbose ? spdlog::level::debug : spdlog::level::info);
  for (const auto& [key, value] : values) {
    if (reloadable(key)) {
      in_force_[key] = value;
    } else if (in_force_[key] != value) {
      spdlog::warn("reload: {} changed from '{}' to '{}': that takes a restart (systemctl restart pxferd); "
                   "the running server keeps '{}'",
                   key, in_force_[key], value, in_force_[key]);
    }
  }
}

void Reloader::reload() {
  notify("RELOADING=1");
  spdlog::info("SIGHUP: reloading the tokens and access files, the token issuers, the certificate and the CA directory");
  try {
    apply();
  } catch (const std::exception& e) {
    spdlog::error("reload refused, the previous settings stay in force: {}", e.what());
  }
  notify("READY=1");
}

}  // namespace pxfer::pxferd
