#pragma once
// Small helpers shared by the command-line programs.
#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "pxfer/common/error.hpp"
#include "pxfer/common/log_safe.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer::cli {

inline std::uint64_t size_option(const std::string& name, const std::string& text) {
  auto v = parse_size(text);
  if (!v) throw Error(Errc::usage, name + " " + text + ": not a size; use bytes, K/M/G/T or KiB/MiB/GiB (1024-based) or kB/MB/GB (1000-based), e.g. 4M");
  return *v;
}

// Every log message passes through log_safe() on its way out: a path, identity or client version
// a client sent with a newline in it cannot forge a log line (issue 11), whichever call logs it.
class LogSafeSink final : public spdlog::sinks::sink {
 public:
  explicit LogSafeSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    std::string_view payload(msg.payload.data(), msg.payload.size());
    if (!has_control_characters(payload)) return inner_->log(msg);
    const std::string safe = log_safe(payload);
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(safe.data(), safe.size());
    inner_->log(copy);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override { inner_->set_formatter(std::move(formatter)); }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

// Logs go to stderr: stdout belongs to the rate lines and summaries that scripts parse.
inline void set_verbosity(bool verbose) {
  auto sink = std::make_shared<LogSafeSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("pxfer", std::move(sink)));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");  // ISO 8601 with the zone
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
