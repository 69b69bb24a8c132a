#pragma once
// What a transfer reports while it runs and when it ends: the summary the printers show (the
// listener they implement is pxfer/engine/progress_listener.hpp). Below the client: printers include
// this, never client.hpp.
#include "pxfer/engine/layer.hpp"
#include <cstdint>
#include <string>
#include <vector>

#include "pxfer/core/checksum.hpp"
#include "pxfer/core/compression.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/core/socket_options.hpp"
#include "pxfer/core/stream_meter.hpp"
#include "pxfer/core/wire_types.hpp"  // Direction

namespace pxfer {

// The server's load when it admitted the transfer (OPEN_OK, from servers with cap_admission).
struct ServerLoad {
  bool known = false;
  unsigned active = 0;      // transfers moving data, this one included
  unsigned queued = 0;      // transfers waiting
  unsigned max_active = 0;  // 0 = no limit
};

struct TransferSummary {
  Direction direction = Direction::get;
  std::string source;       // as shown in the "Source:" line
  std::string destination;  // as shown in the "Dest:" line
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::uint16_t streams = 0;    // with -p auto: where it settled (or got to)
  std::string stream_choice;    // -p auto: what it chose and on what evidence (StreamController::evidence)
  std::uint32_t block_size = 0;
  ChecksumAlgo checksum = ChecksumAlgo::adler32;
  std::string checksum_value;
  BufferGrant local_buffers;   // of the first data stream
  BufferGrant remote_buffers;
  // This side sent: its streams' send buffers past autotuning (core/send_window.hpp), or why they
  // could not go past it; "" when no send buffer held a stream.
  std::string send_window;
  std::vector<std::string> warnings;
  std::string congestion;                   // in use on the data streams
  CompressionSetting compression;
  std::uint64_t wire_bytes = 0;             // block payload on the wire (less than bytes when compressed)
  std::vector<StreamTotals> stream_totals;  // with --stream-stats
  std::uint64_t resumed_bytes = 0;          // already at the receiver from an earlier attempt: not sent
  std::uint64_t stream_recoveries = 0;      // data streams that broke or stalled and were replaced
  // The end of the file (cap_block_copies, docs/protocol.md "Blocks sent twice"): blocks sent again
  // because their first copy was overdue (a get counts the copies that arrived), and the streams
  // reset because all they still carried were such copies.
  std::uint64_t block_copies = 0;
  std::uint64_t streams_let_go = 0;
  unsigned attempts = 1;                    // 1 + retries used
  // "control TLS1.3 (TLS_AES_256_GCM_SHA384), data clear" or "..., data TLS1.3 (...)"
  std::string protection;
  std::string identity;  // who the server says we are (token name, certificate CN, anonymous)
  ServerLoad server_load;
};

}  // namespace pxfer
