#pragma once
// pxfer report INPUT... -o FILE.html, and the page --report FILE.html writes at the end of a run:
// reading the inputs and writing the page happen here; parsing and rendering are pure
// (src/report/report_*.cpp).
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "pxfer/common/error.hpp"
#include "pxfer/core/report_html.hpp"
#include "pxfer/present/report_recorder.hpp"

namespace pxfer::cli {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string title = "pxfer report";
};

inline CLI::App* add_report_command(CLI::App& app, ReportArgs& a) {
  auto* cmd = app.add_subcommand("report", "turn the NDJSON of put|get|sweep --json runs into one self-contained HTML page of charts");
  cmd->add_option("INPUT", a.inputs, "NDJSON files (- = standard input); several runs are overlaid")->required();
  cmd->add_option("-o,--output", a.output, "the HTML page to write")->required();
  cmd->add_option("--title", a.title, "the page's title")->capture_default_str();
  return cmd;
}

// Fails early, before any transfer, when the page could not be written there.
inline void check_report_path(const std::string& option, const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(Errc::usage, option + " " + path + ": no directory " + dir + "; create it or choose another path");
  if (::access(dir.c_str(), W_OK) != 0) throw Error(Errc::permission, option + " " + path + ": cannot write in " + dir);
}

inline void write_page(const std::string& option, const std::string& path, const std::string& html) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    const int err = errno;
    throw Error(errc_from_errno(err), option + " " + path + ": cannot write it: " + errno_text(err) + "; choose another path");
  }
  const bool written = std::fwrite(html.data(), 1, html.size(), f) == html.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !written)
    throw Error(Errc::local_io, option + " " + path + ": writing failed: " + errno_text(err) + "; check the disk");
}

// --report: the recorded run as a page. Never throws: the run's own outcome decides the exit code,
// and a page that could not be written is one more line on stderr.
inline bool write_recorded_report(const std::string& path, const ReportRecorder& recorder, bool quiet) {
  try {
    auto run = report::parse_run(recorder.ndjson(), "this run (--report)");
    write_page("--report", path, report::render_page({std::move(run)}, {"pxfer report", utc_now_iso8601()}));
    if (!quiet) std::fprintf(stderr, "pxfer: report written to %s\n", path.c_str());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pxfer: %s\n", e.what());
    return false;
  }
}

inline std::string read_input(const std::string& path) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "r");
  if (!f) {
    const int err = errno;
    throw Error(errc_from_errno(err), path + ": cannot read it: " + errno_text(err) + "; give the file pxfer ... --json wrote");
  }
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  if (failed) throw Error(Errc::local_io, path + ": reading failed; is it a regular file?");
  return text;
}

// The input's modification time, for runs that do not record their date.
inline std::string modified_date(const std::string& path) {
  struct stat st {};
  if (path == "-" || ::stat(path.c_str(), &st) != 0) return "";
  std::tm tm{};
  gmtime_r(&st.st_mtime, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ (file modified)", &tm);
  return buf;
}

inline int run_report_command(const ReportArgs& a) {
  try {
    check_report_path("-o", a.output);
    std::vector<report::Run> runs;
    for (const auto& input : a.inputs) {
      runs.push_back(report::parse_run(read_input(input), input == "-" ? "stdin" : input));
      if (runs.back().meta.date.empty()) runs.back().meta.date = modified_date(input);
    }
    write_page("-o", a.output, report::render_page(std::move(runs), {a.title, utc_now_iso8601()}));
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pxfer: %s\n", e.what());
    return exit_code(e.code());
  }
}

}  // namespace pxfer::cli
