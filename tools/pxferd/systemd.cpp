#include "systemd.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include <cstdio>
#include <cstdlib>

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

void set_up_logging(bool verbose) {
  if (stderr_is_journal()) {
    // The journal stamps time, host and PID itself; the message is the bare line.
    spdlog::set_default_logger(spdlog::systemd_logger_mt("pxferd", "pxferd"));
  } else {
    spdlog::set_default_logger(spdlog::stderr_color_mt("pxferd"));
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  }
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
}

void notify(const std::string& state) { ::sd_notify(0, state.c_str()); }

}  // namespace pxfer::pxferd
