#pragma once
// pxfer doctor's reasoning, kept pure: from a measured RTT, both hosts' TCP settings, a target
// rate and (optionally) a loss rate, work out what caps one stream, the bandwidth-delay product,
// and what to change: streams, buffers, sysctls, congestion control.
#include "pxfer/core/layer.hpp"
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pxfer/core/host_facts.hpp"
#include "pxfer/common/units.hpp"

namespace pxfer {

struct PathFacts {
  double rtt_s = 0;              // measured round trip (the minimum of several pings)
  HostSettings local;
  HostSettings remote;
  double target_bytes_per_s = 0;
  double loss = 0;               // packet loss probability (0.0001 = 0.01 %); 0 = none known
  unsigned mss = 1448;           // bytes of payload per segment (MTU 1500)
};

struct DirectionAdvice {
  std::string name;                 // "put (this host sends)" / "get (the server sends)"
  double window_bytes = 0;          // what autotuning lets one stream keep in flight
  double window_bytes_per_s = 0;    // window / RTT
  double loss_bytes_per_s = 0;      // Mathis: MSS / (RTT * sqrt(p)) * sqrt(3/2); 0 without loss
  double per_stream_bytes_per_s = 0;
  unsigned streams_needed = 0;      // for the target; 0 = one stream is enough... at least 1
  std::uint64_t buffer_needed = 0;  // socket buffer one stream needs for the target (2 x BDP)
  std::vector<std::string> advice;
};

struct DoctorAdvice {
  double bdp_bytes = 0;
  DirectionAdvice put;
  DirectionAdvice get;
};

DoctorAdvice advise(const PathFacts& facts);
std::string format_doctor(const PathFacts& facts, const DoctorAdvice& advice);
// `pxfer doctor --json`: the same figures as one {"event":"doctor", ...} line (docs/json.md).
std::string format_doctor_json(const std::string& server, const PathFacts& facts, const DoctorAdvice& advice);

// 1.25e9 bytes/s -> "10.00 Gbit/s"
std::string format_rate_bits(double bytes_per_s);

}  // namespace pxfer

#include <chrono>

#include "pxfer/common/url.hpp"

namespace pxfer {

struct DoctorOptions {
  double target_bytes_per_s = 10e9 / 8;  // 10 Gbit/s
  double loss = 0;
  unsigned pings = 10;
  std::chrono::milliseconds connect_timeout{15000};
};

// Connects to the server, measures the round trip over the control connection (PING/PONG) and
// asks for the server's TCP settings (INFO); reads this host's. Throws Error like a transfer.
PathFacts measure_path(const Url& server, const DoctorOptions& options);

}  // namespace pxfer
