#pragma once
// pxfer --help: the options of each subcommand in groups, with type names instead of CLI11's TEXT
// and UINT, and examples in the footer. Applied after the options are defined, by name, so the
// files that define them stay as they are.
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <utility>

#include "pxfer/core/option_table.hpp"

namespace pxfer::cli {

// name -> {group, type name}
using HelpLayout = std::map<std::string, std::pair<std::string, std::string>>;

inline const HelpLayout& transfer_layout() {
  static const std::string o = "Output", s = "Security (docs/security.md)", m = "Many files (-r, --from-file)";
  // The transfer options' groups and value names are their rows' (pxfer/core/option_table.hpp).
  static const HelpLayout layout{
      {"LOCAL", {"", "PATH"}}, {"URL", {"", "URL"}},
      {"ca", {s, "FILE"}}, {"fingerprint", {s, "sha256:HEX"}}, {"known-hosts", {s, "FILE"}},
      {"token-file", {s, "FILE"}}, {"cert", {s, "FILE"}}, {"key", {s, "FILE"}},
      {"recursive", {m, ""}}, {"from-file", {m, "FILE"}}, {"concurrency", {m, "N"}}, {"auto", {m, ""}},
      {"min-concurrency", {m, "N"}}, {"auto-interval", {m, "DURATION"}}, {"auto-tolerance", {m, "PERCENT"}},
      {"max-streams", {m, "N"}}, {"ramp-up", {m, "DURATION"}}, {"connect-rate", {m, "RATE"}},
      {"skip-existing", {m, ""}}, {"preserve", {m, ""}},
      // doctor and sweep
      {"target", {"Path", "RATE"}}, {"loss", {"Path", "PERCENT"}}, {"pings", {"Path", "N"}},
      {"files", {"Matrix", "LIST"}}, {"size", {"Matrix", "SIZE"}}, {"direction", {"Matrix", "get|put|get,put"}},
      {"repeat", {"Matrix", "N"}}, {"csv", {o, ""}}, {"SRC... DST", {"", "PATH|URL"}}};
  return layout;
}

// sweep takes comma-separated lists where put and get take one value.
inline const HelpLayout& sweep_layout() {
  static const HelpLayout layout{{"streams", {"Matrix", "LIST"}}, {"window", {"Matrix", "LIST"}},
                                 {"congestion", {"Matrix", "LIST"}}, {"compress", {"Matrix", "LIST"}},
                                 {"block-size", {"Matrix", "SIZE"}}};
  return layout;
}

// An option's group and value name: sweep's lists first, then the option table's row, then the rest.
inline std::pair<std::string, std::string> help_layout(const std::string& command, const std::string& name) {
  if (command == "sweep")
    if (auto it = sweep_layout().find(name); it != sweep_layout().end()) return it->second;
  if (const OptionRow* row = find_option(name)) return {row->group, row->type_name};
  if (auto it = transfer_layout().find(name); it != transfer_layout().end()) return it->second;
  return {};
}

inline void lay_out_help(CLI::App& app) {
  app.name("pxfer");  // "Usage: pxfer put ...", not the path it was started by
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    for (CLI::Option* opt : sub->get_options()) {
      std::string name = !opt->get_lnames().empty() ? opt->get_lnames().front() : opt->get_name();
      const auto [group, type] = help_layout(sub->get_name(), name);
      if (!group.empty()) opt->group(group);
      if (!type.empty() || (opt->get_expected_min() == 0 && !group.empty())) opt->type_name(type);
    }
  }
  const std::string footer =
      "Examples:\n"
      "  pxfer put -p 8 run42.root pxfer://se01.example.org/atlas/run42.root\n"
      "  pxfer get -p 8 pxfer://se01.example.org:7521/atlas/run42.root /scratch/\n"
      "  pxfer put -r -c 4 --retries 3 results/ pxfer://se01.example.org/atlas/\n"
      "  pxfer doctor pxfer://se01.example.org/ --target 10gbit\n"
      "Credentials: --token-file FILE or PXFER_TOKEN. Types: SIZE bytes, K/M/G/T = KiB/MiB/GiB/TiB (1024-based), kB/MB/GB/TB (1000-based); DURATION 500ms, "
      "30s, 2m. Exit codes: 0 ok, 2 usage, 3 not found, 4 permission, 5 network, 6 protocol, 7 integrity, "
      "8 local I/O, 9 exists. `pxfer COMMAND --help` lists a command's options; man pxfer.";
  app.footer(footer);
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) sub->footer(footer);
}

}  // namespace pxfer::cli
