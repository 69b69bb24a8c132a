// From the options as typed to validated ServerOptions: every bad value is one Error(usage) that
// names the option, the value and what to use instead.
#include "cli.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer::pxferd {
namespace {

// --max-starts-per-second: 0 (no pacing) or a plain number from 0.001 to 1000000.
double parse_start_rate(const std::string& text) {
  std::size_t used = 0;
  double r = -1;
  try {
    r = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(r >= 0) || r > 1e6 || (r > 0 && r < 0.001))
    throw Error(Errc::usage, "--max-starts-per-second " + text + ": use a number of starts per second, e.g. 2 or 0.5");
  return r;
}

std::chrono::milliseconds duration_option(const char* name, const std::string& text, long min_ms, const char* example) {
  auto d = parse_duration(text);
  if (!d || d->count() < min_ms)
    throw Error(Errc::usage, std::string(name) + " " + text + ": use a " +
                                 (min_ms >= 1000 ? "duration of at least " + std::to_string(min_ms / 1000) + "s"
                                                 : std::string(min_ms > 0 ? "positive duration" : "duration")) +
                                 " (e.g. " + example + ")");
  return *d;
}

}  // namespace

std::optional<Endpoint> metrics_endpoint(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const bool port_only = text.find_first_not_of("0123456789") == std::string::npos;
  std::string why;
  auto ep = parse_endpoint(port_only ? "127.0.0.1:" + text : text, &why);
  if (!ep) throw Error(Errc::usage, "--metrics-listen " + text + ": " + why + " (use PORT or HOST:PORT, e.g. 127.0.0.1:9752)");
  return ep;
}

ServerOptions to_server_options(const DaemonArgs& a) {
  ServerOptions o = a.options;
  if (a.root.empty()) throw Error(Errc::usage, "--root is required: the directory to serve (see pxferd --help)");
  std::string why;
  auto ep = parse_endpoint(a.listen, &why);
  if (!ep) throw Error(Errc::usage, "--listen " + a.listen + ": " + why);
  o.root = a.root;
  o.listen = *ep;
  o.threads = a.threads;
  o.max_active = a.max_active;
  o.idle_timeout = duration_option("--idle-timeout", a.idle_timeout, 1000, "5m, 30s");
  o.tpc_grant_lifetime = duration_option("--tpc-grant-lifetime", a.tpc_grant_lifetime, 100, "60s, 2m");
  o.queue_timeout = duration_option("--queue-timeout", a.queue_timeout, 1, "30s, 10m");
  o.drain_timeout = duration_option("--drain-timeout", a.drain_timeout, 0, "30s, 5m, or 0");
  o.partial_max_age =
      std::chrono::duration_cast<std::chrono::seconds>(duration_option("--partial-max-age", a.partial_max_age, 1000, "7d, 12h"));
  o.max_streams_per_client = a.max_streams_per_client;
  o.max_clients = a.max_clients;
  o.max_starts_per_second = parse_start_rate(a.max_starts);
  if (!a.disk_rate.empty()) {
    auto rate = parse_size(a.disk_rate);
    if (!rate || *rate < 4096)
      throw Error(Errc::usage, "--emulate-disk-rate " + a.disk_rate + ": use bytes per second of at least 4K, e.g. 40M");
    o.emulate_disk_rate = *rate;
  }
  o.stored_checksums = !a.no_stored_checksums;
  if (!a.max_file_size.empty()) {
    auto limit = parse_size(a.max_file_size);
    if (!limit || *limit == 0) throw Error(Errc::usage, "--max-file-size " + a.max_file_size + ": use a size such as 100G or 512M");
    o.max_file_size = *limit;
  }
  if (!a.max_unfinished.empty()) {
    auto limit = parse_size(a.max_unfinished);
    if (!limit || *limit == 0)
      throw Error(Errc::usage, "--max-unfinished-per-identity " + a.max_unfinished + ": use a size such as 500G or 10G");
    o.max_unfinished_per_identity = *limit;
  }
  metrics_endpoint(a.metrics_listen);  // checked here, bound by serve()
  if (o.cert_file.empty() != o.key_file.empty()) throw Error(Errc::usage, "--cert and --key go together: give both or neither");
  return o;
}

}  // namespace pxfer::pxferd
