#pragma once
// pxferd's counters for monitoring (--metrics-listen, Prometheus text format). The server bumps
// them at a few points (a transfer ends or is refused, authentication fails, a TLS handshake
// fails); gauges (active, queued, clients) are read from admission control when scraped.
#include <atomic>
#include <cstdint>
#include <string>

namespace pxfer::server {

enum class Outcome { ok, failed, refused };

struct Metrics {
  // [direction: 0 get, 1 put][outcome]
  std::atomic<std::uint64_t> transfers[2][3] = {};
  std::atomic<std::uint64_t> bytes[2] = {};  // bytes moved by transfers that ended, ok or not
  std::atomic<std::uint64_t> auth_failures{0};
  std::atomic<std::uint64_t> tls_handshake_failures{0};

  void transfer_ended(bool put, Outcome outcome, std::uint64_t moved) {
    transfers[put ? 1 : 0][static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed);
    bytes[put ? 1 : 0].fetch_add(moved, std::memory_order_relaxed);
  }
};

struct Gauges {
  unsigned active = 0, queued = 0, max_active = 0, clients = 0;
  unsigned connections = 0;
};

// The Prometheus text exposition format (version 0.0.4) of `m` and `g`.
std::string format_prometheus(const Metrics& m, const Gauges& g);

}  // namespace pxfer::server
