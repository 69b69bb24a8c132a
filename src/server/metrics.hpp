#pragma once
// pxferd's counters for monitoring (--metrics-listen, Prometheus text format, named and shaped as
// prometheus.io's instrumentation guide asks). The server bumps them at a few points (a transfer
// ends or is refused, authentication fails, a TLS handshake fails); the bytes of running
// transfers are counted in as they move (each scrape credits what moved since the last one);
// gauges (admission slots, queue, connections) are read from the server when scraped.
#include "pxfer/server/layer.hpp"
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "histogram.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer::server {

// An identity as a metrics label: as it is up to limits::metrics_identity_label_bytes, else its
// start (cut at a character boundary) and "~" with 8 hex digits of a hash of the whole, so two
// long DNs or token subjects that share a start stay two series.
std::string identity_label(const std::string& identity);

enum class Outcome { ok, failed, refused };

// Errc values 0..10 (error.hpp): the bounded set of `reason` label values.
inline constexpr std::size_t errc_count = 11;

// A transfer's bytes counted into Metrics::bytes while they move, not at its end: each credit adds
// what moved since the last one (scrapes and the end may race: the counter never counts a byte twice).
class ByteFlow {
 public:
  explicit ByteFlow(std::atomic<std::uint64_t>& total) : total_(total) {}
  void credit(std::uint64_t moved_so_far) {
    std::uint64_t before = credited_.load();
    while (before < moved_so_far && !credited_.compare_exchange_weak(before, moved_so_far)) {
    }
    if (before < moved_so_far) total_.fetch_add(moved_so_far - before, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t>& total_;
  std::atomic<std::uint64_t> credited_{0};
};

struct Metrics {
  // [direction: 0 get, 1 put][outcome]
  std::atomic<std::uint64_t> transfers[2][3] = {};
  std::atomic<std::uint64_t> bytes[2] = {};  // bytes moved, counted in as they move (ByteFlow)
  // Per-identity series only when the operator asks (--metrics-per-identity): one series per token
  // or certificate name is a cardinality a site should choose.
  bool per_identity = false;
  // [direction][0 failed, 1 refused][Errc]: why transfers did not end ok.
  std::atomic<std::uint64_t> errors[2][2][errc_count] = {};
  // How long transfers ran (OPEN_OK to their end) and how large they were, by direction, and how
  // long a request waited for its admission slot (every transfer and small-file batch).
  static constexpr std::array<double, 10> seconds_buckets{0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
  static constexpr std::array<double, 8> size_buckets{0x1p16, 0x1p20, 0x1p24, 0x1p28, 0x1p30, 0x1p32, 0x1p34, 0x1p36};
  static constexpr std::array<double, 8> wait_buckets{0.001, 0.01, 0.1, 1, 10, 60, 300, 600};
  Histogram<10> duration[2] = {Histogram<10>(seconds_buckets), Histogram<10>(seconds_buckets)};
  Histogram<8> size[2] = {Histogram<8>(size_buckets), Histogram<8>(size_buckets)};
  Histogram<8> queue_wait{wait_buckets};
  std::atomic<std::uint64_t> auth_failures{0};
  std::atomic<std::uint64_t> tls_handshake_failures{0};

  std::atomic<std::uint64_t> checksum_failures{0};  // transfers that ended with Errc::integrity
  std::atomic<std::uint64_t> stream_recoveries{0};  // data streams lost and their blocks re-queued
  // Small-file requests (PUT_SMALL / GET_SMALL) and the batches they were served in: the mean
  // batch says how much the per-batch work (admission, the pool's trip, the answers' write) is shared.
  std::atomic<std::uint64_t> small_files{0};
  std::atomic<std::uint64_t> small_batches{0};
  // Small-file channels joined (cap_small_channel: one per control connection that moves small
  // files without --encrypt, transfer/small_channel.hpp).
  std::atomic<std::uint64_t> small_channels{0};
  // Data streams joined to a transfer (ATTACH proven), and those of them that came on a connection
  // an earlier stream of the same client had ended on (client/stream_pool.hpp).
  std::atomic<std::uint64_t> streams_attached{0};
  std::atomic<std::uint64_t> streams_on_kept_connections{0};

  // A transfer ended: `moved` is what the flow did not credit yet (a small file's bytes, a
  // running transfer's last ones); `failure` is set when it failed or was refused.
  void transfer_ended(bool put, Outcome outcome, std::uint64_t moved, std::optional<Errc> failure = std::nullopt) {
    transfers[put ? 1 : 0][static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed);
    bytes[put ? 1 : 0].fetch_add(moved, std::memory_order_relaxed);
    const auto why = static_cast<std::size_t>(failure.value_or(Errc::internal));
    if (outcome != Outcome::ok && why < errc_count)
      errors[put ? 1 : 0][outcome == Outcome::refused ? 1 : 0][why].fetch_add(1, std::memory_order_relaxed);
  }
  // A transfer that ran: its duration and size go into the histograms.
  void transfer_ran(bool put, double seconds, std::uint64_t file_size) {
    duration[put ? 1 : 0].observe(seconds);
    size[put ? 1 : 0].observe(static_cast<double>(file_size));
  }
  // A running transfer's flow: registered until it ends (credit_running() credits every one).
  using FlowId = std::uint64_t;
  FlowId start_flow(bool put, std::function<std::uint64_t()> moved_so_far);
  void end_flow(FlowId id);  // credits the last bytes and forgets the flow
  void credit_running();     // called by each scrape
  // What an ended transfer adds beyond transfer_ended: its identity's bytes (only with
  // per_identity), its class of failure and its recovered streams.
  void transfer_details(bool put, const std::string& identity, std::uint64_t moved, std::optional<Errc> failure,
                        std::uint64_t recovered) {
    if (failure && *failure == Errc::integrity) checksum_failures.fetch_add(1, std::memory_order_relaxed);
    stream_recoveries.fetch_add(recovered, std::memory_order_relaxed);
    if (!per_identity) return;
    std::string label = identity_label(identity.empty() ? "anonymous" : identity);
    std::lock_guard lock(identity_mutex);
    if (identity_bytes.size() >= limits::metrics_identities && !identity_bytes.count(label)) label = "(other)";
    identity_bytes[label][put ? 1 : 0] += moved;
  }
  std::map<std::string, std::array<std::uint64_t, 2>> bytes_by_identity() const {
    std::lock_guard lock(identity_mutex);
    return identity_bytes;
  }

 private:
  mutable std::mutex identity_mutex;
  std::map<std::string, std::array<std::uint64_t, 2>> identity_bytes;  // [get, put]
  struct Flow {
    std::unique_ptr<ByteFlow> counter;
    std::function<std::uint64_t()> moved_so_far;
  };
  std::mutex flows_mutex;
  std::map<FlowId, Flow> flows;
  FlowId next_flow = 0;
};

struct Gauges {
  unsigned active = 0, queued = 0, max_active = 0, clients = 0;  // admission: slots held, waiting
  unsigned connections = 0;
  // The transfers registered now (running): how many, the bytes they moved so far, the data
  // streams granted to them; and whether SIGTERM's drain is on.
  unsigned running = 0;
  std::uint64_t running_bytes = 0;
  unsigned running_streams = 0;
  bool draining = false;
};

// The Prometheus text exposition format (version 0.0.4) of `m` and `g`.
std::string format_prometheus(const Metrics& m, const Gauges& g);

}  // namespace pxfer::server
