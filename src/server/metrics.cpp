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

// A label value as the exposition format wants it: backslash, quote and newline escaped.
std::string label_value(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
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
  family(out, "pxferd_bytes_by_identity_total", "counter",
         "Bytes moved by transfers that ended (ok or failed), by client identity and direction.");
  for (const auto& [identity, moved] : m.bytes_by_identity())
    for (int d = 0; d < 2; ++d)
      sample(out, "pxferd_bytes_by_identity_total{identity=\"" + label_value(identity) + "\",direction=\"" + directions[d] + "\"}",
             moved[d]);
  family(out, "pxferd_checksum_failures_total", "counter", "Transfers that ended with a checksum mismatch.");
  sample(out, "pxferd_checksum_failures_total", m.checksum_failures.load(std::memory_order_relaxed));
  family(out, "pxferd_stream_recoveries_total", "counter",
         "Data streams of ended transfers that failed and whose blocks were re-sent on other streams.");
  sample(out, "pxferd_stream_recoveries_total", m.stream_recoveries.load(std::memory_order_relaxed));
  family(out, "pxferd_small_files_total", "counter", "Small-file requests (PUT_SMALL, GET_SMALL) served or refused.");
  sample(out, "pxferd_small_files_total", m.small_files.load(std::memory_order_relaxed));
  family(out, "pxferd_small_file_batches_total", "counter",
         "Batches the small-file requests were served in (requests read at once share one batch).");
  sample(out, "pxferd_small_file_batches_total", m.small_batches.load(std::memory_order_relaxed));
  family(out, "pxferd_small_file_channels_total", "counter",
         "Small-file channels joined (a data connection that carries a control connection's small files' bytes).");
  sample(out, "pxferd_small_file_channels_total", m.small_channels.load(std::memory_order_relaxed));
  family(out, "pxferd_data_streams_total", "counter", "Data streams joined to a transfer (ATTACH and its proof accepted).");
  sample(out, "pxferd_data_streams_total", m.streams_attached.load(std::memory_order_relaxed));
  family(out, "pxferd_data_streams_on_kept_connections_total", "counter",
         "Data streams that came on a connection where an earlier stream had ended (one set of streams for many files).");
  sample(out, "pxferd_data_streams_on_kept_connections_total", m.streams_on_kept_connections.load(std::memory_order_relaxed));
  family(out, "pxferd_transfers_running", "gauge", "Transfers opened and not yet ended (running now).");
  sample(out, "pxferd_transfers_running", g.running);
  family(out, "pxferd_running_bytes", "gauge", "Bytes the running transfers moved so far.");
  sample(out, "pxferd_running_bytes", g.running_bytes);
  family(out, "pxferd_running_streams", "gauge", "Data streams granted to the running transfers.");
  sample(out, "pxferd_running_streams", g.running_streams);
  family(out, "pxferd_draining", "gauge", "1 while SIGTERM's drain refuses new transfers, else 0.");
  sample(out, "pxferd_draining", g.draining ? 1 : 0);
  return out;
}

}  // namespace pxfer::server
