#pragma once
// Watching a running pxfer from a test: its progress as its rate lines show it, and a URL through
// a fault proxy. Shared by the fault, liveness, leftover, drain and server tests.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "fault_proxy.hpp"
#include "support/output.hpp"
#include "support/process.hpp"

namespace pxfer::e2e {

inline bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// pxfer://127.0.0.1:PROXYPORT/path: the server behind `proxy`.
inline std::string via(const pxfer::testing::FaultProxy& proxy, const std::string& path) {
  return "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/" + path;
}

// Pumps the client's output until `done` holds; false when the client ended or `limit` passed.
template <class Done>
bool pump_until(ChildProcess& client, std::chrono::milliseconds limit, Done done) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    if (client.try_wait()) return done();
    client.pump(std::chrono::milliseconds(20));
  }
  return done();
}

// A rate line of the client's says at least `bytes` moved.
inline bool moved(ChildProcess& client, std::uint64_t bytes) {
  for (auto b : rate_line_bytes(client.out()))
    if (b >= bytes) return true;
  return false;
}

// The bytes of the client's first rate line that shows any (0 when none within `timeout`).
inline std::uint64_t wait_for_progress(ChildProcess& client,
                                       std::chrono::milliseconds timeout = std::chrono::milliseconds(20'000)) {
  std::uint64_t seen = 0;
  pump_until(client, timeout, [&] {
    for (auto b : rate_line_bytes(client.out())) seen = std::max(seen, b);
    return seen > 0;
  });
  return seen;
}

}  // namespace pxfer::e2e
