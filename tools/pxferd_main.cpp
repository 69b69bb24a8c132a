// pxferd: serves the files under --root on one TCP port (control and data streams alike).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "cli_support.hpp"
#include "pxfer/error.hpp"
#include "pxfer/server.hpp"

using namespace pxfer;

int main(int argc, char** argv) {
  CLI::App app{"pxferd: pxfer server daemon"};
  std::string root, listen = "127.0.0.1:" + std::to_string(default_port), port_file;
  unsigned threads = 0;
  bool verbose = false;
  app.add_option("--root", root, "export root: clients see only the files below it")->required();
  app.add_option("--listen", listen, "HOST:PORT to listen on ([::1]:PORT for IPv6, port 0 = any free port)")
      ->capture_default_str();
  app.add_option("--threads", threads, "worker threads (0 = one per core)");
  app.add_option("--port-file", port_file, "write the bound port number to this file once listening");
  app.add_flag("-v,--verbose", verbose, "log connection-level detail");
  unsigned max_active = 0;
  std::string queue_timeout = "10m";
  app.add_option("--max-active", max_active, "transfers moving data at once; more wait in line (0 = no limit)");
  app.add_option("--queue-timeout", queue_timeout, "how long a transfer may wait in line (30s, 10m, ...)")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pxferd: %s (see pxferd --help)\n", e.what());
    return exit_code(Errc::usage);
  }
  cli::set_verbosity(verbose);
  try {
    std::string why;
    auto ep = parse_endpoint(listen, &why);
    if (!ep) throw Error(Errc::usage, "--listen " + listen + ": " + why);
    ServerOptions options;
    options.root = root;
    options.listen = *ep;
    options.threads = threads;
    options.handle_signals = true;
    options.max_active = max_active;
    auto timeout = parse_duration(queue_timeout);
    if (!timeout || timeout->count() <= 0) throw Error(Errc::usage, "--queue-timeout " + queue_timeout + ": use e.g. 30s or 10m");
    options.queue_timeout = *timeout;
    Server server(options);
    spdlog::info("pxferd serving {} on {}", root, server.listen_address());
    if (!port_file.empty()) {
      // Written under a temporary name and renamed, so a script never reads a half-written file.
      std::string tmp = port_file + ".tmp";
      std::ofstream(tmp) << server.port() << "\n";
      if (std::rename(tmp.c_str(), port_file.c_str()) != 0)
        throw Error(Errc::local_io, "cannot write --port-file " + port_file);
    }
    server.run();
    spdlog::info("pxferd stopped");
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pxferd: %s\n", e.what());
    return exit_code(e.code());
  }
}
