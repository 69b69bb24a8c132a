#include "metrics.hpp"

#include "pxfer/version.hpp"

namespace pxfer::server {
namespace {

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, std::uint64_t value) {
  out += name + " " + std::to_string(value) + "\n";
}

}  // namespace

std::string format_prometheus(const Metrics& m, const Gauges& g) {
  static const char* directions[] = {"get", "put"};
  static const char* outcomes[] = {"ok", "failed", "refused"};
  std::string out;
  family(out, "pxferd_build_info", "gauge", "Version and git revision of this pxferd.");
  out += std::string("pxferd_build_info{version=\"") + version + "\",revision=\"" + revision() + "\"} 1\n";
  family(out, "pxferd_transfers_active", "gauge", "Transfers moving data now.");
  sample(out, "pxferd_transfers_active", g.active);
  family(out, "pxferd_transfers_queued", "gauge", "Transfers waiting for an admission slot (the admission queue length).");
  sample(out, "pxferd_transfers_queued", g.queued);
  family(out, "pxferd_max_active", "gauge", "The --max-active limit (0 = none).");
  sample(out, "pxferd_max_active", g.max_active);
  family(out, "pxferd_clients", "gauge", "Client addresses with transfers running or waiting.");
  sample(out, "pxferd_clients", g.clients);
  family(out, "pxferd_connections_open", "gauge", "Connections open now, control and data.");
  sample(out, "pxferd_connections_open", g.connections);
  family(out, "pxferd_transfers_total", "counter", "Transfers that ended, by direction and result.");
  for (int d = 0; d < 2; ++d)
    for (int o = 0; o < 3; ++o)
      sample(out, std::string("pxferd_transfers_total{direction=\"") + directions[d] + "\",result=\"" + outcomes[o] + "\"}",
             m.transfers[d][o].load(std::memory_order_relaxed));
  family(out, "pxferd_bytes_total", "counter", "Bytes moved by transfers that ended (ok or failed), by direction.");
  for (int d = 0; d < 2; ++d)
    sample(out, std::string("pxferd_bytes_total{direction=\"") + directions[d] + "\"}", m.bytes[d].load(std::memory_order_relaxed));
  family(out, "pxferd_auth_failures_total", "counter", "Control sessions refused at authentication.");
  sample(out, "pxferd_auth_failures_total", m.auth_failures.load(std::memory_order_relaxed));
  family(out, "pxferd_tls_handshake_failures_total", "counter", "Connections whose TLS handshake failed or timed out.");
  sample(out, "pxferd_tls_handshake_failures_total", m.tls_handshake_failures.load(std::memory_order_relaxed));
  return out;
}

}  // namespace pxfer::server
