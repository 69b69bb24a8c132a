#pragma once
// What --print-config shows and what a reload compares: every configurable option of pxferd with
// its value in force and where that value came from.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace pxfer::pxferd {

struct OptionValue {
  std::string key;     // the long option without "--", which is also its config key
  std::string value;   // "" when not set and without a default
  std::string origin;  // "command line", the config file's path, or "default"
};

// Whether argv names `opt` (--name, --name=VALUE or -n).
bool on_command_line(const CLI::Option& opt, const std::vector<std::string>& argv);
// `message` (an error about an option) after "FILE:LINE:COL: " when that option's value came from
// the --config file rather than the command line.
std::string with_origin(const std::string& message, const CLI::App& app, const std::vector<std::string>& argv);
// After parsing: the server options of `app` (subcommands, --help, --config and the like left
// out). `argv` is what was parsed: an option named there came from the command line.
std::vector<OptionValue> options_in_force(const CLI::App& app, const std::vector<std::string>& argv);
// As a config file that pxferd --config accepts, each line commented with its origin.
std::string format_config(const std::vector<OptionValue>& values, const std::string& header);

}  // namespace pxfer::pxferd
