#pragma once
// What the engine needs to know about one transfer, agreed by both ends (transfer/negotiate.hpp
// makes it from OPEN). Plain data: the pure layers use it without the engine.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstdint>

#include "pxfer/core/checksum.hpp"
#include "pxfer/core/compression.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/core/socket_options.hpp"

namespace pxfer::transfer {

struct Settings {
  ChecksumAlgo checksum = ChecksumAlgo::adler32;
  std::uint32_t block_size = limits::default_block_size;
  std::uint16_t streams = limits::default_streams;
  SocketTuning tuning;
  std::chrono::milliseconds attach_timeout{30'000};
  // When positive and this side sends, STATS with every stream's TCP figures go to the receiver
  // over the control connection at this interval (--stream-stats on the receiving client).
  std::chrono::milliseconds stats_interval{0};
  CompressionSetting compression;  // used by the sending side
  // A data stream that hears nothing from its peer this long is closed and replaced; heartbeats
  // (PING) go out on a quiet stream four times per period, so only a dead path stays silent.
  std::chrono::milliseconds stall_timeout{60'000};
  // Both ends offered wire::cap_heartbeat: the receiver pings the control connection too, and the
  // sender takes a control connection silent for stall_timeout for a frozen peer or a dead path.
  bool control_heartbeats = false;
  // Both ends offered wire::cap_tls_bound_streams: a connection under TLS (a data stream of
  // --encrypt, bound to its transfer by its ATTACH_PROOF, or the control connection) carries
  // blocks without a Poly1305 of their own, TLS's record MAC authenticating them already.
  bool tls_bound_streams = false;
  // Both ends offered wire::cap_retire_streams: a receiver may send RETIRE on a data stream and
  // the sender ends that stream cleanly (-p auto shedding the streams of a get).
  bool retire_streams = false;
  // Both ends offered wire::cap_block_copies: the sender may send an overdue block again on an idle
  // stream, and let go of a stream that holds only blocks acknowledged on another.
  bool block_copies = false;
};

}  // namespace pxfer::transfer
