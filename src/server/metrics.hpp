#pragma once
// pxferd's counters for monitoring (--metrics-listen, Prometheus text format). The server bumps
// them at a few points (a transfer ends or is refused, authentication fails, a TLS handshake
// fails); gauges (active, queued, clients) are read from admission control when scraped.
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "pxfer/error.hpp"

namespace pxfer::server {

enum class Outcome { ok, failed, refused };

struct Metrics {
  // [direction: 0 get, 1 put][outcome]
  std::atomic<std::uint64_t> transfers[2][3] = {};
  std::atomic<std::uint64_t> bytes[2] = {};  // bytes moved by transfers that ended, ok or not
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

  void transfer_ended(bool put, Outcome outcome, std::uint64_t moved) {
    transfers[put ? 1 : 0][static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed);
    bytes[put ? 1 : 0].fetch_add(moved, std::memory_order_relaxed);
  }
  // What an ended transfer adds beyond transfer_ended: its identity's bytes, its class of failure
  // and its recovered streams. Identities are few (tokens and certificates an admin made), so a
  // label per identity keeps the series count bounded.
  void transfer_details(bool put, const std::string& identity, std::uint64_t moved, std::optional<Errc> failure,
                        std::uint64_t recovered) {
    if (failure && *failure == Errc::integrity) checksum_failures.fetch_add(1, std::memory_order_relaxed);
    stream_recoveries.fetch_add(recovered, std::memory_order_relaxed);
    std::lock_guard lock(identity_mutex);
    identity_bytes[identity.empty() ? "anonymous" : identity][put ? 1 : 0] += moved;
  }
  std::map<std::string, std::array<std::uint64_t, 2>> bytes_by_identity() const {
    std::lock_guard lock(identity_mutex);
    return identity_bytes;
  }

 private:
  mutable std::mutex identity_mutex;
  std::map<std::string, std::array<std::uint64_t, 2>> identity_bytes;  // [get, put]
};

struct Gauges {
  unsigned active = 0, queued = 0, max_active = 0, clients = 0;
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
