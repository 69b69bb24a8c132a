#pragma once
// The client API: one file in either direction. Plain structs in, a summary out; the CLI only
// parses options into these.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "pxfer/checksum.hpp"
#include "pxfer/compression.hpp"
#include "pxfer/rate_meter.hpp"
#include "pxfer/socket_tuning.hpp"
#include "pxfer/stream_meter.hpp"
#include "pxfer/url.hpp"

namespace pxfer {

// Chosen by measurement (bench/results/block-size.md): large enough that per-block costs vanish,
// small enough that 4-8 streams share a 100 MiB file evenly.
inline constexpr std::uint32_t default_block_size = 2u << 20;
inline constexpr std::uint16_t default_streams = 4;

struct ClientOptions {
  std::uint16_t streams = default_streams;
  std::uint32_t block_size = default_block_size;
  std::uint32_t window = 0;  // 0 = kernel autotuning
  std::string congestion;          // "" = the system default
  std::uint32_t window_clamp = 0;  // 0 = none
  bool stream_stats = false;       // per-stream TCP figures each interval (from the sending side)
  CompressionSetting compression;  // applied by whichever side sends
  ChecksumAlgo checksum = ChecksumAlgo::adler32;
  bool overwrite = false;
  std::chrono::milliseconds perf_interval{1000};
  std::chrono::milliseconds connect_timeout{15000};
  unsigned threads = 0;  // 0 = one per core, at most one per stream
};

enum class Direction { put, get };

struct TransferSummary {
  Direction direction = Direction::get;
  std::string source;       // as shown in the "Source:" line
  std::string destination;  // as shown in the "Dest:" line
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::uint16_t streams = 0;
  std::uint32_t block_size = 0;
  ChecksumAlgo checksum = ChecksumAlgo::adler32;
  std::string checksum_value;
  BufferGrant local_buffers;   // of the first data stream
  BufferGrant remote_buffers;
  std::vector<std::string> warnings;
  std::string congestion;                   // in use on the data streams
  CompressionSetting compression;
  std::uint64_t wire_bytes = 0;             // block payload on the wire (less than bytes when compressed)
  std::vector<StreamTotals> stream_totals;  // with --stream-stats
};

// Receives progress while a transfer runs (from one thread at a time).
class ProgressListener {
 public:
  virtual ~ProgressListener() = default;
  virtual void on_start(const TransferSummary&) {}
  virtual void on_interval(const IntervalReport&) {}
  virtual void on_finish(const IntervalReport&, const TransferSummary&) {}
  virtual void on_warning(const std::string&) {}
  // The server holds the transfer in line (pxferd --max-active) before it starts.
  virtual void on_queued(unsigned /*position*/, unsigned /*active*/, unsigned /*queued*/) {}
};

// Moves one file; throws pxfer::Error with a one-line message on failure.
TransferSummary put_file(const std::string& local, const Url& remote, const ClientOptions& options,
                         ProgressListener* listener = nullptr);
TransferSummary get_file(const Url& remote, const std::string& local, const ClientOptions& options,
                         ProgressListener* listener = nullptr);

}  // namespace pxfer
