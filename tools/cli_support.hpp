#pragma once
// Small helpers shared by the command-line programs.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
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

// Columns of the terminal on `fd` ($COLUMNS, else 80, when it does not say).
inline unsigned terminal_width(int fd) {
  struct winsize ws {};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const long v = std::strtol(c, nullptr, 10);
    if (v >= 20 && v <= 1000) return static_cast<unsigned>(v);
  }
  return 80;
}

}  // namespace pxfer::cli
