#pragma once
// Small helpers shared by the command-line programs.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <string>

#include "pxfer/error.hpp"
#include "pxfer/units.hpp"

namespace pxfer::cli {

inline std::uint64_t size_option(const std::string& name, const std::string& text) {
  auto v = parse_size(text);
  if (!v) throw Error(Errc::usage, name + " " + text + ": not a size; use bytes or a K/M/G suffix (1024-based), e.g. 4M");
  return *v;
}

// Logs go to stderr: stdout belongs to the rate lines and summaries that scripts parse.
inline void set_verbosity(bool verbose) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("pxfer"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
}

}  // namespace pxfer::cli
