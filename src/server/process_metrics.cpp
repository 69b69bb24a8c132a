#include "process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace pxfer::server {
namespace {

void gauge(std::string& out, const char* name, const char* type, const char* help, double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", value);
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + text + "\n";
}

// Fields 22 (starttime, clock ticks after boot), 23 (vsize, bytes) and 24 (rss, pages) of
// /proc/self/stat; the command name (field 2) may hold spaces, so counting starts after its ')'.
struct Stat {
  double start_ticks = 0, vsize = 0, rss_pages = 0;
};
Stat read_stat() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Stat s;
  const auto close = text.rfind(')');
  if (close == std::string::npos) return s;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int n = 3; fields >> field; ++n) {
    if (n == 22) s.start_ticks = std::stod(field);
    if (n == 23) s.vsize = std::stod(field);
    if (n == 24) {
      s.rss_pages = std::stod(field);
      break;
    }
  }
  return s;
}

double boot_time() {  // "btime SECONDS" in /proc/stat
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

void append_process_metrics(std::string& out) {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  gauge(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpu);
  const Stat stat = read_stat();
  gauge(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
        stat.rss_pages * static_cast<double>(::sysconf(_SC_PAGESIZE)));
  gauge(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", stat.vsize);
  std::error_code ec;
  std::size_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++fds;
  gauge(out, "process_open_fds", "gauge", "Number of open file descriptors.", static_cast<double>(fds));
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  gauge(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.", static_cast<double>(files.rlim_cur));
  gauge(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
        boot_time() + stat.start_ticks / static_cast<double>(::sysconf(_SC_CLK_TCK)));
}

}  // namespace pxfer::server
