#include "serve.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>

#include "pxfer/common/error.hpp"
#include "pxfer/io/secret_file.hpp"
#include "pxfer/tpc/tpc.hpp"
#include "pxfer/server/metrics_endpoint.hpp"
#include "pxfer/version.hpp"
#include "cli.hpp"
#include "process_memory.hpp"
#include "reloader.hpp"
#include "signal_thread.hpp"
#include "systemd.hpp"

namespace pxfer::pxferd {
namespace {

// Every connection is a descriptor (two while a transfer's file is open): raise the soft
// open-file limit as far as --max-connections needs and the hard limit allows (only when needed,
// so a unit with LimitNOFILE= set high never calls setrlimit), and say when it falls short.
void raise_open_file_limit(unsigned max_connections) {
  rlimit files{};
  const rlim_t wanted = max_connections > 0 ? static_cast<rlim_t>(max_connections) + 256 : 65536;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY && files.rlim_cur < wanted &&
      files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, files.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_NOFILE, &files);
  }
  if (max_connections > 0 && files.rlim_cur != RLIM_INFINITY && files.rlim_cur < static_cast<rlim_t>(max_connections) + 64)
    spdlog::warn("open-file limit {} is below --max-connections {} plus the server's own files: raise LimitNOFILE "
                 "(ulimit -n) or lower --max-connections",
                 static_cast<unsigned long long>(files.rlim_cur), max_connections);
}

void write_port_file(const std::string& port_file, std::uint16_t port) {
  if (port_file.empty()) return;
  // Written under a new temporary name (O_EXCL) and renamed, so a script never reads a
  // half-written file and nothing planted at either name is written through.
  write_file_atomically(port_file, std::to_string(port) + "\n", 0644);
}

}  // namespace

int serve(ServerOptions options, const std::string& port_file, const std::string& metrics_listen,
          const std::vector<std::string>& argv, const CLI::App& parsed) {
  options.handle_signals = false;  // SignalThread below takes them, with SIGHUP
  raise_open_file_limit(options.max_connections);
  cli::keep_freed_memory();
  SignalThread::block_signals();
  Server server(options, client_peer_copier());
  if (server.created_identity()) spdlog::info("created a self-signed certificate {}", server.certificate_file());
  spdlog::info("pxferd {} (git {}) serving {} on {}, certificate {}", version, revision(), options.root,
               server.listen_address(), server.fingerprint());
  if (options.insecure_no_auth) spdlog::warn("--insecure-no-auth: any local user can read and write {}", options.root);
  std::optional<MetricsEndpoint> metrics;
  if (auto ep = metrics_endpoint(metrics_listen)) {
    metrics.emplace(*ep, [&server] { return server.metrics_text(); });
    spdlog::info("metrics on http://{}/metrics", metrics->address());
  }
  write_port_file(port_file, server.port());
  Reloader reloader(server, argv, parsed);
  SignalThread signals(
      [&server](int signo) {
        notify("STOPPING=1");
        spdlog::info("signal {} received: stopping", signo);
        server.drain();  // the second signal, or --drain-timeout 0, aborts at once
      },
      [&reloader] {
        reopen_log_file();  // logrotate's postrotate may send either signal
        reloader.reload();
      },
      [] { reopen_log_file(); });
  notify("READY=1\nSTATUS=serving on " + server.listen_address());
  server.run();
  notify("STOPPING=1");
  spdlog::info("pxferd stopped");
  return 0;
}

}  // namespace pxfer::pxferd
