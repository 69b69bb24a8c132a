#pragma once
// Command-line conventions shared by pxfer and pxferd: an unknown subcommand named as such, one
// line, exit 2 (CLI11 alone says "A subcommand is required" or "argument was not expected").
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace pxfer::cli {

// The subcommands of `app`, "put, get, doctor".
inline std::string command_list(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// For `PROGRAM WORD ...` where WORD is not an option and names no subcommand: "unknown command
// 'WORD'; commands: ... (see PROGRAM --help)"; with no argument at all and `required`, "no subcommand
// given; ...". Otherwise "": CLI11 decides.
inline std::string unknown_command(const CLI::App& app, const std::vector<std::string>& argv, const std::string& program,
                                   bool required) {
  const std::string help = " (see " + program + " --help)";
  if (argv.size() < 2) return required ? "no subcommand given; commands: " + command_list(app) + help : "";
  const std::string& word = argv[1];
  if (word.empty() || word[0] == '-') return "";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(word)) return "";
  return "unknown command '" + word + "'; commands: " + command_list(app) + help;
}

}  // namespace pxfer::cli
