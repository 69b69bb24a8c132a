#include "metrics.hpp"

#include <cstdio>
#include <cstring>

#include "process_metrics.hpp"
#include "pxfer/version.hpp"

namespace pxfer::server {

Metrics::FlowId Metrics::start_flow(bool put, std::function<std::uint64_t()> moved_so_far) {
  std::lock_guard lock(flows_mutex);
  const FlowId id = ++next_flow;
  flows.emplace(id, Flow{std::make_unique<ByteFlow>(bytes[put ? 1 : 0]), std::move(moved_so_far)});
  return id;
}

void Metrics::end_flow(FlowId id) {
  std::lock_guard lock(flows_mutex);
  auto it = flows.find(id);
  if (it == flows.end()) return;
  it->second.counter->credit(it->second.moved_so_far());
  flows.erase(it);
}

void Metrics::credit_running() {
  std::lock_guard lock(flows_mutex);
  for (auto& [id, flow] : flows) flow.counter->credit(flow.moved_so_far());
}

namespace {

const char* const directions[] = {"get", "put"};

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, std::uint64_t value) {
  out += name + " " + std::to_string(value) + "\n";
}

}  // namespace

std::string identity_label(const std::string& identity) {
  if (identity.size() <= limits::metrics_identity_label_bytes) return identity;
  std::uint32_t hash = 2166136261u;  // FNV-1a: stable across runs and builds, unlike std::hash
  for (unsigned char c : identity) hash = (hash ^ c) * 16777619u;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "~%08x", hash);
  std::size_t keep = limits::metrics_identity_label_bytes - std::strlen(suffix);
  while (keep > 0 && (static_cast<unsigned char>(identity[keep]) & 0xC0) == 0x80) --keep;  // not inside a UTF-8 character
  return identity.substr(0, keep) + suffix;
}

namespace {

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

void gauges(std::string& out, const Gauges& g) {
  family(out, "pxferd_admission_slots_used", "gauge",
         "Admission slots held now (transfers and small-file batches let in by --max-active).");
  sample(out, "pxferd_admission_slots_used", g.active);
  family(out, "pxferd_admission_queue_length", "gauge", "Requests waiting for an admission slot.");
  sample(out, "pxferd_admission_queue_length", g.queued);
  family(out, "pxferd_admission_slots", "gauge", "The --max-active limit (0 = none).");
  sample(out, "pxferd_admission_slots", g.max_active);
  family(out, "pxferd_clients", "gauge", "Client addresses with transfers running or waiting.");
  sample(out, "pxferd_clients", g.clients);
  family(out, "pxferd_connections_open", "gauge", "Connections open now, control and data.");
  sample(out, "pxferd_connections_open", g.connections);
  family(out, "pxferd_transfers_in_progress", "gauge", "Transfers past OPEN_OK and not yet ended (data streams may move).");
  sample(out, "pxferd_transfers_in_progress", g.running);
  family(out, "pxferd_transfers_in_progress_bytes", "gauge", "Bytes the transfers in progress moved so far.");
  sample(out, "pxferd_transfers_in_progress_bytes", g.running_bytes);
  family(out, "pxferd_data_streams_in_progress", "gauge", "Data streams granted to the transfers in progress.");
  sample(out, "pxferd_data_streams_in_progress", g.running_streams);
  family(out, "pxferd_draining", "gauge", "1 while SIGTERM's drain refuses new transfers, else 0.");
  sample(out, "pxferd_draining", g.draining ? 1 : 0);
}

void transfer_counters(std::string& out, const Metrics& m) {
  static const char* outcomes[] = {"ok", "failed", "refused"};
  family(out, "pxferd_transfers_total", "counter", "Transfers that ended, by direction and result.");
  for (int d = 0; d < 2; ++d)
    for (int o = 0; o < 3; ++o)
      sample(out, std::string("pxferd_transfers_total{direction=\"") + directions[d] + "\",result=\"" + outcomes[o] + "\"}",
             m.transfers[d][o].load(std::memory_order_relaxed));
  family(out, "pxferd_transfer_errors_total", "counter",
         "Transfers that failed or were refused, by direction, result and error class (the exit code's name).");
  for (int d = 0; d < 2; ++d)
    for (int o = 0; o < 2; ++o)
      for (std::size_t e = 1; e < errc_count; ++e)
        sample(out, std::string("pxferd_transfer_errors_total{direction=\"") + directions[d] + "\",result=\"" + outcomes[o + 1] +
                        "\",reason=\"" + std::string(errc_name(static_cast<Errc>(e))) + "\"}",
               m.errors[d][o][e].load(std::memory_order_relaxed));
  family(out, "pxferd_bytes_total", "counter", "Bytes moved, by direction, counted while they move.");
  for (int d = 0; d < 2; ++d)
    sample(out, std::string("pxferd_bytes_total{direction=\"") + directions[d] + "\"}", m.bytes[d].load(std::memory_order_relaxed));
  family(out, "pxferd_transfer_duration_seconds", "histogram", "How long transfers ran, from OPEN_OK to their end.");
  for (int d = 0; d < 2; ++d) m.duration[d].append(out, "pxferd_transfer_duration_seconds", std::string("direction=\"") + directions[d] + "\",");
  family(out, "pxferd_transfer_size_bytes", "histogram", "Sizes of the files of transfers that ran.");
  for (int d = 0; d < 2; ++d) m.size[d].append(out, "pxferd_transfer_size_bytes", std::string("direction=\"") + directions[d] + "\",");
  family(out, "pxferd_admission_wait_seconds", "histogram", "How long requests waited for an admission slot.");
  m.queue_wait.append(out, "pxferd_admission_wait_seconds", "");
  if (!m.per_identity) return;
  family(out, "pxferd_bytes_by_identity_total", "counter",
         "Bytes moved by transfers that ended (ok or failed), by client identity and direction (--metrics-per-identity).");
  for (const auto& [identity, moved] : m.bytes_by_identity())
    for (int d = 0; d < 2; ++d)
      sample(out, "pxferd_bytes_by_identity_total{identity=\"" + label_value(identity) + "\",direction=\"" + directions[d] + "\"}",
             moved[d]);
}

void other_counters(std::string& out, const Metrics& m) {
  auto counter = [&out](const char* name, const char* help, const std::atomic<std::uint64_t>& value) {
    family(out, name, "counter", help);
    sample(out, name, value.load(std::memory_order_relaxed));
  };
  counter("pxferd_auth_failures_total", "Control sessions refused at authentication.", m.auth_failures);
  counter("pxferd_tls_handshake_failures_total", "Connections whose TLS handshake failed or timed out.", m.tls_handshake_failures);
  counter("pxferd_checksum_failures_total", "Transfers that ended with a checksum mismatch.", m.checksum_failures);
  counter("pxferd_stream_recoveries_total",
          "Data streams of ended transfers that failed and whose blocks were re-sent on other streams.", m.stream_recoveries);
  counter("pxferd_small_files_total", "Small-file requests (PUT_SMALL, GET_SMALL) served or refused.", m.small_files);
  counter("pxferd_small_file_batches_total",
          "Batches the small-file requests were served in (requests read at once share one batch).", m.small_batches);
  counter("pxferd_small_file_channels_total",
          "Small-file channels joined (a data connection that carries a control connection's small files' bytes).",
          m.small_channels);
  counter("pxferd_data_streams_total", "Data streams joined to a transfer (ATTACH and its proof accepted).", m.streams_attached);
  counter("pxferd_data_streams_on_kept_connections_total",
          "Data streams that came on a connection where an earlier stream had ended (one set of streams for many files).",
          m.streams_on_kept_connections);
}

}  // namespace

std::string format_prometheus(const Metrics& m, const Gauges& g) {
  std::string out;
  family(out, "pxferd_build_info", "gauge", "Version and git revision of this pxferd (always 1).");
  out += std::string("pxferd_build_info{version=\"") + version + "\",revision=\"" + label_value(revision()) + "\"} 1\n";
  gauges(out, g);
  transfer_counters(out, m);
  other_counters(out, m);
  append_process_metrics(out);
  return out;
}

}  // namespace pxfer::server
