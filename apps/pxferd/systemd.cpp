#include "systemd.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "log_file.hpp"

#include "cli_support.hpp"

namespace pxfer::pxferd {

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (!stream) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  return ::fstat(2, &st) == 0 && static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

namespace {
std::shared_ptr<ReopenableFileSink> g_log_file;  // --log-file's sink, for reopen_log_file()
}  // namespace

// Every sink sits behind LogSafeSink, as the client's does: a path, identity or error text a
// client sent cannot write a second line, a terminal sequence or a bidi override into the log,
// whichever call logs it (issue 34).
void set_up_logging(bool verbose, const std::string& log_file) {
  if (!log_file.empty()) {
    g_log_file = std::make_shared<ReopenableFileSink>(log_file);
    auto sink = std::make_shared<cli::LogSafeSink>(g_log_file);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("pxferd", std::move(sink)));
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
  } else if (stderr_is_journal()) {
    // The journal stamps time, host and PID itself; the message is the bare line.
    auto sink = std::make_shared<cli::LogSafeSink>(std::make_shared<spdlog::sinks::systemd_sink_mt>("pxferd"));
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("pxferd", std::move(sink)));
  } else {
    auto sink = std::make_shared<cli::LogSafeSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("pxferd", std::move(sink)));
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  }
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
}

void reopen_log_file() {
  if (!g_log_file) return;
  if (std::string why = g_log_file->reopen(); !why.empty())
    spdlog::error("--log-file: cannot open it again, logging on into the old file: {}", why);
  else
    spdlog::info("log file reopened");
}

void notify(const std::string& state) { ::sd_notify(0, state.c_str()); }

}  // namespace pxfer::pxferd
