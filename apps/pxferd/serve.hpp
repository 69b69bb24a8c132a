#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "pxfer/server/server.hpp"

namespace pxfer::pxferd {

// Runs the server until SIGTERM/SIGINT: raises the open-file limit, binds, writes --port-file,
// tells systemd READY=1, reloads on SIGHUP (RELOADING=1 ... READY=1), STOPPING=1 on the way out.
// `metrics_listen`: --metrics-listen, "" = no metrics endpoint.
int serve(ServerOptions options, const std::string& port_file, const std::string& metrics_listen,
          const std::vector<std::string>& argv, const CLI::App& parsed);

}  // namespace pxfer::pxferd
