#pragma once
// pxfer ls / stat / mkdir / rm / mv / sum: the namespace commands. Their options here, the work in
// the library (pxfer/client/namespace.hpp), which the gfal2 plugin calls too.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "pxfer/client/client.hpp"

namespace pxfer::cli {

struct NamespaceArgs {
  std::vector<std::string> urls;
  bool long_format = false;  // ls -l
  bool recursive = false;    // ls -r, rm -r
  bool parents = false;      // mkdir -p
  bool overwrite = false;    // mv --overwrite
  bool json = false;
  std::string algorithm = "adler32";  // sum
  std::string sum_url;                // sum's one URL (a vector would swallow ALGORITHM too)
  std::string connect_timeout;  // the option table's connect-timeout row
};

struct NamespaceCommands {
  CLI::App* ls = nullptr;
  CLI::App* stat = nullptr;
  CLI::App* mkdir = nullptr;
  CLI::App* rm = nullptr;
  CLI::App* mv = nullptr;
  CLI::App* sum = nullptr;
  std::vector<CLI::App*> all() const { return {ls, stat, mkdir, rm, mv, sum}; }
  // The one that was parsed, or nullptr.
  CLI::App* parsed() const;
};

NamespaceCommands add_namespace_commands(CLI::App& app, NamespaceArgs& args);

// Runs the parsed command; `security` resolves --token-file, --ca, ... (may throw Error(usage)).
// Returns the process exit status; errors are one line on stderr (and a JSON object with --json).
int run_namespace_command(const CLI::App& command, const NamespaceArgs& args,
                          const std::function<ClientSecurity()>& security);

// --parents on put, get and cp (a row of the option table): the directory a single transfer writes
// into is made first (for a URL ending in / or a local DEST ending in /, that directory itself).
void make_destination_parents(bool is_put, const std::string& dest, const ClientSecurity& security,
                              std::chrono::milliseconds connect_timeout);

}  // namespace pxfer::cli
